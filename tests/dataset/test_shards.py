"""Sharded labelling (dataset.shards, workflow/generate.smk): the shards cover the grasps once,
and the records and index.csv written as Snakemake jobs, on the local executor and on the
cluster path (profiles/local-cluster), equal a single-process `generate_dataset` run's."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trimesh

import ipcgrasp.grasp.simulate
from ipcgrasp import GraspObject, SimParams
from ipcgrasp.cli import main
from ipcgrasp.dataset import generate_dataset
from ipcgrasp.dataset.records import RecordError, check_dataset_directory
from ipcgrasp.dataset.run_lock import LOCK_DIR, release_stale_locks, run_file
from ipcgrasp.dataset.sharding import LOG_DIR, SHARD_DIR, n_shards, shard_grasps
from ipcgrasp.dataset.shards import generation_inputs, merge_shards, run_shard
from ipcgrasp.grasp.description import load_description
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.io import write_json_atomic

from ..workflow.conftest import (
    REPO,
    SNAKEMAKE_FORKS,
    copy_of_the_repository,
    dry_run,
    heavy_modules_loaded,
    snakemake_script,
)

N, TRIALS, SEED = 3, 1, 4
RUN_FIELDS = {"created", "wall_time"}
"""What differs between any two runs of the same labels: creation stamps and timings."""


@pytest.mark.parametrize("n, size", [(1, 1), (7, 3), (9, 3), (10, 4), (5, 10)])
def test_shards_cover_every_grasp_exactly_once_in_order(n, size):
    covered = [i for k in range(n_shards(n, size)) for i in shard_grasps(n, size, k)]
    assert covered == list(range(n))
    with pytest.raises(ValueError, match="out of range"):
        shard_grasps(n, size, n_shards(n, size))


def without_run_fields(value):
    if isinstance(value, dict):
        return {k: without_run_fields(v) for k, v in value.items() if k not in RUN_FIELDS}
    if isinstance(value, list):
        return [without_run_fields(v) for v in value]
    return value


@pytest.fixture(scope="module")
def mesh(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mesh") / "box.stl"
    trimesh.creation.box(extents=[0.03, 0.03, 0.03]).export(path)
    return path


@pytest.fixture(scope="module")
def single(mesh, tmp_path_factory) -> Path:
    """The reference: one process, one worker."""
    out = tmp_path_factory.mktemp("single") / "grasps"
    generate_dataset(GraspObject.from_file(mesh, 0.003), out, N, SimParams(), n_trials=TRIALS, seed=SEED, workers=1,
                     images=False, mesh=str(mesh))
    return out


def assert_same_dataset(sharded: Path, single: Path) -> None:
    assert (sharded / "index.csv").read_bytes() == (single / "index.csv").read_bytes()
    names = sorted(p.name for p in single.glob("grasp_*.json"))
    assert names == sorted(p.name for p in sharded.glob("grasp_*.json")) and len(names) == N
    for name in names:
        a, b = (json.loads((d / name).read_text()) for d in (sharded, single))
        assert without_run_fields(a) == without_run_fields(b), name
    assert json.loads((sharded / "dataset.json").read_text()) == json.loads((single / "dataset.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("executor", [[], ["--profile", "profiles/local-cluster"]], ids=["local", "local-cluster"])
def test_sharded_generate_writes_the_single_process_records_and_index(executor, mesh, single, tmp_path, capsys,
                                                                     monkeypatch):
    # `generate` runs snakemake from the repository root: here a copy's, with its own .snakemake/
    monkeypatch.setattr("ipcgrasp.paths.REPO_ROOT", copy_of_the_repository(tmp_path / "repo"))
    out = tmp_path / "grasps"
    args = ["generate", "--mesh", str(mesh), "--mass", "0.003", "--n", str(N), "--trials", str(TRIALS), "--seed",
            str(SEED), "--no-images", "--out", str(out), "--shard-size", "2", "--workers", "2", *executor]
    assert main(args) == 0
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["shard_0000.json", "shard_0001.json"]
    assert_same_dataset(out, single)
    summaries = [json.loads(p.read_text()) for p in sorted((out / "shards").iterdir())]
    assert [s["written"] for s in summaries] == [[0, 1], [2]]  # two grasps per job, the last shard shorter
    # merging again finds every record; a missing one is named
    assert merge_shards(out, sorted((out / "shards").iterdir()))["records"] == N
    (out / "grasp_0001.json").unlink()
    with pytest.raises(ValueError, match="grasp_0001.json: missing"):
        merge_shards(out, sorted((out / "shards").iterdir()))


@pytest.mark.slow
def test_the_workflow_run_directly_writes_into_the_folders_snakemake_made_first(mesh, single, tmp_path):
    """`snakemake -s workflow/generate.smk` without `ipcgrasp generate`: Snakemake creates
    out/shards and out/logs before the first job, and the jobs write into that folder."""
    work = copy_of_the_repository(tmp_path / "repo")
    out = tmp_path / "grasps"
    config = tmp_path / "generate.yaml"
    config.write_text(json.dumps({"mesh": str(mesh), "mass": 0.003, "n": N, "trials": TRIALS, "seed": SEED,
                                  "images": False, "shard_size": 2, "out": str(out)}))
    run = SNAKEMAKE_FORKS.run(["-s", "workflow/generate.smk", "--cores", "2", "--configfile", str(config)], cwd=work,
                              timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    assert_same_dataset(out, single)


@pytest.mark.slow
def test_the_workflow_refuses_records_made_with_another_gripper_content_before_any_job(mesh, tmp_path, monkeypatch):
    """The records of a dataset folder, made with a gripper description that was edited since
    (the same name, another force limit): `snakemake -s workflow/generate.smk` stops at parse time."""
    description = tmp_path / "my_yumi.yaml"
    description.write_text(load_description("yumi").path.read_text())
    out = tmp_path / "grasps"
    config = {"mesh": str(mesh), "mass": 0.003, "n": 1, "trials": TRIALS, "seed": SEED, "images": False,
              "shard_size": 1, "out": str(out), "gripper": str(description)}
    obj, params, gripper = generation_inputs(config)
    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp",
                        lambda obj, object_pose, grasp_pose, params=None, seed=0, record=(), gripper=None:
                        GraspResult(success=True, reason="held after lift", seed=seed, close_forces=(20.0, 20.0)))
    generate_dataset(obj, out, 1, params, n_trials=TRIALS, seed=SEED, images=False, gripper=gripper, mesh=str(mesh))
    description.write_text(description.read_text().replace("force_limit: 100.0", "force_limit: 25.0"))
    (tmp_path / "generate.yaml").write_text(json.dumps(config))
    run = dry_run("-s", "workflow/generate.smk", "--configfile", str(tmp_path / "generate.yaml"))
    assert run.returncode != 0
    assert (f"generate config: {out / 'dataset.json'}: the records in {out} were made with different "
            "'gripper.settings_sha256'") in " ".join((run.stdout + run.stderr).split()), run.stdout + run.stderr
    # a shard job's own process skips that check at parse time; its script makes it before sampling
    with pytest.raises(RecordError, match="were made with different 'gripper.settings_sha256'"):
        run_shard(config, 0)


def test_the_generate_workflows_ipcgrasp_imports_load_no_heavy_module():
    """What workflow/generate.smk imports at its top level, in every snakemake process."""
    lines = [line for line in (REPO / "workflow/generate.smk").read_text().splitlines()
             if line.startswith(("from ipcgrasp", "import ipcgrasp"))]
    assert any("ipcgrasp.dataset.sharding" in line for line in lines)
    assert heavy_modules_loaded("\n".join(lines)) == []


@pytest.mark.slow
def test_a_shard_jobs_own_process_parses_the_workflow_loading_no_heavy_module(mesh, tmp_path):
    """A shard job's own snakemake process (--mode remote, as the cluster and SLURM executors start
    it) parses workflow/generate.smk and plans its job in a fresh interpreter without the mesh
    library or the simulator: the settings check is the main process's and the job script's."""
    config = tmp_path / "generate.yaml"
    config.write_text(json.dumps({"mesh": str(mesh), "mass": 0.003, "n": N, "trials": TRIALS, "seed": SEED,
                                  "images": False, "shard_size": 2, "out": str(tmp_path / "grasps")}))
    args = ["-s", "workflow/generate.smk", "-n", "--cores", "1", "--configfile", str(config), "--mode", "remote",
            "--target-jobs", "generate_shard:shard=0001", "--allowed-rules", "generate_shard"]
    work = copy_of_the_repository(tmp_path / "repo")
    assert heavy_modules_loaded(snakemake_script(args), cwd=work) == []


def test_only_the_sharded_runs_own_folders_count_as_an_empty_dataset_directory(tmp_path):
    (tmp_path / SHARD_DIR).mkdir()
    (tmp_path / LOG_DIR).mkdir()
    check_dataset_directory(tmp_path)  # what Snakemake makes before the first shard job
    (tmp_path / "notes.txt").write_text("a user's file")
    with pytest.raises(RecordError, match="not empty and not made by `ipcgrasp generate`"):
        check_dataset_directory(tmp_path)
    (tmp_path / "notes.txt").unlink()
    (tmp_path / LOG_DIR).rmdir()
    (tmp_path / LOG_DIR).write_text("a file, not the workflow's folder")
    with pytest.raises(RecordError, match="not empty and not made by `ipcgrasp generate`"):
        check_dataset_directory(tmp_path)


def test_a_generation_config_carries_its_gripper_and_pad(mesh):
    config = {"mesh": str(mesh), "mass": 0.03, "n": 1, "out": "unused", "gripper": "franka_hand",
              "jaw": "rectangular"}
    _, params, gripper = generation_inputs(config)
    assert (gripper.name, gripper.pad_kind, params.jaw) == ("franka_hand", "rectangular", "rectangular")
    _, params, gripper = generation_inputs({**config, "gripper": "yumi", "jaw": None})
    assert gripper.name == "yumi" and params.jaw == gripper.pad_kind
    with pytest.raises(ValueError, match="robotiq_2f85"):  # the error lists the shipped grippers
        generation_inputs({**config, "gripper": "robotiq_2f140"})


# ---------------------------------------------------------------- after a hard kill (dataset.run_lock)

def ended_pid() -> int:
    """The pid of a process that has ended."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def plant_hard_kill(workdir: Path, out: Path, mesh: Path, pids: list[int]) -> list[Path]:
    """What a generate run into `out` killed by SIGKILL leaves: its run file naming its ended
    processes, and snakemake's lock files (one path a line) of the shard job's inputs and outputs
    in `workdir`; beside them a lock of a study running from the same directory."""
    write_json_atomic(run_file(out), {"started": time.time() - 60.0, "pids": pids})
    locks = workdir / LOCK_DIR
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(f"{mesh}\n{out / 'shards' / 'shard_0000.json'}\n")
    (locks / "0.output.lock").write_text(f"{out / 'shards' / 'shard_0000.json'}\n{out / 'logs' / 'shard_0000.log'}\n"
                                         f"{out / 'index.csv'}\n")
    (locks / "1.output.lock").write_text("results/grid/rounded.nc\n")  # the study's, relative to workdir
    return [locks / "0.input.lock", locks / "0.output.lock"]


def test_the_locks_of_a_killed_run_are_removed_and_no_others(mesh, tmp_path):
    out = tmp_path / "grasps"
    own = plant_hard_kill(tmp_path / "repo", out, mesh, [ended_pid(), ended_pid()])
    assert release_stale_locks(out, tmp_path / "repo") == own
    assert [p.name for p in (tmp_path / "repo" / LOCK_DIR).iterdir()] == ["1.output.lock"]


def test_while_a_process_of_the_last_run_runs_nothing_is_unlocked(mesh, tmp_path):
    out = tmp_path / "grasps"
    with subprocess.Popen(["sleep", "60"]) as snakemake:
        try:
            own = plant_hard_kill(tmp_path / "repo", out, mesh, [ended_pid(), snakemake.pid])
            with pytest.raises(RecordError, match=rf"grasps: another `ipcgrasp generate` is writing this dataset "
                                                  rf"\(process\(es\) {snakemake.pid}, .*generate.pid\); fix: wait for "
                                                  rf"it to end or stop it \(kill {snakemake.pid}\); if those are not "
                                                  rf"generate's processes \(e.g. after a restart\), remove .*generate.pid"):
                release_stale_locks(out, tmp_path / "repo")
        finally:
            snakemake.kill()
    assert all(lock.exists() for lock in own)


def test_locks_no_generate_run_made_are_left_with_the_command_that_removes_them(mesh, tmp_path):
    out = tmp_path / "grasps"
    own = plant_hard_kill(tmp_path / "repo", out, mesh, [])
    run_file(out).unlink()  # e.g. `snakemake -s workflow/generate.smk` run directly
    with pytest.raises(RecordError) as refused:
        release_stale_locks(out, tmp_path / "repo")
    message = " ".join(str(refused.value).split())
    assert ("grasps: Snakemake locks in " in message and "name this dataset and no `ipcgrasp generate` run made them"
            in message and f"fix: once no snakemake run writes {out}, remove them: rm {own[0]} {own[1]}" in message)
    assert all(lock.exists() for lock in own)


@pytest.mark.slow
def test_sharded_generate_resumes_after_a_hard_kill_with_the_same_command(mesh, tmp_path, capsys, monkeypatch):
    work = copy_of_the_repository(tmp_path / "repo")
    monkeypatch.setattr("ipcgrasp.paths.REPO_ROOT", work)
    out = tmp_path / "grasps"
    own = plant_hard_kill(work, out, mesh, [ended_pid(), ended_pid()])
    args = ["generate", "--mesh", str(mesh), "--mass", "0.003", "--n", "1", "--trials", "1", "--seed", str(SEED),
            "--no-images", "--out", str(out), "--shard-size", "1", "--workers", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert all(f"removed {lock}, left by a generate run into {out} that was killed" in printed for lock in own)
    assert (out / "index.csv").is_file() and json.loads(run_file(out).read_text())["pids"] == []
    assert not any(lock.exists() for lock in own)
