"""`ipcgrasp simulate --mesh FILE --mass KG --pose FILE.json | --grasp-pose ...`: any object in any
pose from the command line. The trials get the world poses the frames documented in
docs/simulate_mesh.md give, the result is the API call's, and bad input is an error naming the
option and the fix before any simulation."""

import json

import numpy as np
import pytest
import trimesh

import ipcgrasp
from ipcgrasp import GraspObject, SimParams
from ipcgrasp.cli import main
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.simulate import run_trial, trial_seeds

MASS = 0.05
HALF_TURN_X = [1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
"""A top-down gripper frame at the mesh origin: z (approach) down, x (closing) along the mesh's x."""


@pytest.fixture
def box_mesh(tmp_path):
    path = tmp_path / "box.obj"
    trimesh.creation.box([0.03, 0.03, 0.03]).export(path)
    return path


@pytest.fixture
def calls(monkeypatch):
    """Replace the simulator by an instant one that records the poses and parameters it gets."""
    seen = []

    def simulate_grasp(obj, object_pose, grasp_pose, params=None, seed=0, gripper=None, record=(), progress=None):
        seen.append({"object_pose": object_pose, "grasp_pose": grasp_pose, "params": params, "seed": seed,
                     "mass": obj.mass, "name": obj.name, "gripper": gripper})
        return GraspResult(success=True, reason="held after lift", seed=seed, close_time=0.3,
                           close_forces=(20.0, 20.0))

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", simulate_grasp)
    return seen


def _tooltip_height(gripper: Gripper) -> float:
    """The tooltips' depth along the gripper's z (m): a top-down frame that high above the box
    centre puts them at its mid-height."""
    return float(np.mean(gripper.tooltip_transforms[:, 2, 3]))


def test_a_pose_file_in_the_mesh_frame_reaches_the_trials_on_the_resting_object(box_mesh, tmp_path, calls, capsys):
    grasp = np.reshape(HALF_TURN_X, (4, 4))
    grasp[2, 3] = _tooltip_height(Gripper.from_description("franka_hand"))
    pose_file = tmp_path / "pose.json"
    pose_file.write_text(json.dumps({"grasp_pose": grasp.tolist()}))
    out = tmp_path / "trials.json"
    assert main(["simulate", "--mesh", str(box_mesh), "--mass", str(MASS), "--pose", str(pose_file), "--trials", "2",
                 "--workers", "1", "--gripper", "franka_hand", "--seed", "3", "--json", str(out)]) == 0
    obj = GraspObject.from_file(box_mesh, MASS)
    resting, _ = place_scene(obj.mesh, obj.stable_pose(), np.eye(4))  # generate's object pose
    assert [c["seed"] for c in calls] == trial_seeds(3, 0, 2)
    for call in calls:
        assert np.allclose(call["object_pose"], resting) and np.allclose(call["grasp_pose"], resting @ grasp)
        assert call["mass"] == MASS and call["name"] == "box" and call["gripper"].name == "franka_hand"
    printed = capsys.readouterr().out
    assert "box, grasp 0: 2 trial(s)" in printed and "R = 1.00\n" in printed and "physical" not in printed
    report = json.loads(out.read_text())
    assert report["object"] == "box" and report["physical_robustness"] is None and report["mass"] == MASS
    assert report["mesh"] == str(box_mesh) and np.allclose(report["grasp_pose_in_object"], grasp)
    assert report["object_pose"] is None


def test_an_object_pose_and_a_quaternion_grasp_pose_on_the_command_line(box_mesh, calls):
    # the object turned a quarter about z and moved; the grasp: 50 mm above the mesh origin, half turn about x
    assert main(["simulate", "--mesh", str(box_mesh), "--mass", str(MASS), "--trials", "1", "--no-noise",
                 "--grasp-pose", "0", "0", "0.05", "0", "1", "0", "0",
                 "--object-pose", "0.1", "-0.2", "0.015", "0.7071068", "0", "0", "0.7071068"]) == 0
    (call,) = calls
    turn = np.array([[0.0, -1.0, 0.0, 0.1], [1.0, 0.0, 0.0, -0.2], [0.0, 0.0, 1.0, 0.015], [0, 0, 0, 1]])
    grasp = np.reshape(HALF_TURN_X, (4, 4))
    grasp[2, 3] = 0.05
    assert np.allclose(call["object_pose"], turn, atol=1e-7) and np.allclose(call["grasp_pose"], turn @ grasp, atol=1e-7)
    assert call["params"].noise_translation == 0 and call["params"].noise_rotation == 0


@pytest.mark.parametrize("argv, message", [
    (["--mesh", "{mesh}", "--pose", "{pose}"], "--mesh needs --mass (the object's mass in kg); fix:"),
    (["--mesh", "{mesh}", "--mass", "0.05"], "exactly one of --pose FILE.json and --grasp-pose; fix:"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--pose", "{pose}", "--grasp-pose", *map(str, HALF_TURN_X)],
     "exactly one of --pose FILE.json and --grasp-pose"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--pose", "{pose}", "--object", "cube_3cm"],
     "--object names a REACH grasp and --mesh your own object; fix:"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--pose", "{pose}", "--object-pose", *map(str, HALF_TURN_X)],
     "--object-pose goes with --grasp-pose; with --pose, give 'object_pose' in the pose file"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--grasp-pose", "0", "0", "0.05", "1", "0", "0"],
     "--grasp-pose: 6 numbers; fix: give 16 numbers"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--grasp-pose", "0", "0", "0.05", "1", "1", "0", "0"],
     "--grasp-pose quaternion [1.0, 1.0, 0.0, 0.0]: norm 1.41421, must be 1"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--pose", "{bad_pose}"], "grasp_pose: no quaternion; fix:"),
    (["--mesh", "{missing}", "--mass", "0.05", "--pose", "{pose}"], "no such file; fix:"),
    (["--mesh", "{mesh}", "--mass", "50", "--pose", "{pose}"], "fix: give the mass in kg (not g)"),
    (["--mass", "0.05", "--object", "cube_3cm", "--grasp", "0"], "--mass goes only with --mesh; fix:"),
    (["--object", "cube_3cm"], "--grasp required (a REACH object and grasp); fix:"),
    (["--mesh", "{mesh}", "--mass", "0.05", "--pose", "{pose}", "--json", "{pose}"],
     "is also an input of this command"),
])
def test_bad_input_names_the_option_and_the_fix_before_any_trial(box_mesh, tmp_path, calls, capsys, argv, message):
    pose, bad_pose = tmp_path / "pose.json", tmp_path / "bad.json"
    pose.write_text(json.dumps({"grasp_pose": np.eye(4).tolist()}))
    bad_pose.write_text(json.dumps({"grasp_pose": {"position": [0, 0, 0]}}))
    names = {"mesh": box_mesh, "pose": pose, "bad_pose": bad_pose, "missing": tmp_path / "none.obj"}
    assert main(["simulate", *(a.format(**names) for a in argv)]) == 2
    err = capsys.readouterr().err
    assert message in err and "fix" in err, err
    assert calls == []


@pytest.mark.slow
def test_simulate_on_a_mesh_gives_the_api_calls_result(box_mesh, tmp_path, capsys):
    gripper = Gripper.from_description("yumi")
    grasp = np.reshape(HALF_TURN_X, (4, 4))
    grasp[2, 3] = _tooltip_height(gripper)  # tooltips at the box centre's height
    out, trajectory = tmp_path / "trial.json", tmp_path / "trial.nc"
    assert main(["simulate", "--mesh", str(box_mesh), "--mass", str(MASS), "--trials", "1", "--no-noise",
                 "--grasp-pose", *map(str, grasp.ravel()), "--json", str(out), "--trajectory", str(trajectory)]) == 0
    obj = GraspObject.from_file(box_mesh, MASS)
    object_pose, _ = place_scene(obj.mesh, obj.stable_pose(), np.eye(4))
    api = run_trial(obj, object_pose, object_pose @ grasp, SimParams(noise_translation=0.0, noise_rotation=0.0,
                                                                       jaw=gripper.pad_kind),
                    trial_seeds(0, 0, 1)[0], gripper=gripper)
    (cli,) = json.loads(out.read_text())["trials"]
    assert api.success, api.reason  # a 30 mm box squeezed across its middle is held
    assert (cli["success"], cli["failure_mode"], cli["reason"]) == (api.success, api.failure_mode, api.reason)
    assert (cli["close_force_0"], cli["close_force_1"]) == tuple(api.close_forces)
    assert trajectory.is_file() and f"wrote {trajectory}" in capsys.readouterr().out
