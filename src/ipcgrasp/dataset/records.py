"""Labelled grasp records: simulate antipodal candidates and write one JSON record (validated
against the shipped schema, `schemas/grasp_record.schema.json`) and one PNG per grasp, plus a
CSV index over all records.

A dataset directory holds `dataset.json` (what it was made from: object mesh hash and mass,
gripper name, pad and fingerprint, seed, trials, simulator and sampler settings),
`grasp_<i>.json` and `grasp_<i>.png` per grasp i and `index.csv`. Every file is written
atomically and a record only once all its trials are done, so an interrupted run loses at most
the grasps in flight; running again with the same settings samples the same candidates and
simulates only the grasps without a record. A trial that raises is recorded as failed (failure
mode "error") with the error as its reason.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import time
from collections import Counter
from concurrent.futures import as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd

from ipcgrasp import __version__
from ipcgrasp.dataset.antipodal import GraspCandidate, SamplerSettings, Sampling, sample_antipodal_grasps
from ipcgrasp.dataset.sharding import LOG_DIR, SHARD_DIR
from ipcgrasp.documents import DocumentError, load_json, parse_json
from ipcgrasp.geometry.mesh import surface_sha256
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.grasp.simulate import Robustness, run_trial
from ipcgrasp.interrupts import reraise_interrupt
from ipcgrasp.io import write_bytes_atomic, write_json_atomic
from ipcgrasp.workers import process_pool

__all__ = [
    "DATASET_FILE",
    "GENERATE_CONFIG",
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "Generation",
    "RecordError",
    "generate_dataset",
    "check_dataset_directory",
    "check_resume",
    "grasp_record",
    "index_table",
    "load_schema",
    "mesh_sha256",
    "read_records",
    "record_files",
    "record_stem",
    "trial_entry",
    "validate_record",
    "write_index",
]

SCHEMA_VERSION = 1
DATASET_FILE = "dataset.json"
INDEX_FILE = "index.csv"
GENERATE_CONFIG = "generate.yaml"
"""The settings `ipcgrasp generate --shard-size` writes into the directory for its Snakemake jobs."""
RIGID_TOLERANCE = 1e-6


class RecordError(ValueError):
    """A grasp record or dataset directory that cannot be used; the message names the file, the
    field and the fix."""


@functools.cache
def load_schema() -> dict:
    """The JSON schema of a grasp record (shipped with the package)."""
    return parse_json(files("ipcgrasp").joinpath("schemas", "grasp_record.schema.json").read_text(),
                      "grasp_record.schema.json")


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema())


def validate_record(record, name: str = "record") -> None:
    """Raise RecordError unless `record` follows the schema, its poses are rigid transforms and
    its robustness is the mean success of its trials. `name` (e.g. the file) leads the message."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(record))
    if error is not None:
        field = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise RecordError(f"{name}: field '{field}': {error.message}. Records follow "
                          "ipcgrasp/schemas/grasp_record.schema.json; delete the file to have it recomputed.")
    for field in ("object", "gripper"):
        rotation = np.array(record[field]["pose"])[:3, :3]
        if np.abs(rotation.T @ rotation - np.eye(3)).max() > RIGID_TOLERANCE or np.linalg.det(rotation) <= 0.0:
            raise RecordError(f"{name}: field '{field}/pose' is not a rigid transform (rotation orthonormal with "
                              "det +1); delete the file to have it recomputed.")
    mean = float(np.mean([t["success"] for t in record["trials"]]))
    if not math.isclose(record["robustness"], mean, abs_tol=1e-12):
        raise RecordError(f"{name}: field 'robustness' is {record['robustness']} but the trials' mean success is "
                          f"{mean}; delete the file to have it recomputed.")


def record_stem(index: int) -> str:
    """File name (no suffix) of grasp `index`'s record and picture: grasp_0007."""
    return f"grasp_{index:04d}"


def mesh_sha256(obj: GraspObject) -> str:
    """SHA-256 of the object's validated mesh: float64 vertices then int64 faces (C order)."""
    return surface_sha256(obj.mesh)


def _number(value) -> float | None:
    """A finite float, or None for NaN/inf (JSON has neither)."""
    value = float(value)
    return value if math.isfinite(value) else None


def trial_entry(result: GraspResult) -> dict:
    """One trial of a record (see the schema's `trial`); a critical mass of inf (no slip up to
    the cap) becomes null with critical_mass_capped true."""
    return {
        "seed": int(result.seed),
        "success": bool(result.success),
        "failure_mode": result.failure_mode,
        "reason": str(result.reason),
        "start_opening": _number(result.start_opening),
        "close_opening": _number(result.close_opening),
        "close_time": _number(result.close_time),
        "close_forces": [_number(f) for f in result.close_forces],
        "psi": [_number(p) for p in result.psi],
        "object_translation": float(result.object_translation),
        "object_rotation": float(result.object_rotation),
        "lift_height": float(result.lift_height),
        "grip_slide": float(result.grip_slide),
        "grip_pivot": float(result.grip_pivot),
        "grip_roll": float(result.grip_roll),
        "slip_kind": str(result.slip_kind),
        "gravity_torque": _number(result.gravity_torque),
        "torsional_capacity": _number(result.torsional_capacity),
        "contact_radius": _number(result.contact_radius),
        "contact_tilt": _number(result.contact_tilt),
        "critical_mass": _number(result.critical_mass),
        "critical_mass_capped": bool(result.critical_mass == math.inf),
        "critical_mass_force": _number(result.critical_mass_force),
        "critical_mass_reason": str(result.critical_mass_reason),
        "wall_time": float(result.wall_time),
    }


def grasp_record(index: int, obj: GraspObject, object_pose, candidate: GraspCandidate, gripper: Gripper,
                 trials: list, params: SimParams, seed: int, mu: float, image: str | None = None,
                 image_note: str = "", mesh: str | None = None) -> dict:
    """The record of grasp `index` (schema `grasp_record.schema.json`): the object (resting in
    `object_pose`), the gripper pose of `candidate`, its simulated `trials` (GraspResults), the
    simulator `params`, the root `seed`, the sampler's friction `mu` and the picture's file name."""
    return {
        "schema_version": SCHEMA_VERSION,
        "ipcgrasp_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "index": int(index),
        "object": {"name": obj.name, "mesh": None if mesh is None else str(mesh), "mesh_sha256": mesh_sha256(obj),
                   "mass": float(obj.mass), "pose": np.asarray(object_pose, dtype=float).tolist()},
        "gripper": {"name": gripper.name, "pad_kind": gripper.pad_kind, "pose": candidate.grasp_pose.tolist(),
                    "max_opening": float(gripper.max_opening)},
        "antipodal": {"contacts": candidate.contacts.tolist(), "normals": candidate.normals.tolist(),
                      "width": float(candidate.width), "friction_angles": candidate.friction_angles.tolist(),
                      "mu": float(mu), "attempt": int(candidate.attempt)},
        "seed": int(seed),
        "trials": [trial_entry(t) for t in trials],
        "robustness": Robustness(list(trials)).robustness,
        "params": params.to_dict(),
        "image": image,
        "image_note": image_note,
    }


def record_files(directory: str | os.PathLike) -> list[Path]:
    """The grasp record files (`grasp_*.json`) in `directory`, sorted, unread."""
    return sorted(Path(directory).glob("grasp_*.json"))


def read_records(directory: str | os.PathLike) -> dict[int, dict]:
    """Every grasp record (`record_files`) in `directory`, validated, by index."""
    records = {}
    for path in record_files(directory):
        try:
            record = load_json(path)
        except DocumentError as exc:
            raise RecordError(f"{exc}, or delete the file to have it recomputed") from None
        validate_record(record, str(path))
        if path.stem != record_stem(record["index"]):
            raise RecordError(f"{path}: field 'index' is {record['index']}, which belongs in "
                              f"{record_stem(record['index'])}.json; delete the file to have it recomputed.")
        records[record["index"]] = record
    return records


def _mean(values) -> float:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else float("nan")


def index_table(records) -> pd.DataFrame:
    """One row per record, by index: file names, robustness, trial and success counts, failure
    modes ("mode:count;..."), width (m), mean jaw opening at close (m), mean closing force (N,
    over pads and closed trials), mean critical mass (kg, over the trials that slipped) and how
    many trials never slipped up to the cap."""
    rows = []
    for record in sorted(records, key=lambda r: r["index"]):
        trials = record["trials"]
        modes = Counter(t["failure_mode"] for t in trials if t["failure_mode"])
        rows.append({
            "index": record["index"],
            "record": f"{record_stem(record['index'])}.json",
            "image": record["image"] or "",
            "robustness": record["robustness"],
            "trials": len(trials),
            "successes": sum(t["success"] for t in trials),
            "failure_modes": ";".join(f"{m}:{c}" for m, c in sorted(modes.items())),
            "width_m": record["antipodal"]["width"],
            "close_opening_m": _mean(t["close_opening"] for t in trials),
            "close_force_N": _mean(f for t in trials for f in t["close_forces"]),
            "critical_mass_kg": _mean(t["critical_mass"] for t in trials),
            "critical_mass_capped": sum(t["critical_mass_capped"] for t in trials),
        })
    return pd.DataFrame(rows, columns=["index", "record", "image", "robustness", "trials", "successes",
                                       "failure_modes", "width_m", "close_opening_m", "close_force_N",
                                       "critical_mass_kg", "critical_mass_capped"])


def write_index(directory: Path, records) -> None:
    """Write `index.csv` (`index_table` of `records`) into `directory`, atomically."""
    buffer = io.StringIO()
    index_table(records).to_csv(buffer, index=False)
    write_bytes_atomic(directory / INDEX_FILE, buffer.getvalue().encode())


def _dataset_settings(obj: GraspObject, params: SimParams, sampler: SamplerSettings, gripper: Gripper, n_trials: int,
                      seed: int) -> dict:
    """What fixes the candidates and their labels (JSON-ready): a directory holds one setting.
    The gripper is named and fingerprinted (`Gripper.settings_sha256`): a description file edited
    under the same name is another gripper."""
    return json.loads(json.dumps({
        "object": {"name": obj.name, "mesh_sha256": mesh_sha256(obj), "mass": float(obj.mass)},
        "gripper": {"name": gripper.name, "pad_kind": gripper.pad_kind, "settings_sha256": gripper.settings_sha256()},
        "seed": int(seed), "trials": int(n_trials), "params": params.to_dict(), "sampler": sampler.to_dict()}))


def check_dataset_directory(directory: str | os.PathLike) -> None:
    """RecordError unless `directory` is absent, empty, or one generate made (it holds
    DATASET_FILE or GENERATE_CONFIG, or only the SHARD_DIR and LOG_DIR folders Snakemake makes
    before a sharded run's first job): generate writes into no folder of other files."""
    directory = Path(directory)
    if not directory.is_dir() or all(p.name in (SHARD_DIR, LOG_DIR) and p.is_dir() for p in directory.iterdir()):
        return
    if not ((directory / DATASET_FILE).is_file() or (directory / GENERATE_CONFIG).is_file()):
        raise RecordError(f"{directory}: not empty and not made by `ipcgrasp generate` (no {DATASET_FILE}); fix: "
                          "give a new or empty output directory (generate replaces no file it did not write)")


SETTING_NOTES = {
    "gripper.settings_sha256": "the gripper description's content (tooltips, pads, backing, finger, force limit or "
                               "speeds) is not the one the records were made with",
}
"""What a difference in a dataset.json field means, where its values alone do not say."""
_ABSENT = object()
"""A field dataset.json does not hold (written by an older version)."""


def check_resume(directory: str | os.PathLike, obj: GraspObject, params: SimParams, gripper: Gripper,
                 n_trials: int, seed: int, sampler: SamplerSettings | None = None) -> dict:
    """The settings `generate_dataset` records in DATASET_FILE for this run (sampler None: the
    default sampler at params.mu), once `directory` is known to take them: RecordError unless it
    is one generate may write (`check_dataset_directory`) and its DATASET_FILE, if any, holds the
    same settings, the gripper's fingerprint included. Raises before any work."""
    settings = _dataset_settings(obj, params, sampler or SamplerSettings(mu=params.mu), gripper, n_trials, seed)
    directory = Path(directory)
    check_dataset_directory(directory)
    path = directory / DATASET_FILE
    if not path.exists():
        return settings
    try:
        existing = load_json(path)
    except DocumentError as exc:
        raise RecordError(f"{exc}, or write into a new output directory") from None
    difference = _first_difference(existing, settings)
    if difference is not None:
        field, old, new = difference
        note = f"; {SETTING_NOTES[field]}" if field in SETTING_NOTES else ""
        raise RecordError(f"{path}: the records in {directory} were made with different '{field}' "
                          f"({'absent' if old is _ABSENT else repr(old)}, now {new!r}){note}; fix: write into a "
                          "new output directory, or rerun with the settings they were made with.")
    return settings


def _first_difference(existing, settings, prefix: str = ""):
    """(dotted field, recorded value or _ABSENT, value now) of the first field of `settings`
    whose value in `existing` differs, or None."""
    for key, value in settings.items():
        field = f"{prefix}{key}"
        old = existing.get(key, _ABSENT) if isinstance(existing, dict) else _ABSENT
        if isinstance(value, dict) and isinstance(old, dict):
            found = _first_difference(old, value, f"{field}.")
            if found is not None:
                return found
        elif old != value:
            return field, old, value
    return None


@dataclass(frozen=True, eq=False)
class Generation:
    """What `generate_dataset` did: the `sampling`, the `written` and `skipped` (already there)
    grasp indices, all `records` in the directory by index, and the wall time (s) of the run."""

    directory: Path
    sampling: Sampling
    written: list
    skipped: list
    records: dict
    wall_time: float

    @property
    def wall_time_per_record(self) -> float:
        """Wall time of the run per record written (s; nan when none was)."""
        return self.wall_time / len(self.written) if self.written else float("nan")


def _run_trial(job) -> tuple[GraspResult, str]:
    """One trial in a worker (or in-process) through the trial runner: (result without frames,
    note on the picture: empty when `picture` was written or not asked for)."""
    obj, object_pose, grasp_pose, params, seed, picture, caption, gripper = job
    result = run_trial(obj, object_pose, grasp_pose, params, seed, record="frames" if picture is not None else (),
                       gripper=gripper)
    note = ""
    if picture is not None:
        note = _picture(result, picture, caption)
        result.frames, result.faces = [], {}
    return result, note


def _picture(result: GraspResult, path: str, caption: str) -> str:
    """Render the trial's last frame (after the lift and hold; after the mass ramp, which stops
    at the first slip, when critical mass runs) to `path`; return why not, or ""."""
    from ipcgrasp.viz.render import render_frame, trial_phases

    if not result.frames:
        return f"trial 0 recorded no frame ({result.failure_mode}: {result.reason})"
    try:
        render_frame(result.frames[-1], result.faces, path, phase=trial_phases(result)[-1], caption=caption,
                     size=(640, 480))
    except Exception as exc:  # noqa: BLE001 -- a picture that fails must not lose the simulated labels
        reraise_interrupt(exc)
        return f"rendering failed: {type(exc).__name__}: {exc}"
    return ""


def generate_dataset(obj: GraspObject, out: str | os.PathLike, n: int, params: SimParams | None = None,
                     n_trials: int = 5, seed: int = 0, workers: int = 1, images: bool = True,
                     sampler: SamplerSettings | None = None, mesh: str | os.PathLike | None = None,
                     on_start=None, on_trial=None, grasps: range | None = None,
                     gripper: Gripper | None = None) -> Generation:
    """Sample `n` antipodal grasps on `obj` (resting in its most stable pose; sampler friction
    params.mu unless `sampler` says otherwise), simulate `n_trials` perturbed trials of each
    (trial k of grasp i with seed trial_seed(seed, i, k), in `workers` processes) and write the
    records, pictures (unless `images` is False) and index into `out` (module docstring).

    Grasps that already have a record in `out` are skipped; `out` must have been made with the
    same object, gripper (its description's content too), seed, trials and settings
    (`check_resume`; RecordError otherwise, before any sampling or simulation).
    `on_start(pending_trials)` is called once before simulating, `on_trial(index, result)` as
    each trial finishes.
    Raises RecordError when the sampler finds no grasp at all. `gripper`: the gripper sampled for
    and simulated, carrying the pad params.jaw (None: the YuMi).

    `grasps` (a range of grasp indices) simulates only those of the sampled grasps and leaves
    index.csv alone: one shard of a sharded run (`dataset.shards`), whose records are the ones
    the whole run writes, since trial k of grasp i always has seed trial_seed(seed, i, k).
    """
    started = time.perf_counter()
    params = params or SimParams()
    sampler = sampler or SamplerSettings(mu=params.mu)
    gripper = gripper or Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
    if not (isinstance(n_trials, int) and n_trials >= 1 and isinstance(workers, int) and workers >= 1):
        raise ValueError(f"n_trials and workers must be positive integers, got {n_trials!r} and {workers!r}")
    directory = Path(out)
    settings = check_resume(directory, obj, params, gripper, n_trials, seed, sampler)
    records = read_records(directory)
    sampling = sample_antipodal_grasps(obj, n, sampler, seed=seed, gripper=gripper)
    if not sampling.candidates and n > 0:
        raise RecordError(f"{obj.name}: no antipodal grasp found in {sampling.attempts} attempts (rejected: "
                          f"{sampling.rejections}). The object needs two faces opposite each other within "
                          f"atan(mu) = {math.degrees(math.atan(sampler.mu)):.0f} degrees and at most "
                          f"{gripper.max_opening * 1e3:.0f} mm apart, reachable above the ground; check the mesh "
                          "is in metres, or raise --mu.")
    if not (directory / DATASET_FILE).exists():
        write_json_atomic(directory / DATASET_FILE, {**settings, "ipcgrasp_version": __version__})
    for i, candidate in enumerate(sampling.candidates):
        if i in records and not np.allclose(records[i]["gripper"]["pose"], candidate.grasp_pose, atol=1e-9):
            raise RecordError(f"{directory / record_stem(i)}.json: its grasp pose is not the one sampled now (the "
                              "sampler changed since it was written); write into a new output directory.")
    chosen = range(len(sampling.candidates)) if grasps is None else \
        range(grasps.start, min(grasps.stop, len(sampling.candidates)))
    skipped = [i for i in chosen if i in records]
    pending = [i for i in chosen if i not in records]
    jobs = [(i, k, (obj, sampling.object_pose, sampling.candidates[i].grasp_pose, params, trial_seed(seed, i, k),
                    str(directory / f"{record_stem(i)}.png") if images and k == 0 else None,
                    f"{obj.name} grasp {i}", gripper))
            for i in pending for k in range(n_trials)]
    if on_start:
        on_start(len(jobs))
    done = {i: [None] * n_trials for i in pending}
    notes = {}
    written = []

    def finish(i, k, result, note):
        done[i][k] = result
        if k == 0:
            notes[i] = note if images else "no picture asked for"
        if on_trial:
            on_trial(i, result)
        if all(r is not None for r in done[i]):
            image = f"{record_stem(i)}.png" if images and not notes[i] else None
            record = grasp_record(i, obj, sampling.object_pose, sampling.candidates[i], gripper, done.pop(i), params,
                                  seed, sampler.mu, image, notes[i], mesh)
            validate_record(record, f"{directory / record_stem(i)}.json")
            write_json_atomic(directory / f"{record_stem(i)}.json", record)
            records[i] = record
            written.append(i)
            if grasps is None:
                write_index(directory, records.values())

    if workers == 1 or len(jobs) <= 1:
        for i, k, job in jobs:
            finish(i, k, *_run_trial(job))
    else:
        with process_pool(min(workers, len(jobs))) as pool:
            futures = {pool.submit(_run_trial, job): (i, k) for i, k, job in jobs}
            for future in as_completed(futures):
                finish(*futures[future], *future.result())
    if grasps is None:
        write_index(directory, records.values())
    return Generation(directory, sampling, written, skipped, records, time.perf_counter() - started)
