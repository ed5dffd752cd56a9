"""The smoke study end to end in a copy of the repository: every stage through the
cluster-generic executor plugin (profiles/local-cluster; the `study` fixture in conftest.py, a run
interrupted during its grid job and resumed: only the unfinished job and what depends on it reran),
then a rerun with the local executor: nothing to do."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.study.cube import read_cube, write_netcdf_atomic

from .conftest import LOST_CELL, SNAKEMAKE_FORKS, run_smoke_study

pytestmark = pytest.mark.slow

DOWNSTREAM_OF_LOST_CELL = {"grid_row", "grid_merge", "grid", "notebook_grid_search", "baseline_cell", "baseline_sweep",
                           "evaluation_simulation", "evaluation_merge", "evaluation_baseline", "evaluation_dynamic",
                           "evaluation", "notebook_evaluation", "notebook_failure_modes", "benchmarks",
                           "notebook_runtime", "finger_merge", "fingers", "all"}
"""The finger sweep's merge takes the grid's cells as its rigid-finger setting."""
MODELS = ["ipcgrasp", "soft_point", "reach", "6dfc", "image_quality", "penalty", "mujoco_flex", "always_success"]


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    return run_smoke_study(work, *args)


def rules_run(output: str) -> dict[str, int]:
    """Rule -> job count from the "Job stats" table snakemake prints."""
    if "Job stats:" not in output:
        return {}
    table = output.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def test_every_table_cube_notebook_and_figure_exists(study):
    work = study.work
    results = work / "results"
    for path in ["meshes/report.json", "split.json", "calibration/squeeze.nc", "calibration/psi_th.json",
                 "calibration/sensitivity.nc", "calibration/sensitivity.md", "grid/rounded.nc",
                 "grid/f1_rounded_psi.csv", "grid/f1_rounded_force.md", "grid/scores.csv", "grid/best.json",
                 "evaluation/ipcgrasp.nc", "evaluation/always_success.nc", "evaluation/table.csv",
                 "evaluation/table.md", "evaluation/per_grasp.csv", "notebooks/calibration.ipynb",
                 "notebooks/grid_search.ipynb", "notebooks/evaluation.ipynb", "figures/grid_f1.png",
                 "figures/evaluation_robustness.png", "figures/calibration.png", "benchmarks/resolution.csv",
                 "benchmarks/trial_wall_time.csv", "figures/runtime.png", "notebooks/runtime.ipynb",
                 "baselines/penalty.nc", "baselines/penalty/best.json", "baselines/penalty/f1.md",
                 "baselines/penalty/sensitivity.csv", "baselines/mujoco_flex.nc", "baselines/mujoco_flex/best.json",
                 "baselines/mujoco_flex/sensitivity.md", "evaluation/image_quality.nc", "evaluation/penalty.nc",
                 "evaluation/mujoco_flex.nc", "evaluation/ranking.csv", "evaluation/outcomes.csv",
                 "evaluation/contact_artifacts.csv", "evaluation/contact_stability.csv",
                 "evaluation/image_quality_vs_simulation.csv", "notebooks/failure_modes.ipynb",
                 "figures/evaluation_ranking.png", "figures/failure_modes.png", "figures/contact_artifacts.png",
                 "figures/image_quality_vs_simulation.png", "figures/baseline_sensitivity.png"]:
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
    assert table.index.tolist() == MODELS  # every model on the same held-out grasps
    assert table.paper_f1.between(0, 1).all()
    assert "penalty: stiffness 100000 N/m, margin 0.0005 m" in (results / "evaluation/table.md").read_text()

    cube = read_cube(results / "grid/rounded.nc")
    assert cube.success.dims == ("E", "mu", "rule", "object", "grasp", "trial")
    assert cube.attrs["config_hash"] and cube.attrs["git_commit"] and cube.attrs["seed"] == 0
    psi_th = json.loads((results / "calibration/psi_th.json").read_text())
    assert cube.psi_th.sel(rule="psi").item() == psi_th["psi_th"][psi_th["E"].index(1e8)]
    evaluated = read_cube(results / "evaluation/ipcgrasp.nc")
    for model in MODELS[1:]:
        baseline = read_cube(results / f"evaluation/{model}.nc")
        assert (evaluated.seed.values == baseline.seed.values).all(), model  # the same perturbed trials
    assert evaluated.grasp.values.tolist() == split["heldout"]["cube_3cm"]


def test_baseline_sweeps_choose_a_setting_on_the_training_grasps_and_the_evaluation_runs_it(study):
    work = study.work
    results = work / "results"
    grid = read_cube(results / "grid/rounded.nc")
    for model, settings in (("penalty", {"params": {"penalty_stiffness": 1e5, "penalty_margin": 5e-4,
                                                    "penalty_clusters": 0}}),
                            ("mujoco_flex", {"keywords": {"stiffness": 1e8, "margin": 0.0, "damping": 1e4,
                                                          "dt": 1e-3}})):
        sweep = read_cube(results / f"baselines/{model}.nc")
        assert sweep.success.dims == ("stiffness", "margin", "object", "grasp", "trial")
        assert sweep.stiffness.attrs["units"] and sweep.max_penetration.attrs["units"] == "m"
        assert (sweep.seed.values == grid.seed.values).all()  # the simulator's training trials
        best = json.loads((results / f"baselines/{model}/best.json").read_text())
        assert best["settings"] == settings and best["selected_on"] == "training grasps"
        evaluated = read_cube(results / f"evaluation/{model}.nc")
        assert json.loads(evaluated.attrs["settings"]) == settings
        assert {"failure_mode", "max_penetration", "max_force_gap"} <= set(evaluated.data_vars)
        sensitivity = pd.read_csv(results / f"baselines/{model}/sensitivity.csv")
        assert {"paper_f1", "penetration_m_median", "penetration_m_max", "force_gap_m_median",
                "force_gap_m_max"} <= set(sensitivity.columns)


def test_held_out_cubes_carry_critical_mass_and_the_models_numbers(study):
    work = study.work
    results = work / "results"
    sim = read_cube(results / "evaluation/ipcgrasp.nc")
    assert sim.critical_mass.attrs["units"] == "kg" and sim.critical_mass.attrs["max_mass"] == 5.0
    held = sim.success.values
    assert (sim.critical_mass.values[held] > 0).all()  # finite or inf (no slip up to the cap)
    assert np.isnan(sim.critical_mass.values[~held]).all()
    assert (sim.grasp_wall_time <= sim.wall_time).all()
    image = read_cube(results / "evaluation/image_quality.nc")
    assert image.predicted_translation.attrs["units"] == "m" and image.r_r.attrs["units"] == "rad"
    artifacts = pd.read_csv(results / "evaluation/contact_artifacts.csv", index_col="model")
    assert artifacts.loc["ipcgrasp", "penetration_m_max"] == 0.0
    assert {"penalty", "mujoco_flex"} <= set(artifacts.index)
    ranking = pd.read_csv(results / "evaluation/ranking.csv")
    assert ((ranking.model == "ipcgrasp") & (ranking.score == "mean critical mass")).any()
    assert ((ranking.model == "image_quality") & (ranking.score == "mean score")).any()
    outcomes = pd.read_csv(results / "evaluation/outcomes.csv", index_col="model")
    assert outcomes.index.tolist() == MODELS and (outcomes.sum(axis=1) == 2).all()  # 2 grasps x 1 trial
    executed = (results / "notebooks/failure_modes.ipynb").read_text()
    assert "ipcgrasp does not interpenetrate" in executed


@pytest.mark.parametrize("rule, jobs", [("grid_row", 1), ("baseline_cell", 2), ("evaluation_simulation", 2),
                                        ("evaluation_dynamic", 4)])
def test_simulation_jobs_went_through_the_cluster_executor(study, rule, jobs):
    log = study.first if rule == "grid_row" else study.resumed  # the grid's row also reran when resumed
    # local rules print "localrule name:"; submitted ones "rule name:" and the external job id
    submitted = re.findall(rf"^rule {rule}:\n(?:\s+.*\n)*?\s+jobid: (\d+)$", log, re.MULTILINE)
    assert len(submitted) == rules_run(log)[rule] == jobs
    for jobid in submitted:
        assert re.search(rf"Submitted job {jobid} with external jobid '\d+'", log)


def test_netcdf_round_trip_of_the_grid_cube(study, tmp_path):
    work = study.work
    cube = read_cube(work / "results/grid/rounded.nc")
    xr.testing.assert_identical(read_cube(write_netcdf_atomic(cube, tmp_path / "copy.nc")), cube)


def test_a_second_run_does_nothing(study):
    work = study.work
    run = snakemake(work, "--cores", "2")
    assert "Nothing to be done" in run.stdout + run.stderr


def test_resuming_an_interrupted_grid_reruns_only_the_unfinished_job_and_what_depends_on_it(study):
    """The state a first run killed during the grid job leaves: one of that job's cells and
    everything downstream of it missing, its other cell, the calibration and the sensitivity done
    (the `study` fixture: a run up to the grid, its LOST_CELL deleted, then the dry run and the
    resumed run)."""
    work = study.work
    planned = rules_run(study.planned)
    assert set(planned) == DOWNSTREAM_OF_LOST_CELL and planned["grid_row"] == 1
    assert rules_run(study.resumed) == planned
    assert (work / LOST_CELL).is_file()
    again = snakemake(work, "-n", "--cores", "2")
    assert "Nothing to be done" in again.stdout + again.stderr


NOTEBOOK_OUTPUTS = ["figures/*.png", "evaluation/per_grasp.csv", "evaluation/ranking.csv", "evaluation/outcomes.csv",
                    "evaluation/contact_artifacts.csv", "evaluation/contact_stability.csv",
                    "evaluation/image_quality_vs_simulation.csv"]


def notebook_outputs(results: Path) -> dict[str, bytes]:
    """Every figure and table the notebooks write, by path."""
    return {str(p.relative_to(results)): p.read_bytes() for pattern in NOTEBOOK_OUTPUTS
            for p in sorted(results.glob(pattern))}


def test_a_failed_edit_notebook_session_keeps_the_study_s_figures(study, tmp_path):
    """Snakemake deletes a job's outputs before it runs; the notebook outputs are update(), so a
    Jupyter that fails to start (or a session that ends without rerunning the notebook) puts the
    previous figures back."""
    work = study.work
    venv_bin = Path(sys.executable).parent
    if (venv_bin / "jupyter-notebook").exists():
        pytest.skip("the notebook server is installed in this environment: --edit-notebook would start it")
    fake = tmp_path / "bin"  # a Jupyter that refuses to start, found before any other on PATH
    fake.mkdir()
    for name in ("jupyter", "jupyter-notebook"):
        (fake / name).write_text("#!/bin/sh\necho 'jupyter: cannot start (test)' >&2\nexit 1\n")
        (fake / name).chmod(0o755)
    before = notebook_outputs(work / "results")
    assert "figures/grid_f1.png" in before and "figures/grid_failure_modes.png" in before
    env = {**os.environ, "PATH": os.pathsep.join([str(fake), os.environ.get("PATH", "")])}
    run = SNAKEMAKE_FORKS.run(["--cores", "1", "--configfile", "config/smoke.yaml", "--config",
                               f"data_dir={resolve_data_dir()}", "--edit-notebook", "results/figures/grid_f1.png"],
                              cwd=work, timeout=600, env=env)
    log = run.stdout + run.stderr
    assert run.returncode != 0 and "Error in rule notebook_grid_search" in log, log[-3000:]
    assert "Restored previous version of results/figures/grid_f1.png" in log
    assert notebook_outputs(work / "results") == before  # nothing deleted, nothing overwritten
    dry = snakemake(work, "-n", "--cores", "1")
    assert "Nothing to be done" in dry.stdout + dry.stderr


def test_a_standalone_papermill_run_writes_beside_the_study_s_figures_never_over_them(study, tmp_path):
    work = study.work
    results = work / "results"
    assert not (results / "standalone").exists()
    before = notebook_outputs(results)
    papermill = Path(sys.executable).with_name("papermill")
    try:
        run = subprocess.run([str(papermill), "notebooks/evaluation.ipynb", str(tmp_path / "evaluation.ipynb"),
                              "-p", "n_boot", "20"], cwd=work, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        written = sorted(str(p.relative_to(results / "standalone")) for p in (results / "standalone").rglob("*"))
        assert {"figures/evaluation_robustness.png", "evaluation/per_grasp.csv", "evaluation/ranking.csv"} \
            <= set(written)
        assert notebook_outputs(results) == before
    finally:
        shutil.rmtree(results / "standalone", ignore_errors=True)  # made by this test only
