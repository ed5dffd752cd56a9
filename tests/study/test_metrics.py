import json
import math

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import (
    average_precision_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.study.metrics import (
    PER_GRASP_METRICS,
    average_precision,
    average_recall,
    correlation_with_interval,
    expand_trials,
    finite_pairs,
    paper_ap_ar_f1,
    per_grasp_metrics,
    spearman_with_interval,
)

# DATA.md section 2: per-grasp physical robustness of cube_3cm
CUBE_ROBUSTNESS = [1, .8, .2, 1, .8, 1, .2, 1, .4, 1, .8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1]


def cube_robustness_from_json():
    records = json.loads((resolve_data_dir() / "phys_grasps_json" / "cube_3cm.json").read_text())
    results = np.zeros((25, 5))
    for record in records:
        results[record["attempt"], record["trial"]] = record["result"]
    return results.mean(axis=1)


@pytest.mark.parametrize("physical", [CUBE_ROBUSTNESS, "json"])
def test_paper_reference_values_on_the_cube(physical):
    physical = cube_robustness_from_json() if physical == "json" else np.array(physical)
    np.testing.assert_allclose(physical, CUBE_ROBUSTNESS)
    ap, ar, f1 = paper_ap_ar_f1(np.ones(25), physical)
    assert (ap, ar) == (0.81, 1.00) and f1 == pytest.approx(0.895, abs=5e-4)
    ap, ar, f1 = paper_ap_ar_f1(np.zeros(25), physical)
    assert (ap, ar) == (0.81, 0.09) and f1 == pytest.approx(0.162, abs=5e-4)
    # a perfect predictor: p == y entry by entry
    assert paper_ap_ar_f1(physical, physical) == (1.0, 1.0, 1.0)


def test_paper_metric_for_binary_p_has_the_closed_form_of_data_md():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        predicted = rng.integers(0, 6, n) / 5
        physical = rng.integers(0, 6, n) / 5
        if physical.sum() == 0:
            continue
        p, y = expand_trials(predicted), expand_trials(physical)
        tp, n_pos = np.sum(p & y), y.sum()
        r1, pi = tp / n_pos, n_pos / y.size
        ap_closed = r1 * tp / p.sum() + (1 - r1) * pi if p.sum() else pi
        ar_closed = (1 + 10 * r1) / 11
        ap, ar, f1 = paper_ap_ar_f1(predicted, physical)
        assert ap == round(ap_closed, 2) and ar == round(ar_closed, 2)
        assert f1 == pytest.approx(2 * ap * ar / (ap + ar))


def test_expansion_rounds_half_to_even_like_python():
    r = np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.8, 0.0, 1.0])
    expanded = expand_trials(r, trials=5).reshape(8, 5)
    np.testing.assert_array_equal(expanded.sum(axis=1), [round(5 * x) for x in r])
    assert list(expanded.sum(axis=1)[:5]) == [0, 2, 2, 4, 4]  # 0.5, 1.5, 2.5, 3.5, 4.5 -> even
    # ones first, then zeros, within each grasp
    assert np.all(np.diff(expanded.astype(int), axis=1) <= 0)
    assert expand_trials([0.5, 0.25], trials=4).tolist() == [1, 1, 0, 0, 1, 0, 0, 0]


def test_average_precision_matches_scikit_learn():
    rng = np.random.default_rng(2)
    for case in range(1500):
        n = int(rng.integers(1, 60))
        y = rng.random(n) < rng.uniform(0.05, 0.95)
        if not y.any():
            y[rng.integers(n)] = True
        kind = case % 3
        if kind == 0:  # binary scores: what the paper's expansion produces
            scores = (rng.random(n) < 0.5).astype(float)
        elif kind == 1:  # coarse scores with many ties
            scores = rng.integers(0, 6, n) / 5
        else:  # continuous scores
            scores = rng.random(n)
        assert average_precision(y, scores) == pytest.approx(average_precision_score(y, scores), abs=1e-12)


def test_average_precision_and_recall_without_positives_are_nan():
    assert math.isnan(average_precision([0, 0, 0], [0.2, 0.5, 1.0]))
    assert math.isnan(average_recall([0, 0], [1.0, 0.0]))
    assert all(math.isnan(v) for v in paper_ap_ar_f1([1.0, 0.2], [0.0, 0.0]))


def test_average_recall_hand_computed():
    # y has 2 positives scored 0.35 and 0.8: recall 1 for t <= 0.3, 1/2 for 0.4..0.8, 0 above
    y, scores = [1, 0, 1], [0.35, 0.9, 0.8]
    assert average_recall(y, scores) == pytest.approx((4 * 1 + 5 * 0.5) / 11)


@pytest.mark.parametrize("predicted, physical", [
    ([0.5, 1.0], [1.0]), ([[0.5]], [[1.0]]), ([], []), ([1.2], [1.0]), ([np.nan], [1.0]), ([1.0], [-0.1]),
])
def test_invalid_robustness_is_rejected(predicted, physical):
    with pytest.raises(ValueError):
        paper_ap_ar_f1(predicted, physical)
    with pytest.raises(ValueError):
        per_grasp_metrics(predicted, physical, n_boot=10)


def test_per_grasp_metrics_hand_computed():
    predicted = [0.9, 0.6, 0.2, 0.4, 0.8]
    physical = [1.0, 0.4, 0.0, 0.6, 1.0]
    # positives at >= 0.5: TP = {0, 4}, FP = {1}, FN = {3}, TN = {2}
    m = per_grasp_metrics(predicted, physical, n_boot=50)
    assert set(m) == set(PER_GRASP_METRICS)
    assert m["precision"].value == pytest.approx(2 / 3)
    assert m["recall"].value == pytest.approx(2 / 3)
    assert m["f1"].value == pytest.approx(2 / 3)
    assert m["mcc"].value == pytest.approx((2 * 1 - 1 * 1) / math.sqrt(3 * 3 * 2 * 2))
    assert m["mae"].value == pytest.approx((0.1 + 0.2 + 0.2 + 0.2 + 0.2) / 5)
    assert m["brier"].value == pytest.approx((0.01 + 0.04 + 0.04 + 0.04 + 0.04) / 5)


def test_threshold_is_inclusive():
    m = per_grasp_metrics([0.5, 0.49], [0.5, 0.5], n_boot=10)
    assert m["precision"].value == 1.0 and m["recall"].value == 0.5


def test_per_grasp_point_values_match_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(2, 40))
        physical = rng.integers(0, 6, n) / 5
        predicted = np.clip(physical + rng.normal(0, 0.4, n), 0, 1)
        y, p = physical >= 0.5, predicted >= 0.5
        if not (y.any() and p.any()):
            continue
        m = per_grasp_metrics(predicted, physical, n_boot=1)
        assert m["precision"].value == pytest.approx(precision_score(y, p))
        assert m["recall"].value == pytest.approx(recall_score(y, p))
        assert m["f1"].value == pytest.approx(f1_score(y, p))
        assert m["mcc"].value == pytest.approx(matthews_corrcoef(y, p), abs=1e-12)
        assert m["mae"].value == pytest.approx(np.mean(np.abs(predicted - physical)))
        assert m["brier"].value == pytest.approx(np.mean((predicted - physical) ** 2))


def test_undefined_cases():
    # nothing predicted positive: precision undefined, F1 = 0, MCC = 0 (constant predictor)
    m = per_grasp_metrics([0.0, 0.2, 0.1], [1.0, 0.0, 0.8], n_boot=200)
    assert math.isnan(m["precision"].value) and math.isnan(m["precision"].low) and math.isnan(m["precision"].high)
    assert m["recall"].value == 0.0 and m["f1"].value == 0.0 and m["mcc"].value == 0.0
    # nothing physically positive: recall undefined
    m = per_grasp_metrics([1.0, 0.2], [0.0, 0.4], n_boot=200)
    assert math.isnan(m["recall"].value) and m["precision"].value == 0.0 and m["f1"].value == 0.0
    # no positive anywhere: F1 undefined too; MCC 0 by convention, as scikit-learn
    m = per_grasp_metrics([0.1, 0.2], [0.0, 0.4], n_boot=200)
    assert math.isnan(m["f1"].value) and m["mcc"].value == 0.0
    # the always-success predictor on the cube
    m = per_grasp_metrics(np.ones(25), CUBE_ROBUSTNESS)
    assert m["precision"].value == pytest.approx(20 / 25) and m["recall"].value == 1.0
    assert m["mcc"] == (0.0, 0.0, 0.0)


def test_bootstrap_skips_resamples_where_a_metric_is_undefined():
    # one predicted positive out of 10: ~35 % of resamples miss it and have no precision
    predicted = [1.0] + [0.0] * 9
    physical = [1.0] * 5 + [0.0] * 5
    m = per_grasp_metrics(predicted, physical, n_boot=500, seed=1)
    assert m["precision"] == (1.0, 1.0, 1.0)


def correlated_case(rng, n):
    physical = rng.integers(0, 6, n) / 5
    predicted = np.clip(physical + rng.normal(0, 0.35, n), 0, 1)
    return predicted, physical


def test_intervals_contain_the_value_and_shrink_with_more_grasps():
    rng = np.random.default_rng(4)
    widths = {}
    for n in (25, 400):
        predicted, physical = correlated_case(rng, n)
        m = per_grasp_metrics(predicted, physical, n_boot=1000, seed=0)
        for name, (value, low, high) in m.items():
            assert low <= value <= high, (n, name)
        widths[n] = {name: e.high - e.low for name, e in m.items()}
        rho = spearman_with_interval(predicted, physical, n_boot=1000, seed=0)
        assert rho.low <= rho.value <= rho.high
        widths[n]["spearman"] = rho.high - rho.low
    for name in widths[25]:
        # sqrt(400 / 25) = 4: allow plenty of slack
        assert widths[400][name] < 0.5 * widths[25][name], name


def test_bootstrap_is_deterministic_for_a_seed():
    predicted, physical = correlated_case(np.random.default_rng(5), 30)
    a = per_grasp_metrics(predicted, physical, n_boot=300, seed=7)
    b = per_grasp_metrics(predicted, physical, n_boot=300, seed=7)
    c = per_grasp_metrics(predicted, physical, n_boot=300, seed=8)
    assert a == b and a != c
    assert spearman_with_interval(predicted, physical, 300, 7) == spearman_with_interval(predicted, physical, 300, 7)
    with pytest.raises(ValueError, match="n_boot"):
        per_grasp_metrics(predicted, physical, n_boot=0)


def test_spearman_matches_scipy_on_the_data_and_on_each_resample():
    rng = np.random.default_rng(6)
    score = rng.integers(0, 4, 20).astype(float)  # ties on both sides
    physical = rng.integers(0, 6, 20) / 5
    rho = spearman_with_interval(score, physical, n_boot=1, seed=11)
    assert rho.value == pytest.approx(spearmanr(score, physical).statistic, abs=1e-12)
    # a single resample: its interval collapses to that resample's Spearman correlation
    idx = np.random.default_rng(11).integers(0, 20, size=(1, 20))[0]
    expected = spearmanr(score[idx], physical[idx]).statistic
    assert rho.low == pytest.approx(expected, abs=1e-12) and rho.high == pytest.approx(expected, abs=1e-12)


def test_spearman_edge_cases():
    x = np.linspace(0, 1, 15)
    assert spearman_with_interval(x**3, x, n_boot=200) == (pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0))
    rho = spearman_with_interval(np.ones(10), x[:10], n_boot=200)
    assert math.isnan(rho.value) and math.isnan(rho.low)
    with pytest.raises(ValueError):
        spearman_with_interval([1.0], [1.0])


def test_pearson_and_spearman_match_scipy_with_intervals_over_the_pairs():
    rng = np.random.default_rng(12)
    x = rng.normal(size=40)
    y = 0.6 * x + rng.normal(scale=0.8, size=40)
    for method, reference in (("pearson", pearsonr), ("spearman", spearmanr)):
        r = correlation_with_interval(x, y, method, n_boot=1000, seed=3)
        assert r.value == pytest.approx(reference(x, y).statistic, abs=1e-12)
        assert r.low < r.value < r.high
        # one resample: the interval collapses onto that resample's correlation
        one = correlation_with_interval(x, y, method, n_boot=1, seed=9)
        idx = np.random.default_rng(9).integers(0, 40, size=(1, 40))[0]
        assert one.low == pytest.approx(reference(x[idx], y[idx]).statistic, abs=1e-12)
    # Pearson sees a monotone but curved relation as imperfect, Spearman as perfect
    t = np.linspace(0.1, 3, 30)
    assert correlation_with_interval(t, np.exp(3 * t), "spearman", 50).value == pytest.approx(1.0)
    assert correlation_with_interval(t, np.exp(3 * t), "pearson", 50).value < 0.9
    with pytest.raises(ValueError, match="method"):
        correlation_with_interval(x, y, "kendall")
    with pytest.raises(ValueError, match="finite"):
        correlation_with_interval([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])


def test_finite_pairs_drops_a_pair_when_either_side_is_not_finite():
    x, y = finite_pairs([[1.0, np.nan], [3.0, np.inf]], [[2.0, 5.0], [np.nan, 4.0]])
    assert x.tolist() == [1.0] and y.tolist() == [2.0]
    with pytest.raises(ValueError, match="same number"):
        finite_pairs([1.0, 2.0], [1.0])
