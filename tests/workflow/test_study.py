"""The smoke study end to end in a copy of the repository: every stage through the
cluster-generic executor plugin (profiles/local-cluster), then reruns with the local executor:
nothing to do, and after an interrupted grid only the unfinished job and what depends on it."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import xarray as xr

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.study.cube import read_cube, write_netcdf_atomic

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
LOST_CELL = "results/grid/rounded/psi/E1e8_mu0.4/cube_3cm.nc"
DOWNSTREAM_OF_LOST_CELL = {"grid_cell", "grid_merge", "grid", "notebook_grid_search", "evaluation_simulation",
                           "evaluation_merge", "evaluation_baseline", "evaluation", "notebook_evaluation",
                           "benchmarks", "notebook_runtime", "all"}


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(SNAKEMAKE), *args, "--configfile", "config/smoke.yaml",
                             "--config", f"data_dir={resolve_data_dir()}"],
                            cwd=work, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result


def rules_run(output: str) -> dict[str, int]:
    """Rule -> job count from the "Job stats" table snakemake prints."""
    if "Job stats:" not in output:
        return {}
    table = output.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The smoke study, run once per session through the cluster-generic executor."""
    work = tmp_path_factory.mktemp("study") / "repo"
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(".venv", ".git", "results", ".snakemake",
                                                              ".pytest_cache", "__pycache__"))
    run = snakemake(work, "--profile", "profiles/local-cluster")
    return work, run.stdout + run.stderr


def test_every_table_cube_notebook_and_figure_exists(study):
    work, _ = study
    results = work / "results"
    for path in ["meshes/report.json", "split.json", "calibration/squeeze.nc", "calibration/psi_th.json",
                 "calibration/sensitivity.nc", "calibration/sensitivity.md", "grid/rounded.nc",
                 "grid/f1_rounded_psi.csv", "grid/f1_rounded_force.md", "grid/scores.csv", "grid/best.json",
                 "evaluation/ipcgrasp.nc", "evaluation/always_success.nc", "evaluation/table.csv",
                 "evaluation/table.md", "evaluation/per_grasp.csv", "notebooks/calibration.ipynb",
                 "notebooks/grid_search.ipynb", "notebooks/evaluation.ipynb", "figures/grid_f1.png",
                 "figures/evaluation_robustness.png", "figures/calibration.png", "benchmarks/resolution.csv",
                 "benchmarks/trial_wall_time.csv", "figures/runtime.png", "notebooks/runtime.ipynb"]:
        assert (results / path).is_file() and (results / path).stat().st_size > 0, path

    split = json.loads((results / "split.json").read_text())
    assert split["kind"] == "grasp" and len(split["training"]["cube_3cm"]) == 2
    assert split["description"] in (results / "grid/f1_rounded_psi.md").read_text()
    assert split["description"] in (results / "evaluation/table.md").read_text()

    f1 = pd.read_csv(results / "grid/f1_rounded_force.csv", index_col="E")
    assert f1.shape == (1, 1) and f1.index.tolist() == [1e8] and f1.columns.tolist() == ["0.4"]
    best = json.loads((results / "grid/best.json").read_text())
    assert (best["E"], best["mu"], best["jaw"]) == (1e8, 0.4, "rounded") and best["rule"] in ("psi", "force")
    table = pd.read_csv(results / "evaluation/table.csv", index_col="model")
    assert table.index.tolist() == ["ipcgrasp", "soft_point", "reach", "6dfc", "always_success"]
    assert table.paper_f1.between(0, 1).all()

    cube = read_cube(results / "grid/rounded.nc")
    assert cube.success.dims == ("E", "mu", "rule", "object", "grasp", "trial")
    assert cube.attrs["config_hash"] and cube.attrs["git_commit"] and cube.attrs["seed"] == 0
    psi_th = json.loads((results / "calibration/psi_th.json").read_text())
    assert cube.psi_th.sel(rule="psi").item() == psi_th["psi_th"][psi_th["E"].index(1e8)]
    evaluated = read_cube(results / "evaluation/ipcgrasp.nc")
    baseline = read_cube(results / "evaluation/reach.nc")
    assert (evaluated.seed.values == baseline.seed.values).all()  # the same perturbed trials
    assert evaluated.grasp.values.tolist() == split["heldout"]["cube_3cm"]


def test_grid_jobs_went_through_the_cluster_executor(study):
    _, log = study
    # local rules print "localrule name:"; submitted ones "rule name:" and the external job id
    grid_jobs = re.findall(r"^rule grid_cell:\n(?:\s+.*\n)*?\s+jobid: (\d+)$", log, re.MULTILINE)
    assert len(grid_jobs) == rules_run(log)["grid_cell"] == 2
    for jobid in grid_jobs:
        assert re.search(rf"Submitted job {jobid} with external jobid '\d+'", log)


def test_netcdf_round_trip_of_the_grid_cube(study, tmp_path):
    work, _ = study
    cube = read_cube(work / "results/grid/rounded.nc")
    xr.testing.assert_identical(read_cube(write_netcdf_atomic(cube, tmp_path / "copy.nc")), cube)


def test_a_second_run_does_nothing(study):
    work, _ = study
    run = snakemake(work, "--cores", "2")
    assert "Nothing to be done" in run.stdout + run.stderr


def test_resuming_an_interrupted_grid_reruns_only_the_unfinished_job_and_what_depends_on_it(study):
    """The state a first run killed during one grid job leaves: that job's output and everything
    downstream of it missing, the other grid job, the calibration and the sensitivity done."""
    work, _ = study
    summary = snakemake(work, "--summary", "--cores", "1").stdout
    made_by = dict(line.split("\t")[:3:2] for line in summary.splitlines() if line.count("\t") == 5)
    for path, rule in made_by.items():
        if rule in DOWNSTREAM_OF_LOST_CELL - {"grid_cell"}:
            (work / path).unlink()
    (work / LOST_CELL).unlink()
    dry = snakemake(work, "-n", "--cores", "2")
    planned = rules_run(dry.stdout + dry.stderr)
    assert set(planned) == DOWNSTREAM_OF_LOST_CELL and planned["grid_cell"] == 1
    run = snakemake(work, "--cores", "2")
    assert rules_run(run.stdout + run.stderr) == planned
    assert (work / LOST_CELL).is_file()
    again = snakemake(work, "-n", "--cores", "2")
    assert "Nothing to be done" in again.stdout + again.stderr
