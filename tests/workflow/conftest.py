"""Snakemake in the tests, always in a copy of the repository (copy_of_the_repository), mostly
forked from a process that has imported it once (SNAKEMAKE_FORKS): dry runs (dry_run), and the
smoke study, run once per test session through the cluster-generic executor
(profiles/local-cluster), interrupted during its grid job and resumed: test_study.py checks it,
test_slurm.py reruns one job of each submitted rule through SLURM in a copy of it."""

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from ipcgrasp.data.location import resolve_data_dir

from ..conftest import ForkServer

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def copy_of_the_repository(dest: Path, source: Path = REPO) -> Path:
    """`source`'s work tree in `dest`, for snakemake to run in: without its environment, git
    directory, fetched or imported data (resources/), results and snakemake state (.snakemake/).
    Whatever the user's own studies left in `source`, finished, running or interrupted, neither
    changes what a test's snakemake plans nor is read or written by it."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".venv", ".git", "resources", "results", ".snakemake",
                                                                ".pytest_cache", "__pycache__"))
    return dest


SNAKEMAKE_FORKS = ForkServer(SNAKEMAKE, "snakemake.cli:main", [
    # what the Snakefile imports (workflow/rules/common.smk): a run imports anything else itself
    "ipcgrasp.baselines", "ipcgrasp.data.location", "ipcgrasp.data.reach", "ipcgrasp.data.recorded",
    "ipcgrasp.data.registry", "ipcgrasp.documents", "ipcgrasp.study.config", "ipcgrasp.study.labels",
    "ipcgrasp.study.split", "ipcgrasp.study.sweeps"])
"""`snakemake ARGS` forked from a process that has imported snakemake and the Snakefile's modules:
about 2.5 s of CPU less a run, most of a dry run's."""


def dry_run(*args: str, source: Path = REPO) -> subprocess.CompletedProcess:
    """`snakemake -n --cores 1 ARGS` in a throw-away copy of `source` (copy_of_the_repository),
    deleted afterwards; relative paths in ARGS name the copy's files. It runs forked from
    SNAKEMAKE_FORKS, which has imported snakemake and the Snakefile's modules once."""
    with tempfile.TemporaryDirectory(prefix="ipcgrasp-dry-run-") as scratch:
        work = copy_of_the_repository(Path(scratch) / "repo", source)
        return SNAKEMAKE_FORKS.run(["-n", "--cores", "1", *args], cwd=work, timeout=300)


HEAVY_FOR_THE_PARSE = ("scipy.stats", "xarray", "trimesh", "numba")
"""Modules that cost seconds of CPU together and that parsing a Snakefile (the study's,
workflow/generate.smk in a job's own process) and planning its jobs do not need: every snakemake
process parses it, each cluster job's own and every dry run's."""

_LOADED = f"\nimport sys\nprint(sorted(m for m in {HEAVY_FOR_THE_PARSE!r} if m in sys.modules))\n"


def heavy_modules_loaded(script: str, cwd: Path = REPO) -> list[str]:
    """The HEAVY_FOR_THE_PARSE modules loaded in a fresh interpreter (not forked from
    SNAKEMAKE_FORKS, which has imported modules already) once `script` has run there."""
    done = subprocess.run([sys.executable, "-c", script + _LOADED], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return eval(done.stdout.strip().splitlines()[-1])


def snakemake_script(args: Sequence[str]) -> str:
    """Python source that runs `snakemake ARGS` in its own interpreter and fails unless snakemake
    exits with 0 (for `heavy_modules_loaded`)."""
    return ("from snakemake.cli import main\n"
            "try:\n"
            f"    main({list(args)!r})\n"
            "except SystemExit as exit_:\n"
            "    assert not exit_.code, f'snakemake exited with {exit_.code}'\n")


def run_smoke_study(work: Path, *args: str, check: bool = True,
                    snakemake: Sequence[str] | None = None) -> subprocess.CompletedProcess:
    """`snakemake ARGS` on config/smoke.yaml and the bundled data in `work`; with `check`, fails the
    test on error. `snakemake`: the command that runs snakemake (test_slurm.py's polls faster);
    by default SNAKEMAKE, forked from SNAKEMAKE_FORKS."""
    args = [*args, "--configfile", "config/smoke.yaml", "--config", f"data_dir={resolve_data_dir()}"]
    if snakemake is None:
        result = SNAKEMAKE_FORKS.run(args, cwd=work, timeout=1800)
    else:
        result = subprocess.run([*snakemake, *args], cwd=work, capture_output=True, text=True, timeout=1800)
    assert not check or result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result


LOST_CELL = "results/grid/rounded/psi/E1e8_mu0.4/cube_3cm.nc"
"""The grid cell a run killed during its grid job has not written (the job's other cell is written)."""


@dataclass
class SmokeStudy:
    """The smoke study in `work`, run once per session as a run killed during its grid job and
    resumed: `first`, the log of the run up to the grid (--omit-from the rules that read the grid's
    cells), after which LOST_CELL is deleted; `planned`, the log of the dry run planning the
    resumption; `resumed`, the log of the resumed run that finishes the study."""

    work: Path
    first: str
    planned: str
    resumed: str


@pytest.fixture(scope="session")
def study(tmp_path_factory) -> SmokeStudy:
    """The smoke study, run once per session through the cluster-generic executor
    (profiles/local-cluster), killed during its grid job and resumed (SmokeStudy); test_study.py
    checks its outputs and the resumption, test_slurm.py reruns jobs of a copy through SLURM and
    compares their outputs with this run's."""
    work = copy_of_the_repository(tmp_path_factory.mktemp("study") / "repo")
    first = run_smoke_study(work, "--profile", "profiles/local-cluster", "--omit-from", "grid_merge", "finger_merge")
    (work / LOST_CELL).unlink()
    planned = run_smoke_study(work, "-n", "--cores", "2")
    resumed = run_smoke_study(work, "--profile", "profiles/local-cluster")
    return SmokeStudy(work, first.stdout + first.stderr, planned.stdout + planned.stderr,
                      resumed.stdout + resumed.stderr)
