"""A user's own physical grasp trials: the trials file format (docs/own_data.md), its validation,
and `import_trials`, which writes them into a directory in the REACH layout the study reads
(`data.reach`), with the object registry the study needs beside them.

The trials file is JSON (lengths in metres, masses in kilograms, poses 4x4 homogeneous transforms
in one world frame whose z axis points up, against gravity; the table may be at any height)::

    {"format": "ipcgrasp-physical-trials", "version": 1,
     "objects": {"box_3cm": {"mesh": "meshes/box.stl", "mass_kg": 0.003, "split": "training"}},
     "trials": [{"object": "box_3cm", "grasp": 0, "gripper": "yumi",
                 "object_pose": [[...], [...], [...], [0, 0, 0, 1]],
                 "gripper_pose": [[...], [...], [...], [0, 0, 0, 1]], "success": 1}, ...]}

`mesh` is relative to the trials file; `object_pose` places the mesh's own frame in the world,
`gripper_pose` the gripper frame (the frame of the gripper description: for the YuMi, x along the
closing axis and z the approach, the tooltips 0.16 m along z). Trials that share an object and a
`grasp` id are repeats of one grasp: they must share both poses, and every grasp of an object
needs the same number of trials (the study compares T physical with T simulated trials).

The file must be UTF-8 with no repeated key and no field the format does not have (the nearest
known one is named); grasp ids are all integers or all strings; every pose must be plausible:
translations in metres (within MAX_TRANSLATION of the origin) and the gripper's tooltips, jaws
open to its stroke, within the stroke + REACH_MARGIN of the object's bounding box.

Every problem found is reported together, each naming the file, the object or trial (index in
the `trials` list) and field, and the fix, before anything is written. With `repair`, a mesh the
check refuses is made one closed solid by `geometry.repair.repair_mesh` (what `--repair` does
on `generate` and `simulate --mesh`); the repaired copy is what DEST gets, the user's file is
only read, and a mesh the repair cannot fix is a problem of its object. The import never
overwrites or deletes a file it did not create: DEST must be empty, absent, or the output of a
previous import (its `ipcgrasp_import.json` lists the files that import created, and only those
are replaced or removed); `data.recorded` reads back the gripper it names.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ipcgrasp import __version__
from ipcgrasp.data.reach import GRASP_DIR, MESH_DIR
from ipcgrasp.data.recorded import MANIFEST
from ipcgrasp.data.registry import SPLITS
from ipcgrasp.documents import DocumentError, load_json, parse_json
from ipcgrasp.geometry.mesh import MeshError, read_mesh_file, validate_mesh
from ipcgrasp.geometry.repair import RepairReport, repair_mesh
from ipcgrasp.grasp.description import (
    DEFAULT_GRIPPER,
    GripperDescription,
    GripperDescriptionError,
    load_description,
    shipped_grippers,
    widest_tooltip_frames,
)
from ipcgrasp.grasp.object import DENSITY_RANGE, GraspObject
from ipcgrasp.grasp.pose import PoseError, PoseRoundingWarning, rigid_pose
from ipcgrasp.io import write_bytes_atomic, write_json_atomic

__all__ = [
    "FORMAT",
    "REGISTRY_FILE",
    "VERSION",
    "ImportedObject",
    "OwnDataError",
    "TrialsFile",
    "import_trials",
    "known_grippers",
    "study_command",
    "read_trials",
]

FORMAT = "ipcgrasp-physical-trials"
VERSION = 1
REGISTRY_FILE = "objects.yaml"
SAME_POSE_TOLERANCE = 1e-9
"""Largest entry difference (m, or rotation entries) between the poses of two trials of one grasp."""
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""Object names become file names and study wildcards: letters, digits, '_', '.', '-'."""
IMPORTED_FILE_PATTERN = re.compile(
    rf"^(?:{re.escape(REGISTRY_FILE)}|{MESH_DIR}/{NAME_PATTERN.pattern[1:-1]}\.obj"
    rf"|{GRASP_DIR}/{NAME_PATTERN.pattern[1:-1]}\.json)$")
"""The relative paths an import writes into DEST, and so the only ones its manifest may list."""
TOP_FIELDS = ("format", "version", "objects", "trials")
TRIAL_FIELDS = ("object", "grasp", "gripper", "object_pose", "gripper_pose", "success")
OBJECT_FIELDS = ("mesh", "mass_kg")
OPTIONAL_OBJECT_FIELDS = ("split",)
MAX_TRANSLATION = 10.0
"""Largest distance (m) of a pose's translation from the world origin: a lab's poses lie within a
few metres of its origin, so a larger one is in millimetres (or another unit)."""
REACH_MARGIN = 0.05
"""How far (m) beyond the gripper's stroke a tooltip may be from the object's bounding box (the
jaws open to the stroke): farther, no pad can touch the object and every trial is a miss."""
MAX_REPORTED = 25
"""Problems listed in one error message (the rest are counted)."""


def known_grippers() -> tuple[str, ...]:
    """Gripper names a trial's `gripper` may take: the shipped gripper descriptions
    (`grasp.description.shipped_grippers`, `ipcgrasp grippers`)."""
    return tuple(shipped_grippers())


def study_command(manifest: dict, dest: Path, repo_root: Path) -> str:
    """The `./run.sh study` command line, run from `repo_root`, for the data an import wrote into
    `dest` (its `manifest`): config/own_data_example.yaml, with --config naming `dest` unless it is
    the directory that file names (resources/own_data), and for a gripper other than the YuMi its
    `gripper` and `evaluation={models: []}` (the baselines model the YuMi's pads only:
    `study.config.check_config`)."""
    import shlex

    dest = Path(dest).resolve()
    settings = []
    if dest != Path(repo_root).resolve() / "resources" / "own_data":  # the directory own_data_example.yaml names
        settings += [f"data_dir={dest}", f"registry={dest / REGISTRY_FILE}"]
    if manifest["gripper"] != DEFAULT_GRIPPER or manifest.get("gripper_file"):
        settings += [f"gripper={manifest.get('gripper_file') or manifest['gripper']}"]
    if manifest["gripper"] != DEFAULT_GRIPPER:
        settings += ["evaluation={models: []}"]
    command = "./run.sh study --configfile config/own_data_example.yaml"
    return command + (" --config " + " ".join(shlex.quote(s) for s in settings) if settings else "")


class OwnDataError(ValueError):
    """The trials file (or DEST) cannot be imported; the message lists every problem found, each
    with its file, object or trial and field, and the fix (one per line: `keeps_lines`)."""

    keeps_lines = True



@dataclass(frozen=True, eq=False)
class ImportedObject:
    """One object of a trials file, checked: the validated `mesh` (trimesh, m), `mass` (kg),
    `split`, the `gripper` its trials name (a shipped name or a description file's resolved
    path) and that description's `gripper_name`, and per grasp (in order of first appearance)
    its id, object pose, gripper pose (4x4, m) and trial results (G, T) booleans. `repair` is
    what `repair_mesh` changed when the mesh file failed the check and was repaired, else None."""

    name: str
    mesh_file: Path
    mesh: object
    mass: float
    split: str
    gripper: str
    gripper_name: str
    grasp_ids: list
    object_poses: np.ndarray
    gripper_poses: np.ndarray
    results: np.ndarray
    repair: RepairReport | None = None


@dataclass(frozen=True, eq=False)
class TrialsFile:
    """A checked trials file: its path, SHA-256 and objects by name."""

    path: Path
    sha256: str
    objects: dict

    @property
    def grippers(self) -> list[str]:
        return sorted({o.gripper for o in self.objects.values()})


class _Problems:
    """Collects the problems of one file: `add(where, problem, fix)`."""

    def __init__(self, path: Path):
        self.path, self.lines = path, []

    def add(self, where: str, problem: str, fix: str) -> None:
        self.lines.append(f"{self.path}: {where}: {problem}; fix: {fix}")

    def raise_if_any(self) -> None:
        if self.lines:
            shown = self.lines[:MAX_REPORTED]
            more = len(self.lines) - len(shown)
            raise OwnDataError(f"{len(self.lines)} problem(s) in the trials file (format: docs/own_data.md):\n  "
                               + "\n  ".join(shown) + (f"\n  ... and {more} more" if more else ""))


def read_trials(path: str | os.PathLike, repair: bool = False) -> TrialsFile:
    """Read and check a trials file (module docstring, docs/own_data.md); OwnDataError listing
    every problem found. `repair`: repair each mesh the check refuses (`repair_mesh`) instead of
    refusing it; a mesh the repair cannot fix stays a problem. Nothing is written."""
    path = Path(path)
    if not path.is_file():
        raise OwnDataError(f"{path}: trials file not found; fix: give the path of the JSON trials file "
                           "(docs/own_data.md)")
    raw = path.read_bytes()
    try:
        doc = parse_json(_utf8_text(raw, path), str(path))
    except DocumentError as exc:
        raise OwnDataError(f"{exc} (the trials file format: docs/own_data.md)") from None
    problems = _Problems(path)
    if not isinstance(doc, dict):
        raise OwnDataError(f"{path}: top level: expected a JSON object with 'format', 'version', 'objects' and "
                           f"'trials', got {type(doc).__name__}; fix: follow docs/own_data.md")
    _check_field_names(doc, TOP_FIELDS, "top level", problems)
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        problems.add("fields 'format', 'version'", f"got {doc.get('format')!r} version {doc.get('version')!r}",
                     f"set \"format\": \"{FORMAT}\" and \"version\": {VERSION}")
    objects = _check_objects(doc.get("objects"), path, problems, repair)
    trials = doc.get("trials")
    if not isinstance(trials, list) or not trials:
        problems.add("field 'trials'", "expected a non-empty list of trials", "list one entry per physical trial")
        trials = []
    grouped, tainted = _check_trials(trials, objects, problems, path.parent)
    checked = {}
    for name, fields in objects.items():
        if fields is None or name in tainted:  # its own problems are reported; no follow-on ones
            continue
        grasps = grouped.get(name, {})
        if not grasps:
            problems.add(f"objects.{name}", "no trial uses this object", "remove it or add its trials")
            continue
        counts = {gid: len(g["results"]) for gid, g in grasps.items()}
        if len(set(counts.values())) > 1:
            problems.add(f"objects.{name}", "its grasps have different numbers of trials ("
                         + ", ".join(f"grasp {gid!r}: {n}" for gid, n in counts.items()) + ")",
                         "give every grasp of an object the same number of trials (drop the extra ones)")
            continue
        grippers = {g["gripper"] for g in grasps.values()}
        if len(grippers) > 1:
            problems.add(f"objects.{name}", f"its trials use several grippers {sorted(grippers)}",
                         "import the trials of each gripper from a file of their own")
            continue
        description = next(iter(grasps.values()))["description"]
        checked[name] = ImportedObject(
            name, fields["mesh_file"], fields["mesh"], fields["mass"], fields["split"], grippers.pop(), description.name,
            list(grasps), np.array([g["object_pose"] for g in grasps.values()]),
            np.array([g["gripper_pose"] for g in grasps.values()]),
            np.array([g["results"] for g in grasps.values()], dtype=bool), fields["repair"])
    if len(checked) > 1 and len({o.split for o in checked.values()}) < 2:
        problems.add("objects", "with several objects the study splits by object, but every object has split "
                     f"{next(iter(checked.values())).split!r}",
                     "mark at least one object \"split\": \"training\" and one \"heldout\"")
    grippers = {o.gripper for o in checked.values()}
    if len(grippers) > 1:
        problems.add("trials", f"several grippers {sorted(grippers)} in one file (the study simulates one)",
                     "import the trials of each gripper from a file of their own")
    problems.raise_if_any()
    return TrialsFile(path, hashlib.sha256(raw).hexdigest(), checked)


def _check_objects(entries, path: Path, problems: _Problems, repair: bool = False) -> dict:
    """name -> {mesh_file, mesh, mass, split, repair} (None for an object with problems); with
    `repair`, a mesh `validate_mesh` refuses is repaired (`_checked_mesh`)."""
    if not isinstance(entries, dict) or not entries:
        problems.add("field 'objects'", "expected a non-empty mapping of object name to {mesh, mass_kg, split}",
                     'add "objects": {"my_object": {"mesh": "my_object.stl", "mass_kg": 0.05}}')
        return {}
    objects = {}
    for name, fields in entries.items():
        where = f"objects.{name}"
        objects[name] = None
        if not NAME_PATTERN.match(name):
            problems.add(where, "the name must start with a letter or digit and hold only letters, digits, "
                                "'_', '.', '-'", "rename the object (it becomes a file name)")
            continue
        if not isinstance(fields, dict) or any(f not in fields for f in OBJECT_FIELDS):
            problems.add(where, f"expected a mapping with {', '.join(OBJECT_FIELDS)} (and optionally split)",
                         'write {"mesh": "path/relative/to/this/file.stl", "mass_kg": 0.05, "split": "heldout"}')
            continue
        _check_field_names(fields, OBJECT_FIELDS + OPTIONAL_OBJECT_FIELDS, where, problems)
        ok = True
        mass = fields["mass_kg"]
        if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0.0 < mass < math.inf:
            problems.add(f"{where}.mass_kg", f"must be a positive finite mass in kilograms, got {mass!r}",
                         "weigh the object and give its mass in kg (e.g. 0.003 for 3 g)")
            ok = False
        split = fields.get("split", "heldout")
        if split not in SPLITS:
            problems.add(f"{where}.split", f"must be one of {list(SPLITS)}, got {split!r}",
                         "use \"training\" or \"heldout\" (or leave it out: heldout)")
            ok = False
        mesh_file = (path.parent / str(fields["mesh"])) if isinstance(fields["mesh"], str) else None
        mesh = report = None
        if mesh_file is None or not mesh_file.is_file():
            problems.add(f"{where}.mesh", f"mesh file {mesh_file or fields['mesh']!r} not found",
                         "give the mesh's path relative to the trials file (OBJ, STL, PLY or OFF, in metres)")
            ok = False
        else:
            try:
                mesh, report = _checked_mesh(mesh_file, repair)
            except (MeshError, ValueError) as exc:
                problems.add(f"{where}.mesh", *_problem_and_fix(exc, "export the object as one closed triangle "
                                                                     "surface in metres"))
                ok = False
        if ok:
            try:
                GraspObject.from_mesh(mesh, float(mass), name=f"{where} (mesh {mesh_file})")
            except ValueError as exc:
                low, high = DENSITY_RANGE
                problems.add(f"{where}.mass_kg", _problem_and_fix(exc, "")[0],
                             f"check the mass is in kg and the mesh in metres (plausible density {low:g}-{high:g} "
                             "kg/m^3)")
                ok = False
        if ok:
            objects[name] = {"mesh_file": mesh_file, "mesh": mesh, "mass": float(mass), "split": split,
                             "repair": report}
    return objects


def _checked_mesh(mesh_file: Path, repair: bool):
    """(mesh, None): the file's mesh through `validate_mesh` (its safe repairs, winding and
    orientation, made silently); with `repair`, a mesh it refuses is instead (the repaired mesh,
    the `RepairReport`) from `repair_mesh`, whose refusal (MeshRepairError, naming the file and
    the reason) then stands for it. MeshError for an unreadable file or a refused mesh."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # safe repairs are fine here; --repair's changes are reported
        raw = read_mesh_file(mesh_file)
        try:
            return validate_mesh(raw, str(mesh_file)).mesh, None
        except MeshError:
            if not repair:
                raise
        report = repair_mesh(raw, str(mesh_file))
        return report.mesh, report


def _utf8_text(raw: bytes, path: Path) -> str:
    """The trials file's bytes as text; OwnDataError unless they are UTF-8 (JSON's encoding: a
    reader would otherwise guess, e.g. UTF-16 from its byte order mark)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        guess = " (it starts with a UTF-16 byte order mark)" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise OwnDataError(f"{path}: not UTF-8 text{guess}: byte {exc.start} cannot be decoded; fix: save the "
                           "trials file as UTF-8") from None


def _check_field_names(mapping: dict, known: tuple[str, ...], where: str, problems: _Problems) -> None:
    """A problem for each key of `mapping` not in `known`, naming the nearest known key: a
    misspelt optional field (e.g. "spilt") would otherwise be ignored and its default used."""
    for key in mapping:
        if key in known:
            continue
        nearest = difflib.get_close_matches(str(key), known, n=1)
        fix = f"rename it {nearest[0]!r} (the nearest known field) or remove it" if nearest else "remove it"
        problems.add(where, f"unknown field {key!r} (the fields: {', '.join(known)})", fix)


def _problem_and_fix(exc: Exception, default_fix: str) -> tuple[str, str]:
    """An error message of the simulator's checks on one line, split at its "; fix: "."""
    problem, _, fix = " ".join(str(exc).split()).partition("; fix: ")
    return problem, fix or default_fix


def _check_trials(trials: list, objects: dict, problems: _Problems, base: Path) -> tuple[dict, set]:
    """(object -> grasp id -> {object_pose, gripper_pose, gripper, results, first}, names of the
    objects with a trial that has a problem); each trial checked. A trial's `gripper` is a
    shipped name or a description file, relative to `base` (the trials file's folder)."""
    grippers: dict = {}  # the trial's gripper value -> (key, description), or None when refused
    grouped: dict[str, dict] = {}
    tainted: set = set()
    first_id_of_type: dict[type, tuple[int, object]] = {}
    for index, trial in enumerate(trials):
        where = f"trials[{index}]"
        if not isinstance(trial, dict):
            problems.add(where, f"expected a JSON object, got {type(trial).__name__}",
                         f"write each trial as {{{', '.join(TRIAL_FIELDS)}}}")
            continue
        missing = [f for f in TRIAL_FIELDS if f not in trial]
        if missing:
            problems.add(where, f"field(s) {', '.join(missing)} missing", f"give every trial {', '.join(TRIAL_FIELDS)}")
            continue
        _check_field_names(trial, TRIAL_FIELDS, where, problems)
        ok = True
        name = trial["object"]
        if not isinstance(name, str) or name not in objects:
            problems.add(f"{where}.object", f"unknown object {name!r}",
                         f"use one of the names under 'objects' ({', '.join(sorted(objects)) or 'none'})")
            ok = False
        grasp = trial["grasp"]
        if isinstance(grasp, bool) or not (isinstance(grasp, str) and grasp or isinstance(grasp, int) and grasp >= 0):
            problems.add(f"{where}.grasp", f"expected a non-negative integer or a non-empty string, got {grasp!r}",
                         "give repeats of one grasp the same id, different grasps different ids")
            ok = False
        else:
            first_id_of_type.setdefault(type(grasp), (index, grasp))
        gripper = _gripper_of(trial["gripper"], base, grippers, f"{where}.gripper", problems)
        ok = ok and gripper is not None
        success = trial["success"]
        if success not in (0, 1) or isinstance(success, float):
            problems.add(f"{where}.success", f"must be 0 or 1 (or false / true), got {success!r}",
                         "record 1 when the physical trial lifted the object, else 0")
            ok = False
        poses = {}
        for field in ("object_pose", "gripper_pose"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", PoseRoundingWarning)
                    poses[field] = rigid_pose(trial[field], f"{where}.{field}")
            except (PoseError, PoseRoundingWarning) as exc:
                problem, fix = _problem_and_fix(exc, "give an exactly orthonormal rotation (no rounding), the "
                                                     "translation in metres")
                problems.add(f"{where}.{field}", problem.split(": ", 1)[-1], fix)  # the field leads the message
                ok = False
        ok = ok and all(_in_metres(poses[field], f"{where}.{field}", problems) for field in poses)
        if ok and objects.get(name) is not None:
            ok = _within_reach(poses, gripper[1].data, objects[name]["mesh"], where, problems)
        if not ok or objects.get(name) is None:
            if isinstance(name, str):
                tainted.add(name)
            continue
        grasps = grouped.setdefault(name, {})
        if grasp not in grasps:
            grasps[grasp] = {**poses, "gripper": gripper[0], "description": gripper[1], "results": [], "first": index}
        entry = grasps[grasp]
        for field in ("object_pose", "gripper_pose"):
            if np.abs(poses[field] - entry[field]).max() > SAME_POSE_TOLERANCE:
                problems.add(f"{where}.{field}", f"differs from trials[{entry['first']}], an earlier trial of "
                                                 f"{name} grasp {grasp!r}",
                             "give repeats of one grasp identical poses, or a grasp id of their own")
        entry["results"].append(bool(success))
    if len(first_id_of_type) > 1:
        firsts = ", ".join(f"trials[{index}].grasp {grasp!r}" for index, grasp in first_id_of_type.values())
        problems.add("trials", f"the grasp ids mix integers and strings ({firsts}): 5 and \"5\" would be two grasps",
                     "give every grasp id the same type: all integers or all strings")
    return grouped, tainted


def _gripper_of(value, base: Path, seen: dict, where: str, problems: _Problems):
    """(key, GripperDescription) of a trial's `gripper`: a shipped name (key: the name) or the path
    of a description file (docs/grippers.md), relative to `base` or absolute (key: the resolved
    path); None, with a problem, for anything else. `seen` caches each value's answer."""
    if isinstance(value, str) and value in seen:
        return seen[value]
    shipped = shipped_grippers()
    found = None
    if isinstance(value, str) and value in shipped:
        found = (value, shipped[value])
    elif isinstance(value, str) and (value.endswith((".yaml", ".yml")) or "/" in value or os.sep in value):
        path = Path(value).expanduser()
        path = (path if path.is_absolute() else base / path).resolve()
        try:
            found = (str(path), load_description(path))
        except GripperDescriptionError as exc:
            problems.add(where, *_problem_and_fix(exc, "give a gripper description file (docs/grippers.md)"))
    else:
        problems.add(where, f"unknown gripper {value!r}",
                     f"use one of the grippers ipcgrasp simulates: {', '.join(shipped)}, or the path of a gripper "
                     "description file (docs/grippers.md), relative to the trials file")
    if isinstance(value, str):
        seen[value] = found
    return found


def _in_metres(pose: np.ndarray, where: str, problems: _Problems) -> bool:
    """False (and a problem) when the translation of `pose` (4x4) is farther than MAX_TRANSLATION
    from the world origin: a pose in millimetres."""
    distance = float(np.linalg.norm(pose[:3, 3]))
    if distance <= MAX_TRANSLATION:
        return True
    problems.add(where, f"the translation ({', '.join(f'{x:.4g}' for x in pose[:3, 3])}) is {distance:.4g} m from the world origin, more "
                        f"than {MAX_TRANSLATION:g} m: it looks like millimetres",
                 "give translations in metres (divide millimetres by 1000)")
    return False


def _within_reach(poses: dict, gripper: dict, mesh, where: str, problems: _Problems) -> bool:
    """False (and a problem) when a tooltip of `gripper` (a description's data), with the jaws
    open to its stroke at `poses["gripper_pose"]`, is farther than the stroke + REACH_MARGIN (m)
    from the bounding box of `mesh` placed at `poses["object_pose"]`: no pad could touch it."""
    vertices = mesh.vertices @ poses["object_pose"][:3, :3].T + poses["object_pose"][:3, 3]
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    tooltips = (poses["gripper_pose"] @ widest_tooltip_frames(gripper))[:, :3, 3]
    gap = max(float(np.linalg.norm(np.maximum(np.maximum(low - t, t - high), 0.0))) for t in tooltips)
    bound = gripper["stroke"] + REACH_MARGIN
    if gap <= bound:
        return True
    problems.add(f"{where}.gripper_pose", f"a tooltip of the {gripper['name']} (jaws open to its "
                                          f"{gripper['stroke'] * 1e3:g} mm stroke) is {gap * 100:.1f} cm from the "
                                          f"object's bounding box, farther than the stroke + "
                                          f"{REACH_MARGIN * 100:g} cm ({bound * 100:g} cm): no trial could touch the "
                                          "object",
                 "give the gripper pose at the grasp, in metres, in the world frame of object_pose (docs/own_data.md, "
                 "\"Plausibility\")")
    return False


def import_trials(source: str | os.PathLike, dest: str | os.PathLike, repair: bool = False) -> dict:
    """Check the trials file `source`, then write DEST in the REACH layout (`data.reach`):
    `object_meshes/<name>.obj` (the validated mesh), `phys_grasps_json/<name>.json` (one record
    per trial: obj, grasp, pose, stable_pose 0, attempt, trial, result, gripper), `objects.yaml`
    (the registry: mass_g, split, source) and `ipcgrasp_import.json` (the manifest). `repair`: a
    mesh the check refuses is repaired (`read_trials`); DEST gets the repaired mesh, the source
    file is not modified, and the manifest's `objects.<name>.mesh_repair` says what changed
    (`RepairReport.record`; None for a mesh imported as checked). Returns the manifest. Refuses
    (OwnDataError) a DEST that holds files no import created; replaces only the files a previous
    import listed. Every file is written atomically."""
    trials = read_trials(source, repair=repair)
    dest = Path(dest)
    previous = _previous_import(dest)
    outputs = {}
    for name, obj in sorted(trials.objects.items()):
        outputs[f"{MESH_DIR}/{name}.obj"] = obj.mesh.export(file_type="obj").encode()
        records = ",\n ".join(json.dumps(record) for record in _reach_records(obj))
        outputs[f"{GRASP_DIR}/{name}.json"] = f"[{records}]\n".encode()
    outputs[REGISTRY_FILE] = _registry_yaml(trials).encode()
    for rel in outputs:
        _check_inside(dest, rel)
    foreign = sorted(rel for rel in outputs if (dest / rel).exists() and rel not in previous)
    if foreign:
        raise OwnDataError(f"{dest}: {', '.join(foreign)} already exist(s) and no earlier import made them; fix: "
                           "import into a new directory (the import never overwrites files it did not create)")
    gripper = next(iter(trials.objects.values()))  # one gripper per file
    manifest = {"format": FORMAT, "version": VERSION, "ipcgrasp_version": __version__,
                "source": str(trials.path.resolve()), "source_sha256": trials.sha256, "gripper": gripper.gripper_name,
                **({"gripper_file": gripper.gripper} if gripper.gripper not in shipped_grippers() else {}),
                "objects": {name: {"mass_kg": o.mass, "split": o.split, "grasps": len(o.grasp_ids),
                                   "trials_per_grasp": int(o.results.shape[1]),
                                   "grasp_ids": o.grasp_ids, "mesh_source": str(o.mesh_file.resolve()),
                                   "mesh_repair": o.repair.record() if o.repair is not None else None}
                            for name, o in sorted(trials.objects.items())},
                "files": sorted(outputs)}
    # list old and new files first, so an interrupted import leaves a manifest naming all it made
    write_json_atomic(dest / MANIFEST, {**manifest, "files": sorted(set(outputs) | set(previous)),
                                        "complete": False})
    for rel, data in outputs.items():
        write_bytes_atomic(dest / rel, data)
    for rel in sorted(set(previous) - set(outputs)):
        (dest / rel).unlink(missing_ok=True)  # made by the previous import, no longer part of the data
    write_json_atomic(dest / MANIFEST, {**manifest, "complete": True})
    return manifest


def _previous_import(dest: Path) -> list[str]:
    """Files a previous import into `dest` made ([] for a missing or empty directory);
    OwnDataError for a directory with other content and no manifest."""
    if dest.exists() and not dest.is_dir():
        raise OwnDataError(f"{dest}: is a file, not a directory; fix: give a directory for the imported data")
    if not dest.exists() or not any(dest.iterdir()):
        return []
    manifest = dest / MANIFEST
    if not manifest.is_file():
        raise OwnDataError(f"{dest}: not empty and not made by `ipcgrasp data import` (no {MANIFEST}); fix: import "
                           "into a new or empty directory (the import never overwrites files it did not create)")
    try:
        files = load_json(manifest)["files"]
    except (DocumentError, KeyError, TypeError) as exc:
        raise OwnDataError(f"{manifest}: unreadable import manifest ({exc!r}); fix: import into a new directory") from None
    if not isinstance(files, list):
        raise OwnDataError(f"{manifest}: 'files' is not a list; fix: import into a new directory")
    for rel in files:
        _check_manifest_entry(dest, manifest, rel)
    return [str(f) for f in files]


def _check_manifest_entry(dest: Path, manifest: Path, rel) -> None:
    """OwnDataError unless `rel` names a file an import writes (`objects.yaml`,
    `object_meshes/<name>.obj`, `phys_grasps_json/<name>.json`) and that file, symlinks resolved,
    lies inside `dest`: a manifest is read back and its files replaced or deleted, so a crafted one
    must not reach anything else."""
    if not (isinstance(rel, str) and IMPORTED_FILE_PATTERN.match(rel)):
        raise OwnDataError(f"{manifest}: 'files' entry {rel!r} is not a file an import writes ({REGISTRY_FILE}, "
                           f"{MESH_DIR}/<name>.obj or {GRASP_DIR}/<name>.json); the manifest was not written by "
                           "`ipcgrasp data import` or was altered; fix: import into a new directory")
    _check_inside(dest, rel, f"{manifest}: 'files' entry")


def _check_inside(dest: Path, rel: str, what: str = "output") -> None:
    """OwnDataError when `dest / rel` is a symlink or, links resolved, lies outside `dest`
    (e.g. DEST/object_meshes a link to another folder): the import writes and deletes only there."""
    target = dest / rel
    if target.is_symlink() or not target.resolve().is_relative_to(dest.resolve()):
        raise OwnDataError(f"{dest}: {what} {rel!r} is a link or resolves outside the directory "
                           f"({target.resolve()}); fix: import into a new directory without links")


def _reach_records(obj: ImportedObject) -> list[dict]:
    """The REACH records of one object (`data.reach`): record T g + k is trial k of grasp g."""
    records = []
    for g in range(len(obj.grasp_ids)):
        for k, result in enumerate(obj.results[g]):
            records.append({"obj": obj.name, "attempt": g, "trial": k, "grasp": obj.gripper_poses[g].tolist(),
                            "pose": obj.object_poses[g].tolist(), "stable_pose": 0, "result": bool(result),
                            "gripper": obj.gripper_name, "grasp_id": obj.grasp_ids[g]})
    return records


def _registry_yaml(trials: TrialsFile) -> str:
    """The registry of the imported objects (config/objects.yaml format: mass in grams)."""
    entries = {name: {"mass_g": o.mass * 1000.0, "split": o.split, "source": f"own data: {trials.path.name}"}
               for name, o in sorted(trials.objects.items())}
    header = (f"# Object registry written by `ipcgrasp data import` from {trials.path.name}\n"
              "# (mass_g: grams; split: training or heldout). Use it as the study's `registry:`.\n")
    return header + yaml.safe_dump({"objects": entries}, sort_keys=True)
