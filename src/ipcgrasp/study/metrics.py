"""Metrics comparing predicted with physical grasp robustness: the one place metrics live.

Two families (docs/data.md, "The paper's metric and the per-grasp metrics"):

- `paper_ap_ar_f1`: the IPC-GraspSim paper's AP / AR / F1, reproduced exactly. Each grasp's
  robustness is expanded into `trials` binary entries, so the scores fed to average precision
  are binary (0/1), as in the paper; on a mostly-successful object this F1 rewards an
  always-success predictor (cube_3cm: AP 0.81, AR 1.00, F1 0.895).
- `per_grasp_metrics`: plain per-grasp metrics with 95 % percentile bootstrap intervals over
  grasps, reported beside the paper's numbers.
- `correlation_with_interval` (and `spearman_with_interval`): Spearman or Pearson correlation of
  paired values with a bootstrap interval: how well a continuous score (critical mass, the
  image-space quality) ranks grasps by physical robustness, or how a predicted quantity follows
  a simulated one.

Robustness values are fractions of successful trials, in [0, 1].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import pearsonr, rankdata, spearmanr

AR_THRESHOLDS = np.arange(11) / 10.0
PER_GRASP_METRICS = ("precision", "recall", "f1", "mae", "brier", "mcc")


class Estimate(NamedTuple):
    """A metric value with its 95 % bootstrap interval [low, high] (NaN when undefined)."""

    value: float
    low: float
    high: float


def _robustness_pair(predicted, physical) -> tuple[np.ndarray, np.ndarray]:
    pred = np.asarray(predicted, dtype=np.float64)
    phys = np.asarray(physical, dtype=np.float64)
    if pred.ndim != 1 or pred.shape != phys.shape or pred.size == 0:
        raise ValueError(f"predicted and physical must be non-empty 1-D arrays of the same length "
                         f"(one robustness per grasp), got shapes {pred.shape} and {phys.shape}")
    for name, values in (("predicted", pred), ("physical", phys)):
        if not np.all(np.isfinite(values)) or values.min() < 0.0 or values.max() > 1.0:
            raise ValueError(f"{name} robustness must be finite and within [0, 1]")
    return pred, phys


def expand_trials(robustness, trials: int = 5) -> np.ndarray:
    """Binary expansion of per-grasp robustness: per grasp, round(trials * r) ones then zeros.

    Rounding is half to even (Python's `round`), as in the paper's code. Returns a bool array
    of length G * trials, grasp-major.
    """
    r = np.asarray(robustness, dtype=np.float64)
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    successes = np.array([round(trials * float(x)) for x in r.ravel()], dtype=np.int64)
    return (np.arange(trials)[None, :] < successes[:, None]).ravel()


def average_precision(labels, scores) -> float:
    """Average precision of `scores` ranking binary `labels`, equal to scikit-learn's
    `average_precision_score`: AP = sum_k (R_k - R_{k-1}) P_k over the distinct score
    thresholds taken in decreasing order, with P_k, R_k the precision and recall of
    (scores >= threshold_k) and R_0 = 0. Tied scores form a single threshold.

    Returns NaN when `labels` has no positive (recall is undefined; scikit-learn warns and
    returns 0 there).
    """
    y = np.asarray(labels).astype(bool).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape or y.size == 0:
        raise ValueError(f"labels and scores must be non-empty and of the same length, got {y.size} and {s.size}")
    n_positive = int(y.sum())
    if n_positive == 0:
        return float("nan")
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    # last index of each run of equal scores = one threshold
    last_of_run = np.r_[np.flatnonzero(np.diff(s_sorted) != 0.0), y.size - 1]
    tp = np.cumsum(y_sorted)[last_of_run]
    predicted_positive = last_of_run + 1
    precision = tp / predicted_positive
    recall = tp / n_positive
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def average_recall(labels, scores, thresholds=AR_THRESHOLDS) -> float:
    """Mean over `thresholds` t of the recall of (scores >= t) against binary `labels`
    (the paper: t = 0.0, 0.1, ..., 1.0). NaN when `labels` has no positive."""
    y = np.asarray(labels).astype(bool).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    n_positive = int(y.sum())
    if n_positive == 0:
        return float("nan")
    t = np.asarray(thresholds, dtype=np.float64)
    recalls = ((s[None, :] >= t[:, None]) & y[None, :]).sum(axis=1) / n_positive
    return float(recalls.mean())


def paper_ap_ar_f1(predicted, physical, trials: int = 5) -> tuple[float, float, float]:
    """The paper's (AP, AR, F1) from per-grasp predicted and physical robustness (docs/data.md).

    Both are expanded by `expand_trials` into binary entries aligned position by position
    (p from predicted, y from physical); AP = average_precision(y, p), AR = mean recall of
    (p >= t) for t = 0.0..1.0 step 0.1; AP and AR are rounded to 2 decimals (Python `round`)
    and F1 = 2 AP AR / (AP + AR) from the rounded values. All three are NaN when no physical
    trial succeeded (recall undefined).
    """
    pred, phys = _robustness_pair(predicted, physical)
    p = expand_trials(pred, trials).astype(np.float64)
    y = expand_trials(phys, trials)
    ap, ar = average_precision(y, p), average_recall(y, p)
    if np.isnan(ap):
        return float("nan"), float("nan"), float("nan")
    ap, ar = round(ap, 2), round(ar, 2)
    return ap, ar, 2.0 * ap * ar / (ap + ar)


def _confusion_metrics(pred: np.ndarray, phys: np.ndarray, threshold: float) -> dict[str, np.ndarray]:
    """Metrics per row of (B, G) robustness arrays; NaN where undefined."""
    pred_pos = pred >= threshold
    phys_pos = phys >= threshold
    tp = np.sum(pred_pos & phys_pos, axis=-1).astype(np.float64)
    fp = np.sum(pred_pos & ~phys_pos, axis=-1).astype(np.float64)
    fn = np.sum(~pred_pos & phys_pos, axis=-1).astype(np.float64)
    tn = np.sum(~pred_pos & ~phys_pos, axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        f1 = 2.0 * tp / (2.0 * tp + fp + fn)
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        # a zero factor of the denominator zeroes the numerator too, so MCC becomes 0 there
        mcc = (tp * tn - fp * fn) / np.where(denominator > 0.0, denominator, 1.0)
    error = pred - phys
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "mae": np.mean(np.abs(error), axis=-1),
        "brier": np.mean(error**2, axis=-1),
        "mcc": mcc,
    }


def _percentile_interval(samples: np.ndarray) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def _bootstrap_indices(n: int, n_boot: int, seed) -> np.ndarray:
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def per_grasp_metrics(predicted, physical, threshold: float = 0.5, n_boot: int = 2000,
                      seed=0) -> dict[str, Estimate]:
    """Per-grasp metrics of predicted against physical robustness, each as Estimate(value, low, high).

    A grasp is positive when its robustness >= `threshold` (predicted and physical alike).
    - precision = TP / (TP + FP): NaN when nothing is predicted positive;
    - recall = TP / (TP + FN): NaN when nothing is physically positive;
    - f1 = 2 TP / (2 TP + FP + FN): NaN only when neither side has a positive (so it is 0,
      not NaN, when precision alone is undefined);
    - mae = mean |r^ - r| of robustness;
    - brier = mean (r^ - r)^2, the Brier score with the physical robustness r (not a 0/1
      outcome) as the target;
    - mcc = Matthews correlation (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)), set to 0
      when a factor of the denominator is 0 (scikit-learn's convention), e.g. for a constant
      predictor.
    Intervals: 95 % percentile bootstrap over grasps (`n_boot` resamples of the G grasps with
    replacement, numpy Generator seeded by `seed`); resamples where a metric is undefined are
    left out of its interval, which is NaN when no resample defines it.
    """
    pred, phys = _robustness_pair(predicted, physical)
    values = _confusion_metrics(pred, phys, threshold)
    idx = _bootstrap_indices(pred.size, n_boot, seed)
    samples = _confusion_metrics(pred[idx], phys[idx], threshold)
    return {name: Estimate(float(values[name]), *_percentile_interval(samples[name]))
            for name in PER_GRASP_METRICS}


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    denominator = np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0.0, np.sum(a * b, axis=-1) / denominator, np.nan)


CORRELATIONS = ("spearman", "pearson")


def correlation_with_interval(x, y, method: str = "spearman", n_boot: int = 2000, seed=0) -> Estimate:
    """Correlation of paired samples x, y (1-D, finite, same length >= 2) with a 95 % percentile
    bootstrap interval over the pairs (`n_boot` resamples with replacement, numpy Generator seeded
    by `seed`).

    method "spearman": scipy.stats.spearmanr (average ranks for ties); resamples are ranked with
    scipy.stats.rankdata, which gives spearmanr's value exactly. "pearson": scipy.stats.pearsonr.
    NaN when either input is constant; constant resamples are left out of the interval.
    """
    if method not in CORRELATIONS:
        raise ValueError(f"method must be one of {CORRELATIONS}, got {method!r}")
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"x and y must be 1-D arrays of the same length >= 2, got {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite (drop the pairs with a NaN or inf first: finite_pairs)")
    if np.ptp(a) == 0.0 or np.ptp(b) == 0.0:
        value = float("nan")
    elif method == "spearman":
        value = float(spearmanr(a, b).statistic)
    else:
        value = float(pearsonr(a, b).statistic)
    idx = _bootstrap_indices(a.size, n_boot, seed)
    if method == "spearman":
        samples = _row_pearson(rankdata(a[idx], axis=-1), rankdata(b[idx], axis=-1))
    else:
        samples = _row_pearson(a[idx], b[idx])
    return Estimate(value, *_percentile_interval(samples))


def spearman_with_interval(score, physical, n_boot: int = 2000, seed=0) -> Estimate:
    """Spearman rank correlation between a per-grasp score and the physical robustness, with a
    95 % percentile bootstrap interval over grasps (`correlation_with_interval`)."""
    return correlation_with_interval(score, physical, "spearman", n_boot, seed)


def finite_pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (x_i, y_i) where both are finite, as two float arrays (flattened)."""
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same number of values, got {a.size} and {b.size}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]
