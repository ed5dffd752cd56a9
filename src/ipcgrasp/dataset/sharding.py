"""How a sharded labelling run (`shards`, workflow/generate.smk) splits its grasps and where it
keeps its files: shards of consecutive grasps (`n_shards`, `shard_grasps`), their summaries
(`SHARD_DIR`, `shard_path`) and the job logs (`LOG_DIR`) in the dataset directory.

With no import beyond the standard library: workflow/generate.smk imports it to parse, and every
snakemake process parses it, each shard job's own (cluster, SLURM) included.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = ["LOG_DIR", "SHARD_DIR", "n_shards", "shard_grasps", "shard_path"]

SHARD_DIR = "shards"
"""Subdirectory of the shard summaries of a sharded run."""
LOG_DIR = "logs"
"""Subdirectory of the job logs of a sharded run."""


def n_shards(n: int, shard_size: int) -> int:
    """Number of shards of `shard_size` consecutive grasps that cover grasps 0..n-1."""
    if not (n >= 1 and shard_size >= 1):
        raise ValueError(f"n and shard_size must be positive integers, got {n!r} and {shard_size!r}")
    return math.ceil(n / shard_size)


def shard_grasps(n: int, shard_size: int, shard: int) -> range:
    """Grasp indices of shard `shard` (0-based): [shard * shard_size, min(n, (shard + 1) * shard_size))."""
    if not 0 <= shard < n_shards(n, shard_size):
        raise ValueError(f"shard {shard} out of range: {n} grasps in shards of {shard_size} make "
                         f"{n_shards(n, shard_size)} shard(s)")
    return range(shard * shard_size, min(n, (shard + 1) * shard_size))


def shard_path(out: str | os.PathLike, shard: int) -> Path:
    """The summary file of one shard: out/shards/shard_0003.json."""
    return Path(out) / SHARD_DIR / f"shard_{shard:04d}.json"
