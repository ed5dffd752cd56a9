"""Poses a user gives on the command line (`simulate --grasp-pose`, `--object-pose`) or in a
pose file (`simulate --pose pose.json`): a 4x4 homogeneous transform, or a position (m) and a
unit quaternion. Each is checked into a 4x4 rigid transform (`pose.rigid_pose`); anything else
raises `PoseError` naming the field and the fix. docs/simulate_mesh.md states the frames.

A pose file is a JSON object with `grasp_pose` (required) and `object_pose` (optional), each
either 4 rows of 4 numbers or {"position": [x, y, z], "quaternion_wxyz": [w, x, y, z]}
(or "quaternion_xyzw": [x, y, z, w], the order of ROS and scipy).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ipcgrasp.geometry.quaternion import quaternion_to_rotation
from ipcgrasp.grasp.pose import PoseError, rigid_pose

POSE_NUMBERS = "16 numbers (a 4x4 transform, row by row) or 7 (position x y z in m, then quaternion w x y z)"
"""What a pose on the command line is."""
QUATERNION_NORM_TOLERANCE = 1e-3
"""| |q| - 1 | up to which a quaternion is taken as a rounded unit quaternion and normalised."""
POSE_FILE_KEYS = ("grasp_pose", "object_pose")
QUATERNION_KEYS = {"quaternion_wxyz": (0, 1, 2, 3), "quaternion_xyzw": (3, 0, 1, 2)}
"""Quaternion keys of a pose file and the indices that put each in (w, x, y, z) order."""


@dataclass(frozen=True, eq=False)
class PoseFile:
    """A pose file's poses: the gripper frame in the object's mesh frame, and the mesh frame in
    the world (None: the object's most stable resting pose), 4x4, m."""

    grasp_pose: np.ndarray
    object_pose: np.ndarray | None


def position_quaternion_pose(position, wxyz, name: str) -> np.ndarray:
    """The 4x4 pose of `position` (3 numbers, m) and the quaternion `wxyz` (w, x, y, z: unit, to
    within QUATERNION_NORM_TOLERANCE, then normalised); PoseError naming `name` otherwise."""
    position = _numbers(position, 3, f"{name} position", "x y z in metres")
    wxyz = _numbers(wxyz, 4, f"{name} quaternion", "w x y z")
    norm = float(np.linalg.norm(wxyz))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise PoseError(f"{name} quaternion {wxyz.tolist()}: norm {norm:.6g}, must be 1 (a unit quaternion, to "
                        f"within {QUATERNION_NORM_TOLERANCE:g}); fix: give a rotation's unit quaternion in the order "
                        "w x y z (the identity is 1 0 0 0)")
    pose = np.eye(4)
    pose[:3, :3] = quaternion_to_rotation(wxyz / norm)
    pose[:3, 3] = position
    return pose


def pose_from_numbers(values, name: str) -> np.ndarray:
    """A pose from the command line: 16 numbers (4x4, rows) or 7 (x y z, w x y z); PoseError
    naming the option `name` otherwise."""
    values = list(values)
    if len(values) == 16:
        return rigid_pose(np.reshape(np.asarray(values, dtype=np.float64), (4, 4)), name)
    if len(values) == 7:
        return position_quaternion_pose(values[:3], values[3:], name)
    raise PoseError(f"{name}: {len(values)} numbers; fix: give {POSE_NUMBERS}")


def pose_from_value(value, name: str) -> np.ndarray:
    """A pose from a pose file's field `name`: 4 rows of 4 numbers, or a mapping of `position`
    and one of QUATERNION_KEYS; PoseError naming the field otherwise."""
    if isinstance(value, dict):
        quaternions = [key for key in QUATERNION_KEYS if key in value]
        unknown = sorted(set(value) - {"position", *QUATERNION_KEYS})
        if unknown or "position" not in value or len(quaternions) != 1:
            problem = (f"unknown key(s) {', '.join(unknown)}" if unknown else "no 'position'" if "position" not in value
                       else "both quaternion keys" if quaternions else "no quaternion")
            raise PoseError(f"{name}: {problem}; fix: give {{\"position\": [x, y, z], \"quaternion_wxyz\": [w, x, y, "
                            "z]}} (or \"quaternion_xyzw\": [x, y, z, w]), or 4 rows of 4 numbers")
        order = QUATERNION_KEYS[quaternions[0]]
        quaternion = _numbers(value[quaternions[0]], 4, f"{name}.{quaternions[0]}", quaternions[0][-4:])
        return position_quaternion_pose(value["position"], quaternion[list(order)], name)
    return rigid_pose(value, name)


def read_pose_file(path: str | os.PathLike) -> PoseFile:
    """The poses of the pose file `path` (module docstring); DocumentError for invalid JSON,
    PoseError naming the file and the field for anything else."""
    from ipcgrasp.documents import load_json

    document = load_json(path)
    if not isinstance(document, dict):
        raise PoseError(f"{path}: a JSON object with 'grasp_pose' (and optionally 'object_pose') expected, got "
                        f"{type(document).__name__}; fix: write {{\"grasp_pose\": ...}}")
    unknown = sorted(set(document) - set(POSE_FILE_KEYS))
    if unknown:
        raise PoseError(f"{path}: unknown key(s) {', '.join(unknown)}; fix: only 'grasp_pose' (required) and "
                        "'object_pose' (optional)")
    if "grasp_pose" not in document:
        raise PoseError(f"{path}: no 'grasp_pose'; fix: add the gripper frame in the object's mesh frame, 4 rows of 4 "
                        "numbers or {\"position\": [...], \"quaternion_wxyz\": [...]}")
    object_pose = document.get("object_pose")
    return PoseFile(pose_from_value(document["grasp_pose"], f"{path}: grasp_pose"),
                    None if object_pose is None else pose_from_value(object_pose, f"{path}: object_pose"))


def _numbers(values, count: int, name: str, what: str) -> np.ndarray:
    """`values` as `count` finite floats; PoseError naming `name` and `what` they are otherwise."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.array([])
    if array.shape != (count,) or not all(math.isfinite(v) for v in array):
        raise PoseError(f"{name}: {values!r} is not {count} finite numbers; fix: give {what}")
    return array
