"""The Snakemake DAG parses, validates its config and plans jobs (dry run)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def dry_run(*args, cwd=REPO):
    return subprocess.run([str(SNAKEMAKE), "-n", "--cores", "1", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("configfile", ["config/config.yaml", "config/smoke.yaml"])
def test_dry_run_lists_jobs(configfile):
    result = dry_run("--configfile", configfile)
    assert result.returncode == 0, result.stderr
    assert "data_manifest" in result.stdout


def test_bad_config_value_fails_before_any_job_naming_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: -3\n")
    result = dry_run("--configfile", str(bad))
    assert result.returncode != 0
    assert "seed" in result.stdout + result.stderr


def test_manifest_job_runs(tmp_path):
    work = tmp_path / "repo"
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(".venv", ".git", "results", ".snakemake", "tests"))
    result = subprocess.run([str(SNAKEMAKE), "--cores", "1", "--config", f"registry={REPO / 'config/objects.yaml'}"],
                            cwd=work, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (work / "results/data/manifest.json").is_file()
