"""A dataset of `ipcgrasp generate` in the formats grasp-learning pipelines read.

`acronym`: one HDF5 file per object in the layout of the ACRONYM grasp dataset (Eppner et al.,
2021), which its tools (`acronym_tools.load_grasps`, `load_mesh`) and the pipelines built on them
read: the object's mesh file, scale and mass, the grasps as 4x4 gripper poses in the object's
mesh frame, and a 0/1 success label per grasp. docs/export.md maps every field to the records.

    from ipcgrasp.dataset.export import export_acronym

    export_acronym("my_grasps", "my_object.h5")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ipcgrasp import __version__
from ipcgrasp.dataset.records import DATASET_FILE, RecordError, read_records
from ipcgrasp.io import atomic_path

__all__ = ["DEFAULT_SUCCESS_THRESHOLD", "AcronymGrasps", "acronym_grasps", "export_acronym",
           "write_acronym"]

DEFAULT_SUCCESS_THRESHOLD = 0.5
"""Robustness (fraction of successful trials) from which a grasp is labelled a success."""
MESH_SCALE = 1.0
"""ACRONYM's object/scale: ipcgrasp meshes are in metres, so the file's units are used as they are."""
SUCCESS_LABEL = "grasps/qualities/flex/object_in_gripper"
"""Where ACRONYM's readers find the 0/1 success label (ACRONYM's simulator was FleX; here the
label is ipcgrasp's, see the file's `label` attribute)."""


@dataclass(frozen=True, eq=False)
class AcronymGrasps:
    """The content of one ACRONYM-style file (docs/export.md).

    mesh_file: object/file, the mesh path as readers resolve it; mass (kg); friction: the
    simulated pad-object friction; object_pose (4, 4): the object's resting pose in the world (m);
    transforms (N, 4, 4): each grasp's gripper frame in the object's mesh frame (m);
    success (N,) 0/1: robustness >= success_threshold; robustness (N,); trial_success (N, T) 0/1;
    indices (N,): the record index of each grasp (grasp_<index>.json).
    """

    object_name: str
    mesh_file: str
    mesh_sha256: str
    mass: float
    friction: float
    object_pose: np.ndarray
    gripper: str
    pad_kind: str
    max_opening: float
    transforms: np.ndarray
    success: np.ndarray
    robustness: np.ndarray
    trial_success: np.ndarray
    indices: np.ndarray
    success_threshold: float


def _check_threshold(threshold: float) -> float:
    """`threshold` as a float in (0, 1]; ValueError naming the fix otherwise."""
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"success threshold {threshold:g}: must be in (0, 1], the fraction of successful trials "
                         "from which a grasp is labelled a success; fix: e.g. 0.5 (a majority) or 1 (every trial)")
    return threshold


SHARED_FIELDS = ("object.name", "object.mesh", "object.mesh_sha256", "object.mass", "object.pose", "gripper.name",
                 "gripper.pad_kind", "gripper.max_opening", "params.mu", "trials")
"""Record fields every grasp of one dataset shares (of `trials`, the count)."""


def _shared(record: dict, field: str):
    """The value at the dotted `field` of `record` (of `trials`, the number of trials)."""
    value = record
    for key in field.split("."):
        value = value[key]
    return len(value) if field == "trials" else value


def _check_one_run(records: list, directory: Path) -> None:
    """RecordError unless the records agree on every SHARED_FIELDS field."""
    first = records[0]
    for field in SHARED_FIELDS:
        for record in records[1:]:
            if _shared(record, field) != _shared(first, field):
                raise RecordError(f"{directory}: grasp {record['index']} has '{field}' {_shared(record, field)!r}, "
                                  f"grasp {first['index']} {_shared(first, field)!r}: the records are not of one "
                                  "generate run; fix: export a directory `ipcgrasp generate` wrote")


def acronym_grasps(directory: str | os.PathLike, mesh_file: str | None = None,
                   success_threshold: float = DEFAULT_SUCCESS_THRESHOLD) -> AcronymGrasps:
    """The ACRONYM content of the dataset `directory` (its validated records, by index).

    `mesh_file` replaces the records' object.mesh (the path given to generate) as object/file,
    e.g. a path relative to the mesh root a reader joins it to. RecordError when the directory
    is not a dataset, holds no record, mixes runs, or its records name no mesh and `mesh_file`
    is None.
    """
    directory = Path(directory)
    threshold = _check_threshold(success_threshold)
    if not (directory / DATASET_FILE).is_file():
        raise RecordError(f"{directory}: no {DATASET_FILE}, so not a dataset of `ipcgrasp generate`; fix: give the "
                          "--out directory of a generate run")
    by_index = read_records(directory)
    if not by_index:
        raise RecordError(f"{directory}: no grasp record (grasp_*.json) yet; fix: run `ipcgrasp generate` into it "
                          "first")
    records = [by_index[i] for i in sorted(by_index)]
    _check_one_run(records, directory)
    first = records[0]
    if mesh_file is None:
        mesh_file = first["object"]["mesh"]
        if mesh_file is None:
            raise RecordError(f"{directory}: the records' field 'object.mesh' is null (made through the Python API "
                              "without a mesh path); fix: name the mesh file with --mesh-file")
    object_pose = np.array(first["object"]["pose"], dtype=np.float64)
    world_to_object = np.linalg.inv(object_pose)
    transforms = np.array([world_to_object @ np.array(r["gripper"]["pose"], dtype=np.float64) for r in records])
    robustness = np.array([r["robustness"] for r in records], dtype=np.float64)
    return AcronymGrasps(
        object_name=first["object"]["name"], mesh_file=str(mesh_file), mesh_sha256=first["object"]["mesh_sha256"],
        mass=float(first["object"]["mass"]), friction=float(first["params"]["mu"]), object_pose=object_pose,
        gripper=first["gripper"]["name"], pad_kind=first["gripper"]["pad_kind"],
        max_opening=float(first["gripper"]["max_opening"]), transforms=transforms,
        success=(robustness >= threshold).astype(np.int64), robustness=robustness,
        trial_success=np.array([[t["success"] for t in r["trials"]] for r in records], dtype=np.int8),
        indices=np.array([r["index"] for r in records], dtype=np.int64), success_threshold=threshold)


def write_acronym(grasps: AcronymGrasps, path: str | os.PathLike) -> Path:
    """Write `grasps` as an ACRONYM-style HDF5 file at `path`, atomically (docs/export.md)."""
    import h5py

    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = "acronym"
            f.attrs["ipcgrasp_version"] = __version__
            f.attrs["units"] = "SI: m, kg"
            f.attrs["success_threshold"] = grasps.success_threshold
            f.attrs["label"] = (f"{SUCCESS_LABEL} is 1 when the fraction of the grasp's simulated ipcgrasp trials "
                                f"that held the object through the lift is >= {grasps.success_threshold:g}")
            obj = f.create_group("object")
            obj["file"] = grasps.mesh_file
            obj["scale"] = MESH_SCALE
            obj["mass"] = grasps.mass
            obj["friction"] = grasps.friction
            obj["name"] = grasps.object_name
            obj["mesh_sha256"] = grasps.mesh_sha256
            obj["pose"] = grasps.object_pose
            gripper = f.create_group("gripper")
            gripper["type"] = grasps.gripper
            gripper["pad_kind"] = grasps.pad_kind
            gripper["max_opening"] = grasps.max_opening
            f["grasps/transforms"] = grasps.transforms
            f[SUCCESS_LABEL] = grasps.success
            f["grasps/qualities/ipcgrasp/robustness"] = grasps.robustness
            f["grasps/qualities/ipcgrasp/trial_success"] = grasps.trial_success
            f["grasps/index"] = grasps.indices
    return Path(path)


def export_acronym(directory: str | os.PathLike, path: str | os.PathLike, mesh_file: str | None = None,
                   success_threshold: float = DEFAULT_SUCCESS_THRESHOLD) -> AcronymGrasps:
    """Write the dataset `directory` as the ACRONYM-style file `path` (`acronym_grasps`,
    `write_acronym`); return what was written."""
    grasps = acronym_grasps(directory, mesh_file, success_threshold)
    write_acronym(grasps, path)
    return grasps
