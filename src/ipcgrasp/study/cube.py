"""Result cubes: per-trial grasp outcomes as xarray Datasets in NetCDF (DESIGN.md section 5).

A *cell* holds the trials of one simulation job: dims (grasp, trial), scalar coordinates for the
settings it ran with (jaw, rule, E, mu, object, ...), and the physical trials of the same grasps
over (grasp, physical_trial). `merge_cells` stacks cells along those scalar coordinates into a
cube, e.g. dims (E, mu, rule, object, grasp, trial) for one jaw of the grid. Every variable
carries units, long_name and description (CF conventions; the failure mode is a CF flag
variable); cubes carry provenance attributes (`study.provenance`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from ipcgrasp.grasp.outcome import FAILURE_MODES, GraspResult

FAILURE_FLAG_MEANINGS = ("none",) + FAILURE_MODES
"""failure_mode flag meanings; flag value k means FAILURE_FLAG_MEANINGS[k] (0: the trial succeeded)."""

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
    "subdivisions": {"units": "1", "long_name": "times the object mesh was subdivided (each: 4x the faces)"},
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
    TrialVariable("lift_height", "float64", "m", "highest the object's lowest point got above the ground",
                  "", lambda r: r.lift_height),
    TrialVariable("min_distance", "float64", "m", "smallest contact distance over all steps",
                  "inf when no contact was ever within the barrier's activation distance", lambda r: r.min_distance),
    TrialVariable("newton_iterations", "int64", "1", "Newton iterations over the trial", "",
                  lambda r: r.newton_iterations),
    TrialVariable("steps", "int64", "1", "time steps over the trial", "", lambda r: r.steps),
    TrialVariable("wall_time", "float64", "s", "wall-clock time of the trial", "", lambda r: r.wall_time),
)

PREDICTION_ATTRS = {
    "success": {"long_name": "model predicts the grasp lifts the object"},
    "score": {"units": "1", "long_name": "model's continuous grasp score (higher is more robust)",
              "description": "NaN when the model has none"},
    "reason": {"long_name": "model's reason for its verdict"},
    "runtime": {"units": "s", "long_name": "wall-clock time of the prediction"},
}

SHARED_ATTRS = {
    "seed": {"units": "1", "long_name": "trial seed (grasp.perturbation.trial_seed of root seed, grasp, trial)",
             "description": "the same for every model and setting, so all see the same perturbed grasp"},
    "physical_success": {"long_name": "physical trial lifted the object (REACH label)"},
    "psi_th": {"units": "J", "long_name": "Psi_th: pad strain-energy threshold of the psi close rule",
               "description": "NaN under the force rule"},
}

SHARED_VARIABLES = ("seed", "physical_success")
"""Variables that depend only on (object, grasp, trial): not repeated along the merged settings."""


def _attrs(variable: TrialVariable) -> dict:
    attrs = {"long_name": variable.long_name}
    if variable.units is not None:
        attrs["units"] = variable.units
    if variable.description:
        attrs["description"] = variable.description
    if variable.name == "failure_mode":
        attrs["flag_values"] = np.arange(len(FAILURE_FLAG_MEANINGS), dtype=np.int8)
        attrs["flag_meanings"] = " ".join(FAILURE_FLAG_MEANINGS)
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
    n_trials = len(results[0]) if len(results) else 0
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
                    attrs: Mapping | None = None) -> xr.Dataset:
    """A cell of a baseline model's predictions, each argument (G, T) over grasps x trials."""
    success = np.asarray(success, dtype=bool)
    data = {"success": (("grasp", "trial"), success, PREDICTION_ATTRS["success"]),
            "score": (("grasp", "trial"), np.asarray(score, dtype=np.float64), PREDICTION_ATTRS["score"]),
            "runtime": (("grasp", "trial"), np.asarray(runtime, dtype=np.float64), PREDICTION_ATTRS["runtime"]),
            "reason": (("grasp", "trial"), np.asarray(reason, dtype=object), PREDICTION_ATTRS["reason"])}
    data.update(_shared(seeds, physical))
    return xr.Dataset(data, coords=_coords(grasps, success.shape[1], np.asarray(physical), scalars),
                      attrs=dict(attrs or {}))


def merge_cells(cells: Sequence[xr.Dataset], dims: Sequence[str], attrs: Mapping | None = None) -> xr.Dataset:
    """Stack cells along their scalar coordinates `dims` (in this order, each sorted) into one
    cube with dims (*dims, grasp, trial, physical_trial). The cells must tile the product of
    the coordinate values. SHARED_VARIABLES keep only the `object` dim of `dims` (they must not
    differ along the others). Attributes: those all cells agree on, updated with `attrs`."""
    if not cells:
        raise ValueError("no cells to merge")
    dims = list(dims)
    missing = [d for d in dims if d not in cells[0].coords or cells[0][d].ndim != 0]
    if missing:
        raise ValueError(f"cells lack the scalar coordinates {missing} to merge along")
    shared_dims = [d for d in dims if d == "object"]
    shared = {}
    for cell in cells:
        key = tuple(cell[d].item() for d in shared_dims)
        expanded = cell[list(SHARED_VARIABLES)].drop_vars([d for d in dims if d not in shared_dims])
        if key in shared:
            if not shared[key].drop_attrs().identical(expanded.drop_attrs()):
                raise ValueError(f"cells of {dict(zip(shared_dims, key))} disagree on {SHARED_VARIABLES} "
                                 "(different grasps, trials, seeds or physical data); they cannot be merged")
        else:
            shared[key] = expanded
    stacked = [cell.drop_vars(list(SHARED_VARIABLES)).expand_dims(dims) for cell in cells]
    cube = xr.combine_by_coords(stacked, combine_attrs="drop_conflicts", data_vars="all", coords="different",
                                compat="equals", join="outer")
    shared_cube = xr.combine_by_coords([s.expand_dims(shared_dims) for s in shared.values()],
                                       combine_attrs="drop_conflicts", join="outer") if shared_dims \
        else next(iter(shared.values()))
    cube = xr.merge([cube, shared_cube], compat="no_conflicts", combine_attrs="override", join="outer").sortby(dims)
    for d in dims:
        cube[d].attrs = COORDINATE_ATTRS.get(d, {})
    for name in SHARED_VARIABLES:
        cube[name].attrs = SHARED_ATTRS[name]
    cube.attrs.update(attrs or {})
    order = [d for d in (*dims, "grasp", "trial", "physical_trial") if d in cube.dims]
    return cube.transpose(*order)


def robustness(cube: xr.Dataset) -> xr.DataArray:
    """Predicted robustness: the fraction of successful trials per grasp (NaN where not run)."""
    return cube.success.astype(np.float64).mean("trial")


def physical_robustness(cube: xr.Dataset) -> xr.DataArray:
    """Physical robustness: the fraction of successful physical trials per grasp."""
    return cube.physical_success.astype(np.float64).mean("physical_trial")


def failure_mode_names(flags) -> np.ndarray:
    """Flag values of failure_mode -> their names (FAILURE_FLAG_MEANINGS); NaN -> ""."""
    flags = np.asarray(flags, dtype=np.float64)
    names = np.array(FAILURE_FLAG_MEANINGS + ("",), dtype=object)
    index = np.where(np.isfinite(flags), flags, len(FAILURE_FLAG_MEANINGS)).astype(np.int64)
    return names[index]


def value_label(value: float) -> str:
    """Short, exact text for a grid value in file names: 1e8 -> "1e8", 0.4 -> "0.4", 2.5e10 -> "2.5e10"."""
    v = float(value)
    if v != 0.0 and not 1e-3 <= abs(v) < 1e4:
        mantissa, exponent = f"{v:.12e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{v:.12g}"


def write_netcdf_atomic(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write `ds` as NetCDF-4 to a temporary file beside `path`, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        ds.to_netcdf(tmp, engine="netcdf4")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_cube(path: str | os.PathLike) -> xr.Dataset:
    """Load a NetCDF cube fully into memory and close the file."""
    with xr.open_dataset(path, engine="netcdf4") as ds:
        return ds.load()
