"""Trajectories: recording changes no decision, every variable has units and long_name, the
per-step forces agree with the trial's closing forces, contacts are padded with a count, and the
file round-trips with the trial's parameters, seed and version."""

import json

import numpy as np
import pytest

import ipcgrasp
from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.geometry.quaternion import quaternion_to_rotation
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.procedure import recordings
from ipcgrasp.grasp.trajectory import PHASES, read_trajectory, trajectory_dataset, write_trajectory

SHORT = dict(lift_height=0.005, hold_time=0.04, close_rule="force")


@pytest.fixture(scope="module")
def trials():
    data = resolve_data_dir()
    grasps = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003, name="cube_3cm")
    run = lambda record: simulate_grasp(obj, grasps.object_poses[0], grasps.grasp_poses[0],  # noqa: E731
                                        SimParams(**SHORT), seed=3, record=record)
    return run(()), run("trajectory"), run(("frames", "trajectory"))


def _same(a, b):
    return a == b or (isinstance(a, float) and np.isnan(a) and np.isnan(b))


def test_recording_changes_no_decision(trials):
    plain, recorded, both = trials
    for other in (recorded, both):
        a, b = plain.summary(), other.summary()
        assert {k for k in a if not k.startswith("wall_time")} == {k for k in b if not k.startswith("wall_time")}
        assert all(_same(a[k], b[k]) for k in a if not k.startswith("wall_time")), \
            {k: (a[k], b[k]) for k in a if not _same(a[k], b[k])}
    assert not plain.trajectory and len(recorded.trajectory) == recorded.steps


def test_every_variable_has_units_and_long_name_and_the_forces_match_the_close(trials):
    _, recorded, _ = trials
    ds = trajectory_dataset(recorded, SimParams(**SHORT), {"object": "cube_3cm"})
    for name, variable in ds.data_vars.items():
        assert "long_name" in variable.attrs, name
        assert "units" in variable.attrs or "flag_meanings" in variable.attrs or variable.dtype.kind in "OSU", name
    assert ds.time.attrs["units"] == "s"
    close = ds.sel(time=recorded.close_time, method="nearest")
    assert float(close.time) == pytest.approx(recorded.close_time)
    assert tuple(close.pad_normal_force.values) == pytest.approx(recorded.close_forces, rel=1e-12)
    phases = [PHASES[k] for k in ds.phase.values]
    assert phases[0] == "settle" and "squeeze" in phases and phases[-1] == "hold"
    held = ds.isel(time=-1)
    n = int(held.n_pad_contacts)
    assert n > 0 and set(held.contact_pad.values[:n]) == {0, 1} and np.all(held.contact_pad.values[n:] == -1)
    assert np.all(np.isfinite(held.contact_point.values[:n])) and np.all(np.isnan(held.contact_point.values[n:]))
    # the per-contact normal forces of a pad sum to its resultant, whose norm is its normal force
    for pad in range(2):
        mine = held.contact_pad.values[:n] == pad
        total = held.contact_force.values[:n][mine].sum(axis=0)
        assert np.linalg.norm(total) == pytest.approx(float(held.pad_normal_force.sel(pad=pad)), rel=1e-6)
    # the held object's weight is carried by the pads' friction: no ground reaction once lifted
    assert np.linalg.norm(held.ground_reaction.values) == 0.0
    assert float(held.pad_friction_force.sum()) > 0.0
    assert float(held.object_height) >= SHORT["lift_height"]


def test_file_round_trip_with_parameters_seed_version_and_vertices(trials, tmp_path):
    _, _, both = trials
    path = write_trajectory(both, tmp_path / "t.nc", SimParams(**SHORT), vertices=True, object="cube_3cm", grasp=0)
    ds = read_trajectory(path)
    assert ds.attrs["seed"] == 3 and ds.attrs["ipcgrasp_version"] == ipcgrasp.__version__
    assert SimParams(**json.loads(ds.attrs["params"])) == SimParams(**SHORT)
    assert ds.attrs["object"] == "cube_3cm" and ds.attrs["success"] == int(both.success)
    assert ds.vertices_object.shape == (both.steps, len(both.frames[0]["object"]), 3)
    np.testing.assert_array_equal(ds.vertices_pad0.values[-1], both.frames[-1]["pad0"])


def test_wrist_jaw_and_object_poses_follow_the_simulated_bodies_and_phases_read_as_names(trials, tmp_path):
    _, _, both = trials
    ds = read_trajectory(write_trajectory(both, tmp_path / "t.nc", vertices=True))
    assert list(ds.phase_name.values) == [PHASES[k] for k in ds.phase.values]  # strings, no decoding
    rotate = np.vectorize(quaternion_to_rotation, signature="(4)->(3,3)")
    assert np.allclose(rotate(ds.object_quaternion.values), ds.object_rotation.values, atol=1e-12)
    # the wrist: the (perturbed) grasp pose, raised by the lift, never turned
    wrist = ds.wrist_position.values
    assert np.array_equal(wrist[0], both.grasp_pose[:3, 3]) and wrist[-1, 2] - wrist[0, 2] >= SHORT["lift_height"]
    assert np.allclose(wrist[:, :2], wrist[0, :2], atol=0.0)
    assert np.allclose(rotate(ds.wrist_quaternion.values), both.grasp_pose[:3, :3], atol=1e-12)
    # the jaws: their tooltip frames (where the jaws were sent) are the opening apart, and the
    # rigid backing plates (driven with them) moved as they did, exactly where the jaws got there
    # and otherwise short of them by the jaw lag (the largest distance of a driven vertex from its
    # target; a plate's other vertices, turned with it, up to 1 % more)
    jaws = np.concatenate([rotate(ds.jaw_quaternion.values), ds.jaw_position.values[..., None]], axis=-1)
    jaws = np.concatenate([jaws, np.broadcast_to([0.0, 0.0, 0.0, 1.0], (*jaws.shape[:2], 1, 4))], axis=-2)
    openings = [Gripper.jaw_opening(step) for step in jaws]
    assert np.allclose(openings, ds.jaw_opening.values, atol=1e-12)
    for pad in range(2):
        plate = ds[f"vertices_backing{pad}"].values
        moved = jaws[:, pad] @ np.linalg.inv(jaws[0, pad])
        expected = np.einsum("tij,vj->tvi", moved[:, :3, :3], plate[0]) + moved[:, None, :3, 3]
        behind = np.linalg.norm(plate - expected, axis=-1).max(axis=1)
        assert np.all(behind <= 1.01 * ds.jaw_lag.values + 1e-12)
        assert np.all(behind[ds.jaw_lag.values == 0.0] <= 1e-12)


def test_vertices_need_recorded_frames(trials, tmp_path):
    _, recorded, both = trials
    assert "vertices_object" not in trajectory_dataset(both)  # only when asked
    with pytest.raises(ValueError, match="recorded no frames"):
        trajectory_dataset(recorded, vertices=True)


def test_unknown_recordings_are_refused():
    assert recordings("frames") == {"frames"} and recordings(None) == frozenset()
    with pytest.raises(ValueError, match="unknown recordings"):
        recordings("video")
