"""A labelling run (`records.generate_dataset`) split into shards of consecutive grasps, one
Snakemake job each (workflow/generate.smk), on any executor, and merged into the index a single
process writes.

Why the result cannot depend on the sharding: the sampler draws its candidates from one
generator seeded with the root seed in fixed batches (`antipodal`), so every shard samples the
same candidates 0..n-1 and simulates its own range of them; trial k of grasp i has the seed
`grasp.perturbation.trial_seed(seed, i, k)`, the project's one seeding rule, which depends on
nothing else (not on the shard, the process or the order). Every shard writes the records of its
grasps (`grasp_<i>.json`, `.png`) into the dataset directory and a summary
`shards/shard_<k>.json`; the merge checks that every sampled grasp has its record and writes
`index.csv` from all records, as `generate_dataset` does at its end. Which grasps a shard holds
and where its summary goes: `sharding`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ipcgrasp.dataset.records import RecordError, generate_dataset, read_records, record_stem, write_index
from ipcgrasp.dataset.sharding import shard_grasps, shard_path
from ipcgrasp.documents import load_json
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.io import write_json_atomic

__all__ = ["PARAM_KEYS", "generation_inputs", "merge_shards", "run_shard"]

PARAM_KEYS = ("E", "mu", "close_rule", "critical_mass")
"""SimParams fields a generation config may set (the rest keep SimParams' defaults, as in
`ipcgrasp generate`); the pad (SimParams.jaw) is the gripper's pad variant `jaw`."""


def generation_inputs(config: Mapping) -> tuple[GraspObject, SimParams, Gripper]:
    """The object (config mesh in m, mass in kg, name), trial parameters (PARAM_KEYS set and not
    null) and gripper (config gripper: a shipped name or a description file, with pad variant
    jaw) of a generation config (workflow/schemas/generate.schema.yaml)."""
    obj = GraspObject.from_file(config["mesh"], config["mass"], name=config.get("name") or None,
                                repair=bool(config.get("repair")))
    gripper = Gripper.from_description(config.get("gripper"), config.get("jaw"))
    params = SimParams(jaw=gripper.pad_kind,
                       **{key: config[key] for key in PARAM_KEYS if config.get(key) is not None})
    return obj, params, gripper


def run_shard(config: Mapping, shard: int, log=None) -> dict:
    """Simulate shard `shard` of the generation `config` (keys of generate.schema.yaml: mesh, mass,
    name, out, n, trials, seed, images, shard_size and PARAM_KEYS), write its records into
    config["out"] and its summary (`shard_path`), and return the summary."""
    obj, params, gripper = generation_inputs(config)
    grasps = shard_grasps(config["n"], config["shard_size"], shard)
    generation = generate_dataset(obj, config["out"], config["n"], params, n_trials=config["trials"],
                                  seed=config["seed"], workers=1, images=config["images"], mesh=config["mesh"],
                                  grasps=grasps, gripper=gripper, on_trial=(lambda i, r: log(f"grasp {i}: {r}")) if log else None)
    summary = {"shard": shard, "grasps": [grasps.start, grasps.stop], "candidates": len(generation.sampling.candidates),
               "attempts": generation.sampling.attempts, "written": generation.written,
               "skipped": generation.skipped, "wall_time": generation.wall_time}
    write_json_atomic(shard_path(config["out"], shard), summary)
    return summary


def merge_shards(out: str | os.PathLike, summaries: list[str | os.PathLike]) -> dict:
    """Check that the shards (their summary files) agree on the sampled candidates and that every
    candidate has its record in `out`, then write index.csv from all records there. Returns
    {"candidates", "records", "written", "skipped"}; RecordError naming the shard otherwise."""
    out = Path(out)
    loaded = [(Path(p), load_json(p)) for p in summaries]
    if not loaded:
        raise RecordError(f"{out}: no shard summaries to merge; run the shards first (workflow/generate.smk)")
    candidates = {s["candidates"] for _, s in loaded}
    if len(candidates) != 1:
        raise RecordError(f"{out}: the shards sampled different numbers of candidates "
                          f"({ {str(p): s['candidates'] for p, s in loaded} }); the object or the sampler changed "
                          "between them: write into a new output directory")
    n_candidates = candidates.pop()
    records = read_records(out)
    missing = [i for i in range(n_candidates) if i not in records]
    if missing:
        raise RecordError(f"{out / record_stem(missing[0])}.json: missing ({len(missing)} sampled grasp(s) have no "
                          "record); rerun the workflow to simulate them")
    write_index(out, records.values())
    return {"candidates": n_candidates, "records": len(records),
            "written": sum(len(s["written"]) for _, s in loaded), "skipped": sum(len(s["skipped"]) for _, s in loaded)}
