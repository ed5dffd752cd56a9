"""The scripts in examples/ run as shipped and print / write what they say."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each runs a script in a new process: seconds of imports and trials

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(name, *args, cwd):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_simulate_one_grasp_writes_a_trajectory_a_plot_and_a_picture(tmp_path):
    out = _run("simulate_one_grasp.py", tmp_path / "out", cwd=tmp_path)
    assert "GraspResult(" in out and "closing forces [N]" in out
    for name in ("grasp3.nc", "grasp3_forces.png", "grasp3.png"):
        assert (tmp_path / "out" / name).stat().st_size > 1000


def test_friction_robustness_prints_both_settings(tmp_path):
    out = _run("friction_robustness.py", cwd=tmp_path)
    assert "mu = 0.1: R = " in out and "mu = 0.4: R = " in out and "physical robustness" in out


def test_gripper_cube_grasps_holds_the_cube_with_every_shipped_gripper(tmp_path):
    out = _run("gripper_cube_grasps.py", tmp_path / "grippers.png", cwd=tmp_path)
    for name in ("franka_hand", "robotiq_2f85", "yumi"):
        assert f"{name}: held" in out
    assert (tmp_path / "grippers.png").stat().st_size > 1000


def test_finger_stiffness_cube_scores_rigid_and_compliant_fingers(tmp_path):
    out = _run("finger_stiffness_cube.py", "--grasps", "1", "--stiffness", "rigid,2000", "--out", tmp_path / "rows.json",
               cwd=tmp_path)
    assert "| force | rigid | " in out and "| force | 2000 | " in out
    assert len(json.loads((tmp_path / "rows.json").read_text())["rows"]) == 2
