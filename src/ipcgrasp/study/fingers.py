"""The compliant-finger sweep (config `fingers:`, docs/compliant_fingers.md): the grid's training
cells rerun with each finger stiffness k (N/m, SimParams.finger_stiffness) beside E and mu, merged
with the grid's own cells, whose fingers are rigid (k = inf on the cube's finger_stiffness axis),
and scored per (jaw, rule, E, mu, k) like the grid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import xarray as xr

from ipcgrasp.study.cube import merge_cells
from ipcgrasp.study.tables import score

RIGID = math.inf
"""finger_stiffness coordinate of rigid fingers (SimParams.finger_stiffness None)."""
FINGER_DIMS = ("finger_stiffness", "E", "mu", "rule", "object")


def finger_stiffness_param(coordinate: float) -> float | None:
    """SimParams.finger_stiffness of a finger_stiffness coordinate value (inf: None, rigid)."""
    return None if math.isinf(coordinate) else float(coordinate)


def merge_finger_cells(compliant: Sequence[xr.Dataset], rigid: Sequence[xr.Dataset],
                       attrs: Mapping | None = None) -> xr.Dataset:
    """One jaw's finger cube: the compliant cells (scalar coordinate finger_stiffness) and the
    grid's rigid cells at the same E, mu, rules and objects (given finger_stiffness = RIGID), with
    dims FINGER_DIMS + (grasp, trial, physical_trial)."""
    cells = list(compliant) + [cell.assign_coords(finger_stiffness=RIGID) for cell in rigid]
    return merge_cells(cells, dims=FINGER_DIMS, attrs=attrs)


def finger_scores(cubes: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """One row per (jaw, rule, E, mu, finger_stiffness) of the finger cubes (jaw -> cube),
    scored on every grasp the cube holds (the training set) by `tables.score`; finger_stiffness
    in N/m, inf for rigid fingers."""
    rows = []
    for jaw, cube in cubes.items():
        for rule in cube.rule.values:
            for E in cube.E.values:
                for mu in cube.mu.values:
                    for k in cube.finger_stiffness.values:
                        cell = cube.sel(rule=rule, E=E, mu=mu, finger_stiffness=k)
                        rows.append({"jaw": str(jaw), "rule": str(rule), "E": float(E), "mu": float(mu),
                                     "finger_stiffness": float(k), **score(cell)})
    return pd.DataFrame(rows)


def finger_caption(n_trials: int, split_description: str) -> str:
    """Caption of the finger table: what was swept, what the columns are, how far it reaches."""
    return (f"Compliant fingers on the training grasps: each finger's tip bending stiffness (N/m; inf: rigid "
            f"fingers, the grid's own cells) beside the pad modulus E (Pa) and friction mu, {n_trials} perturbed "
            "trial(s) per grasp, the grid's trial seeds. paper_f1: the paper's metric (docs/data.md); f1, "
            "mcc: per-grasp metrics at robustness 0.5. A few light training objects cannot decide a finger "
            f"stiffness: the bending they cause is small. {split_description}")
