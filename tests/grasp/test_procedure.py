"""The grasp procedure on the IPC engine, on a flat rigid block between the YuMi pads: both close rules
fire with equal pad forces and lift the block; pads beside the block miss it; a heavy block
with almost no friction slips out when lifted."""

import warnings

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.grasp.pose import PoseRoundingWarning
from ipcgrasp.grasp.procedure import FORCE_TOLERANCE
from ipcgrasp.grasp.gripper import Gripper

BLOCK = (0.03, 0.02, 0.03)  # m; the jaws close along x, on the 30 x 30 mm faces
# unperturbed trials with a short lift and hold keep each trial to a few seconds
FAST = dict(noise_translation=0.0, noise_rotation=0.0, lift_height=0.005, hold_time=0.04)
PHASES = {"initialise", "squeeze", "lift", "judge"}


def block(mass: float) -> GraspObject:
    # deliberately denser than any material (up to 2 kg in 18 cm^3) to make it slip or drop
    return GraspObject.from_mesh(trimesh.creation.box(extents=BLOCK), mass=mass, name="block",
                                 density_range=(0.0, float("inf")))


def top_down_grasp(sideways: float = 0.0, along: float = 0.0) -> np.ndarray:
    """The YuMi's top-down grasp across a block centred at the origin (Gripper.top_down_grasp)."""
    return Gripper.yumi().top_down_grasp(sideways, along)


def bundled_cube():
    """The bundled 3 cm cube (GraspObject) and its physical grasps."""
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PoseRoundingWarning)
        grasps = load_physical_grasps(data, "cube_3cm")
    return GraspObject.from_mesh(trimesh.load(mesh_path, force="mesh"), mass, "cube_3cm"), grasps


def test_grasp_pose_puts_the_tooltips_on_the_block_faces_at_mid_height():
    tips = Gripper.yumi().tooltip_poses(top_down_grasp())
    np.testing.assert_allclose(tips[:, :3, 3], [[-0.025, 0, 0], [0.025, 0, 0]], atol=1e-4)
    np.testing.assert_allclose(tips[:, :3, 2], [[1, 0, 0], [-1, 0, 0]], atol=1e-12)


@pytest.fixture(scope="module")
def force_trial():
    return simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST),
                          seed=0, record="frames")


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


def test_force_rule_fires_within_the_force_tolerance_of_the_closing_force(force_trial):
    assert 20.0 <= min(force_trial.close_forces) <= (1 + FORCE_TOLERANCE) * 20.0


def test_psi_rule_fires_with_equal_pad_energies_and_lifts(psi_trial, force_trial):
    params, r = psi_trial
    _assert_symmetric_lift(r, params)
    assert min(r.psi) >= params.psi_th
    assert abs(r.close_forces[0] - r.close_forces[1]) <= params.psi_tol * max(r.close_forces)
    assert r.close_time > force_trial.close_time


def test_frames_skip_steps_rolled_back_by_the_squeeze_refinement():
    # a high close force makes the pads approach it in increments that the procedure refines
    params = SimParams(close_force=400.0, max_grip_force=1000.0, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, record="frames")
    times = np.array([f["time"] for f in r.frames])
    assert np.all(np.diff(times) > 0), times
    assert len(r.frames) == r.steps + 1


def test_a_retry_after_a_lagging_step_sends_the_jaws_from_where_they_are():
    """Cube grasp 17, the study's trial 1 (force rule, E 1e8 Pa, mu 0.4): the second pad lands in a
    step whose drive leaves the jaws 141 um behind their command, and the next step overshoots the
    close force 18-fold. A retry that re-sent the jaws the halved increment from their command
    kept the lag in its motion: every halving ended at the same 370 N and the squeeze closed at
    320 N. From where the jaws are, the retry lands inside the close window."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e8, mu=0.4, close_rule="force", lift_height=0.005, hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[17], grasps.grasp_poses[17], params, seed=trial_seed(0, 17, 1))
    assert result.success, result.reason
    assert params.close_force <= min(result.close_forces) <= (1 + FORCE_TOLERANCE) * params.close_force


def test_jaws_back_off_when_the_object_pushes_into_them():
    """Cube grasp 16, the study's trial 4 (force rule, E 1e8 Pa, mu 0.4): the cube turns flat
    against the pads in one step, which ends at 18 N with the cube still moving into them, and
    the next step passes the close window at every jaw increment down to 0.06 um. The jaws back
    off, as a force-controlled gripper yields, and the rule fires inside the window."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e8, mu=0.4, close_rule="force", lift_height=0.005, hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[16], grasps.grasp_poses[16], params, seed=trial_seed(0, 16, 4))
    assert result.success, result.reason
    assert params.close_force <= min(result.close_forces) <= max(result.close_forces) <= (
        1 + FORCE_TOLERANCE) * params.close_force


def test_the_force_limit_bounds_every_squeeze_step_of_a_stiff_pad():
    """Cube grasp 16, the study's trial 0, on rigid-like rectangular pads (E 1e10 Pa) under the psi
    rule: the pads cannot store Psi_th below the force limit, and a step that lands the cube flat
    against them would jump past it (to 464 N) at any increment. The jaws back off and the squeeze
    ends as a stall, every step at most at the limit."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e10, mu=0.4, close_rule="psi", jaw="rectangular", lift_height=0.005, hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[16], grasps.grasp_poses[16], params, seed=trial_seed(0, 16, 0),
                            record="trajectory")
    limit = Gripper.yumi().force_limit
    assert result.failure_mode == "stall", result.reason
    squeeze = [max(step.pad_normal_force) for step in result.trajectory if step.phase == "squeeze"]
    assert (1 - FORCE_TOLERANCE) * limit <= squeeze[-1] <= max(squeeze) <= limit


@pytest.mark.slow
def test_the_jaws_back_off_once_where_the_level_jumps_whatever_they_do():
    """Cube grasp 5, the study's trial 1, rounded pads at E 1e9 Pa, mu 0.6, psi rule at the study's
    Psi_th (7.24e-6 J, which this stiffer pad stores near 60 N): from 0.98 Psi_th every closing
    increment down to 0.02 um ends past the
    window (the pad energy jumps 2 % whatever the jaws do), so the jaws back off; coming back to
    the same place they would back off again, without end, until the Newton budget. They back
    off only once from there, the refinement goes on, and the rule fires."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e9, mu=0.6, close_rule="psi", psi_th=7.2401029325087165e-06, lift_height=0.005,
                       hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[5], grasps.grasp_poses[5], params, seed=trial_seed(0, 5, 1))
    assert result.success, result.reason
    assert min(result.psi) >= params.psi_th


@pytest.mark.slow
def test_a_squeeze_that_creeps_on_a_stiff_pad_takes_its_shortest_try_past_the_window():
    """Cube grasp 8, the study's trial 0, rounded pads at E 1e10 Pa, mu 0.6, force rule: the pads'
    forces rock between steps (21.4 / 20.0 N, then 21.1 / 19.7 N) while the cube settles between
    them; every try short enough for the window ends below it and a 0.1 um one passes it, so the
    jaws crept 0.04 um a step for 1,300 steps until the Newton budget. After MAX_CREEP_STEPS the
    shortest try past the window stands and the rule fires, within the force limit."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e10, mu=0.6, close_rule="force", lift_height=0.005, hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[8], grasps.grasp_poses[8], params, seed=trial_seed(0, 8, 0))
    assert result.failure_mode != "solver", result.reason
    assert params.close_force <= min(result.close_forces) <= max(result.close_forces) <= Gripper.yumi().force_limit


@pytest.mark.slow
def test_a_squeeze_on_pads_that_barely_store_psi_ends_within_the_force_limit():
    """Cube grasp 20, the study's trial 4, rounded pads at E 1e11 Pa, mu 0.6, psi rule at the study's
    Psi_th: the stiff pads store it, if at all, only near the force limit (at the convergence
    reference at 97 N). Their forces rock while the pads barely gain energy, and the jaws used to
    creep on in micrometre steps (until the Newton budget; later until MAX_CREEP_STEPS ended it).
    The squeeze now ends, with the rule firing or stalled in the force limit's window, and every
    step within the limit."""
    cube, grasps = bundled_cube()
    params = SimParams(E=1e11, mu=0.6, close_rule="psi", psi_th=7.2401029325087165e-06, lift_height=0.005,
                       hold_time=0.04)
    result = simulate_grasp(cube, grasps.object_poses[20], grasps.grasp_poses[20], params, seed=trial_seed(0, 20, 4),
                            record="trajectory")
    squeeze = [max(step.pad_normal_force) for step in result.trajectory if step.phase == "squeeze"]
    limit = Gripper.yumi().force_limit
    assert max(squeeze) <= limit
    if result.failure_mode == "stall":
        assert (1.0 - FORCE_TOLERANCE) * limit <= max(squeeze), result.reason
    else:
        assert result.failure_mode is None and min(result.psi) >= params.psi_th, result.reason


def _count_newton_iterations(monkeypatch) -> list:
    """From now on every Newton iteration the engine computes adds to the returned [count]."""
    from ipcgrasp.engine.solver.newton import Newton

    solve, computed = Newton.solve, [0]

    def counted(newton, *args, **kwargs):
        out = solve(newton, *args, **kwargs)
        computed[0] += out[1]
        return out

    monkeypatch.setattr(Newton, "solve", counted)
    return computed


def test_a_squeeze_step_that_overshoots_during_its_drive_is_given_up_and_retried_as_if_finished(monkeypatch):
    """Cube grasp 9 without noise (force rule): the step that lands the second pad drives the
    close force past the close window in its first drive-and-settle round, the jaws still short
    of their command. The IPC backend gives that step up there (Backend.step's give_up) instead of
    finishing its rounds to 30x the close force, which the procedure would refuse too: the trial
    ends as when every step is finished: the same verdict, closing forces inside the close window,
    steps and closing time within four time steps (a finished step's retry is aimed by the secant
    through where it ended, a given-up one's through the round it was given up at, and the contact
    steps that follow start from where each landed; 70 steps either way)."""
    from ipcgrasp.grasp.ipc_backend import IpcBackend

    cube, grasps = bundled_cube()
    params = SimParams(close_rule="force", **FAST)
    step, given_up = IpcBackend.step, []

    def observed(backend, closed, lifted, give_up=None, coarse_rounds=False):
        report = step(backend, closed, lifted, give_up, coarse_rounds)
        given_up.append(report is None)
        return report

    monkeypatch.setattr(IpcBackend, "step", observed)
    trial = simulate_grasp(cube, grasps.object_poses[9], grasps.grasp_poses[9], params, seed=0)
    gave_up = sum(given_up)
    monkeypatch.setattr(IpcBackend, "step", lambda backend, closed, lifted, give_up=None, coarse_rounds=False:
                        step(backend, closed, lifted, coarse_rounds=coarse_rounds))
    finished = simulate_grasp(cube, grasps.object_poses[9], grasps.grasp_poses[9], params, seed=0)
    assert gave_up >= 1
    assert (trial.success, trial.failure_mode) == (finished.success, finished.failure_mode)
    assert abs(trial.steps - finished.steps) <= 4
    assert abs(trial.close_time - finished.close_time) <= 4 * params.dt * (1 + 1e-9)
    for closed in (trial, finished):
        assert params.close_force <= min(closed.close_forces) <= (1 + FORCE_TOLERANCE) * params.close_force


def test_squeeze_rounds_are_settled_coarsely_only_once_both_pads_touch(monkeypatch):
    """Cube grasp 4 without noise (force rule): the procedure asks the backend for coarse
    drive-and-settle rounds (Backend.step's coarse_rounds) in the squeeze steps that start with
    both pads on the cube, and in no other step (a pad pushing the cube alone, the lift, the
    hold). The trial ends as with every round solved to the full tolerance: the same verdict,
    steps and closing time within two time steps (a given-up try's retry is aimed through the
    round it was given up at, whose force a coarse round knows less exactly: 55 against 53
    steps), closing forces within 1 N (the close band is 10 N wide: the refinement's secant
    lands elsewhere in it), in fewer Newton iterations computed."""
    from ipcgrasp.grasp.ipc_backend import IpcBackend

    cube, grasps = bundled_cube()
    params = SimParams(close_rule="force", **FAST)
    step, computed = IpcBackend.step, _count_newton_iterations(monkeypatch)
    asked, touched = [], [False, False]  # (coarse_rounds, both pads have touched the cube, lifted)

    def observed(backend, closed, lifted, give_up=None, coarse_rounds=False):
        asked.append((coarse_rounds, all(touched), lifted))
        report = step(backend, closed, lifted, give_up, coarse_rounds)
        if report is not None:
            touched[:] = [t or f > 0.0 for t, f in zip(touched, report.pad_forces)]
        return report

    monkeypatch.setattr(IpcBackend, "step", observed)
    coarse = simulate_grasp(cube, grasps.object_poses[4], grasps.grasp_poses[4], params, seed=0)
    computed_coarse = computed[0]
    assert any(c for c, _, _ in asked)
    assert all(both and lifted == 0.0 for c, both, lifted in asked if c)
    computed[0] = 0
    monkeypatch.setattr(IpcBackend, "step", lambda backend, closed, lifted, give_up=None, coarse_rounds=False:
                        step(backend, closed, lifted, give_up))
    full = simulate_grasp(cube, grasps.object_poses[4], grasps.grasp_poses[4], params, seed=0)
    assert coarse.success and (coarse.success, coarse.failure_mode) == (full.success, full.failure_mode)
    assert abs(coarse.steps - full.steps) <= 2
    assert abs(coarse.close_time - full.close_time) <= 2 * params.dt * (1 + 1e-9)
    np.testing.assert_allclose(coarse.close_forces, full.close_forces, rtol=0, atol=1.0)
    assert computed_coarse < computed[0]


def test_a_push_along_the_closing_direction_is_not_a_push_out():
    """An off-centre grasp: the first jaw pushes the block 12 mm along the closing direction
    until the other catches it, and the grasp still lifts it; only the lateral part of the
    motion counts towards pushed_out."""
    params = SimParams(close_rule="force", pushed_out_translation=0.005, **FAST)
    result = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(along=0.012), params, seed=0)
    assert result.success, result.reason
    assert result.object_translation > 0.008
    assert result.object_lateral_translation < 0.2 * result.object_translation


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


# ------------------------------------------------------------------ after the lift: stability, shake

def test_hold_signals_feed_the_stability_metrics(monkeypatch):
    """The hold records, per pad and step, the pad's contact force on the block and the mean
    position and normal of its point contacts: on the block's 30 x 30 mm faces (x = -+15 mm),
    normals along -+x, force about the closing force."""
    import ipcgrasp.grasp.procedure as procedure

    seen = {}
    for name in ("contact_force_variation", "contact_position_variation", "contact_normal_variation"):
        def spy(series, name=name, real=getattr(procedure, name)):
            seen[name] = [np.asarray(s) for s in series]
            return real(series)
        monkeypatch.setattr(procedure, name, spy)
    params = SimParams(**{**FAST, "hold_time": 0.1})
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0)
    assert r.success, r.reason
    steps = round(params.hold_time / params.dt)
    forces, positions, normals = (seen[k] for k in ("contact_force_variation", "contact_position_variation",
                                                    "contact_normal_variation"))
    assert len(forces) == len(positions) == len(normals) == 2
    assert all(s.shape == (steps, 3) for s in forces + positions + normals)
    for pad, side in ((0, -1), (1, 1)):  # pad 0 closes from -x
        assert np.all(np.abs(positions[pad][:, 0] - side * BLOCK[0] / 2) < 2e-4)
        centre = [0.0, BLOCK[2] / 2 + r.lift_height]  # of the face, as lifted
        assert np.all(np.abs(positions[pad][:, 1:] - centre) < np.array(BLOCK[1:]) / 2)
        np.testing.assert_allclose(normals[pad][:, 0], -side, atol=0.02)  # pointing into the block
        assert np.all(np.abs(forces[pad][:, 0] * -side - np.mean(r.close_forces)) < 0.3 * np.mean(r.close_forces))
    assert 0.0 <= r.s_cf < 0.1 and 0.0 <= r.s_cp < 1e-3 and 0.0 <= r.s_cn < 0.05


def test_trial_records_no_penetration_and_forces_only_within_dhat(force_trial):
    r = force_trial
    assert r.max_penetration == 0.0  # IPC: every accepted configuration is intersection-free
    dhat = 1e-3 * np.linalg.norm([0.03, 0.02, 0.03])  # below the scene's dhat (1e-3 x a larger box)
    assert 0.0 < r.max_force_gap < 3 * dhat
    assert r.shake_outcome is None and np.isnan(r.critical_mass)
    assert {"shake", "critical_mass"}.isdisjoint(r.phase_wall_time)


def test_a_miss_has_no_stability_metrics_and_no_shake():
    params = SimParams(shake_amplitude=0.002, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(0.03), params, seed=0)
    assert r.failure_mode == "miss"
    assert np.isnan(r.s_cf) and np.isnan(r.s_cp) and np.isnan(r.s_cn)
    assert r.shake_outcome is None and "not run" in r.shake_reason


def test_gentle_shake_keeps_a_firm_grasp_and_moves_the_object_with_the_wrist():
    cube = GraspObject.from_mesh(trimesh.creation.box(extents=(0.03, 0.03, 0.03)), mass=0.003, name="cube")
    params = SimParams(shake_amplitude=0.004, shake_frequency=2.0, shake_cycles=2, **FAST)
    r = simulate_grasp(cube, np.eye(4), top_down_grasp(), params, seed=0, record="frames")
    assert r.success and r.shake_outcome == "held", r.shake_reason
    assert "shake" in r.phase_wall_time
    shake_steps = round(params.shake_cycles / (params.shake_frequency * params.dt))
    rest_steps = round(params.hold_time / params.dt)
    lowest = np.array([f["object"][:, 2].min() for f in r.frames])
    during = lowest[-(shake_steps + rest_steps) - 1:]
    # the held cube follows the vertical wrist motion: up and down by the amplitude
    assert during.max() - during[0] == pytest.approx(params.shake_amplitude, rel=0.1)
    assert during[0] - during.min() == pytest.approx(params.shake_amplitude, rel=0.1)
    assert abs(during[-1] - during[0]) < 1e-4


@pytest.mark.slow
def test_violent_shake_drops_a_heavy_block():
    """1.6 kg held by ~22 N pads (mu = 0.4: friction 2 mu F ~ 18 N against a 16 N weight)
    survives the lift, but a 15 mm, 5 Hz shake asks for m (g + A (2 pi f)^2) ~ 39 N."""
    params = SimParams(shake_amplitude=0.015, shake_frequency=5.0, shake_cycles=3, **{**FAST, "lift_height": 0.02})
    r = simulate_grasp(block(1.6), np.eye(4), top_down_grasp(), params, seed=0)
    assert r.success, r.reason  # the verdict on the lift stands
    assert r.shake_outcome == "dropped", r.shake_reason


@pytest.mark.parametrize("changes, field", [
    (dict(shake_amplitude=0.002, shake_frequency=10.0), "shake_frequency"),
    (dict(shake_amplitude=0.02), "shake_amplitude"),
])
def test_unresolvable_shake_is_refused_with_the_field_named(changes, field):
    with pytest.raises(ValueError, match=field):
        SimParams(**{**FAST, **changes})


def test_a_trial_past_its_newton_budget_ends_as_a_solver_failure():
    params = SimParams(close_rule="force", newton_budget=2, **FAST)
    result = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0)
    assert not result.success and result.failure_mode == "solver"
    assert "newton_budget" in result.reason
    with pytest.raises(ValueError, match="newton_budget"):
        SimParams(newton_budget=0)


def test_the_smallest_closing_increment_stands_when_it_still_overshoots():
    """A Psi_th so small that every refinement of the first touching step overshoots its window:
    the squeeze keeps the smallest increment and closes instead of retrying forever."""
    params = SimParams(close_rule="psi", psi_th=1e-15, psi_tol=1.0, **FAST)
    result = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0)
    assert np.isfinite(result.close_time), result.reason
    assert min(result.psi) > (1 + FORCE_TOLERANCE) * params.psi_th
