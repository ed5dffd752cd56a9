"""The Snakemake DAG parses, validates its config and plans the study's jobs (dry runs, each in a
copy of the repository: conftest.dry_run)."""

import base64
import functools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ..conftest import reach_data
from .conftest import (
    REPO,
    SNAKEMAKE,
    SNAKEMAKE_FORKS,
    copy_of_the_repository,
    dry_run,
    heavy_modules_loaded,
    snakemake_script,
)

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


@functools.cache
def planned(configfile: str) -> subprocess.CompletedProcess:
    """The dry run of the repository's `configfile` (cached: several tests read the same plan)."""
    return dry_run("--configfile", configfile)


def job_counts(output: str) -> dict[str, int]:
    """Rule -> job count from snakemake's "Job stats" table."""
    table = output.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


@pytest.mark.slow
@pytest.mark.parametrize("configfile, grid_rows, sweep_cells", [("config/config.yaml", 5 * 2, 3 * 2 + 2 * 2),
                                                                 ("config/smoke.yaml", 1, 1 + 1)])
def test_dry_run_plans_every_stage(configfile, grid_rows, sweep_cells):
    result = planned(configfile)
    assert result.returncode == 0, result.stderr
    counts = job_counts(result.stdout)
    assert counts["grid_row"] == grid_rows  # one job per (jaw, E, object), every mu and rule; one object
    assert counts["psi_sensitivity_row"] == 1  # one job per training object, every Psi_th multiple
    assert "finger_row" not in counts or configfile.endswith("smoke.yaml")  # off in the default study
    assert counts["baseline_cell"] == sweep_cells  # one job per (model, stiffness, margin)
    for rule in ("data_manifest", "meshes", "split", "calibration", "grid_merge", "grid", "evaluation_simulation",
                 "evaluation_baseline", "evaluation", "notebook_calibration", "notebook_grid_search",
                 "notebook_evaluation", "notebook_failure_modes", "benchmark_resolution", "benchmarks",
                 "notebook_runtime"):
        assert counts.get(rule, 0) >= 1, rule
    # soft_point, reach, 6dfc, image_quality and always_success in the main process; the dynamic
    # baselines (penalty, mujoco_flex) swept and submitted
    assert counts["evaluation_baseline"] == 5
    assert counts["baseline_sweep"] == 2
    # the simulator and the two dynamic baselines: evaluation.parts (2) jobs for the held-out
    # object, joined per model
    assert counts["evaluation_simulation"] == 2 and counts["evaluation_dynamic"] == 4
    assert counts["evaluation_merge"] == 3


@pytest.mark.slow
def test_a_study_without_dynamic_baselines_or_image_quality_drops_their_jobs_and_figures(tmp_path):
    config = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    config["evaluation"]["models"] = ["soft_point"]
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(config))
    result = dry_run("--configfile", str(path))
    assert result.returncode == 0, result.stderr
    counts = job_counts(result.stdout)
    assert "baseline_cell" not in counts and "evaluation_dynamic" not in counts
    assert counts["evaluation_baseline"] == 2 and counts["notebook_failure_modes"] == 1
    assert "contact_artifacts.png" in result.stdout
    assert "image_quality_vs_simulation" not in result.stdout and "baseline_sensitivity" not in result.stdout


def job_priorities(output: str) -> list[tuple[str, str, int]]:
    """(rule, wildcards, priority) of every job of a dry run (priority 0 when none is printed)."""
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", output, flags=re.MULTILINE)[1:]:
        rule = re.match(r"(?:local)?rule (\w+):", block).group(1)
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE)
        priority = re.search(r"^\s+priority: (\d+)$", block, re.MULTILINE)
        jobs.append((rule, wildcards.group(1) if wildcards else "", int(priority.group(1)) if priority else 0))
    return jobs


@pytest.mark.slow
def test_the_grid_and_the_mujoco_chain_go_first():
    """Jobs that would otherwise leave a core idle at the end of a stage start first: the grid's
    rows (the sensitivity and the resolution benchmark fill in), then MuJoCo's sweep and
    held-out jobs (the longest chain after the grid)."""
    result = planned("config/config.yaml")
    assert result.returncode == 0, result.stderr
    jobs = job_priorities(result.stdout)
    priority = {}
    for rule, wildcards, value in jobs:
        key = rule if rule not in ("baseline_cell", "evaluation_dynamic") else (rule, "mujoco" in wildcards)
        priority.setdefault(key, set()).add(value)
    assert priority["grid_row"] == {1} and priority[("baseline_cell", True)] == {1}
    assert priority[("evaluation_dynamic", True)] == {1}
    assert priority[("baseline_cell", False)] == priority[("evaluation_dynamic", False)] == {0}
    assert priority["psi_sensitivity_row"] == priority["benchmark_resolution"] == {0}


@pytest.mark.slow
def test_the_finger_sweep_runs_beside_e_and_mu_and_reuses_the_grids_rigid_cells(tmp_path):
    config = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    config["grid"]["E"] = [1e7, 1e8]
    config["fingers"] = {"stiffness": [1000.0, 3000.0], "E": [1e8]}
    path = tmp_path / "fingers.yaml"
    path.write_text(yaml.safe_dump(config))
    result = dry_run("--configfile", str(path))
    assert result.returncode == 0, result.stderr
    counts = job_counts(result.stdout)
    assert counts["finger_row"] == 2  # one per stiffness at the one E, one jaw, one object, both rules
    assert counts["finger_merge"] == counts["fingers"] == 1
    assert counts["grid_row"] == 2  # the grid itself is unchanged: one per E
    assert "results/fingers/rounded/force/k3000_E1e8_mu0.4/cube_3cm.nc" in result.stdout
    config["fingers"]["mu"] = [0.5]  # not a grid value: no rigid cells to compare with
    path.write_text(yaml.safe_dump(config))
    result = dry_run("--configfile", str(path))
    assert result.returncode != 0 and "fingers.mu" in result.stdout + result.stderr


def test_the_snakefiles_ipcgrasp_imports_load_no_heavy_module():
    lines = [line for path in [REPO / "Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))]
             for line in path.read_text().splitlines() if line.startswith(("from ipcgrasp", "import ipcgrasp"))]
    assert any("ipcgrasp.study.config" in line for line in lines)  # common.smk's imports
    assert heavy_modules_loaded("\n".join(lines)) == []


@pytest.mark.slow
def test_a_dry_run_of_the_study_loads_no_heavy_module(tmp_path):
    """Parsing the Snakefile (config checks included: the gripper description, the data's
    recorded gripper) and planning the smoke study's jobs, in a fresh snakemake process."""
    args = ["-n", "--cores", "1", "--configfile", "config/smoke.yaml", "--config", f"data_dir={reach_data()}"]
    work = copy_of_the_repository(tmp_path / "repo")
    assert heavy_modules_loaded(snakemake_script(args), cwd=work) == []


def test_config_yaml_spells_out_the_schema_defaults():
    defaults = {}
    validate(defaults, str(SCHEMA), set_default=True)
    assert defaults == yaml.safe_load((REPO / "config/config.yaml").read_text())


def test_every_schema_key_has_description_default_and_range():
    schema = yaml.safe_load(SCHEMA.read_text())
    ranged = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "enum", "minLength", "pattern",
              "properties", "items")

    def check(properties, path):
        for name, spec in properties.items():
            assert "description" in spec and "default" in spec, path + name
            if name not in ("data_dir",) and spec.get("type") != "boolean":
                assert any(k in spec for k in ranged), f"{path}{name} has no range"
            if "properties" in spec:
                check(spec["properties"], f"{path}{name}.")

    check(schema["properties"], "")


@pytest.mark.slow
@pytest.mark.parametrize("bad, key", [
    ("seed: -3\n", "seed"),
    ("grid:\n  E: [-1.0]\n", "E"),
    ("sim:\n  dt: 0.0\n", "dt"),
    ("split:\n  training_grasps: 3\n", "training_grasps"),
    ("baselines:\n  penalty:\n    margin: [0.0]\n", "margin"),
    ("evaluation:\n  models: [isaac_gym]\n", "isaac_gym"),
    ("evaluation:\n  critical_mass: 1\n", "critical_mass"),
    ("fingers:\n  stiffness: [0.0]\n", "stiffness"),
])
def test_bad_config_value_fails_before_any_job_naming_the_key(tmp_path, bad, key):
    config = tmp_path / "bad.yaml"
    config.write_text(bad)
    result = dry_run("--configfile", str(config))
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "Error validating config file" in message
    assert key in message
    assert "Job stats" not in message


@pytest.mark.slow
def test_manifest_job_runs(tmp_path):
    work = copy_of_the_repository(tmp_path / "repo")
    result = SNAKEMAKE_FORKS.run(["--cores", "1", "results/data/manifest.json",
                                  "--config", f"registry={REPO / 'config/objects.yaml'}"], cwd=work, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (work / "results/data/manifest.json").is_file()


LOST_CELL = "results/grid/rounded/psi/E1e8_mu0.4/cube_3cm.nc"
"""A cell of the smoke study's one grid job; the job's other output is the force rule's cell."""


def interrupted_study(repository: Path) -> Path:
    """What a smoke study killed during its grid job leaves in `repository`, in the layout of
    snakemake's FilePersistence: both cells of the job marked incomplete in .snakemake/incomplete/
    (file name: the path, urlsafe base64; content: the external job id), one of them half
    written, and the run's input and output locks in .snakemake/locks/ (one path a line)."""
    cells = [LOST_CELL, LOST_CELL.replace("/psi/", "/force/")]
    (repository / LOST_CELL).parent.mkdir(parents=True)
    (repository / LOST_CELL).write_bytes(b"\x89HDF\r\n\x1a\n")  # a NetCDF-4 file's signature, nothing after it
    markers = repository / ".snakemake/incomplete"
    markers.mkdir(parents=True)
    for cell in cells:
        (markers / base64.urlsafe_b64encode(cell.encode()).decode()).write_text(json.dumps({"external_jobid": None}))
    locks = repository / ".snakemake/locks"
    locks.mkdir()
    (locks / "0.input.lock").write_text("results/split.json\nresults/calibration/psi_th.json\n")
    (locks / "0.output.lock").write_text("".join(cell + "\n" for cell in cells))
    return repository


def state_of(repository: Path) -> dict[str, bytes | None]:
    """Every folder (None) and file (its bytes) under the repository's results/ and .snakemake/."""
    return {str(path.relative_to(repository)): path.read_bytes() if path.is_file() else None
            for folder in ("results", ".snakemake") for path in sorted((repository / folder).rglob("*"))}


@pytest.mark.slow
def test_a_study_interrupted_in_the_repository_neither_fails_the_dry_runs_nor_is_changed_by_them(tmp_path):
    """Snakemake in the repository itself refuses to plan over an interrupted study's files
    (IncompleteFilesException); the tests' dry run plans the whole study from a copy without them
    and leaves every file and folder of that state as it was."""
    repository = interrupted_study(copy_of_the_repository(tmp_path / "repository"))
    left = state_of(repository)
    result = dry_run("--configfile", "config/smoke.yaml", source=repository)
    assert result.returncode == 0, result.stderr
    assert job_counts(result.stdout)["grid_row"] == 1 and LOST_CELL in result.stdout
    assert "cannot be locked" not in result.stdout + result.stderr
    assert state_of(repository) == left
    in_place = SNAKEMAKE_FORKS.run(["-n", "--cores", "1", "--configfile", "config/smoke.yaml"], cwd=repository,
                                   timeout=300)
    log = in_place.stdout + in_place.stderr
    assert in_place.returncode != 0 and "IncompleteFilesException" in log and LOST_CELL in log, log[-2000:]


@pytest.mark.slow
def test_run_sh_study_after_ctrl_c_plans_the_interrupted_job_again(tmp_path):
    """After Ctrl-C snakemake has released its locks but left the interrupted job's outputs
    marked incomplete; `./run.sh study` run again (here as a dry run, with the test's environment
    as run.sh's .venv) plans that job again instead of stopping with IncompleteFilesException, as
    docs/study.md ("Resuming") says."""
    repository = interrupted_study(copy_of_the_repository(tmp_path / "repository"))
    shutil.rmtree(repository / ".snakemake/locks")  # Ctrl-C releases the locks; the incomplete markers stay
    venv = repository / ".venv"
    (venv / "bin").mkdir(parents=True)
    for name, target in (("python", sys.executable), ("snakemake", SNAKEMAKE)):
        (venv / "bin" / name).write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
        (venv / "bin" / name).chmod(0o755)
    (venv / ".installed").touch()  # newer than pyproject.toml: run.sh installs nothing
    result = subprocess.run(["./run.sh", "study", "--configfile", "config/smoke.yaml", "-n"], cwd=repository,
                            capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode == 0 and "IncompleteFilesException" not in log, log[-3000:]
    assert job_counts(result.stdout)["grid_row"] == 1 and LOST_CELL in result.stdout
