"""Gripper description files (docs/grippers.md): YAML validated by `schemas/gripper.schema.json`.

`load_description(name_or_path)` reads a shipped description by name (`shipped_grippers()`) or a
user's file, fills the schema's defaults, checks what a schema cannot (rigid tooltip frames
facing each other, extents, mesh files that exist and are closed) and returns a
`GripperDescription`; every error is a `GripperDescriptionError` naming the file, the key and the
fix, raised before any simulation starts. `grasp.gripper.Gripper.from_description` builds the
gripper from it. A robot file (MJCF or URDF, `grasp.robot_file`) is read in place of a YAML, or
named by a YAML's `robot:` key whose other keys override what is read from it.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import jsonschema
import numpy as np

from ipcgrasp.documents import DocumentError, finite_validator, load_yaml, parse_json
from ipcgrasp.grasp.robot_file import ROBOT_KEYS, ROBOT_SUFFIXES, RobotFileError, read_robot_file

if TYPE_CHECKING:
    import trimesh

SHIPPED_PACKAGE = "ipcgrasp.grippers"
"""Package holding the shipped descriptions, one `<name>.yaml` each."""
DEFAULT_GRIPPER = "yumi"
"""The gripper of the REACH physical grasps, used when none is named."""
FRAME_TOLERANCE = 1e-6
"""Tolerance on rotations (orthonormality) and on distances (m) in the tooltip checks."""


class GripperDescriptionError(ValueError):
    """A gripper description is missing, malformed or out of range; the message names the file,
    the key and the fix."""


@dataclass(frozen=True, eq=False)
class GripperDescription:
    """A validated description: `data` is the YAML with the schema's defaults filled in (SI
    units), `path` the file it came from (meshes are relative to its folder)."""

    data: dict
    path: Path

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def pad_names(self) -> tuple[str, ...]:
        """The pad variants, in file order."""
        return tuple(self.data["pads"])

    def summary(self) -> str:
        """One line: name, stroke, force limit, pad variants, source (`ipcgrasp grippers`)."""
        d = self.data
        pads = ", ".join(f"{name}{'*' if name == d['default_pad'] else ''}" for name in self.pad_names)
        return (f"{d['name']}\tstroke {d['stroke'] * 1e3:g} mm\tforce {d['force_limit']:g} N\tpads {pads}"
                f"\tsource: {d['source']}")

    def mesh_path(self, relative: str) -> Path:
        """A mesh file named in the description, relative to the description's folder."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else self.path.parent / path


@functools.cache
def gripper_schema() -> dict:
    """The JSON schema of a description (draft 2020-12)."""
    return parse_json(resources.files("ipcgrasp.schemas").joinpath("gripper.schema.json").read_text(),
                      "gripper.schema.json")


def shipped_grippers() -> dict[str, GripperDescription]:
    """Every shipped description by name, in name order."""
    folder = resources.files(SHIPPED_PACKAGE)
    names = sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".yaml"))
    return {name: _load_shipped(name) for name in names}


@functools.cache
def _load_shipped(name: str) -> GripperDescription:
    return _load_file(Path(str(resources.files(SHIPPED_PACKAGE).joinpath(f"{name}.yaml"))))


def load_description(name_or_path: str | os.PathLike | None = None) -> GripperDescription:
    """A shipped description by name (None: DEFAULT_GRIPPER) or a description file's path (a
    value ending in .yaml / .yml, a robot file ending in .xml / .mjcf / .urdf, or naming an
    existing file)."""
    if name_or_path is None:
        name_or_path = DEFAULT_GRIPPER
    text = os.fspath(name_or_path)
    if text.endswith((".yaml", ".yml", *ROBOT_SUFFIXES)) or os.sep in text or Path(text).is_file():
        path = Path(text).expanduser()
        if not path.is_file():
            raise GripperDescriptionError(f"{path}: no such gripper description file; fix: give an existing YAML "
                                          "file, an MJCF / URDF robot file or one of the shipped names "
                                          f"{', '.join(shipped_grippers())}")
        if path.suffix.lower() in ROBOT_SUFFIXES:
            return _validated({}, path.resolve(), path.resolve())
        return _load_file(path.resolve())
    shipped = shipped_grippers()
    if text not in shipped:
        raise GripperDescriptionError(f"unknown gripper {text!r}; fix: use one of the shipped grippers "
                                      f"({', '.join(shipped)}) or the path of a description YAML file")
    return shipped[text]


def _load_file(path: Path) -> GripperDescription:
    try:
        data = load_yaml(path)
    except DocumentError as exc:
        raise GripperDescriptionError(f"{exc} (gripper descriptions: docs/grippers.md)") from None
    except OSError as exc:
        raise GripperDescriptionError(f"{path}: cannot read the gripper description: {exc}; fix: give a readable "
                                      "YAML file (docs/grippers.md)") from None
    if not isinstance(data, dict):
        raise GripperDescriptionError(f"{path}: a gripper description is a YAML mapping (key: value), got "
                                      f"{type(data).__name__}; fix: see docs/grippers.md")
    robot = data.get("robot")
    if robot is None:
        return _validated(data, path, None)
    if not isinstance(robot, str) or Path(robot).suffix.lower() not in ROBOT_SUFFIXES:
        raise GripperDescriptionError(f"{path}: robot: {robot!r} is not a robot file; fix: give the path of an MJCF "
                                      "(.xml, .mjcf) or URDF (.urdf) file, relative to this file's folder")
    robot_path = (path.parent / Path(robot).expanduser()).resolve()
    if not robot_path.is_file():
        raise GripperDescriptionError(f"{path}: robot: {robot_path} does not exist; fix: give a path relative to "
                                      "this file's folder")
    return _validated(data, path, robot_path)


def _validated(data: dict, path: Path, robot: Path | None) -> GripperDescription:
    """The description of `data` (a YAML's keys), over the keys measured on `robot` if given."""
    if robot is not None:
        given = set(data) - set(ROBOT_KEYS)
        try:
            measured = read_robot_file(robot, {key: data[key] for key in ROBOT_KEYS[1:] if key in data}, given)
        except RobotFileError as exc:
            raise GripperDescriptionError(f"{exc} (docs/grippers.md, \"From MJCF or URDF\")") from None
        if "pads" in given:
            del measured["default_pad"]  # the measured variants' default need not be among the user's pads
        data = measured | {key: value for key, value in data.items() if key not in ROBOT_KEYS}
    schema = gripper_schema()
    error = jsonschema.exceptions.best_match(finite_validator(schema).iter_errors(data))
    if error is not None:
        raise GripperDescriptionError(_schema_message(path, error, schema))
    data = _with_defaults(data, schema)
    description = GripperDescription(data, path)
    _check(description)
    return description


def _key(parts) -> str:
    key = ""
    for part in parts:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key or "(top level)"


def _schema_message(path: Path, error: jsonschema.ValidationError, schema: dict) -> str:
    """file: key: what is wrong; fix: what the key must be (its schema description)."""
    key = _key(error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1]
        key = _key([*error.absolute_path, missing])
        node = _schema_node(schema, [*error.absolute_path, missing])
        return f"{path}: {key} is missing; fix: add it: {node.get('description', 'see docs/grippers.md')}"
    if error.validator == "additionalProperties":
        return f"{path}: {key}: {error.message}; fix: remove or rename the key (docs/grippers.md lists them)"
    node = _schema_node(schema, list(error.absolute_path))
    hint = node.get("description", "see docs/grippers.md")
    if error.validator == "type" and isinstance(error.instance, float) and not math.isfinite(error.instance):
        return f"{path}: {key}: {error.instance} is not a finite number; fix: give a number: {hint}"
    return f"{path}: {key}: {error.message}; fix: {hint}"


def _schema_node(schema: dict, parts: list) -> dict:
    """The schema of the key at `parts` (best effort, for the error's hint)."""
    node = schema
    for part in parts:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].split("/")[-1]]
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        elif "else" in node and part in node["else"].get("properties", {}):
            node = node["else"]["properties"][part]
        elif "then" in node and part in node["then"].get("properties", {}):
            node = node["then"]["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return {}
    return node


def _with_defaults(data: dict, schema: dict) -> dict:
    """A copy of `data` with every schema default filled in (the schema is their one home)."""
    data = json.loads(json.dumps(data))  # plain, deep copy
    props = schema["properties"]
    for key in ("description", "closing_speed", "lift_speed"):
        data.setdefault(key, json.loads(json.dumps(props[key]["default"])))
    _fill(data["closing_speed"], props["closing_speed"])
    _fill(data["backing"], props["backing"])
    pad_schema = schema["$defs"]["pad"]
    for pad in data["pads"].values():
        _fill(pad, pad_schema["then"] if pad["outline"] == "mesh" else pad_schema["else"])
    finger = data.get("finger")
    if finger is not None and "mesh" in finger:
        _fill(finger, props["finger"]["oneOf"][1])
    data.setdefault("default_pad", next(iter(data["pads"])))
    return data


def _fill(values: dict, node: dict) -> None:
    for key, sub in node.get("properties", {}).items():
        if "default" in sub:
            values.setdefault(key, sub["default"])


def _check(description: GripperDescription) -> None:
    """The rules a JSON schema cannot state; GripperDescriptionError naming file, key and fix."""
    d, path = description.data, description.path

    def fail(key: str, message: str, fix: str):
        raise GripperDescriptionError(f"{path}: {key}: {message}; fix: {fix}")

    closing = d["closing_speed"]
    if closing["min"] > closing["max"]:
        fail("closing_speed", f"min {closing['min']} m/s is above max {closing['max']} m/s", "make min <= max")
    frames = tooltip_frames(d["tooltips"])
    for i, frame in enumerate(frames):
        rotation = frame[:3, :3]
        if np.abs(rotation.T @ rotation - np.eye(3)).max() > FRAME_TOLERANCE or np.linalg.det(rotation) <= 0.0:
            fail(f"tooltips[{i}].rotation", "is not a rotation (orthonormal rows, determinant +1)",
                 "give the tooltip's x, y, z axes (gripper frame) as the columns of a proper rotation")
    z0, z1 = frames[:, :3, 2]
    if abs(z0 @ z1 + 1.0) > FRAME_TOLERANCE:
        fail("tooltips", f"the closing directions (tooltip z axes, the rotations' third columns) {z0} and {z1} are "
                         "not opposite", "make each tooltip's z axis point at the other jaw")
    gap = (frames[1, :3, 3] - frames[0, :3, 3]) @ z0
    if abs(gap) > FRAME_TOLERANCE:
        fail("tooltips", f"the pads' front faces are {gap * 1e3:.4g} mm apart along the closing direction",
             "give the tooltip frames with the jaws closed (front faces touching); the opening comes from stroke")
    if d["default_pad"] not in d["pads"]:
        fail("default_pad", f"{d['default_pad']!r} is not a pad variant", f"use one of {', '.join(d['pads'])}")
    depths = {}  # pad thickness behind the front face (m) of each variant
    for name, pad in d["pads"].items():
        key = f"pads.{name}"
        if pad["outline"] == "mesh":
            surface = _closed_mesh(description, pad["mesh"], pad["scale"], f"{key}.mesh", fail)
            depths[name] = -float(surface.bounds[0, 2])
            top = surface.bounds[1, 2]
            if abs(top) > FRAME_TOLERANCE:
                fail(f"{key}.mesh", f"the pad's front face is at z = {top * 1e3:.4g} mm, not 0",
                     "translate the mesh so that its contact face is the plane z = 0 (tooltip frame), the pad "
                     "behind it (z < 0)")
        else:
            _check_extent(pad, key, fail)
            depths[name] = pad["thickness"] * pad["scale"]
            if pad["outline"] == "rounded" and pad["x_max"] - pad["x_min"] < 0.5 * pad["width"]:
                fail(f"{key}.x_min", "a rounded pad needs x_max - x_min >= width / 2 (its half-disc end)",
                     "lengthen the pad or narrow it")
    _check_extent(d["backing"], "backing", fail)
    finger = d.get("finger")
    if finger is not None and "box" in finger:
        _check_extent(finger["box"], "finger.box", fail)
    elif finger is not None:
        front = _closed_mesh(description, finger["mesh"], finger["scale"], "finger.mesh", fail).bounds[1, 2]
        for name, depth in depths.items():
            back = -depth - d["backing"]["gap"] - d["backing"]["thickness"]
            if front > back + FRAME_TOLERANCE:
                fail("finger.mesh", f"the finger reaches z = {front * 1e3:.4g} mm, in front of the backing plate's back "
                     f"face z = {back * 1e3:.4g} mm behind pad {name!r}", "move the finger behind the plate (tooltip "
                     "frame: the pad and the plate are in front of it)")


def _check_extent(values: dict, key: str, fail) -> None:
    if not values["x_max"] > values["x_min"]:
        fail(f"{key}.x_max", f"x_max = {values['x_max']} m is not above x_min = {values['x_min']} m",
             "x_min is the end towards the wrist, x_max the end towards the fingertip")


def _closed_mesh(description: GripperDescription, relative: str, scale: float, key: str, fail) -> trimesh.Trimesh:
    import trimesh  # here, not at the top: a description without mesh files (every shipped one) loads without it

    path = description.mesh_path(relative)
    if not path.is_file():
        fail(key, f"mesh file {path} does not exist", "give a path relative to the description file's folder")
    try:
        mesh = trimesh.load(path, force="mesh", process=True)
    except Exception as exc:  # trimesh raises many types for unreadable files
        fail(key, f"cannot read mesh {path}: {exc}", "give a mesh file trimesh reads (STL, OBJ, PLY, ...)")
    if not (isinstance(mesh, trimesh.Trimesh) and len(mesh.faces) and mesh.is_watertight and mesh.volume > 0):
        fail(key, f"mesh {path} is not a closed, outward-oriented surface", "close its holes and fix its normals "
             "(e.g. trimesh.repair) before using it")
    return mesh.apply_scale(scale)


def tooltip_frames(tooltips) -> np.ndarray:
    """(2, 4, 4) tooltip frames (gripper frame, jaws closed) from the description's `tooltips`."""
    frames = np.tile(np.eye(4), (2, 1, 1))
    for frame, tooltip in zip(frames, tooltips):
        frame[:3, :3] = np.array(tooltip["rotation"], dtype=np.float64)
        frame[:3, 3] = np.array(tooltip["translation"], dtype=np.float64)
    return frames


def widest_tooltip_frames(data: dict) -> np.ndarray:
    """(2, 4, 4) tooltip frames (gripper frame) of a description's `data` with the jaws open to
    its `stroke` (m): each jaw moved back by half the stroke against its closing direction (its
    tooltip z axis)."""
    frames = tooltip_frames(data["tooltips"])
    frames[:, :3, 3] -= (0.5 * data["stroke"]) * frames[:, :3, 2]
    return frames
