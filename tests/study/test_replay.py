"""Replaying a stored study trial: a tiny grid cube (one cube grasp, short lift) written to disk,
then `ipcgrasp replay` reruns its trial from the stored seed and parameters and must reproduce
the stored outcome and closing forces bit for bit."""

import numpy as np
import pytest

from ipcgrasp.cli import main
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.simulate import run_trial
from ipcgrasp.study.cube import merge_cells, read_cube, write_netcdf_atomic
from ipcgrasp.study.replay import stored_trial
from ipcgrasp.study.runs import load_study_object, simulate_cell, study_params
from ipcgrasp.data.registry import load_registry

SIM = dict(lift_height=0.005, hold_time=0.04, dt=0.02)
GRASP = 8


@pytest.fixture(scope="module")
def cube_file(tmp_path_factory):
    data = resolve_data_dir()
    obj, physical = load_study_object(data, "cube_3cm", load_registry())
    params = study_params(SIM, E=1e8, mu=0.4, jaw="rounded", close_rule="force")
    cell = simulate_cell(obj, physical, [GRASP], params, 1, 7,
                         scalars={"jaw": "rounded", "rule": "force", "E": 1e8, "mu": 0.4, "object": "cube_3cm"})
    path = tmp_path_factory.mktemp("grid") / "rounded.nc"
    write_netcdf_atomic(merge_cells([cell], dims=("E", "mu", "rule", "object")), path)
    return path, obj, physical


def test_stored_trial_gives_back_the_study_params_and_seed(cube_file):
    path, obj, physical = cube_file
    stored = stored_trial(read_cube(path), "cube_3cm", GRASP, 0)
    assert stored.params == SimParams(**SIM, E=1e8, mu=0.4, jaw="rounded", close_rule="force")
    result = run_trial(obj, physical.object_poses[GRASP], physical.grasp_poses[GRASP], stored.params, stored.seed)
    assert (result.success, result.failure_mode, result.reason) == (stored.success, stored.failure_mode, stored.reason)
    np.testing.assert_array_equal(result.close_forces, stored.close_forces)  # bit for bit


def test_replay_command_reproduces_the_trial_and_records_it(cube_file, tmp_path, capsys):
    path = cube_file[0]
    out = tmp_path / "t.nc"
    assert main(["replay", str(path), "--object", "cube_3cm", "--grasp", str(GRASP), "--trial", "0",
                 "--E", "1e8", "--rule", "force", "--trajectory", str(out)]) == 0
    assert "replay matches the stored trial" in capsys.readouterr().out
    assert out.exists()


def test_replay_command_reports_a_trial_it_does_not_reproduce(cube_file, tmp_path, capsys):
    cube = read_cube(cube_file[0])
    cube["force_1"][...] = cube.force_1 + 1.0  # pretend the study recorded another closing force
    doctored = write_netcdf_atomic(cube, tmp_path / "doctored.nc")
    assert main(["replay", str(doctored), "--object", "cube_3cm", "--grasp", str(GRASP), "--trial", "0"]) == 1
    assert "DIFFERS" in capsys.readouterr().out


def test_replay_needs_the_fixed_params_or_a_config(cube_file):
    cube = read_cube(cube_file[0])
    del cube.attrs["sim_params"]
    with pytest.raises(ValueError, match="pass the study's config"):
        stored_trial(cube, "cube_3cm", GRASP, 0)
    assert stored_trial(cube, "cube_3cm", GRASP, 0, fixed=SIM).params.lift_height == SIM["lift_height"]
    with pytest.raises(ValueError, match="mu = 0.5 is not in the cube"):
        stored_trial(cube, "cube_3cm", GRASP, 0, {"mu": 0.5}, fixed=SIM)
