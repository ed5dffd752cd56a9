"""Tables of the study from result cubes: grid scores, the paper-shaped F1 tables (Kim et al.,
Tables 3.1/3.2: rows E, columns mu), the choice of the best setting, the held-out evaluation
table (Table 4.2 shape), failure-mode counts, how continuous scores rank grasps, the contact
artifacts (interpenetration, force gap) and contact stability of the dynamic models, and the
image-space predictions against the simulated object motion. Metrics come from `study.metrics`
only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ipcgrasp.grasp.grip_motion import GRAVITY
from ipcgrasp.study.cube import (
    FAILURE_FLAG_MEANINGS,
    failure_mode_names,
    mean_critical_mass,
    physical_robustness,
    robustness,
)
from ipcgrasp.study.metrics import (
    CORRELATIONS,
    PER_GRASP_METRICS,
    correlation_with_interval,
    finite_pairs,
    paper_ap_ar_f1,
    per_grasp_metrics,
)

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


def choose_best(scores: pd.DataFrame, then_lower: Sequence[str] = ()) -> dict:
    """The best setting on the training data: highest paper F1, ties broken by the higher
    per-grasp F1, then the lower MAE, then the lower value of each column of `then_lower` in turn,
    then the first row (grid order). NaN ranks last. Returns that row as a plain dict."""
    if scores.empty:
        raise ValueError("no grid scores to choose from")
    key = pd.DataFrame({"f1": -scores.paper_f1.fillna(-np.inf), "grasp_f1": -scores.f1.fillna(-np.inf),
                        "mae": scores.mae.fillna(np.inf)})
    for k, column in enumerate(then_lower):
        key[f"lower_{k}"] = scores[column].fillna(np.inf).values
    key["order"] = np.arange(len(scores))
    best = scores.loc[[key.sort_values(list(key.columns)).index[0]]].to_dict("records")[0]  # keeps column dtypes
    plain = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in best.items()}
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in plain.items()}


def trial_runtime(cube: xr.Dataset) -> xr.DataArray:
    """Wall time of one trial's prediction (s): a simulation cube's grasp_wall_time (without the
    optional shake and critical-mass phases; wall_time in cubes that lack it), else the model's
    runtime."""
    for name in ("grasp_wall_time", "wall_time", "runtime"):
        if name in cube:
            return cube[name]
    raise ValueError("the cube has no grasp_wall_time, wall_time or runtime variable")


def evaluation_table(cubes: Mapping[str, xr.Dataset], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per model (name -> cube over the held-out grasps, same grasps and trials): paper
    AP/AR/F1, per-grasp precision, recall, F1, MAE, Brier, MCC with 95 % bootstrap intervals
    (`<metric>_low/_high`), and runtime_s: the median over grasps of the mean time of one trial
    (`trial_runtime`)."""
    rows = []
    for model, cube in cubes.items():
        per_grasp = trial_runtime(cube).mean("trial").values.ravel()
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


SUCCESS = "success"
"""Outcome category of a trial the model predicts (or simulates) to succeed."""


def trial_outcomes(cube: xr.Dataset) -> xr.DataArray:
    """Each trial's outcome category (strings, dims of `success`): SUCCESS, else the failure mode
    of a cube with a failure_mode flag variable (simulators, penalty, mujoco_flex); else the
    model's reason when it is one word (the analytic models: slip, unbalanced, miss,
    no_clearance), "error" when the prediction raised, "miss" or "collision" from the image-space
    detectors, and "predicted_failure" otherwise; "" for the padding of merged cubes."""
    raw = cube.success.values
    padding = pd.isna(raw)  # grasps a merged cube holds for another object only
    success = np.where(padding, False, raw).astype(bool)
    if "failure_mode" in cube:
        names = failure_mode_names(cube.failure_mode.values)
    else:
        reasons = cube.reason.values.astype(str) if "reason" in cube else np.full(success.shape, "")
        names = np.array([r if r.isidentifier() else ("error" if r.startswith("error:") else "predicted_failure")
                          for r in reasons.ravel()], dtype=object).reshape(success.shape)
        for flag in ("collision", "miss"):  # miss wins when both are set
            if flag in cube:
                names[cube[flag].values.astype(bool)] = flag
    names = np.where(success, SUCCESS, names).astype(object)
    names[padding] = ""
    return xr.DataArray(names, dims=cube.success.dims, coords=cube.success.coords, name="outcome")


def outcome_counts(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """Trials per outcome category (`trial_outcomes`) of each model (name -> cube): rows models,
    columns SUCCESS, the simulator's failure modes, then any other category; empty trials
    (padding of merged cubes) are not counted."""
    rows = {}
    for model, cube in cubes.items():
        outcomes = trial_outcomes(cube).values.ravel()
        outcomes = outcomes[outcomes != ""]
        values, counts = np.unique(outcomes.astype(str), return_counts=True)
        rows[model] = dict(zip(values.tolist(), counts.tolist()))
    table = pd.DataFrame.from_dict(rows, orient="index").fillna(0).astype(int)
    known = [SUCCESS, *FAILURE_FLAG_MEANINGS[1:]]
    order = [c for c in known if c in table] + sorted(c for c in table if c not in known)
    table = table[order]
    table.index.name = "model"
    return table


def _summary(values: np.ndarray, prefix: str) -> dict:
    values = values[np.isfinite(values)]
    if not values.size:
        return {f"{prefix}_median": float("nan"), f"{prefix}_p90": float("nan"), f"{prefix}_max": float("nan")}
    return {f"{prefix}_median": float(np.median(values)), f"{prefix}_p90": float(np.percentile(values, 90)),
            f"{prefix}_max": float(values.max())}


def artifact_table(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """The penalty artifacts per model whose cube records them (max_penetration and
    max_force_gap per trial, m): trials, trials with interpenetration, and the median, 90th
    percentile and maximum over trials of the interpenetration depth and of the force gap (the
    largest separation at which a contact force acted)."""
    rows = []
    for model, cube in cubes.items():
        if "max_penetration" not in cube:
            continue
        penetration = cube.max_penetration.values.ravel()
        gap = cube.max_force_gap.values.ravel() if "max_force_gap" in cube else np.full(penetration.shape, np.nan)
        recorded = np.isfinite(penetration)
        rows.append({"model": model, "trials": int(recorded.sum()),
                     "trials_interpenetrating": int((penetration[recorded] > 0.0).sum()),
                     **_summary(penetration, "penetration_m"), **_summary(gap, "force_gap_m")})
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


STABILITY_METRICS = {"s_cf": "1", "s_cp": "m", "s_cn": "1"}
"""Rocchi et al.'s contact-stability metrics and their units."""


def contact_stability_table(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """S_cf, S_cp (m), S_cn over the hold, per model whose cube records them for at least one
    trial: trials with a hold (finite S_cf), and the median, 90th percentile and maximum of each
    metric over those trials (0 is perfectly stable)."""
    rows = []
    for model, cube in cubes.items():
        if not all(name in cube for name in STABILITY_METRICS) or not bool(np.isfinite(cube.s_cf).any()):
            continue
        row = {"model": model, "trials_with_hold": int(np.isfinite(cube.s_cf.values).sum())}
        for name in STABILITY_METRICS:
            row.update(_summary(cube[name].values.ravel(), name))
        rows.append(row)
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def ranking_scores(cube: xr.Dataset) -> dict[str, xr.DataArray]:
    """Per-grasp scores of a model's cube that can rank grasps: "robustness" (the fraction of
    successful trials), "mean score" (the model's continuous score averaged over trials, when it
    has one) and "mean critical mass" (`cube.mean_critical_mass`, kg, when the cube has critical
    masses)."""
    scores = {"robustness": robustness(cube)}
    if "score" in cube and bool(np.isfinite(cube.score).any()):
        scores["mean score"] = cube.score.mean("trial", skipna=True)
    if "critical_mass" in cube and bool(cube.critical_mass.notnull().any()):
        scores["mean critical mass"] = mean_critical_mass(cube)
    return scores


def ranking_table(cubes: Mapping[str, xr.Dataset], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """How well each model's per-grasp scores (`ranking_scores`) rank the held-out grasps by
    physical robustness: Spearman correlation with a 95 % bootstrap interval over grasps, one row
    per (model, score); grasps where the score is undefined are left out (n_grasps)."""
    rows = []
    for model, cube in cubes.items():
        physical = physical_robustness(cube)
        for name, per_grasp in ranking_scores(cube).items():
            x, y = finite_pairs(per_grasp.values, physical.broadcast_like(per_grasp).values)
            rho = correlation_with_interval(x, y, "spearman", n_boot, seed) if x.size >= 2 \
                else (float("nan"),) * 3
            rows.append({"model": model, "score": name, "n_grasps": int(x.size), "spearman": rho[0],
                         "spearman_low": rho[1], "spearman_high": rho[2]})
    return pd.DataFrame(rows).set_index(["model", "score"])


IMAGE_VS_SIMULATION = (("predicted_translation", "object_translation", "translation", "m"),
                       ("r_r", "object_rotation", "rotation", "rad"))
"""(image-space prediction, simulated quantity during the squeeze, what, units) pairs."""


def image_vs_simulation(image_cube: xr.Dataset, simulation_cube: xr.Dataset) -> pd.DataFrame:
    """One row per trial (object, grasp, trial; both cubes over the same grasps and trial seeds):
    the image-space measure's predicted object translation (T_d = D_t r / 2, m) and rotation
    (R_r, rad) beside the largest object translation and rotation the simulator recorded during
    the squeeze, and whether the simulated trial succeeded."""
    if not np.array_equal(image_cube.seed.values, simulation_cube.seed.values):
        raise ValueError("the image-space and simulation cubes must hold the same grasps and trial seeds")
    columns = {}
    for predicted, simulated, what, _ in IMAGE_VS_SIMULATION:
        columns[f"predicted_{what}"] = image_cube[predicted]
        columns[f"simulated_{what}"] = simulation_cube[simulated]
    columns["simulated_success"] = simulation_cube.success
    frame = xr.Dataset({k: v.drop_vars([c for c in v.coords if c not in v.dims]) for k, v in columns.items()})
    return frame.to_dataframe().reset_index()


def correlation_table(frame: pd.DataFrame, pairs: Sequence[tuple[str, str]], n_boot: int = 2000,
                      seed: int = 0) -> pd.DataFrame:
    """Spearman and Pearson correlation, each with a 95 % bootstrap interval over the rows, of
    each (x, y) column pair of `frame`; rows with a non-finite x or y are left out (n)."""
    rows = []
    for x_name, y_name in pairs:
        x, y = finite_pairs(frame[x_name].values, frame[y_name].values)
        row = {"x": x_name, "y": y_name, "n": int(x.size)}
        for method in CORRELATIONS:
            value = correlation_with_interval(x, y, method, n_boot, seed) if x.size >= 2 else (float("nan"),) * 3
            row.update({method: value[0], f"{method}_low": value[1], f"{method}_high": value[2]})
        rows.append(row)
    return pd.DataFrame(rows).set_index(["x", "y"])


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


def hold_margins(cube: xr.Dataset, masses: Mapping[str, float], gravity: float = GRAVITY) -> np.ndarray:
    """The hold margin 2 mu F / (m g) of every trial that closed: how many times the pads'
    friction at the closing force (F the smaller pad force, N; mu the cell's friction) exceeds the
    object's weight (masses: object name -> kg). A margin far above 1 means no E or mu of the
    grid can make the lift slip: the verdicts are decided in the squeeze."""
    force = np.fmin(cube.force_1, cube.force_2)
    mass = xr.DataArray([masses[str(o)] for o in np.atleast_1d(cube.object.values)],
                        dims=cube.object.dims) if "object" in cube.coords else masses[cube.attrs["object"]]
    margin = 2.0 * cube.mu * force / (mass * gravity)
    values = np.asarray(margin.values, dtype=np.float64).ravel()
    return values[np.isfinite(values)]


def hold_margin_text(margins: np.ndarray) -> str:
    """Caption sentence on the hold margins of `hold_margins`."""
    if margins.size == 0:
        return "No trial closed, so there is no hold margin to report."
    low, median, high = np.percentile(margins, [5, 50, 95])
    return (f"Why E and mu barely change these verdicts: at the closing force the pads' friction 2 mu F exceeds "
            f"the object's weight m g {median:.0f}-fold (median; 5-95 % {low:.0f}-{high:.0f}) over the "
            f"{margins.size} trials that closed, so no setting in the grid lets the lifted object slip; the "
            f"verdicts are decided during the squeeze (an object pushed or squeezed out), which E and mu "
            f"hardly change.")


def f1_caption(jaw: str, rule: str, n_trials: int, split_description: str, psi_th: float | None = None) -> str:
    """Caption of a grid F1 table."""
    rule_text = RULE_TEXT.get(rule, rule)
    if rule == "psi" and psi_th is not None and np.isfinite(psi_th):
        rule_text += f", Psi_th = {psi_th:.3g} J"
    return (f"Paper F1 (AP, AR rounded to 2 decimals; docs/data.md) of the simulator on the training "
            f"grasps: jaw {jaw}, close rule {rule_text}, {n_trials} perturbed trial(s) per grasp; rows E (Pa), "
            f"columns mu. {split_description}")


def evaluation_caption(best: Mapping, n_trials: int, n_boot: int, split_description: str,
                       baselines: Mapping[str, Mapping] | None = None) -> str:
    """Caption of the held-out evaluation table; `baselines`: model -> its best.json from the
    baseline sweeps (the contact settings chosen on the training grasps)."""
    rule = best["rule"]
    setting = f"E = {best['E']:g} Pa, mu = {best['mu']:g}, jaw {best['jaw']}, close rule {RULE_TEXT.get(rule, rule)}"
    if rule == "psi":
        setting += f", Psi_th = {best['psi_th']:.3g} J"
    chosen = "".join(f" {model}: {choice['setting_text']} (chosen on the training grasps)."
                     for model, choice in (baselines or {}).items())
    return (f"Held-out evaluation, {n_trials} perturbed trial(s) per grasp, the same trial seeds for every model. "
            f"ipcgrasp and the dynamic baselines with the best training setting ({setting}).{chosen} "
            f"paper_ap/ar/f1: the paper's metric (docs/data.md); precision, recall, f1 (robustness >= 0.5), "
            f"mae, brier, mcc per grasp with 95 % bootstrap intervals over grasps ({n_boot} resamples); "
            f"runtime_s: median over grasps of the wall time of one trial (for ipcgrasp without the "
            f"critical-mass ramp after the hold). {split_description}")
