"""Loader for a REACH-layout data directory (docs/data.md): object meshes, masses from the
registry, and the physical grasp attempts grouped as grasps x trials.

Only `obj`, `grasp`, `pose`, `stable_pose`, `attempt`, `trial` and `result` are read. `tf` has
no documented meaning and `qs_*` merely repeat `result`, so neither is used (docs/data.md, "A physical grasp file").
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from ipcgrasp.data.registry import ObjectInfo, load_registry, object_info
from ipcgrasp.documents import DocumentError, load_json
from ipcgrasp.grasp.pose import PoseError, PoseRoundingWarning, rigid_pose

MESH_DIR = "object_meshes"
GRASP_DIR = "phys_grasps_json"
# the trials of one grasp must repeat its poses; the bundled data repeats them exactly
SAME_POSE_TOLERANCE = 1e-9
REQUIRED_FIELDS = ("obj", "grasp", "pose", "stable_pose", "attempt", "trial", "result")
KNOWN_ROUNDING = {
    "128a568fae407493d0aa0b856729d68f62c492c8dfd9576b0a2d938feb4889ce":
        "phys_grasps_json/cube_3cm.json of the REACH archive (`ipcgrasp data fetch`)",
}
"""SHA-256 of the physical grasp files whose rotation rounding is known and documented
(docs/data.md: the REACH object rotations are stored to two decimals, max |R^T R - I| = 0.0100):
their poses are re-orthonormalised without a PoseRoundingWarning, which would otherwise repeat
the same known fact in every command and study job. Any other file with rounded rotations gets
the warning, once per file read."""


class DataFormatError(ValueError):
    """A REACH data file is missing or malformed; the message names the file, record, field and fix."""


class MissingDataError(DataFormatError, FileNotFoundError):
    """A file the REACH layout requires does not exist."""


@dataclass(frozen=True)
class PhysicalGrasps:
    """Physical grasp attempts on one object, grasp-major.

    grasp_poses: (G, 4, 4) gripper frame in the world, metres, as recorded.
    object_poses: (G, 4, 4) object in the world, metres, rotation re-orthonormalised to the
        nearest rotation (the file rounds it to 0.01).
    stable_poses: (G,) stable-pose index of the object for each grasp.
    results: (G, T) physical success of each trial.
    """

    object_name: str
    grasp_poses: np.ndarray
    object_poses: np.ndarray
    stable_poses: np.ndarray
    results: np.ndarray

    @property
    def n_grasps(self) -> int:
        return self.results.shape[0]

    @property
    def n_trials(self) -> int:
        return self.results.shape[1]

    @property
    def robustness(self) -> np.ndarray:
        """Physical robustness per grasp: the fraction of successful trials, shape (G,)."""
        return self.results.mean(axis=1)

    def __repr__(self) -> str:
        """One line with the counts, never the arrays: object, grasps x trials, successes."""
        return (f"PhysicalGrasps(object={self.object_name!r}, grasps={self.n_grasps}, trials={self.n_trials}, "
                f"successes={int(np.count_nonzero(self.results))}/{self.results.size}, "
                f"mean robustness={float(self.robustness.mean()) if self.results.size else float('nan'):.2f})")


def object_mesh_path(data_dir: str | os.PathLike, name: str) -> Path:
    """Path of `<data_dir>/object_meshes/<name>.obj`; MissingDataError naming the present objects."""
    path = Path(data_dir) / MESH_DIR / f"{name}.obj"
    if not path.is_file():
        raise MissingDataError(f"{path}: no mesh for object {name!r}; objects with a mesh there: "
                               f"{', '.join(_stems(path.parent, '.obj')) or 'none'}. Check the object name "
                               "and that the data directory is a complete REACH copy (`ipcgrasp data fetch`).")
    return path


def physical_grasps_path(data_dir: str | os.PathLike, name: str) -> Path:
    """Path of `<data_dir>/phys_grasps_json/<name>.json`; MissingDataError when absent."""
    path = Path(data_dir) / GRASP_DIR / f"{name}.json"
    if not path.is_file():
        raise MissingDataError(f"{path}: no physical grasps for object {name!r}; objects with grasps there: "
                               f"{', '.join(_stems(path.parent, '.json')) or 'none'}. Check the object name "
                               "and that the data directory is a complete REACH copy (`ipcgrasp data fetch`).")
    return path


def _stems(directory: Path, suffix: str) -> list[str]:
    return sorted(p.stem for p in directory.glob(f"*{suffix}")) if directory.is_dir() else []


def list_objects(data_dir: str | os.PathLike) -> list[str]:
    """Sorted names of the objects that have both a mesh and a physical-grasp file."""
    data_dir = Path(data_dir)
    for sub in (MESH_DIR, GRASP_DIR):
        if not (data_dir / sub).is_dir():
            raise MissingDataError(f"{data_dir / sub}: directory missing; {data_dir} is not in the REACH layout "
                                   f"({MESH_DIR}/ and {GRASP_DIR}/). Point ipcgrasp at a REACH copy "
                                   "(`ipcgrasp data fetch`, --data DIR or $IPCGRASP_DATA).")
    return sorted(set(_stems(data_dir / MESH_DIR, ".obj")) & set(_stems(data_dir / GRASP_DIR, ".json")))


def load_object(data_dir: str | os.PathLike, name: str,
                registry: Mapping[str, ObjectInfo] | str | os.PathLike | None = None) -> tuple[Path, float]:
    """(mesh path, mass in kg) of one object; the mass comes from the registry (a mapping from
    `load_registry`, the path of an objects.yaml, or None for the repository's config/objects.yaml)."""
    if registry is None or isinstance(registry, (str, os.PathLike)):
        registry = load_registry(registry)
    mesh = object_mesh_path(data_dir, name)
    return mesh, object_info(dict(registry), name).mass


class _Record:
    """Field access to one JSON record, raising DataFormatError with file/record/field."""

    def __init__(self, path: Path, index: int, record):
        self.path, self.index = path, index
        if not isinstance(record, dict):
            self.fail(None, f"expected a JSON object with fields {', '.join(REQUIRED_FIELDS)}, "
                            f"got {type(record).__name__}")
        missing = [f for f in REQUIRED_FIELDS if f not in record]
        if missing:
            self.fail(missing[0], f"field missing (required: {', '.join(REQUIRED_FIELDS)})")
        self.record = record

    def fail(self, field: str | None, problem: str, fix: str = "") -> NoReturn:
        where = f"{self.path}: record {self.index}" + (f", field '{field}'" if field else "")
        fix = fix or "Fix or regenerate the file so that every record follows docs/data.md (\"A physical grasp file\")."
        raise DataFormatError(f"{where}: {problem}. {fix}")

    def integer(self, field: str) -> int:
        value = self.record[field]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(field, f"expected a non-negative integer, got {value!r}")
        return value

    def boolean(self, field: str) -> bool:
        value = self.record[field]
        if not isinstance(value, bool):
            self.fail(field, f"expected true or false, got {value!r}")
        return value

    def rigid_transform(self, field: str) -> np.ndarray:
        """The field's 4x4 pose, checked and re-orthonormalised by `grasp.pose.rigid_pose`."""
        try:
            return rigid_pose(self.record[field], f"{self.path}: record {self.index}, field '{field}'")
        except PoseError as exc:
            raise DataFormatError(str(exc)) from None


def load_physical_grasps(data_dir: str | os.PathLike, object_name: str) -> PhysicalGrasps:
    """Read `<data_dir>/phys_grasps_json/<object_name>.json` and group it into grasps x trials.

    Records are grouped by `attempt` (grasp index 0..G-1) and `trial` (0..T-1); every grasp must
    have the same T trials exactly once, and its trials must share `grasp`, `pose` and
    `stable_pose`. Poses are checked by `grasp.pose.rigid_pose`: rounded rotations (the file's
    object rotations, to 0.01) are replaced by the nearest rotation, with one warning per file
    unless the file is one whose rounding is known (KNOWN_ROUNDING).
    """
    path = physical_grasps_path(data_dir, object_name)
    try:
        records = load_json(path)
    except DocumentError as err:
        raise DataFormatError(f"{err}, or re-fetch the data (`ipcgrasp data fetch`)") from None
    if not isinstance(records, list) or not records:
        got = type(records).__name__ + (" (empty)" if records == [] else "")
        raise DataFormatError(f"{path}: expected a non-empty JSON list of grasp-trial records (docs/data.md, "
                              f"\"A physical grasp file\"), got {got}.")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PoseRoundingWarning)
        by_attempt = _records_by_attempt(path, records, object_name)
    _summarise_rounded_poses(path, caught, known=lambda: sha256_of_file(path) in KNOWN_ROUNDING)
    n_grasps = len(by_attempt)
    if sorted(by_attempt) != list(range(n_grasps)):
        missing = sorted(set(range(max(by_attempt) + 1)) - set(by_attempt))
        raise DataFormatError(f"{path}: field 'attempt' must number the grasps 0..G-1 without gaps; "
                              f"missing attempt(s) {missing[:10]}. Renumber the attempts or add the missing records.")
    n_trials = len(by_attempt[0])
    expected_trials = list(range(n_trials))
    grasp_poses = np.empty((n_grasps, 4, 4))
    object_poses = np.empty((n_grasps, 4, 4))
    stable_poses = np.empty(n_grasps, dtype=np.int64)
    results = np.empty((n_grasps, n_trials), dtype=bool)
    for attempt in range(n_grasps):
        trials = by_attempt[attempt]
        if sorted(trials) != expected_trials:
            first = min(entry[0].index for entry in trials.values())
            raise DataFormatError(f"{path}: record {first}, field 'trial': attempt {attempt} has trials "
                                  f"{sorted(trials)}, but attempt 0 has {expected_trials}. Every grasp needs the "
                                  "same trials 0..T-1.")
        rec0, grasp0, pose0, stable0, _ = trials[0]
        for trial in expected_trials:
            rec, grasp, pose, stable, result = trials[trial]
            if np.abs(grasp - grasp0).max() > SAME_POSE_TOLERANCE:
                rec.fail("grasp", f"attempt {attempt} trial {trial} has a different grasp pose from record "
                                  f"{rec0.index} (trial 0)", "All trials of a grasp must share its grasp pose.")
            if np.abs(pose - pose0).max() > SAME_POSE_TOLERANCE:
                rec.fail("pose", f"attempt {attempt} trial {trial} has a different object pose from record "
                                 f"{rec0.index} (trial 0)", "All trials of a grasp must share its object pose.")
            if stable != stable0:
                rec.fail("stable_pose", f"attempt {attempt} trial {trial} has stable pose {stable}, record "
                                        f"{rec0.index} (trial 0) has {stable0}",
                         "All trials of a grasp must share its stable pose.")
            results[attempt, trial] = result
        grasp_poses[attempt] = grasp0
        object_poses[attempt] = pose0
        stable_poses[attempt] = stable0
    return PhysicalGrasps(object_name, grasp_poses, object_poses, stable_poses, results)


def _records_by_attempt(path: Path, records: list, object_name: str) -> dict:
    """attempt -> trial -> (record, grasp pose, object pose, stable pose, result), each field checked."""
    by_attempt: dict[int, dict[int, tuple[_Record, np.ndarray, np.ndarray, int, bool]]] = {}
    for index, raw in enumerate(records):
        rec = _Record(path, index, raw)
        if rec.record["obj"] != object_name:
            rec.fail("obj", f"object {rec.record['obj']!r} in the file of {object_name!r}",
                     "Each phys_grasps_json/<object>.json must hold only that object's grasps.")
        attempt, trial = rec.integer("attempt"), rec.integer("trial")
        entry = (rec, rec.rigid_transform("grasp"), rec.rigid_transform("pose"),
                 rec.integer("stable_pose"), rec.boolean("result"))
        trials = by_attempt.setdefault(attempt, {})
        if trial in trials:
            rec.fail("trial", f"attempt {attempt} has trial {trial} twice (also record {trials[trial][0].index})",
                     "Each (attempt, trial) pair must appear exactly once.")
        trials[trial] = entry
    return by_attempt


def sha256_of_file(path: Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _summarise_rounded_poses(path: Path, caught: list, known) -> None:
    """One warning for the file's re-orthonormalised poses, none when `known()` (its rounding is
    in KNOWN_ROUNDING); other caught warnings re-issued."""
    rounded = [w for w in caught if issubclass(w.category, PoseRoundingWarning)]
    for w in caught:
        if w not in rounded:
            warnings.warn(w.message, w.category, stacklevel=3)
    if rounded and not known():
        worst = max(w.message.error for w in rounded)
        warnings.warn(PoseRoundingWarning(str(path), worst, len(rounded)), stacklevel=3)
