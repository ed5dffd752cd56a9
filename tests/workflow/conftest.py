"""The smoke study, run once per test session in a copy of the repository through the
cluster-generic executor (profiles/local-cluster): test_study.py checks it, test_slurm.py compares
its run through SLURM against it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ipcgrasp.data.location import resolve_data_dir

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def copy_of_the_repository(dest: Path) -> Path:
    """The work tree without its environment, git directory, results and snakemake state."""
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(".venv", ".git", "results", ".snakemake",
                                                              ".pytest_cache", "__pycache__"))
    return dest


def run_smoke_study(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`snakemake ARGS` on config/smoke.yaml and the bundled data in `work`; with `check`, fails the
    test on error."""
    result = subprocess.run([str(SNAKEMAKE), *args, "--configfile", "config/smoke.yaml",
                             "--config", f"data_dir={resolve_data_dir()}"],
                            cwd=work, capture_output=True, text=True, timeout=1800)
    assert not check or result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result


@pytest.fixture(scope="session")
def study(tmp_path_factory):
    """The smoke study, run once per session through the cluster-generic executor: (work tree, log)."""
    work = copy_of_the_repository(tmp_path_factory.mktemp("study") / "repo")
    run = run_smoke_study(work, "--profile", "profiles/local-cluster")
    return work, run.stdout + run.stderr
