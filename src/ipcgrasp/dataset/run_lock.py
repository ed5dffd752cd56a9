"""A sharded `generate` run's hold on its dataset directory, and the Snakemake locks a hard kill
leaves behind.

Snakemake locks the files a run reads and writes (`<working directory>/.snakemake/locks/
<n>.input.lock` and `<n>.output.lock`, one path a line) and removes the locks when it ends, also
on Ctrl-C. A run killed hard (SIGKILL, out of memory, power loss) leaves them, and the next run
stops with "Directory cannot be locked". Snakemake's `--unlock` removes every lock of the working
directory, also those of another workflow running from it (the study's), so generate removes only
its own, and only when none of its processes runs:

- `run_snakemake` writes OUT/logs/generate.pid (RUN_FILE: the start time and the pids of generate
  and of its snakemake) and runs snakemake;
- `release_stale_locks`, before the next run, refuses while a process named there still runs;
  once they have all ended, it removes the locks that name files in OUT (no other run writes
  there) and that were made after that run started. Locks naming OUT that no generate run made
  (e.g. `snakemake -s workflow/generate.smk` run directly) are reported with the command that
  removes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ipcgrasp.dataset.records import RecordError
from ipcgrasp.dataset.sharding import LOG_DIR
from ipcgrasp.io import write_json_atomic

RUN_FILE = "generate.pid"
"""In OUT/LOG_DIR: the last sharded run's start time (s since the epoch) and process ids."""
LOCK_DIR = Path(".snakemake") / "locks"
"""Where Snakemake keeps its locks, relative to its working directory."""


def run_file(out: str | os.PathLike) -> Path:
    """The run file of the dataset directory `out` (RUN_FILE)."""
    return Path(out) / LOG_DIR / RUN_FILE


def _running(pid: int) -> bool:
    """Whether process `pid` exists (signal 0 checks without sending one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _locked_paths(lock: Path, workdir: Path) -> list[Path]:
    """The files a Snakemake lock file names, relative ones in `workdir`."""
    lines = [line.strip() for line in lock.read_text().splitlines() if line.strip()]
    return [Path(line) if Path(line).is_absolute() else workdir / line for line in lines]


def locks_naming(workdir: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """The Snakemake lock files of `workdir` that name a file inside `out`."""
    workdir, out = Path(workdir), Path(out).resolve()
    locks = sorted((workdir / LOCK_DIR).glob("*.lock")) if (workdir / LOCK_DIR).is_dir() else []
    return [lock for lock in locks
            if any(path.resolve().is_relative_to(out) for path in _locked_paths(lock, workdir))]


def release_stale_locks(out: str | os.PathLike, workdir: str | os.PathLike) -> list[Path]:
    """Before a sharded run into `out` from `workdir`: RecordError while a process of the last run
    (RUN_FILE) still runs, or when locks name `out` that no generate run made; otherwise remove the
    locks the last run left (module docstring) and return them."""
    out, workdir = Path(out), Path(workdir)
    record = run_file(out)
    last = json.loads(record.read_text()) if record.is_file() else {"started": float("inf"), "pids": []}
    alive = [pid for pid in last["pids"] if _running(pid)]
    if alive:
        raise RecordError(f"{out}: another `ipcgrasp generate` is writing this dataset (process(es) "
                          f"{', '.join(map(str, alive))}, {record}); fix: wait for it to end or stop it (kill "
                          f"{' '.join(map(str, alive))}); if those are not generate's processes (e.g. after a "
                          f"restart), remove {record}")
    locks = locks_naming(workdir, out)
    foreign = [lock for lock in locks if lock.stat().st_mtime < last["started"]]
    if foreign:
        raise RecordError(f"{out}: Snakemake locks in {workdir / LOCK_DIR} name this dataset and no `ipcgrasp "
                          "generate` run made them (a snakemake run of workflow/generate.smk, running or killed); "
                          f"fix: once no snakemake run writes {out}, remove them: rm {' '.join(map(str, foreign))}")
    for lock in locks:
        lock.unlink()
    return locks


def run_snakemake(out: str | os.PathLike, command: list[str], workdir: str | os.PathLike) -> int:
    """Run the snakemake `command` in `workdir` for the dataset directory `out`, with RUN_FILE
    naming this process and snakemake's while it runs (none once snakemake has ended); its exit
    code. An exception (Ctrl-C) kills snakemake, as `subprocess.run` does."""
    record = run_file(out)
    started = time.time()
    write_json_atomic(record, {"started": started, "pids": [os.getpid()]})
    try:
        with subprocess.Popen(command, cwd=workdir) as process:
            write_json_atomic(record, {"started": started, "pids": [os.getpid(), process.pid]})
            try:
                return process.wait()
            except BaseException:
                process.kill()
                raise
    finally:
        write_json_atomic(record, {"started": started, "pids": []})
