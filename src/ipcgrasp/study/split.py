"""Training / held-out split of the study's grasps.

With several objects that have physical grasps the split is by object, as in the paper (the
registry's `split`: training cat, pear, vase; the others held out). With a single such object
(the bundled data: cube_3cm) its grasps are split instead: a seeded split stratified by
physical robustness >= threshold, so both sets hold robust and non-robust grasps in the same
proportion. The split is a JSON-able dict, written to results/split.json and quoted in every
table caption (`describe_split`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from ipcgrasp.documents import load_json

SPLIT_KINDS = ("object", "grasp")


class SplitError(ValueError):
    """The objects and settings given admit no training / held-out split."""


def strata(robustness, threshold: float = 0.5) -> list[np.ndarray]:
    """Grasp indices of the robust (robustness >= threshold) and the other grasps, each sorted."""
    r = np.asarray(robustness, dtype=np.float64)
    robust = r >= threshold
    return [np.flatnonzero(robust), np.flatnonzero(~robust)]


def stratified_grasp_split(robustness, training_fraction: float = 0.5, threshold: float = 0.5,
                           seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Split grasp indices 0..G-1 into (training, held-out), both sorted.

    Each stratum (`strata`) is shuffled by numpy's default_rng(seed) and its first
    round(training_fraction * n_stratum) grasps (Python round, half to even) go to training.
    Deterministic in (robustness, training_fraction, threshold, seed).
    """
    if not 0.0 < training_fraction < 1.0:
        raise SplitError(f"training_fraction must lie strictly between 0 and 1, got {training_fraction}")
    rng = np.random.default_rng(seed)
    training, heldout = [], []
    for stratum in strata(robustness, threshold):
        shuffled = rng.permutation(stratum)
        n_training = round(training_fraction * len(stratum))
        training.append(shuffled[:n_training])
        heldout.append(shuffled[n_training:])
    training, heldout = np.sort(np.concatenate(training)), np.sort(np.concatenate(heldout))
    if training.size == 0 or heldout.size == 0:
        raise SplitError(f"splitting {len(np.asarray(robustness))} grasps with training_fraction "
                         f"{training_fraction} leaves the training or the held-out set empty")
    return training, heldout


def stratified_subset(indices, robustness, size: int, threshold: float = 0.5, seed: int = 0) -> np.ndarray:
    """At most `size` of `indices` (grasp indices into `robustness`), sorted, stratified like
    `strata`: every stratum present gets one grasp while `size` allows, the rest goes to the
    strata by largest remainder of size x stratum share; grasps within a stratum are drawn by
    default_rng(seed). size <= 0 or >= len(indices) returns all of them."""
    indices = np.asarray(indices, dtype=np.int64)
    if size <= 0 or size >= indices.size:
        return np.sort(indices)
    r = np.asarray(robustness, dtype=np.float64)
    groups = [g for g in (indices[r[indices] >= threshold], indices[r[indices] < threshold]) if g.size]
    counts = np.zeros(len(groups), dtype=np.int64)
    for k in range(min(size, len(groups))):
        counts[k] = 1
    capacity = np.array([g.size for g in groups]) - counts
    shares = (size - counts.sum()) * capacity / capacity.sum()
    extra = np.floor(shares).astype(np.int64)
    order = np.argsort(-(shares - extra), kind="stable")
    extra[order[:size - counts.sum() - extra.sum()]] += 1
    counts += extra
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.permutation(g)[:n] for g, n in zip(groups, counts)]))


def object_split(objects: Sequence[str], registry: Mapping) -> tuple[list[str], list[str]]:
    """(training, held-out) objects by the registry's split; a single object is in both (its
    grasps are split instead). Unknown objects or an empty side raise SplitError."""
    objects = sorted(objects)
    if not objects:
        raise SplitError("no object with both a mesh and physical grasps to split")
    if len(objects) == 1:
        return objects, objects
    unknown = [o for o in objects if o not in registry]
    if unknown:
        raise SplitError(f"objects {unknown} are not in the object registry; add them with their mass and split")
    training = [o for o in objects if registry[o].split == "training"]
    heldout = [o for o in objects if registry[o].split != "training"]
    if not training or not heldout:
        side = "training" if not training else "held-out"
        raise SplitError(f"the registry's split leaves no {side} object among {objects}; "
                         "mark at least one object 'training' and one 'heldout' in the registry")
    return training, heldout


def make_split(physical: Mapping[str, np.ndarray], registry: Mapping, training_fraction: float = 0.5,
               threshold: float = 0.5, seed: int = 0, max_training_grasps: int = 0,
               max_heldout_grasps: int = 0) -> dict:
    """The study's split from each object's per-grasp physical robustness (object -> (G,) array).

    Returns {"kind": "object" | "grasp", "seed", "threshold", "training_fraction",
    "training": {object: [grasp indices]}, "heldout": {...}, "description": caption text}.
    max_*_grasps > 0 keeps a stratified subset of that many grasps per object (`stratified_subset`).
    """
    training_objects, heldout_objects = object_split(list(physical), registry)
    kind = "grasp" if training_objects == heldout_objects else "object"
    training, heldout = {}, {}
    for name in sorted(physical):
        r = np.asarray(physical[name], dtype=np.float64)
        if kind == "grasp":
            train_idx, held_idx = stratified_grasp_split(r, training_fraction, threshold, seed)
        else:
            everything = np.arange(r.size)
            train_idx = everything if name in training_objects else None
            held_idx = everything if name in heldout_objects else None
        if train_idx is not None:
            training[name] = stratified_subset(train_idx, r, max_training_grasps, threshold, seed).tolist()
        if held_idx is not None:
            heldout[name] = stratified_subset(held_idx, r, max_heldout_grasps, threshold, seed).tolist()
    split = {"kind": kind, "seed": int(seed), "threshold": float(threshold),
             "training_fraction": float(training_fraction), "training": training, "heldout": heldout}
    split["description"] = describe_split(split, physical)
    return split


def grasp_part(grasps: Sequence[int], part: int, parts: int) -> list[int]:
    """The grasps of job `part` of `parts` that share an evaluation: every parts-th grasp from the
    part-th, so easy and hard grasps spread over the jobs alike (`cube.join_parts` puts the jobs'
    cells back together; with fewer grasps than parts a job gets none)."""
    if not (isinstance(parts, (int, np.integer)) and parts >= 1 and 0 <= part < parts):
        raise ValueError(f"part must be one of 0 .. parts - 1 with parts >= 1, got part {part} of {parts}")
    return [int(g) for g in grasps][part::parts]


def describe_split(split: Mapping, physical: Mapping[str, np.ndarray] | None = None) -> str:
    """One paragraph for table captions: how the split was made and what each side holds."""
    def side(name):
        parts = []
        for obj, grasps in split[name].items():
            robust = ""
            if physical is not None:
                r = np.asarray(physical[obj])[grasps]
                robust = f", {int(np.sum(r >= split['threshold']))} robust"
            parts.append(f"{obj} ({len(grasps)} grasps{robust}: {', '.join(map(str, grasps))})"
                         if split["kind"] == "grasp" else f"{obj} ({len(grasps)} grasps{robust})")
        return "; ".join(parts)

    if split["kind"] == "grasp":
        how = (f"Split by grasp (one object has physical grasps): seeded (seed {split['seed']}) split "
               f"stratified by physical robustness >= {split['threshold']:g}, training fraction "
               f"{split['training_fraction']:g}.")
    else:
        how = "Split by object (the registry's split, as in the paper)."
    return f"{how} Training: {side('training')}. Held out: {side('heldout')}."


def load_split(path: str | os.PathLike) -> dict:
    """Read results/split.json, checking its shape."""
    split = load_json(path)
    if not isinstance(split, dict) or split.get("kind") not in SPLIT_KINDS \
            or not isinstance(split.get("training"), dict) or not isinstance(split.get("heldout"), dict):
        raise SplitError(f"{path}: not a study split (expected kind, training and heldout); rerun the split rule")
    return split
