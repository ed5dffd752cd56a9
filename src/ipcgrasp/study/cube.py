"""Result cubes: per-trial grasp outcomes as xarray Datasets in NetCDF.

A *cell* holds the trials of one simulation job: dims (grasp, trial), scalar coordinates for the
settings it ran with (jaw, rule, E, mu, object, ...), and the physical trials of the same grasps
over (grasp, physical_trial). `merge_cells` stacks cells along those scalar coordinates into a
cube, e.g. dims (E, mu, rule, object, grasp, trial) for one jaw of the grid. Every variable
carries units, long_name and description (CF conventions; the failure mode is a CF flag
variable); cubes carry provenance attributes (`study.provenance`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from ipcgrasp.io import atomic_path
from ipcgrasp.grasp.outcome import FAILURE_MODES, SHAKE_OUTCOMES, GraspResult

FAILURE_FLAG_MEANINGS = ("none",) + FAILURE_MODES
"""failure_mode flag meanings; flag value k means FAILURE_FLAG_MEANINGS[k] (0: the trial succeeded)."""
SHAKE_FLAG_MEANINGS = ("not_run",) + SHAKE_OUTCOMES
"""shake_outcome flag meanings; flag value k means SHAKE_FLAG_MEANINGS[k]."""
FLAGS = {"failure_mode": FAILURE_FLAG_MEANINGS, "shake_outcome": SHAKE_FLAG_MEANINGS}

COORDINATE_ATTRS = {
    "E": {"units": "Pa", "long_name": "pad Young's modulus"},
    "mu": {"units": "1", "long_name": "pad-object friction coefficient"},
    "jaw": {"long_name": "jaw pad shape (rounded | rectangular)"},
    "rule": {"long_name": "closing rule (psi: pad strain energy; force: pad normal force)"},
    "object": {"long_name": "object name (REACH)"},
    "grasp": {"units": "1", "long_name": "grasp index in the object's physical data (attempt)"},
    "trial": {"units": "1", "long_name": "perturbed simulated trial"},
    "physical_trial": {"units": "1", "long_name": "physical trial of the grasp"},
    "model": {"long_name": "grasp model"},
    "factor": {"units": "1", "long_name": "Psi_th multiplier relative to the calibrated value"},
    "finger_stiffness": {"units": "N/m", "long_name": "tip bending stiffness of each finger (inf: rigid fingers)"},
    "subdivisions": {"units": "1", "long_name": "times the object mesh was subdivided (each: 4x the faces)"},
    "stiffness": {"long_name": "contact stiffness of a baseline model (units: the model's; study.sweeps)"},
    "margin": {"units": "m", "long_name": "contact margin of a baseline model (study.sweeps)"},
}


@dataclass(frozen=True)
class TrialVariable:
    """One per-trial variable of a simulation cell: how to read it from a GraspResult."""

    name: str
    dtype: str
    units: str | None
    long_name: str
    description: str
    read: Callable[[GraspResult], object]


def _failure_flag(result: GraspResult) -> int:
    return 0 if result.failure_mode is None else FAILURE_FLAG_MEANINGS.index(result.failure_mode)


def _shake_flag(result: GraspResult) -> int:
    return 0 if result.shake_outcome is None else SHAKE_FLAG_MEANINGS.index(result.shake_outcome)


AFTER_HOLD_PHASES = ("shake", "critical_mass")
"""Optional phases after the judged hold (GraspResult.phase_wall_time keys): not part of the grasp."""


def _grasp_wall_time(result: GraspResult) -> float:
    return result.wall_time - sum(result.phase_wall_time.get(phase, 0.0) for phase in AFTER_HOLD_PHASES)


SIMULATION_VARIABLES = (
    TrialVariable("success", "bool", None, "trial lifted and held the object",
                  "object clear of the ground, both pads within contact tolerance of it, pads apart",
                  lambda r: bool(r.success)),
    TrialVariable("failure_mode", "int8", None, "failure mode of the trial",
                  "CF flag variable: see flag_values and flag_meanings (none = success)", _failure_flag),
    TrialVariable("reason", "str", None, "why the trial ended as it did", "free text from the simulator",
                  lambda r: str(r.reason)),
    TrialVariable("close_time", "float64", "s", "simulated time the close rule fired",
                  "NaN when it never fired", lambda r: r.close_time),
    TrialVariable("psi_1", "float64", "J", "Psi_1: strain energy of pad 0 at closing", "NaN without closing",
                  lambda r: r.psi[0]),
    TrialVariable("psi_2", "float64", "J", "Psi_2: strain energy of pad 1 at closing", "NaN without closing",
                  lambda r: r.psi[1]),
    TrialVariable("force_1", "float64", "N", "F_1: normal force of pad 0 on the object at closing",
                  "NaN without closing", lambda r: r.close_forces[0]),
    TrialVariable("force_2", "float64", "N", "F_2: normal force of pad 1 on the object at closing",
                  "NaN without closing", lambda r: r.close_forces[1]),
    TrialVariable("start_opening", "float64", "m", "gap between the pads' front faces when the squeeze starts",
                  "", lambda r: r.start_opening),
    TrialVariable("close_opening", "float64", "m", "gap between the pads' front faces at closing",
                  "NaN without closing", lambda r: r.close_opening),
    TrialVariable("object_translation", "float64", "m", "largest object translation during the squeeze",
                  "", lambda r: r.object_translation),
    TrialVariable("object_rotation", "float64", "rad", "largest object rotation angle during the squeeze",
                  "", lambda r: r.object_rotation),
    TrialVariable("object_lateral_translation", "float64", "m",
                  "largest object translation across the closing direction during the squeeze",
                  "pushed_out when above pushed_out_translation", lambda r: r.object_lateral_translation),
    TrialVariable("grip_slide", "float64", "m",
                  "largest slide of the object along the pads, relative to the gripper, in the lift and hold",
                  "its point at the grasp centre (grasp.grip_motion)", lambda r: r.grip_slide),
    TrialVariable("grip_pivot", "float64", "rad",
                  "largest rotation of the object about the grasp axis, relative to the gripper, in the lift and hold",
                  "unsigned", lambda r: r.grip_pivot),
    TrialVariable("grip_roll", "float64", "rad",
                  "largest rotation of the object about an axis across the grasp axis (rolling over the pads), "
                  "relative to the gripper, in the lift and hold", "", lambda r: r.grip_roll),
    TrialVariable("slip_kind", "str", None, "how a slip left the grip: slid, pivoted or rolled",
                  "the motion that moved the object's farthest point from the grasp axis most; empty unless slip",
                  lambda r: str(r.slip_kind)),
    TrialVariable("gravity_torque", "float64", "N m", "gravity torque m g d about the grasp axis at closing",
                  "d: lever_arm; NaN without closing", lambda r: r.gravity_torque),
    TrialVariable("lever_arm", "float64", "m",
                  "horizontal distance of the centre of mass from the grasp axis at closing",
                  "NaN without closing", lambda r: r.lever_arm),
    TrialVariable("torsional_capacity", "float64", "N m",
                  "the pads' torsional friction capacity about the grasp axis at closing (mu sum f_i r_i)",
                  "NaN without closing or where the model reports no point contact forces",
                  lambda r: r.torsional_capacity),
    TrialVariable("contact_radius", "float64", "m",
                  "radius a of the uniform-pressure disc with that capacity (2/3 mu F a per pad)",
                  "NaN where torsional_capacity is", lambda r: r.contact_radius),
    TrialVariable("contact_tilt", "float64", "rad",
                  "largest angle between a pad's resultant normal force and the grasp axis at closing",
                  "beyond atan(mu) the squeeze alone pushes the object along the pads", lambda r: r.contact_tilt),
    TrialVariable("lift_height", "float64", "m", "highest the object's lowest point got above the ground",
                  "", lambda r: r.lift_height),
    TrialVariable("min_distance", "float64", "m", "smallest contact distance over all steps",
                  "inf when no contact was ever within the barrier's activation distance", lambda r: r.min_distance),
    TrialVariable("newton_iterations", "int64", "1", "Newton iterations over the trial", "",
                  lambda r: r.newton_iterations),
    TrialVariable("steps", "int64", "1", "time steps over the trial", "", lambda r: r.steps),
    TrialVariable("newton_fallback_steps", "int64", "1", "steps accepted at IPC's looser Newton tolerance",
                  "Newton reached its iteration cap; see SolverSettings.newton_fallback_tolerance",
                  lambda r: r.newton_fallback_steps),
    TrialVariable("wall_time", "float64", "s", "wall-clock time of the trial",
                  "includes the optional shake and critical-mass phases", lambda r: r.wall_time),
    TrialVariable("grasp_wall_time", "float64", "s", "wall-clock time of the grasp trial itself",
                  "wall_time without the optional shake and critical-mass phases after the hold "
                  "(the runtime compared with the other models)", _grasp_wall_time),
    TrialVariable("max_penetration", "float64", "m", "largest interpenetration depth of any two bodies over the trial",
                  "measured, not assumed: 0 for IPC", lambda r: r.max_penetration),
    TrialVariable("max_force_gap", "float64", "m", "largest separation at which a contact force acted",
                  "IPC: below dhat; penalty: below 2 x margin", lambda r: r.max_force_gap),
    TrialVariable("s_cf", "float64", "1", "S_cf: contact force variation over the hold (Rocchi et al. eq. 7)",
                  "NaN without a hold", lambda r: r.s_cf),
    TrialVariable("s_cp", "float64", "m", "S_cp: contact position variation over the hold (Rocchi et al. eq. 8)",
                  "NaN without a hold", lambda r: r.s_cp),
    TrialVariable("s_cn", "float64", "1", "S_cn: contact normal variation over the hold (Rocchi et al. eq. 9)",
                  "NaN without a hold", lambda r: r.s_cn),
    TrialVariable("shake_outcome", "int8", None, "outcome of the shake test after the hold",
                  "CF flag variable: see flag_values and flag_meanings", _shake_flag),
    TrialVariable("critical_mass", "float64", "kg",
                  "critical mass: object mass at which it slipped in the mass ramp (PrendoSim)",
                  "NaN: not run, trial failed or solver failed in the ramp; inf: no slip up to max_mass",
                  lambda r: r.critical_mass),
    TrialVariable("critical_mass_force", "float64", "N", "mean pad normal force on the object just before the slip",
                  "NaN when not run", lambda r: r.critical_mass_force),
)

PREDICTION_ATTRS = {
    "success": {"long_name": "model predicts the grasp lifts the object"},
    "score": {"units": "1", "long_name": "model's continuous grasp score (higher is more robust)",
              "description": "NaN when the model has none"},
    "reason": {"long_name": "model's reason for its verdict"},
    "runtime": {"units": "s", "long_name": "wall-clock time of the prediction"},
}

@dataclass(frozen=True)
class InfoVariable:
    """One per-trial variable of a prediction cell, read from the model's `Prediction.info`:
    info[key] (info[key][index] when `index` is set; the first of `key`'s names present).
    dtype "float64" (NaN when absent), "bool" (False when absent) or "flag" (failure mode: a CF
    flag variable over FAILURE_FLAG_MEANINGS; None or "" = success, "error" when the prediction
    raised)."""

    name: str
    key: tuple
    dtype: str
    units: str | None
    long_name: str
    description: str = ""
    index: int | None = None


INFO_VARIABLES = {v.name: v for v in (
    InfoVariable("failure_mode", ("failure_mode",), "flag", None, "failure mode of the simulated trial",
                 "CF flag variable: see flag_values and flag_meanings (none = success)"),
    InfoVariable("force_1", ("close_forces",), "float64", "N", "F_1: normal force of pad 0 on the object at closing",
                 "NaN without closing", index=0),
    InfoVariable("force_2", ("close_forces",), "float64", "N", "F_2: normal force of pad 1 on the object at closing",
                 "NaN without closing", index=1),
    InfoVariable("max_penetration", ("max_penetration",), "float64", "m",
                 "largest interpenetration depth of any two bodies over the trial", "the penalty artifact"),
    InfoVariable("max_force_gap", ("max_force_gap", "force_gap"), "float64", "m",
                 "largest separation at which a contact force acted", "the force-field artifact"),
    InfoVariable("penetration_pad", ("penetration_pad",), "float64", "m",
                 "largest pad-object interpenetration depth over the trial"),
    InfoVariable("penetration_ground", ("penetration_ground",), "float64", "m",
                 "largest object-ground interpenetration depth over the trial"),
    InfoVariable("lift_height", ("lift_height",), "float64", "m",
                 "highest the object's lowest point got above the ground"),
    InfoVariable("object_translation", ("object_translation",), "float64", "m",
                 "largest object translation during the squeeze"),
    InfoVariable("object_rotation", ("object_rotation",), "float64", "rad",
                 "largest object rotation angle during the squeeze"),
    InfoVariable("s_cf", ("s_cf",), "float64", "1",
                 "S_cf: contact force variation over the hold (Rocchi et al. eq. 7)", "NaN without a hold"),
    InfoVariable("s_cp", ("s_cp",), "float64", "m",
                 "S_cp: contact position variation over the hold (Rocchi et al. eq. 8)", "NaN without a hold"),
    InfoVariable("s_cn", ("s_cn",), "float64", "1",
                 "S_cn: contact normal variation over the hold (Rocchi et al. eq. 9)", "NaN without a hold"),
    InfoVariable("load_factor", ("factor",), "float64", "1", "multiples of the object's weight the contacts resist",
                 "NaN when the jaws miss or cannot clear the object"),
    InfoVariable("jaw_width", ("width",), "float64", "m", "jaw opening where the closing pads first touch the object"),
    InfoVariable("predicted_translation", ("translation",), "float64", "m",
                 "image-space predicted object translation along the closing direction, T_d = D_t r / 2",
                 "Tan et al. eq. 10; NaN on a miss or a collision"),
    InfoVariable("d_t", ("d_t",), "float64", "1", "D_t: predicted object translation over half the opening range",
                 "Tan et al. eq. 10; NaN on a miss or a collision"),
    InfoVariable("r_r", ("r_r",), "float64", "rad", "R_r: predicted object rotation", "Tan et al. eq. 11"),
    InfoVariable("s_a", ("s_a",), "float64", "rad", "S_a: mean contact angle (type-1 slippage)", "Tan et al. eq. 14"),
    InfoVariable("s_f", ("s_f",), "float64", "m", "S_f: force-zone centre offset (type-2 slippage)",
                 "Tan et al. eq. 16"),
    InfoVariable("miss", ("miss",), "bool", None, "D_m: the grasp misses the silhouette",
                 "False also when the prediction raised (see reason)"),
    InfoVariable("collision", ("collision",), "bool", None, "D_c: a jaw collides with the silhouette",
                 "False also when the prediction raised (see reason)"),
)}
"""Every per-trial info variable a prediction cell may hold, by cube name."""

_DYNAMIC_INFO = ("failure_mode", "force_1", "force_2", "max_penetration", "max_force_gap")
MODEL_INFO = {
    "soft_point": ("load_factor", "jaw_width"),
    "reach": ("load_factor", "jaw_width"),
    "6dfc": ("load_factor", "jaw_width"),
    "image_quality": ("predicted_translation", "d_t", "r_r", "s_a", "s_f", "miss", "collision"),
    "penalty": _DYNAMIC_INFO + ("object_translation", "object_rotation", "lift_height", "s_cf", "s_cp", "s_cn"),
    "mujoco_flex": _DYNAMIC_INFO + ("penetration_pad", "penetration_ground", "lift_height"),
}
"""The INFO_VARIABLES each model's prediction cube keeps (models not listed keep none)."""


def _info_value(variable: InfoVariable, info: Mapping | None):
    """One trial's value of `variable` from its info (None: the prediction raised)."""
    if variable.dtype == "flag":
        if info is None:
            return FAILURE_FLAG_MEANINGS.index("error")
        mode = info.get(variable.key[0])
        return 0 if mode in (None, "") else FAILURE_FLAG_MEANINGS.index(mode)
    value = None
    for key in variable.key:
        if info is not None and key in info:
            value = info[key] if variable.index is None else info[key][variable.index]
            break
    if variable.dtype == "bool":
        return bool(value) if value is not None else False
    return float(value) if value is not None else float("nan")


SHARED_ATTRS = {
    "seed": {"units": "1", "long_name": "trial seed (grasp.perturbation.trial_seed of root seed, grasp, trial)",
             "description": "the same for every model and setting, so all see the same perturbed grasp"},
    "physical_success": {"long_name": "physical trial lifted the object (REACH label)"},
    "psi_th": {"units": "J", "long_name": "Psi_th: pad strain-energy threshold of the psi close rule",
               "description": "NaN under the force rule"},
}

SHARED_VARIABLES = ("seed", "physical_success")
"""Variables that depend only on (object, grasp, trial): not repeated along the merged settings."""


def _attrs(variable: TrialVariable | InfoVariable) -> dict:
    attrs = {"long_name": variable.long_name}
    if variable.units is not None:
        attrs["units"] = variable.units
    if variable.description:
        attrs["description"] = variable.description
    if variable.name in FLAGS:
        attrs["flag_values"] = np.arange(len(FLAGS[variable.name]), dtype=np.int8)
        attrs["flag_meanings"] = " ".join(FLAGS[variable.name])
    return attrs


def _coords(grasps: Sequence[int], n_trials: int, physical: np.ndarray, scalars: Mapping) -> dict:
    coords = {"grasp": ("grasp", np.asarray(grasps, dtype=np.int64), COORDINATE_ATTRS["grasp"]),
              "trial": ("trial", np.arange(n_trials, dtype=np.int64), COORDINATE_ATTRS["trial"]),
              "physical_trial": ("physical_trial", np.arange(physical.shape[1], dtype=np.int64),
                                 COORDINATE_ATTRS["physical_trial"])}
    for name, value in scalars.items():
        coords[name] = ((), value, COORDINATE_ATTRS.get(name, {}))
    return coords


def _shared(seeds, physical) -> dict:
    return {"seed": (("grasp", "trial"), np.asarray(seeds, dtype=np.int64), SHARED_ATTRS["seed"]),
            "physical_success": (("grasp", "physical_trial"), np.asarray(physical, dtype=bool),
                                 SHARED_ATTRS["physical_success"])}


def simulation_cell(results: Sequence[Sequence[GraspResult]], grasps: Sequence[int], seeds, physical,
                    scalars: Mapping, psi_th: float = float("nan"), attrs: Mapping | None = None) -> xr.Dataset:
    """A cell from results[g][t] (GraspResult of grasp `grasps[g]`, trial t), the trial seeds
    (G, T), the physical trials of the same grasps (G, P) and scalar coordinates (e.g. jaw, rule,
    E, mu, object). psi_th (J) is the psi rule's threshold used (NaN under the force rule)."""
    n_trials = np.shape(seeds)[1]
    data = {}
    for variable in SIMULATION_VARIABLES:
        values = [[variable.read(r) for r in row] for row in results]
        dtype = object if variable.dtype == "str" else variable.dtype
        data[variable.name] = (("grasp", "trial"), np.array(values, dtype=dtype).reshape(len(results), n_trials),
                               _attrs(variable))
    data.update(_shared(seeds, physical))
    data["psi_th"] = ((), float(psi_th), SHARED_ATTRS["psi_th"])
    return xr.Dataset(data, coords=_coords(grasps, n_trials, np.asarray(physical), scalars), attrs=dict(attrs or {}))


def prediction_cell(success, score, runtime, reason, grasps: Sequence[int], seeds, physical, scalars: Mapping,
                    attrs: Mapping | None = None, info: Sequence[Sequence[Mapping | None]] | None = None,
                    variables: Sequence[str] = ()) -> xr.Dataset:
    """A cell of a baseline model's predictions, each argument (G, T) over grasps x trials.
    `info[g][t]` is that trial's `Prediction.info` (None when the prediction raised); `variables`
    names the INFO_VARIABLES to keep from it (e.g. MODEL_INFO[model])."""
    success = np.asarray(success, dtype=bool)
    data = {"success": (("grasp", "trial"), success, PREDICTION_ATTRS["success"]),
            "score": (("grasp", "trial"), np.asarray(score, dtype=np.float64), PREDICTION_ATTRS["score"]),
            "runtime": (("grasp", "trial"), np.asarray(runtime, dtype=np.float64), PREDICTION_ATTRS["runtime"]),
            "reason": (("grasp", "trial"), np.asarray(reason, dtype=object), PREDICTION_ATTRS["reason"])}
    unknown = sorted(set(variables) - set(INFO_VARIABLES))
    if unknown:
        raise ValueError(f"unknown prediction info variables {unknown}; known: {', '.join(INFO_VARIABLES)}")
    if variables and info is None:
        raise ValueError("prediction_cell needs `info` to keep info variables")
    for name in variables:
        variable = INFO_VARIABLES[name]
        dtype = {"flag": np.int8, "bool": bool, "float64": np.float64}[variable.dtype]
        values = np.array([[_info_value(variable, trial) for trial in row] for row in info], dtype=dtype)
        data[name] = (("grasp", "trial"), values.reshape(success.shape), _attrs(variable))
    data.update(_shared(seeds, physical))
    return xr.Dataset(data, coords=_coords(grasps, success.shape[1], np.asarray(physical), scalars),
                      attrs=dict(attrs or {}))


def merge_cells(cells: Sequence[xr.Dataset], dims: Sequence[str], attrs: Mapping | None = None) -> xr.Dataset:
    """Stack cells along their scalar coordinates `dims` (in this order, each sorted) into one
    cube with dims (*dims, grasp, trial, physical_trial); a name of `dims` may also be a dimension
    the cells already have (e.g. object, in cells that each hold several objects). The cells must
    tile the product of the coordinate values. SHARED_VARIABLES keep only the `object` dim of
    `dims` (they must not differ along the others). Attributes: those all cells agree on, updated
    with `attrs`."""
    if not cells:
        raise ValueError("no cells to merge")
    dims = list(dims)
    missing = [d for d in dims if d not in cells[0].coords]
    if missing:
        raise ValueError(f"cells lack the coordinates {missing} to merge along")
    scalar = [d for d in dims if cells[0][d].ndim == 0]
    shared_scalar = [d for d in scalar if d == "object"]
    shared = {}
    for cell in cells:
        key = tuple(cell[d].item() for d in shared_scalar)
        expanded = cell[list(SHARED_VARIABLES)].drop_vars([d for d in scalar if d not in shared_scalar])
        if key in shared:
            if not shared[key].drop_attrs().identical(expanded.drop_attrs()):
                raise ValueError(f"cells of {dict(zip(shared_scalar, key))} disagree on {SHARED_VARIABLES} "
                                 "(different grasps, trials, seeds or physical data); they cannot be merged")
        else:
            shared[key] = expanded
    stacked = [cell.drop_vars(list(SHARED_VARIABLES)).expand_dims(scalar) for cell in cells]
    cube = xr.combine_by_coords(stacked, combine_attrs="drop_conflicts", data_vars="all", coords="different",
                                compat="equals", join="outer")
    shared_cube = xr.combine_by_coords([s.expand_dims(shared_scalar) for s in shared.values()],
                                       combine_attrs="drop_conflicts", join="outer") if shared_scalar \
        else next(iter(shared.values()))
    cube = xr.merge([cube, shared_cube], compat="no_conflicts", combine_attrs="override", join="outer").sortby(dims)
    for d in dims:
        cube[d].attrs = COORDINATE_ATTRS.get(d, {})
    for name in SHARED_VARIABLES:
        cube[name].attrs = SHARED_ATTRS[name]
    cube.attrs.update(attrs or {})
    order = [d for d in (*dims, "grasp", "trial", "physical_trial") if d in cube.dims]
    # the cells' on-disk encodings must not carry over: a string variable read from a cell keeps
    # that cell's fixed width, and the merged cube would truncate every longer reason to it
    return cube.transpose(*order).drop_encoding()


def join_parts(cells: Sequence[xr.Dataset], grasps: Sequence[int]) -> xr.Dataset:
    """One cell from cells of the same setting that hold disjoint parts of its grasps (e.g.
    `split.grasp_part`'s; a part may hold none), with the grasps in the order of `grasps`: the cell
    one job over all of them would have made, up to each trial's runtime. Attributes: the first
    cell's."""
    if not cells:
        raise ValueError("no cells to join")
    found = np.concatenate([cell.grasp.values for cell in cells])
    if sorted(found.tolist()) != sorted(int(g) for g in grasps) or len(set(found.tolist())) != len(found):
        raise ValueError(f"the parts hold the grasps {sorted(found.tolist())}, not each of {sorted(grasps)} once: "
                         "a part is missing, repeated or from another split")
    joined = xr.concat(cells, dim="grasp", data_vars="minimal", coords="minimal", compat="equals",
                       combine_attrs="override", join="exact")
    return joined.sel(grasp=np.asarray(grasps, dtype=np.int64)).drop_encoding()


def robustness(cube: xr.Dataset) -> xr.DataArray:
    """Predicted robustness: the fraction of successful trials per grasp (NaN where not run)."""
    return cube.success.astype(np.float64).mean("trial")


def physical_robustness(cube: xr.Dataset) -> xr.DataArray:
    """Physical robustness: the fraction of successful physical trials per grasp."""
    return cube.physical_success.astype(np.float64).mean("physical_trial")


def mean_critical_mass(cube: xr.Dataset, cap: float | None = None) -> xr.DataArray:
    """Mean critical mass per grasp (kg), a continuous stability score (PrendoSim): per trial,
    a trial that did not hold the object counts as 0 kg, one that never slipped up to the ramp's
    cap (inf) as the cap, and a trial whose ramp failed (NaN after a success) is left out.
    `cap` (kg): default the critical_mass variable's `max_mass` attribute. NaN where no trial is
    left."""
    mass = cube.critical_mass
    if cap is None:
        cap = mass.attrs.get("max_mass")
    if cap is None and bool(np.isinf(mass).any()):
        raise ValueError("critical masses include inf (no slip up to the cap): pass cap=max_mass (kg)")
    per_trial = xr.where(cube.success, mass, 0.0)
    if cap is not None:
        per_trial = xr.where(np.isinf(per_trial), float(cap), per_trial)
    return per_trial.mean("trial", skipna=True).assign_attrs(
        units="kg", long_name="mean critical mass over the trials (failed trials: 0 kg; no slip: the cap)")


def failure_mode_names(flags) -> np.ndarray:
    """Flag values of failure_mode -> their names (FAILURE_FLAG_MEANINGS); NaN -> ""."""
    flags = np.asarray(flags, dtype=np.float64)
    names = np.array(FAILURE_FLAG_MEANINGS + ("",), dtype=object)
    index = np.where(np.isfinite(flags), flags, len(FAILURE_FLAG_MEANINGS)).astype(np.int64)
    return names[index]


def write_netcdf_atomic(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write `ds` as NetCDF-4 to `path` atomically (`ipcgrasp.io.atomic_path`)."""
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp, engine="netcdf4")
    return Path(path)


def read_cube(path: str | os.PathLike) -> xr.Dataset:
    """Load a NetCDF cube fully into memory and close the file."""
    with xr.open_dataset(path, engine="netcdf4") as ds:
        return ds.load()
