import json

import numpy as np
import pytest
import trimesh
from PIL import Image

import ipcgrasp
from ipcgrasp.cli import main
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.simulate import trial_seeds


@pytest.fixture(scope="module")
def data_dir():
    return str(resolve_data_dir())


@pytest.fixture
def fake_simulator(monkeypatch):
    """Replace the simulator by an instant one (a lifted cube between two plates) recording its calls."""
    calls = []

    def simulate_grasp(obj, object_pose, grasp_pose, params=None, seed=0, gripper=None, record=(),
                       progress=None):
        record_frames = "frames" in record
        calls.append({"seed": seed, "record_frames": record_frames, "params": params, "mass": obj.mass,
                      "object_pose": object_pose, "grasp_pose": grasp_pose, "gripper": gripper})
        box = trimesh.creation.box(extents=(0.03, 0.03, 0.03))
        plate = trimesh.creation.box(extents=(0.016, 0.0024, 0.022))
        frames = []
        for k in range(3):
            progress(0.02 * k)
            up = [0.0, 0.0, 0.015 + 0.01 * k]
            frames.append({"time": 0.02 * k, "object": box.vertices + up,
                           "pad0": plate.vertices + up + [0, -0.0162, 0], "pad1": plate.vertices + up + [0, 0.0162, 0]})
        success = seed % 2 == 0
        return GraspResult(success=success, failure_mode=None if success else "slip",
                           reason="held after lift" if success else "pad 0 lost the object", seed=seed,
                           close_time=0.02, close_forces=(20.5, np.float64(21.25)), newton_iterations=np.int64(7),
                           frames=frames if record_frames else [],
                           faces={n: box.faces for n in ("object", "pad0", "pad1")} if record_frames else {})

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", simulate_grasp)
    return calls


def test_unknown_object_is_exit_2_naming_the_objects(data_dir, capsys, fake_simulator):
    assert main(["simulate", "--data", data_dir, "--object", "teapot", "--grasp", "0"]) == 2
    err = capsys.readouterr().err
    assert "teapot" in err and "cube_3cm" in err
    assert not fake_simulator


@pytest.mark.parametrize("command", [["simulate"], ["render", "--out", "x.gif"]])
@pytest.mark.parametrize("grasp", ["99", "25", "-1"])
def test_grasp_index_out_of_range_is_exit_2_naming_the_range(data_dir, capsys, fake_simulator, command, grasp):
    argv = command[:1] + ["--data", data_dir, "--object", "cube_3cm", "--grasp", grasp] + command[1:]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"grasp index {grasp} out of range" in err and "0..24" in err
    assert not fake_simulator


@pytest.mark.parametrize("bad", [["--trials", "0"], ["--workers", "-2"], ["--close-rule", "energy"],
                                 ["--gripper"], ["--every", "0"]])
def test_bad_arguments_are_exit_2(data_dir, capsys, bad):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", *bad])
    assert exit_.value.code == 2
    assert "usage: ipcgrasp simulate" in capsys.readouterr().err


def test_invalid_parameters_are_exit_2(data_dir, capsys):
    assert main(["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", "--E", "-1"]) == 2
    assert "SimParams.E must be a real number in [100000, 1e+12] Pa, got -1.0" in capsys.readouterr().err
    assert main(["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", "--jaw", "square"]) == 2
    assert "gripper 'yumi' has no pad 'square'; fix: choose one of its pads (rounded, rectangular)" in \
        capsys.readouterr().err


def test_finger_stiffness_reaches_the_trials_and_is_checked(data_dir, capsys, fake_simulator):
    argv = ["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", "--trials", "1"]
    assert main(argv + ["--finger-stiffness", "2000"]) == 0
    assert fake_simulator[-1]["params"].finger_stiffness == 2000.0
    assert main(argv) == 0
    assert fake_simulator[-1]["params"].finger_stiffness is None  # rigid unless asked
    assert main(argv + ["--finger-stiffness", "0"]) == 2
    assert "SimParams.finger_stiffness must be a real number in (0, 1e+09] N/m" in capsys.readouterr().err


def test_simulate_runs_the_trials_prints_the_table_and_writes_json_and_gif(data_dir, tmp_path, capsys,
                                                                          fake_simulator):
    out_json, out_gif = tmp_path / "trials.json", tmp_path / "anim" / "grasp3.gif"
    argv = ["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "3", "--trials", "4", "--workers", "1", "--E", "2e8",
            "--mu", "0.3", "--close-rule", "psi", "--jaw", "rectangular", "--seed", "7", "--json", str(out_json),
            "--render", str(out_gif), "--every", "1"]
    assert main(argv) == 0
    seeds = trial_seeds(7, 3, 4)  # root seed 7, grasp 3: the study's seeds of trials 0-3
    assert [c["seed"] for c in fake_simulator] == seeds  # the seeds `robustness` would use
    assert [c["record_frames"] for c in fake_simulator] == [True, False, False, False]
    params = fake_simulator[0]["params"]
    assert (params.E, params.mu, params.close_rule, params.jaw) == (2e8, 0.3, "psi", "rectangular")
    assert params.noise_translation > 0 and params.noise_rotation > 0
    assert fake_simulator[0]["mass"] == pytest.approx(0.003)  # registry: cube_3cm weighs 3 g

    out = capsys.readouterr().out
    simulated = np.mean([s % 2 == 0 for s in seeds])
    assert f"R = {simulated:.2f} (physical robustness 1.00)" in out  # grasp 3 succeeded 5/5 (DATA.md)
    for header in ("trial", "success", "failure mode", "reason", "closing forces [N]", "close time [s]",
                   "wall time [s]"):
        assert header in out
    assert "20.5 / 21.2" in out and "held after lift" in out

    report = json.loads(out_json.read_text())
    assert report["object"] == "cube_3cm" and report["grasp"] == 3 and report["seed"] == 7
    assert report["robustness"] == pytest.approx(simulated) and report["physical_robustness"] == 1.0
    assert report["params"]["E"] == 2e8
    assert [t["seed"] for t in report["trials"]] == seeds
    first = report["trials"][0]
    assert (first["close_force_0"], first["close_force_1"], first["newton_iterations"]) == (20.5, 21.25, 7)
    assert first["min_distance"] is None and first["psi_0"] is None  # inf and nan are not JSON

    with Image.open(out_gif) as gif:
        assert gif.n_frames == 3
    assert (tmp_path / "anim" / "grasp3_first.png").is_file() and (tmp_path / "anim" / "grasp3_final.png").is_file()


def test_render_runs_one_unperturbed_trial_to_a_side_by_side_png(data_dir, tmp_path, capsys, fake_simulator):
    out = tmp_path / "grasp.png"
    assert main(["render", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", "--no-noise",
                 "--out", str(out)]) == 0
    (call,) = fake_simulator
    assert call["record_frames"] and call["params"].noise_translation == 0 and call["params"].noise_rotation == 0
    with Image.open(out) as png:
        assert png.size == (1280, 480)
    assert "R = " in capsys.readouterr().out


@pytest.mark.slow
def test_simulate_one_unperturbed_cube_grasp_end_to_end(data_dir, capsys):
    assert main(["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "0", "--trials", "1",
                 "--no-noise"]) == 0
    out = capsys.readouterr().out
    assert "cube_3cm, grasp 0" in out and "closing forces [N]" in out
    row = next(line for line in out.splitlines() if line.lstrip("│ ").startswith("1 "))
    assert "yes" in row or "no" in row
    assert "R = 1.00 (physical robustness 1.00)" in out or "R = 0.00 (physical robustness 1.00)" in out


def test_the_gripper_and_its_pad_reach_every_trial(data_dir, capsys, fake_simulator):
    argv = ["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "3", "--trials", "2", "--workers", "1",
            "--gripper", "robotiq_2f85", "--jaw", "rounded"]
    assert main(argv) == 0
    assert [(c["gripper"].name, c["gripper"].pad_kind, c["params"].jaw) for c in fake_simulator] == \
        [("robotiq_2f85", "rounded", "rounded")] * 2
    assert main(argv[:-4] + ["--gripper", "franka_hand"]) == 0  # its default pad
    assert {(c["gripper"].name, c["params"].jaw) for c in fake_simulator[2:]} == {("franka_hand", "rectangular")}


def test_another_gripper_on_the_recorded_grasps_is_warned_about_and_marked_in_the_r_line(data_dir, capsys,
                                                                                        fake_simulator):
    """The REACH grasps were recorded with the YuMi: simulating the Franka hand on them warns that
    its trials are not comparable with the physical robustness, and the R line says so too."""
    argv = ["simulate", "--data", data_dir, "--object", "cube_3cm", "--grasp", "3", "--trials", "1"]
    assert main(argv + ["--gripper", "franka_hand"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("ipcgrasp: warning:") == 1, captured.err
    assert ("ipcgrasp: warning: the physical grasps of cube_3cm in" in captured.err
            and "were recorded with the yumi, but --gripper is franka_hand" in captured.err
            and "fix: --gripper yumi" in captured.err)
    assert "(physical robustness 1.00 with the yumi, which recorded the grasp; not comparable with the franka_hand)" \
        in captured.out
    assert main(argv) == 0  # the recording gripper: no warning, and no PoseRoundingWarning either
    captured = capsys.readouterr()
    assert "warning" not in captured.err and "R = 1.00 (physical robustness 1.00)" in captured.out
