"""The trajectory of a grasp trial: what every step of the procedure did, as an xarray Dataset
written to NetCDF with the conventions of the study's cubes (units and long_name on every
variable; the trial's parameters, seed and the ipcgrasp version as attributes).

`GraspProcedure` appends one `StepRecord` per accepted step to `GraspResult.trajectory` when the
trial is simulated with record="trajectory" (`simulate_grasp`); `trajectory_dataset` turns them
into a Dataset over dims time (one per step), pad (0, 1), contact (the pads' point contacts on the
object, padded to the largest count of any step; `n_pad_contacts` says how many of each step are
real, the rest NaN), xyz and quaternion (w, x, y, z); optionally, for a trial that recorded frames too
(record=("frames", "trajectory")), the world vertex positions of every body (dims time,
<body>_vertex, xyz). A model that does not
report a quantity stores NaN for it (MuJoCo: friction forces, strain energies, ground reaction,
per-contact points and forces, Newton iterations, minimum distance).
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

import ipcgrasp
from ipcgrasp.file_kinds import TRAJECTORY, FileKindError, open_as
from ipcgrasp.geometry.quaternion import rotation_to_quaternion
from ipcgrasp.io import atomic_path

if TYPE_CHECKING:
    import xarray as xr

PHASES = ("settle", "squeeze", "lift", "hold", "shake", "critical_mass")
"""The procedure's phases, in order; flag value k of the `phase` variable means PHASES[k]."""


@dataclass(frozen=True)
class StepRecord:
    """One accepted step: time (s), phase (one of PHASES), object pose (position (3,) m, rotation
    (3, 3) world from object) and height (m, its lowest point above the ground), jaw opening (m,
    gap between the pads' front faces where the jaws were sent) and jaw lag (m), per pad (2,) the
    normal and friction force on the object (N) and the strain energy (J), the ground reaction on
    the object (3,) N, active contacts in the scene, the pads' point contacts (K, 3) m with their
    normal forces on the object (K, 3) N and pad (K,), the smallest contact distance (m) and the
    Newton iterations of the step; the wrist (gripper frame, (4, 4)) and each jaw's tooltip frame
    ((2, 4, 4)) in the world where the procedure sent them, m; the object's motion relative to the
    gripper since the close rule fired (`grasp.grip_motion`): grip_slide (m), how far its point
    at the grasp centre slid along the pads, and grip_pivot (rad, signed about the grasp axis, jaw
    0's closing direction), how far it turned about the grasp axis, and grip_roll (rad), how far it
    turned about an axis across it (NaN before the close)."""

    time: float
    phase: str
    object_position: np.ndarray
    object_rotation: np.ndarray
    object_height: float
    jaw_opening: float
    jaw_lag: float
    pad_normal_force: tuple
    pad_friction_force: tuple
    pad_strain_energy: tuple
    ground_reaction: tuple
    n_contacts: float
    contact_points: np.ndarray
    contact_forces: np.ndarray
    contact_pads: np.ndarray
    min_distance: float
    newton_iterations: int
    wrist_pose: np.ndarray
    jaw_poses: np.ndarray
    grip_slide: float = float("nan")
    grip_pivot: float = float("nan")
    grip_roll: float = float("nan")


@dataclass(frozen=True)
class _Variable:
    dims: tuple
    units: str | None
    long_name: str
    description: str = ""


VARIABLES = {
    "phase": _Variable(("time",), None, "phase of the grasp procedure",
                       "CF flag variable: see flag_values and flag_meanings; phase_name holds the names"),
    "phase_name": _Variable(("time",), None, "phase of the grasp procedure (name)", "one of: " + " ".join(PHASES)),
    "object_position": _Variable(("time", "xyz"), "m", "object origin in the world (mesh frame)"),
    "object_rotation": _Variable(("time", "xyz", "xyz_body"), "1", "object rotation matrix, world from object"),
    "object_quaternion": _Variable(("time", "quaternion"), "1", "object rotation, world from object",
                                   "unit quaternion w x y z (w >= 0)"),
    "wrist_position": _Variable(("time", "xyz"), "m", "gripper frame origin in the world where the wrist was sent",
                                "the grasp pose raised by the lift; gripper frame: x closing axis, z approach"),
    "wrist_quaternion": _Variable(("time", "quaternion"), "1", "gripper frame rotation, world from gripper",
                                  "unit quaternion w x y z (w >= 0)"),
    "jaw_position": _Variable(("time", "pad", "xyz"), "m", "jaw's tooltip frame origin in the world where it was sent",
                              "centre of the pad's front face; z its closing direction; jaw_lag: how far it lags"),
    "jaw_quaternion": _Variable(("time", "pad", "quaternion"), "1", "jaw's tooltip frame rotation, world from tooltip",
                                "unit quaternion w x y z (w >= 0)"),
    "object_height": _Variable(("time",), "m", "height of the object's lowest point above the ground"),
    "jaw_opening": _Variable(("time",), "m", "gap between the pads' front faces where the jaws were sent",
                             "start opening - 2 x the closing distance each jaw was sent"),
    "jaw_lag": _Variable(("time",), "m", "distance of a driven jaw point from where it was sent",
                         "0 when the jaws got there"),
    "pad_normal_force": _Variable(("time", "pad"), "N", "pad's normal contact force on the object",
                                  "norm of the resultant of its contact forces"),
    "pad_friction_force": _Variable(("time", "pad"), "N", "pad's friction force on the object",
                                    "norm of the resultant; NaN where the model does not report it"),
    "pad_strain_energy": _Variable(("time", "pad"), "J", "pad's Neo-Hookean strain energy",
                                   "NaN where the model has none"),
    "ground_reaction": _Variable(("time", "xyz"), "N", "ground's force on the object (normal + friction)",
                                 "NaN where the model does not report it"),
    "n_contacts": _Variable(("time",), "1", "active contacts in the scene (all body pairs and the ground)",
                            "NaN where the model does not report them"),
    "n_pad_contacts": _Variable(("time",), "1", "pads' point contacts on the object this step",
                                "the first n of the contact dimension are real, the rest NaN"),
    "contact_point": _Variable(("time", "contact", "xyz"), "m", "pad-object contact point in the world",
                               "midpoint of the closest points of a contact pair; NaN padding"),
    "contact_force": _Variable(("time", "contact", "xyz"), "N", "normal contact force on the object at the point",
                               "NaN padding; NaN where the model cannot attribute forces to points (penalty)"),
    "contact_pad": _Variable(("time", "contact"), "1", "pad of the contact (0 or 1; -1: padding)"),
    "grip_slide": _Variable(("time",), "m", "object's slide along the pads since the close",
                            "displacement, relative to the gripper and across the grasp axis, of the object's point "
                            "that was at the grasp centre (between the pads' pressure centres) when the close rule "
                            "fired; NaN before"),
    "grip_pivot": _Variable(("time",), "rad", "object's rotation about the grasp axis since the close",
                            "rotation relative to the gripper, signed about jaw 0's closing direction; NaN before "
                            "the close rule fired"),
    "grip_roll": _Variable(("time",), "rad", "object's rotation across the grasp axis since the close",
                           "size of the component, across the grasp axis, of its rotation vector relative to the "
                           "gripper: the object rolling over the pads; NaN before the close rule fired"),
    "min_distance": _Variable(("time",), "m", "smallest contact distance of the step",
                              "inf when no contact is within the activation distance"),
    "newton_iterations": _Variable(("time",), "1", "Newton iterations of the step", "0 where the model has none"),
}
"""Every per-step variable of a trajectory (besides the vertex positions)."""


def step_record(report, phase: str, object_pose, object_height: float, jaw_opening: float,
                contacts, wrist_pose, jaw_poses, grip=(float("nan"),) * 3) -> StepRecord:
    """A StepRecord from a backend's StepReport, the phase, the object's pose (4x4) and height
    (m), the jaw opening (m), the backend's `pad_contacts()` (points, forces, pads), the
    wrist's and jaws' poses where they were sent (4x4, (2, 4, 4)) and the object's (slide m,
    pivot rad, roll rad) in the grip since the close."""
    points, forces, pads = contacts
    pose = np.asarray(object_pose, dtype=np.float64)
    return StepRecord(report.time, phase, pose[:3, 3].copy(), pose[:3, :3].copy(), float(object_height),
                      float(jaw_opening), report.jaw_lag, report.pad_forces, report.pad_frictions,
                      report.pad_energies, report.ground_reaction, report.n_contacts, points, forces, pads,
                      report.min_distance, report.newton_iterations, np.array(wrist_pose, dtype=np.float64),
                      np.array(jaw_poses, dtype=np.float64), *(float(g) for g in grip))


def _padded(rows, width: int, fill, dtype) -> np.ndarray:
    """Stack (k_i, ...) arrays into (n, width, ...) with `fill` after each row's k_i."""
    tail = np.asarray(rows[0]).shape[1:] if rows else ()
    out = np.full((len(rows), width, *tail), fill, dtype=dtype)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out


def trajectory_dataset(result, params=None, attrs: dict | None = None, vertices: bool = False) -> xr.Dataset:
    """The trajectory of a trial simulated with record="trajectory" (GraspResult) as a Dataset.
    Attributes: the trial's outcome (success, failure_mode, reason, squeeze_time and close_time in
    s), its seed, `params` (SimParams) as JSON and one attribute per field (`param_<name>`), the
    ipcgrasp version, the creation time and `attrs` (e.g. object, grasp). With `vertices` (the
    trial must also have recorded frames) each body's vertex positions per step
    (`vertices_<body>`, m) and surface triangles (`faces_<body>`)."""
    steps = result.trajectory
    if not steps:
        raise ValueError("the trial has no trajectory; simulate it with record=\"trajectory\"")
    width = max(len(s.contact_points) for s in steps)
    rotations = np.array([s.object_rotation for s in steps])
    wrists, jaws = np.array([s.wrist_pose for s in steps]), np.array([s.jaw_poses for s in steps])
    values = {
        "phase": np.array([PHASES.index(s.phase) for s in steps], dtype=np.int8),
        "phase_name": np.array([s.phase for s in steps], dtype=object),
        "object_position": np.array([s.object_position for s in steps]),
        "object_rotation": rotations,
        "object_quaternion": rotation_to_quaternion(rotations),
        "wrist_position": wrists[:, :3, 3],
        "wrist_quaternion": rotation_to_quaternion(wrists[:, :3, :3]),
        "jaw_position": jaws[:, :, :3, 3],
        "jaw_quaternion": rotation_to_quaternion(jaws[:, :, :3, :3]),
        "object_height": np.array([s.object_height for s in steps]),
        "jaw_opening": np.array([s.jaw_opening for s in steps]),
        "jaw_lag": np.array([s.jaw_lag for s in steps]),
        "pad_normal_force": np.array([s.pad_normal_force for s in steps], dtype=np.float64),
        "pad_friction_force": np.array([s.pad_friction_force for s in steps], dtype=np.float64),
        "pad_strain_energy": np.array([s.pad_strain_energy for s in steps], dtype=np.float64),
        "ground_reaction": np.array([s.ground_reaction for s in steps], dtype=np.float64),
        "n_contacts": np.array([s.n_contacts for s in steps], dtype=np.float64),
        "n_pad_contacts": np.array([len(s.contact_points) for s in steps], dtype=np.int64),
        "contact_point": _padded([s.contact_points for s in steps], width, np.nan, np.float64),
        "contact_force": _padded([s.contact_forces for s in steps], width, np.nan, np.float64),
        "contact_pad": _padded([s.contact_pads for s in steps], width, -1, np.int8),
        "grip_slide": np.array([s.grip_slide for s in steps], dtype=np.float64),
        "grip_pivot": np.array([s.grip_pivot for s in steps], dtype=np.float64),
        "grip_roll": np.array([s.grip_roll for s in steps], dtype=np.float64),
        "min_distance": np.array([s.min_distance for s in steps], dtype=np.float64),
        "newton_iterations": np.array([s.newton_iterations for s in steps], dtype=np.int64),
    }
    data = {}
    for name, v in VARIABLES.items():
        var_attrs = {"long_name": v.long_name}
        if v.units is not None:
            var_attrs["units"] = v.units
        if v.description:
            var_attrs["description"] = v.description
        if name == "phase":
            var_attrs.update(flag_values=np.arange(len(PHASES), dtype=np.int8), flag_meanings=" ".join(PHASES))
        data[name] = (v.dims, values[name], var_attrs)
    if vertices:
        data.update(_vertices(result, len(steps)))
    coords = {"time": ("time", np.array([s.time for s in steps]), {"units": "s", "long_name": "simulated time"}),
              "pad": ("pad", np.arange(2), {"units": "1", "long_name": "pad (jaw) index"}),
              "xyz": ("xyz", ["x", "y", "z"], {"long_name": "world axis (z up)"}),
              "xyz_body": ("xyz_body", ["x", "y", "z"], {"long_name": "object frame axis"}),
              "quaternion": ("quaternion", ["w", "x", "y", "z"], {"long_name": "unit quaternion component"})}
    import xarray as xr  # here, not at import: a trial records steps without it (a process's start)

    return xr.Dataset(data, coords=coords, attrs=_attrs(result, params, attrs))


def _vertices(result, n_steps: int) -> dict:
    """vertices_<body> (time, <body>_vertex, xyz) m from the recorded frames (the first frame is
    the state before the first step) and faces_<body>."""
    if not result.frames:
        raise ValueError("the trial recorded no frames: simulate it with record=(\"frames\", \"trajectory\") "
                         "to keep vertex positions")
    frames = result.frames[1:]
    if len(frames) != n_steps:
        raise ValueError(f"{len(frames)} frames after the start for {n_steps} trajectory steps")
    out = {}
    for body in result.faces:
        out[f"vertices_{body}"] = (("time", f"{body}_vertex", "xyz"), np.array([f[body] for f in frames]),
                                   {"units": "m", "long_name": f"world vertex positions of {body}"})
        out[f"faces_{body}"] = ((f"{body}_face", "corner"), np.asarray(result.faces[body], dtype=np.int64),
                                {"units": "1", "long_name": f"surface triangles of {body} (vertex indices)"})
    return out


def _attrs(result, params, extra) -> dict:
    attrs = {"success": int(result.success), "failure_mode": result.failure_mode or "none",
             "reason": result.reason, "squeeze_time": result.squeeze_time, "close_time": result.close_time,
             "seed": -1 if result.seed is None else int(result.seed),
             "ipcgrasp_version": ipcgrasp.__version__,
             "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "Conventions": "CF-1.10"}
    if params is not None:
        fields = params.to_dict()
        attrs["params"] = json.dumps(fields, sort_keys=True)
        attrs.update({f"param_{k}": (int(v) if isinstance(v, bool) else v) for k, v in fields.items()
                      if v is not None})
    attrs.update(extra or {})
    return attrs


def write_trajectory(result, path: str | os.PathLike, params=None, vertices: bool = False, **attrs) -> Path:
    """Write `trajectory_dataset(result, params, attrs, vertices)` as NetCDF-4 to `path` atomically
    (zlib-compressed: the NaN padding of the contacts costs little)."""
    ds = trajectory_dataset(result, params, attrs, vertices)
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp, engine="netcdf4", encoding={name: {"zlib": True, "complevel": 4} for name in ds.data_vars})
    return Path(path)


def read_trajectory(path: str | os.PathLike) -> xr.Dataset:
    """Load a trajectory file fully into memory and close it. FileKindError naming the file and
    the fix when it is not a trajectory (`file_kinds.open_as`: another kind of file, not NetCDF)
    or its phases cannot be read (`check_phases`)."""
    ds = open_as(path, TRAJECTORY)
    check_phases(ds, path)
    return ds


def check_phases(ds: xr.Dataset, path: str | os.PathLike) -> None:
    """FileKindError unless the trajectory `ds` (read from `path`) has a step and its `phase`
    flags name their phases: a `flag_meanings` attribute, every flag an index into it."""
    fix = "write the trajectory again (`ipcgrasp simulate --trajectory` or `replay --trajectory`)"
    if ds.phase.size == 0:
        raise FileKindError(f"{path}: the trajectory has no step; fix: {fix}")
    meanings = ds.phase.attrs.get("flag_meanings")
    names = meanings.split() if isinstance(meanings, str) else []
    if not names:
        raise FileKindError(f"{path}: the phase variable has no flag_meanings attribute (the names of its flag "
                            f"values, e.g. {' '.join(PHASES)!r}); fix: {fix}")
    flags = np.asarray(ds.phase.values, dtype=np.float64).ravel()
    bad = np.flatnonzero(~np.isin(flags, np.arange(len(names))))
    if bad.size:
        raise FileKindError(f"{path}: phase flag {flags[bad[0]]:g} at step {bad[0]} is not one of the flag values "
                            f"0..{len(names) - 1} ({' '.join(names)}); fix: {fix}")
