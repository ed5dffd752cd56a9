"""`ipcgrasp generate` end to end on a small box: real simulated trials, records, pictures and the
index; a rerun skips them; bad meshes and arguments are clear errors; killed or interrupted
(Ctrl-C), it leaves no worker process running and no partial file."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trimesh
from PIL import Image

import ipcgrasp.grasp.simulate
from ipcgrasp.cli import main
from ipcgrasp.dataset import records as records_module
from ipcgrasp.dataset.records import read_records, record_files
from ipcgrasp.grasp.description import load_description
from ipcgrasp.grasp.outcome import GraspResult

from ..conftest import child_pids, running

MU, CLOSE_FORCE, MASS = 0.4, 20.0, 0.05
BACKGROUND_GRASPS = 12  # grasps of the generate run a test interrupts
IPCGRASP = Path(sys.executable).with_name("ipcgrasp")


@pytest.fixture
def box_mesh(tmp_path):
    path = tmp_path / "box.obj"
    trimesh.creation.box([0.03, 0.03, 0.03]).export(path)
    return path


def test_generate_labels_grasps_of_a_box_and_a_rerun_skips_them(box_mesh, tmp_path, capsys, monkeypatch):
    out = tmp_path / "grasps"
    argv = ["generate", "--mesh", str(box_mesh), "--mass", str(MASS), "--n", "2", "--trials", "1",
            "--workers", "2", "--out", str(out)]
    assert main(argv) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith(f"wrote 2 grasp record(s) to {out} (0 already there); sampler accepted 2 of ")
    assert sorted(p.name for p in out.glob("grasp_*.json")) == ["grasp_0000.json", "grasp_0001.json"]
    assert sorted(p.name for p in out.glob("*.png")) == ["grasp_0000.png", "grasp_0001.png"]
    records = read_records(out)  # validated against the schema
    index = pd.read_csv(out / "index.csv")
    assert list(index["index"]) == [0, 1] and list(index["image"]) == ["grasp_0000.png", "grasp_0001.png"]
    for i, record in records.items():
        assert record["object"]["name"] == "box" and record["object"]["mesh"] == str(box_mesh)
        assert Image.open(out / record["image"]).size == (640, 480)
        (trial,) = record["trials"]
        # the simulator took the pose as sampled: its jaws started just clear of the 30 mm box
        # (1 mm each side, plus the pose noise and the 1 mm opening steps)
        assert 0.032 <= trial["start_opening"] <= 0.040
        # squeezed at CLOSE_FORCE or more; whether the box holds is the simulator's verdict: 2 mu F (16 N)
        # outweighs m g (0.5 N), but a sampled axis up to atan(mu) = 22 deg from the face normal seats the
        # pads on their edges and a squeeze off the centre of mass can roll the box out
        assert min(trial["close_forces"]) >= CLOSE_FORCE
        assert index["robustness"][i] == record["robustness"] == float(trial["success"])
    dataset = json.loads((out / "dataset.json").read_text())
    assert dataset["trials"] == 1 and dataset["params"]["mu"] == MU

    def no_simulation(*args, **kwargs):
        raise AssertionError("a rerun must not simulate the grasps already recorded")

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", no_simulation)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != "index.csv"}
    assert main(argv) == 0
    rerun = capsys.readouterr().out
    assert "wrote 0 grasp record(s)" in rerun and "(2 already there)" in rerun
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != "index.csv"} == before
    assert list(pd.read_csv(out / "index.csv")["index"]) == [0, 1]


def test_generate_resumes_with_the_same_gripper_file_and_refuses_an_edited_one(box_mesh, tmp_path, capsys,
                                                                             monkeypatch):
    calls = []

    def instant(obj, object_pose, grasp_pose, params=None, seed=0, record=(), gripper=None):
        calls.append(seed)
        return GraspResult(success=True, reason="held after lift", seed=seed, close_forces=(20.0, 20.0))

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", instant)
    description = tmp_path / "my_gripper.yaml"
    description.write_text(load_description("franka_hand").path.read_text())
    out = tmp_path / "grasps"
    argv = ["generate", "--mesh", str(box_mesh), "--mass", str(MASS), "--n", "1", "--trials", "1", "--no-images",
            "--gripper", str(description), "--out", str(out)]
    assert main(argv) == 0 and len(calls) == 1
    assert main(argv) == 0 and len(calls) == 1  # the same file: the grasp already there is skipped
    assert "(1 already there)" in capsys.readouterr().out

    description.write_text(description.read_text().replace("force_limit: 70.0", "force_limit: 25.0"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for sharding in ([], ["--shard-size", "1"]):  # one process; Snakemake jobs (refused before generate.yaml)
        assert main(argv + sharding) == 2
        err = capsys.readouterr().err
        assert f"{out / 'dataset.json'}: the records in {out} were made with different 'gripper.settings_sha256'" in err
        assert "fix: write into a new output directory" in err
        assert len(calls) == 1 and {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_mesh_with_a_hole_is_an_error_naming_the_file_and_the_fix(tmp_path, capsys):
    box = trimesh.creation.box([0.03, 0.03, 0.03])
    box.update_faces(np.arange(len(box.faces)) != 0)
    path = tmp_path / "open_box.obj"
    box.export(path)
    assert main(["generate", "--mesh", str(path), "--mass", "0.05", "--n", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not watertight" in err and "fix:" in err
    assert not (tmp_path / "o").exists()


def test_a_mesh_in_millimetres_gets_the_hint(tmp_path, capsys):
    path = tmp_path / "box_mm.stl"
    trimesh.creation.box([30.0, 30.0, 30.0]).export(path)
    assert main(["generate", "--mesh", str(path), "--mass", "0.05", "--n", "1", "--out", str(tmp_path / "o")]) == 2
    assert "looks like millimetres" in capsys.readouterr().err


def test_a_missing_mesh_is_exit_2(tmp_path, capsys):
    assert main(["generate", "--mesh", str(tmp_path / "nope.obj"), "--mass", "0.05", "--n", "1",
                 "--out", str(tmp_path / "o")]) == 2
    assert "nope.obj" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [["--mass", "0"], ["--n", "0"], ["--trials", "0"], ["--seed", "-1"],
                                 ["--close-rule", "energy"]])
def test_bad_arguments_are_exit_2(box_mesh, tmp_path, capsys, bad):
    argv = {"--mesh": str(box_mesh), "--mass": "0.05", "--n": "1", "--out": str(tmp_path / "o")}
    argv.update(dict(zip(bad[::2], bad[1::2])))
    with pytest.raises(SystemExit) as exit_:
        main(["generate", *[x for kv in argv.items() for x in kv]])
    assert exit_.value.code == 2
    assert "usage: ipcgrasp generate" in capsys.readouterr().err


def generate_in_the_background(box_mesh, out) -> tuple[subprocess.Popen, set[int]]:
    """`ipcgrasp generate --workers 2` in its own process group (as a terminal runs it), once its
    two pool workers run and have written the first record: (the process, the workers' pids).
    Its 48 trials (about 0.5 s of CPU each) then keep it running for several seconds more."""
    process = subprocess.Popen([str(IPCGRASP), "generate", "--mesh", str(box_mesh), "--mass", str(MASS), "--n",
                                str(BACKGROUND_GRASPS), "--trials", "4", "--workers", "2", "--no-images", "--out",
                                str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,  # SIGINT as a terminal has it, not ignored
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while ((len(workers := child_pids(process.pid)) < 2 or not (out.is_dir() and record_files(out)))
           and process.poll() is None and time.monotonic() < deadline):
        time.sleep(0.05)
    if len(workers) < 2 or process.poll() is not None:
        process.kill()
        raise AssertionError("generate did not run 2 workers to its first record: " + " ".join(process.communicate()))
    return process, workers


def wait_until_ended(pids, timeout: float) -> set[int]:
    """The pids still running after `timeout` s (empty as soon as none is)."""
    deadline = time.monotonic() + timeout
    while (alive := {pid for pid in pids if running(pid)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from Linux /proc")
def test_killing_generate_ends_its_pool_workers(box_mesh, tmp_path):
    process, workers = generate_in_the_background(box_mesh, tmp_path / "grasps")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not wait_until_ended(workers, timeout=5), "pool workers kept running after generate was killed"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from Linux /proc")
def test_ctrl_c_of_generate_says_how_far_it_got_and_how_to_resume(box_mesh, tmp_path):
    out = tmp_path / "grasps"
    process, workers = generate_in_the_background(box_mesh, out)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole process group
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    written = len(record_files(out))
    assert stderr.strip().splitlines()[-1] == (f"ipcgrasp: interrupted; {written} of {BACKGROUND_GRASPS} grasp record(s) written to "
                                               f"{out}; run the same command to resume")
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert not wait_until_ended(workers, timeout=5), "pool workers kept running after Ctrl-C"
    assert len(read_records(out)) == written  # every record there is whole and valid
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]  # no half-written file left behind
