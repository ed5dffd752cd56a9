"""Provenance attributes stamped on every result cube: what code, which config, when."""

from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import xarray as xr

import ipcgrasp
from ipcgrasp.paths import REPO_ROOT


def config_hash(config: Mapping) -> str:
    """SHA-256 (hex) of the config as canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def git_commit(repo: str | Path = REPO_ROOT) -> str:
    """HEAD commit of the git checkout at `repo`, with "+dirty" when tracked files differ from
    it; "unknown" outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if status.strip() else "")


def provenance_attrs(config: Mapping, seed: int) -> dict:
    """Dataset attributes: ipcgrasp version, git commit of its source tree, config hash, root
    seed, creation time (UTC, ISO 8601) and the versions of numpy and xarray."""
    return {
        "ipcgrasp_version": ipcgrasp.__version__,
        "git_commit": git_commit(),
        "config_hash": config_hash(config),
        "seed": int(seed),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "numpy_version": np.__version__,
        "xarray_version": xr.__version__,
        "Conventions": "CF-1.10",
    }
