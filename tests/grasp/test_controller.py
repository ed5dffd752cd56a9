"""The squeeze/lift controller on a flat rigid block between the YuMi pads: both close rules
fire with equal pad forces and lift the block; pads beside the block miss it; a heavy block
with almost no friction slips out when lifted."""

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.grasp.controller import OVERSHOOT
from ipcgrasp.grasp.gripper import Gripper

BLOCK = (0.03, 0.02, 0.03)  # m; the jaws close along x, on the 30 x 30 mm faces
# unperturbed trials with a short lift and hold keep each trial to a few seconds
FAST = dict(noise_translation=0.0, noise_rotation=0.0, lift_height=0.005, hold_time=0.04)
PHASES = {"initialise", "squeeze", "lift", "evaluate"}


def block(mass: float) -> GraspObject:
    return GraspObject.from_mesh(trimesh.creation.box(extents=BLOCK), mass=mass, name="block")


def top_down_grasp(sideways: float = 0.0) -> np.ndarray:
    """Gripper z pointing down, x along world x, tooltips at the height of the origin (the centre
    of the block in its identity pose); shifted `sideways` m along the gripper y axis."""
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    tooltip_depth = Gripper.yumi().tooltip_transforms[:, 2, 3].mean()
    pose[:3, 3] = -pose[:3, :3] @ [0.0, 0.0, tooltip_depth] + sideways * pose[:3, 1]
    return pose


def test_grasp_pose_puts_the_tooltips_on_the_block_faces_at_mid_height():
    tips = Gripper.yumi().tooltip_poses(top_down_grasp())
    np.testing.assert_allclose(tips[:, :3, 3], [[-0.025, 0, 0], [0.025, 0, 0]], atol=1e-4)
    np.testing.assert_allclose(tips[:, :3, 2], [[1, 0, 0], [-1, 0, 0]], atol=1e-12)


@pytest.fixture(scope="module")
def force_trial():
    return simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST),
                          seed=0, record_frames=True)


@pytest.fixture(scope="module")
def psi_trial(force_trial):
    # a threshold above what the pads hold when the force rule fires: the psi rule, not the
    # force reached, must decide when to stop
    params = SimParams(close_rule="psi", psi_th=1.4 * min(force_trial.psi), **FAST)
    return params, simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0)


def _assert_symmetric_lift(result, params):
    assert result.success, result.reason
    assert result.failure_mode is None
    assert np.isfinite(result.close_time)
    f0, f1 = result.close_forces
    assert abs(f0 - f1) <= 0.03 * max(f0, f1)
    psi0, psi1 = result.psi
    assert psi0 > 0 and abs(psi0 - psi1) <= 0.03 * max(psi0, psi1)
    assert result.lift_height >= params.lift_height
    # the block is centred: the squeeze neither shifts nor turns it
    assert result.object_translation < 1e-4
    assert result.object_rotation < 1e-2
    assert 0.0 < result.min_distance < np.inf
    assert set(result.phase_wall_time) == PHASES


def test_force_rule_fires_with_equal_pad_forces_and_lifts(force_trial):
    r = force_trial
    _assert_symmetric_lift(r, SimParams(**FAST))
    assert min(r.close_forces) >= 20.0
    # the squeeze started with each pad >= 1 mm clear and closed to the block's width
    assert r.start_opening >= BLOCK[0] + 2e-3 - 1e-9
    assert abs(r.close_opening - BLOCK[0]) < 1e-3
    assert r.close_opening < r.start_opening


def test_recorded_frames_follow_the_steps(force_trial):
    r = force_trial
    assert set(r.faces) == {"object", "pad0", "pad1", "backing0", "backing1"}
    assert len(r.frames) == r.steps + 1
    times = np.array([f["time"] for f in r.frames])
    np.testing.assert_allclose(np.diff(times), SimParams().dt, rtol=1e-9)
    first, last = r.frames[0], r.frames[-1]
    for name, faces in r.faces.items():
        assert faces.max() < len(first[name])
    # after the lift the whole block hangs above the ground, and higher than at the start
    assert last["object"][:, 2].min() >= SimParams(**FAST).lift_height
    assert last["object"][:, 2].min() > first["object"][:, 2].min() + 0.004


def test_force_rule_does_not_overshoot_the_closing_force(force_trial):
    assert max(force_trial.close_forces) <= OVERSHOOT * 20.0


def test_psi_rule_fires_with_equal_pad_energies_and_lifts(psi_trial, force_trial):
    params, r = psi_trial
    _assert_symmetric_lift(r, params)
    assert min(r.psi) >= params.psi_th
    assert abs(r.psi[0] - r.psi[1]) <= params.psi_tol * max(r.psi)
    assert r.close_time > force_trial.close_time


def test_frames_skip_steps_rolled_back_by_the_squeeze_refinement():
    # a high close force makes the pads approach it in increments that the controller refines
    params = SimParams(close_force=400.0, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, record_frames=True)
    times = np.array([f["time"] for f in r.frames])
    assert np.all(np.diff(times) > 0), times
    assert len(r.frames) == r.steps + 1


def test_pads_beside_the_block_miss_it():
    pad = Gripper.yumi().pad_mesh().nodes
    pad_half_width = np.abs(pad[:, 1]).max()
    sideways = pad_half_width + 0.5 * BLOCK[1] + 5e-3
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(sideways), SimParams(**FAST), seed=0)
    assert not r.success
    assert r.failure_mode == "miss", r.reason
    assert np.isnan(r.close_time)
    assert r.lift_height == 0.0
    assert r.object_translation < 1e-4


def test_heavy_block_with_tiny_friction_slips():
    params = SimParams(close_rule="force", mu=1e-3, **FAST)
    r = simulate_grasp(block(2.0), np.eye(4), top_down_grasp(), params, seed=0)
    assert not r.success
    assert r.failure_mode == "slip", r.reason
    # closed on the block (the rule fired) ...
    assert np.isfinite(r.close_time)
    assert min(r.close_forces) >= params.close_force
    # ... but friction 2 mu F (< 1 N for F < 500 N) cannot carry 19.6 N: the block stays on the ground
    assert r.lift_height < 0.1 * params.lift_height
