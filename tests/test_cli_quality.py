"""`ipcgrasp quality` (the image-space measure from the command line) and `simulate --critical-mass`."""

import math

import numpy as np
import pytest
from PIL import Image

import ipcgrasp
from ipcgrasp.baselines.image_quality import image_quality
from ipcgrasp.cli import main
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.simulate import perturbed_grasp, trial_seeds


@pytest.fixture(scope="module")
def cube():
    data = resolve_data_dir()
    mesh, mass = load_object(data, "cube_3cm")
    return str(data), GraspObject.from_file(mesh, mass), load_physical_grasps(data, "cube_3cm")


def _rows(out: str) -> list[list[str]]:
    """Cells of the table's body rows."""
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in out.splitlines()
            if line.startswith("│") and line.strip("│ ")[:1].isdigit()]


def test_quality_prints_the_api_scores_of_the_simulators_perturbed_grasps_and_a_picture(cube, tmp_path, capsys):
    data, obj, physical = cube
    png = tmp_path / "q" / "grasp2.png"
    assert main(["quality", "--data", data, "--object", "cube_3cm", "--grasp", "2", "--trials", "3", "--seed", "4",
                 "--png", str(png)]) == 0
    out = capsys.readouterr().out
    for header in ("score", "D_m", "D_c", "D_t", "R_r [deg]", "S_a [deg]", "S_f [mm]", "translation [mm]"):
        assert header in out
    expected = [image_quality(obj.mesh, perturbed_grasp(physical.grasp_poses[2], SimParams(), seed),
                              object_pose=physical.object_poses[2]) for seed in trial_seeds(4, 2, 3)]
    rows = _rows(out)
    assert [r[1] for r in rows] == [f"{q.score:.3f}" for q in expected]
    assert [r[5] for r in rows] == [f"{q.d_t:.3f}" for q in expected]
    assert [r[2] for r in rows] == ["yes" if q.score >= 0.5 else "no" for q in expected]
    assert f"predicted R = {np.mean([q.score >= 0.5 for q in expected]):.2f}" in out
    assert "physical robustness 0.20" in out  # DATA.md: grasp 2 held 1 of 5
    with Image.open(png) as picture:  # the drawing with its legend beside it, and the caption below
        assert picture.size[0] >= 1200 and picture.size[1] > 600


def test_quality_without_noise_measures_the_recorded_pose(cube, capsys):
    data, obj, physical = cube
    assert main(["quality", "--data", data, "--object", "cube_3cm", "--grasp", "0", "--no-noise",
                 "--resolution", "5e-4"]) == 0
    q = image_quality(obj.mesh, physical.grasp_poses[0], object_pose=physical.object_poses[0], resolution=5e-4)
    (row,) = _rows(capsys.readouterr().out)
    assert row[1] == f"{q.score:.3f}" and "0.5 mm pixels" not in row


@pytest.mark.parametrize("argv, message", [(["--grasp", "25"], "0..24"), (["--grasp", "0", "--object", "teapot"],
                                                                          "teapot")])
def test_quality_bad_input_is_exit_2_naming_it(cube, capsys, argv, message):
    args = {"--object": "cube_3cm"}
    args.update(dict(zip(argv[::2], argv[1::2])))
    assert main(["quality", "--data", cube[0], *[x for kv in args.items() for x in kv]]) == 2
    assert message in capsys.readouterr().err


def test_simulate_critical_mass_runs_the_ramp_and_shows_it(cube, monkeypatch, capsys):
    calls = []

    def simulate_grasp(obj, object_pose, grasp_pose, params=None, seed=0, gripper=None, record=(),
                       progress=None):
        calls.append(params)
        k = len(calls)
        return GraspResult(success=k < 3, failure_mode=None if k < 3 else "slip", seed=seed,
                           critical_mass=[0.75, math.inf, math.nan][k - 1])

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", simulate_grasp)
    assert main(["simulate", "--data", cube[0], "--object", "cube_3cm", "--grasp", "3", "--trials", "3",
                 "--workers", "1", "--critical-mass"]) == 0
    assert all(p.critical_mass for p in calls)
    out = capsys.readouterr().out
    assert "critical mass [kg]" in out
    assert [r[6] for r in _rows(out)] == ["0.750", f"> {SimParams().max_mass:g}", "-"]


def test_simulate_without_critical_mass_leaves_the_ramp_out(cube, monkeypatch, capsys):
    calls = []

    def simulate_grasp(obj, object_pose, grasp_pose, params=None, seed=0, **options):
        calls.append(params)
        return GraspResult(success=True, seed=seed)

    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", simulate_grasp)
    assert main(["simulate", "--data", cube[0], "--object", "cube_3cm", "--grasp", "3", "--trials", "1"]) == 0
    assert not calls[0].critical_mass and "critical mass" not in capsys.readouterr().out
