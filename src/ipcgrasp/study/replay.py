"""Replay one stored trial of a simulation cube bit for bit: its seed (variable `seed`), its
setting (the cube's coordinates E, mu, jaw, rule, finger_stiffness where the cube sweeps it, and
the psi_th it used) and the study's fixed SimParams fields (attribute `sim_params`, written by
`runs.simulate_cell`) give back the exact SimParams and seed the study ran it with
(docs/grasp_procedure.md, "Seeds and replaying a trial").
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ipcgrasp.documents import parse_json
from ipcgrasp.file_kinds import SIMULATION_CUBE, FileKindError, open_as
from ipcgrasp.grasp.params import SimParams

SETTING_FIELDS = ("E", "mu", "jaw", "close_rule", "psi_th", "finger_stiffness")
"""SimParams fields a cube stores as coordinates or variables, not in `sim_params`."""
SETTING_COORDS = {"E": "E", "mu": "mu", "jaw": "jaw", "rule": "close_rule", "finger_stiffness": "finger_stiffness"}
"""Cube coordinate -> SimParams field."""


def fixed_params_attr(params: SimParams) -> str:
    """The `sim_params` attribute of a cube: params' fields other than SETTING_FIELDS, as JSON
    (finger_stiffness too when the fingers are compliant, so a cell without that coordinate still
    replays)."""
    return json.dumps({k: v for k, v in params.to_dict().items()
                       if k not in SETTING_FIELDS or (k == "finger_stiffness" and v is not None)}, sort_keys=True)


def read_simulation_cube(path: str | os.PathLike) -> xr.Dataset:
    """The simulation cube at `path`, loaded, for `stored_trial`. FileKindError naming the file
    and the fix when it is not one (`file_kinds.open_as`: a trajectory, a baseline's cube, not
    NetCDF) or its failure_mode flags have no names (flag_meanings)."""
    cube = open_as(path, SIMULATION_CUBE)
    if not isinstance(cube.failure_mode.attrs.get("flag_meanings"), str):
        raise FileKindError(f"{path}: the failure_mode variable has no flag_meanings attribute (the names of its "
                            "flag values); fix: give a cube the study wrote, e.g. results/grid/rounded.nc")
    return cube


@dataclass(frozen=True)
class StoredTrial:
    """A trial of a cube: the SimParams and seed to rerun it with, and what the cube recorded
    (success, failure mode name, reason, closing forces (N, 2))."""

    params: SimParams
    seed: int
    success: bool
    failure_mode: str | None
    reason: str
    close_forces: tuple


def _select(cube: xr.Dataset, name: str, value):
    """The index of `value` along coordinate `name` of the cube (a float compared to 1e-9
    relative); a dimension of length one needs no value."""
    values = np.atleast_1d(cube[name].values)
    if value is None:
        if len(values) == 1:
            return values[0]
        raise ValueError(f"the cube has several {name} ({', '.join(map(str, values))}): choose one")
    if values.dtype.kind == "f":
        match = np.flatnonzero(np.isclose(values, float(value), rtol=1e-9, atol=0.0))
    else:
        match = np.flatnonzero(values.astype(str) == str(value))
    if not match.size:
        raise ValueError(f"{name} = {value} is not in the cube (it has {', '.join(map(str, values))})")
    return values[match[0]]


def stored_trial(cube: xr.Dataset, object_name: str, grasp: int, trial: int,
                 setting: Mapping | None = None, fixed: Mapping | None = None) -> StoredTrial:
    """The trial (`object_name`, `grasp`, `trial`) of a simulation cube at `setting` (coordinate
    name -> value for E, mu, jaw, rule, finger_stiffness; a coordinate with one value needs none). `fixed`: the
    study's fixed SimParams fields (the config's `sim`), needed only when the cube has no
    `sim_params` attribute (cubes written before it was stored)."""
    if "subdivisions" in cube.coords:
        raise ValueError("a resolution cube's trials ran on a subdivided mesh; replay a grid or evaluation cube")
    setting = dict(setting or {})
    unknown = sorted(set(setting) - set(SETTING_COORDS))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; a cube's settings are {sorted(SETTING_COORDS)}")
    where = {"object": _select(cube, "object", object_name), "grasp": _select(cube, "grasp", grasp),
             "trial": _select(cube, "trial", trial)}
    values = {}
    for coord, field in SETTING_COORDS.items():
        if coord in cube.coords:
            where[coord] = values[field] = _select(cube, coord, setting.get(coord))
        elif setting.get(coord) is not None:
            raise ValueError(f"the cube has no {coord} coordinate")
    point = cube.sel({k: v for k, v in where.items() if k in cube.dims})
    if "sim_params" in cube.attrs:
        fixed = parse_json(cube.attrs["sim_params"], "the cube's sim_params attribute")
    elif fixed is None:
        raise ValueError("the cube has no sim_params attribute (written before ipcgrasp stored the fixed "
                         "simulation parameters): pass the study's config")
    values = {**fixed, **{k: (v.item() if hasattr(v, "item") else v) for k, v in values.items()}}
    if values.get("finger_stiffness") is not None and math.isinf(values["finger_stiffness"]):
        values["finger_stiffness"] = None  # the finger cube's rigid fingers
    psi_th = float(point.psi_th)
    if values.get("close_rule") == "psi":
        values["psi_th"] = psi_th
    mode = int(point.failure_mode)
    names = point.failure_mode.attrs["flag_meanings"].split()
    return StoredTrial(SimParams(**values), int(point.seed), bool(point.success),
                       None if mode == 0 else names[mode], str(point.reason.values),
                       (float(point.force_1), float(point.force_2)))
