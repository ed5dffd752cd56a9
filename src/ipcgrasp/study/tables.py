"""Tables of the study from result cubes: grid scores, the paper-shaped F1 tables (Kim et al.,
Tables 3.1/3.2: rows E, columns mu), the choice of the best setting, the held-out evaluation
table (Table 4.2 shape) and failure-mode counts. Metrics come from `study.metrics` only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ipcgrasp.study.cube import FAILURE_FLAG_MEANINGS, physical_robustness, robustness
from ipcgrasp.study.metrics import PER_GRASP_METRICS, paper_ap_ar_f1, per_grasp_metrics

GRID_DIMS = ("rule", "E", "mu")
RULE_TEXT = {"psi": "psi (pad strain energy >= Psi_th)", "force": "force (pad normal force >= F_close)"}


def robustness_pairs(cube: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, physical) robustness of every grasp the cube holds, flattened over its
    (object, grasp) dims; grasps with no trial (padding) are left out."""
    predicted = robustness(cube)
    physical = physical_robustness(cube).broadcast_like(predicted)
    pred, phys = predicted.values.ravel(), physical.values.ravel()
    keep = np.isfinite(pred) & np.isfinite(phys)
    return pred[keep], phys[keep]


def score(cube: xr.Dataset, n_boot: int = 1, seed: int = 0) -> dict:
    """Paper AP/AR/F1 and the per-grasp metrics (values; with n_boot > 1 also '<metric>_low' and
    '<metric>_high', the 95 % bootstrap interval) of one setting's cube (dims object?, grasp,
    trial), plus n_grasps, n_trials, success rate and the count of solver failures."""
    pred, phys = robustness_pairs(cube)
    trials = cube.sizes.get("physical_trial", 5)
    ap, ar, f1 = paper_ap_ar_f1(pred, phys, trials=trials)
    row = {"n_grasps": int(pred.size), "n_trials": int(cube.sizes["trial"]),
           "success_rate": float(np.nanmean(cube.success.astype(np.float64).values)),
           "paper_ap": ap, "paper_ar": ar, "paper_f1": f1}
    if "failure_mode" in cube:
        row["solver_failures"] = int((cube.failure_mode == FAILURE_FLAG_MEANINGS.index("solver")).sum())
    metrics = per_grasp_metrics(pred, phys, n_boot=n_boot, seed=seed)
    for name in PER_GRASP_METRICS:
        row[name] = metrics[name].value
        if n_boot > 1:
            row[f"{name}_low"], row[f"{name}_high"] = metrics[name].low, metrics[name].high
    return row


def grid_scores(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """One row per (jaw, rule, E, mu) of the grid cubes (jaw -> cube with dims E, mu, rule,
    object, grasp, trial), scored on every grasp the cube holds (the training set)."""
    rows = []
    for jaw, cube in cubes.items():
        for rule in cube.rule.values:
            for E in cube.E.values:
                for mu in cube.mu.values:
                    cell = cube.sel(rule=rule, E=E, mu=mu)
                    psi_th = float(cell.psi_th.max()) if "psi_th" in cell and cell.psi_th.notnull().any() \
                        else float("nan")
                    rows.append({"jaw": str(jaw), "rule": str(rule), "E": float(E), "mu": float(mu),
                                 "psi_th": psi_th, **score(cell)})
    return pd.DataFrame(rows)


def f1_table(scores: pd.DataFrame, jaw: str, rule: str, metric: str = "paper_f1") -> pd.DataFrame:
    """The paper's table shape for one jaw and rule: rows E (Pa), columns mu, values `metric`."""
    subset = scores[(scores.jaw == jaw) & (scores.rule == rule)]
    if subset.empty:
        raise ValueError(f"no grid scores for jaw {jaw!r} and rule {rule!r}")
    table = subset.pivot(index="E", columns="mu", values=metric).sort_index().sort_index(axis=1)
    table.index.name, table.columns.name = "E", "mu"
    return table


def choose_best(scores: pd.DataFrame) -> dict:
    """The best (E, mu, jaw, rule) on the training data: highest paper F1, ties broken by the
    higher per-grasp F1, then the lower MAE of robustness, then the first in grid order. NaN
    ranks last. Returns that row as a plain dict."""
    if scores.empty:
        raise ValueError("no grid scores to choose from")
    key = pd.DataFrame({"f1": -scores.paper_f1.fillna(-np.inf), "grasp_f1": -scores.f1.fillna(-np.inf),
                        "mae": scores.mae.fillna(np.inf), "order": np.arange(len(scores))})
    best = scores.loc[key.sort_values(["f1", "grasp_f1", "mae", "order"]).index[0]]
    plain = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in best.to_dict().items()}
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in plain.items()}


def evaluation_table(cubes: Mapping[str, xr.Dataset], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per model (name -> cube over the held-out grasps, same grasps and trials): paper
    AP/AR/F1, per-grasp precision, recall, F1, MAE, Brier, MCC with 95 % bootstrap intervals
    (`<metric>_low/_high`), and runtime_s: the median over grasps of the mean time of one trial."""
    rows = []
    for model, cube in cubes.items():
        runtime = cube.wall_time if "wall_time" in cube else cube.runtime
        per_grasp = runtime.mean("trial").values.ravel()
        rows.append({"model": model, **score(cube, n_boot=n_boot, seed=seed),
                     "runtime_s": float(np.nanmedian(per_grasp))})
    table = pd.DataFrame(rows).set_index("model")
    if "solver_failures" in table:  # simulators only; <NA> for the other models
        table["solver_failures"] = table["solver_failures"].astype("Int64")
    return table


def failure_counts(cube: xr.Dataset, by: Sequence[str] = ()) -> pd.DataFrame:
    """Trials per failure mode ("none" = success), grouped by the dims `by` (rows) of a simulation cube."""
    flags = cube.failure_mode
    rows = []
    groups = [dict(zip(by, values)) for values in np.ndindex(*[cube.sizes[d] for d in by])] if by else [{}]
    for group in groups:
        selected = flags.isel(group) if group else flags
        values = selected.values.ravel()
        values = values[np.isfinite(values.astype(np.float64))].astype(np.int64)
        counts = np.bincount(values, minlength=len(FAILURE_FLAG_MEANINGS))
        label = {d: cube[d].values[i].item() for d, i in group.items()}
        rows.append({**label, **dict(zip(FAILURE_FLAG_MEANINGS, counts.tolist()))})
    return pd.DataFrame(rows)


def sensitivity_table(cube: xr.Dataset) -> pd.DataFrame:
    """One row per Psi_th factor of the sensitivity cube (dims factor, object, grasp, trial):
    psi_th (J), the fraction of trials whose close rule fired, the mean pad forces at closing (N)
    over those, the scores of `score` and the trials per failure mode."""
    rows = []
    for factor in cube.factor.values:
        cell = cube.sel(factor=factor)
        closed = np.isfinite(cell.close_time.values)
        forces = np.concatenate([cell.force_1.values[closed], cell.force_2.values[closed]])
        counts = failure_counts(cell).iloc[0].to_dict()
        rows.append({"factor": float(factor), "psi_th": float(cell.psi_th.max()),
                     "closed_fraction": float(closed.mean()),
                     "close_force_mean": float(forces.mean()) if forces.size else float("nan"),
                     **score(cell), **counts})
    return pd.DataFrame(rows).set_index("factor")


def resolution_table(cube: xr.Dataset) -> pd.DataFrame:
    """Runtime vs mesh resolution, one row per subdivision level of the cube (dims subdivisions,
    grasp, trial): mesh size, median wall time of a trial (s), mean steps and Newton iterations
    per trial, wall time per Newton iteration (ms) and the success rate."""
    rows = []
    for k in cube.subdivisions.values:
        cell = cube.sel(subdivisions=k)
        wall, iterations = cell.wall_time.values.ravel(), cell.newton_iterations.values.ravel()
        rows.append({"subdivisions": int(k), "n_vertices": int(cell.n_vertices), "n_faces": int(cell.n_faces),
                     "wall_time_s": float(np.median(wall)), "steps": float(cell.steps.mean()),
                     "newton_iterations": float(iterations.mean()),
                     "ms_per_newton_iteration": float(1e3 * wall.sum() / max(iterations.sum(), 1)),
                     "success_rate": float(cell.success.mean())})
    return pd.DataFrame(rows).set_index("subdivisions")


def trial_time_table(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """Per-trial wall time of simulation cubes (name -> cube), one row per setting (every dim but
    object, grasp, trial; labelled by jaw, rule, E, mu): trials, median / mean / max wall time (s),
    mean Newton iterations, ms per Newton iteration, and the solver failures."""
    rows = []
    per_trial = {"object", "grasp", "trial", "physical_trial"}
    for name, cube in cubes.items():
        by = [d for d in cube.success.dims if d not in per_trial]
        for index in np.ndindex(*[cube.sizes[d] for d in by]):
            cell = cube.isel(dict(zip(by, index)))
            wall = cell.wall_time.values.ravel()
            wall = wall[np.isfinite(wall)]
            iterations = cell.newton_iterations.values.ravel()
            setting = {d: cell[d].item() for d in ("jaw", "rule", "E", "mu") if d in cell.coords}
            rows.append({"cube": name, **setting,
                         "trials": int(wall.size), "median_s": float(np.median(wall)), "mean_s": float(wall.mean()),
                         "max_s": float(wall.max()), "newton_iterations": float(np.nanmean(iterations)),
                         "ms_per_newton_iteration": float(1e3 * wall.sum() / max(np.nansum(iterations), 1)),
                         "solver_failures": int((cell.failure_mode == FAILURE_FLAG_MEANINGS.index("solver")).sum())})
    return pd.DataFrame(rows)


def _cell(value) -> str:
    if value is pd.NA:
        return "n/a"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "n/a"
        if value != 0.0 and not 1e-3 <= abs(value) < 1e5:
            return f"{value:.3g}"
        return f"{value:.3f}"
    return str(value)


def markdown_table(table: pd.DataFrame, caption: str, index: bool = True) -> str:
    """GitHub-flavoured Markdown: the caption as a paragraph, then the table (floats to 3
    decimals or 3 significant digits, NaN as n/a)."""
    frame = table.reset_index() if index else table
    header = [str(c) for c in frame.columns]
    lines = [caption.strip(), "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def with_intervals(table: pd.DataFrame, metrics: Sequence[str] = PER_GRASP_METRICS) -> pd.DataFrame:
    """Columns `m`, `m_low`, `m_high` folded into one text column "value [low, high]" per metric."""
    out = table.copy()
    for m in metrics:
        out[m] = [f"{_cell(v)} [{_cell(lo)}, {_cell(hi)}]" for v, lo, hi in
                  zip(table[m], table[f"{m}_low"], table[f"{m}_high"])]
        out = out.drop(columns=[f"{m}_low", f"{m}_high"])
    return out


def f1_caption(jaw: str, rule: str, n_trials: int, split_description: str, psi_th: float | None = None) -> str:
    """Caption of a grid F1 table."""
    rule_text = RULE_TEXT.get(rule, rule)
    if rule == "psi" and psi_th is not None and np.isfinite(psi_th):
        rule_text += f", Psi_th = {psi_th:.3g} J"
    return (f"Paper F1 (AP, AR rounded to 2 decimals; DATA.md section 6) of the simulator on the training "
            f"grasps: jaw {jaw}, close rule {rule_text}, {n_trials} perturbed trial(s) per grasp; rows E (Pa), "
            f"columns mu. {split_description}")


def evaluation_caption(best: Mapping, n_trials: int, n_boot: int, split_description: str) -> str:
    """Caption of the held-out evaluation table."""
    rule = best["rule"]
    setting = f"E = {best['E']:g} Pa, mu = {best['mu']:g}, jaw {best['jaw']}, close rule {RULE_TEXT.get(rule, rule)}"
    if rule == "psi":
        setting += f", Psi_th = {best['psi_th']:.3g} J"
    return (f"Held-out evaluation, {n_trials} perturbed trial(s) per grasp, the same trial seeds for every model. "
            f"ipcgrasp with the best training setting ({setting}). paper_ap/ar/f1: the paper's metric "
            f"(DATA.md section 6); precision, recall, f1 (robustness >= 0.5), mae, brier, mcc per grasp with "
            f"95 % bootstrap intervals over grasps ({n_boot} resamples); runtime_s: median over grasps of the "
            f"wall time of one trial. {split_description}")
