"""Contact-parameter sweeps of the dynamic baselines on the training grasps.

The penalty model and MuJoCo's flex pads have contact parameters that the physics does not fix:
a stiffness and a margin (the boundary layer or force field). Their results depend on them, and
that sensitivity is part of the comparison. The study runs each model over a stiffness x margin
grid on the training grasps (same trial seeds as the simulator, the simulator's best training
setting for E, mu, jaw and close rule, as the paper ran Isaac Gym with the simulator's material),
keeps one setting chosen on training F1 (`choose_setting`), and runs only that one on the
held-out grasps.

How a grid point becomes the model's settings (`sweep_settings`, in the groups of
`runs.predictor`: "params" are SimParams fields of the trial, "keywords" go to the model's predict):
- penalty: params penalty_stiffness (N/m per contact), penalty_margin (m), penalty_clusters.
- mujoco_flex: keywords (MujocoSettings) stiffness (direct-form solref, 1/s^2 per unit effective
  mass), margin (m), damping = 2 damping_ratio sqrt(stiffness) (1/s; `mujoco_flex.sweep`'s
  rule), dt (s, MuJoCo's step, not the simulator's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import xarray as xr

# study.cube and study.tables (xarray, scipy.stats) are imported by the functions that use them:
# the workflow's Snakefile imports SWEEP_MODELS and sweep_settings to parse.

SWEEP_DIMS = ("stiffness", "margin")
SWEEP_COORDINATES = {
    "penalty": {
        "stiffness": {"units": "N/m", "long_name": "penalty stiffness per contact (SimParams.penalty_stiffness)"},
        "margin": {"units": "m", "long_name": "boundary-layer margin around every mesh (SimParams.penalty_margin); "
                                             "meshes touch below 2 x margin"},
    },
    "mujoco_flex": {
        "stiffness": {"units": "s-2", "long_name": "MuJoCo direct-form contact stiffness (solref = -stiffness, "
                                                  "-damping), per unit effective mass"},
        "margin": {"units": "m", "long_name": "MuJoCo contact margin: contacts act from this distance on"},
    },
}
"""The models swept, with the meaning and units of their stiffness and margin."""
SWEEP_MODELS = tuple(SWEEP_COORDINATES)

TIE_BREAK = ("highest paper F1 on the training grasps; ties broken by the higher per-grasp F1, then the lower MAE "
             "of robustness, then the lower median interpenetration, then the softer stiffness and the smaller "
             "margin")
"""How `choose_setting` picks one setting (written into best.json)."""


def sweep_settings(model: str, stiffness: float, margin: float, options: Mapping) -> dict:
    """The settings of `model` at one grid point (module docstring); `options` is the model's
    config section (penalty: clusters; mujoco_flex: damping_ratio, dt)."""
    stiffness, margin = float(stiffness), float(margin)
    if model == "penalty":
        return {"params": {"penalty_stiffness": stiffness, "penalty_margin": margin,
                           "penalty_clusters": int(options.get("clusters", 0))}}
    if model == "mujoco_flex":
        return {"keywords": {"stiffness": stiffness, "margin": margin, "dt": float(options["dt"]),
                             "damping": 2.0 * float(options["damping_ratio"]) * math.sqrt(stiffness)}}
    raise ValueError(f"model {model!r} has no contact-parameter sweep; swept models: {', '.join(SWEEP_MODELS)}")


def setting_text(model: str, stiffness: float, margin: float) -> str:
    """"stiffness 1e+05 N/m, margin 0.0005 m" in the model's units."""
    units = SWEEP_COORDINATES[model]
    return (f"stiffness {stiffness:g} {units['stiffness']['units']}, margin {margin:g} {units['margin']['units']}")


def merge_sweep(cells: Sequence[xr.Dataset], model: str, attrs: Mapping | None = None) -> xr.Dataset:
    """One model's sweep cube from its cells (`cube.prediction_cell` with scalar coordinates
    stiffness, margin, object): dims stiffness, margin, object, grasp, trial, with the model's
    units on stiffness and margin."""
    from ipcgrasp.study.cube import merge_cells

    cube = merge_cells(cells, dims=(*SWEEP_DIMS, "object"), attrs=attrs)
    for dim in SWEEP_DIMS:
        cube[dim].attrs = dict(SWEEP_COORDINATES[model][dim])
    return cube


def _stats(values: np.ndarray, name: str) -> dict:
    values = values[np.isfinite(values)]
    if not values.size:
        return {f"{name}_median": float("nan"), f"{name}_max": float("nan")}
    return {f"{name}_median": float(np.median(values)), f"{name}_max": float(values.max())}


def sweep_scores(cube: xr.Dataset) -> pd.DataFrame:
    """One row per (stiffness, margin) of a sweep cube, scored on every grasp it holds (the
    training set): `tables.score` (paper AP/AR/F1, per-grasp metrics, success rate, solver
    failures), the median and maximum over trials of the interpenetration depth and of the force
    gap (m), the median runtime of a trial (s) and the trials per failure mode."""
    from ipcgrasp.study.tables import failure_counts, score

    rows = []
    for stiffness in cube.stiffness.values:
        for margin in cube.margin.values:
            cell = cube.sel(stiffness=stiffness, margin=margin)
            row = {"stiffness": float(stiffness), "margin": float(margin), **score(cell)}
            for name, label in (("max_penetration", "penetration_m"), ("max_force_gap", "force_gap_m")):
                values = cell[name].values.ravel() if name in cell else np.array([])
                row.update(_stats(values, label))
            row["runtime_s"] = float(np.nanmedian(cell.runtime.values))
            if "failure_mode" in cell:
                row.update(failure_counts(cell).iloc[0].to_dict())
            rows.append(row)
    return pd.DataFrame(rows)


def sweep_table(scores: pd.DataFrame, metric: str = "paper_f1") -> pd.DataFrame:
    """The grid's table shape: rows stiffness, columns margin, values `metric`."""
    table = scores.pivot(index="stiffness", columns="margin", values=metric).sort_index().sort_index(axis=1)
    table.index.name, table.columns.name = "stiffness", "margin"
    return table


def choose_setting(scores: pd.DataFrame) -> dict:
    """The setting chosen on the training grasps (TIE_BREAK): a plain dict of its row of
    `sweep_scores`."""
    from ipcgrasp.study.tables import choose_best

    ordered = scores.sort_values(["stiffness", "margin"], kind="stable").reset_index(drop=True)
    return choose_best(ordered, then_lower=("penetration_m_median",))


def sweep_caption(model: str, base: Mapping, n_trials: int, split_description: str) -> str:
    """Caption of a sweep's tables: the model, the fixed setting it ran with, what the columns are."""
    units = SWEEP_COORDINATES[model]
    return (f"{model} on the training grasps over contact stiffness ({units['stiffness']['units']}; "
            f"{units['stiffness']['long_name']}) x margin (m), {n_trials} perturbed trial(s) per grasp, the "
            f"simulator's trial seeds, E = {base['E']:g} Pa, mu = {base['mu']:g}, jaw {base['jaw']}, close rule "
            f"{base['rule']}. paper_f1: the paper's metric (docs/data.md); penetration_m, force_gap_m: the "
            f"largest interpenetration depth and the largest separation at which a contact force acted, per "
            f"trial, median and max over trials (m). Chosen setting: {TIE_BREAK}. {split_description}")
