"""Every failure label of the grasp procedure on a scene that produces it (docs/grasp_procedure.md),
the lift-height rule, jaws that follow their trajectory, and the drop that makes the solver fail
judged from the object's state.

Physical scenes run the IPC engine on the flat block of test_procedure; the drop classification
runs the procedure on a scripted backend, so the failure happens exactly where the test puts it."""

import dataclasses
import math

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.grasp.backend import Backend, BackendFailed, StepReport
from ipcgrasp.grasp.outcome import FAILURE_MODES
from ipcgrasp.grasp import procedure
from ipcgrasp.grasp.procedure import FORCE_TOLERANCE, GraspProcedure

from .test_procedure import FAST, block, top_down_grasp

def labelled(result, mode):
    assert not result.success
    assert result.failure_mode == mode, (result.failure_mode, result.reason)
    return result


def test_every_label_has_a_scene_here():
    scenes = {name for name in globals() if name.startswith("test_")}
    assert all(any(scene.startswith(f"test_{mode}_") for scene in scenes) for mode in FAILURE_MODES), scenes


def test_miss_pads_close_beside_the_block():
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(0.03), SimParams(**FAST), seed=0)
    labelled(r, "miss")
    assert "neither touched" in r.reason and math.isnan(r.close_time)


def test_miss_a_grasp_pose_in_millimetres_is_decided_before_any_step():
    """Cube grasp 0 with its gripper translation in mm (1000 x): the jaws are hundreds of metres
    from the cube. The trial is a miss with nothing simulated, where the engine would spend
    minutes a step on a scene whose contact distance grows with its size."""
    data = resolve_data_dir()
    cube = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003, "cube_3cm")
    physical = load_physical_grasps(data, "cube_3cm")
    millimetres = np.array(physical.grasp_poses[0])
    millimetres[:3, 3] *= 1000.0
    r = simulate_grasp(cube, physical.object_poses[0], millimetres, SimParams(), seed=0)
    labelled(r, "miss")
    assert "farther than that from the object" in r.reason and "in metres" in r.reason
    assert r.steps == 0 and r.newton_iterations == 0


def test_no_clearance_a_box_wider_than_the_jaws_open():
    wide = GraspObject.from_mesh(trimesh.creation.box(extents=(0.1, 0.1, 0.03)), mass=0.05, name="wide")
    r = simulate_grasp(wide, np.eye(4), top_down_grasp(), SimParams(**FAST), seed=0)
    labelled(r, "no_clearance")
    assert "cannot open wide enough" in r.reason and r.steps == 0


def test_pushed_out_a_turned_block_hit_on_its_edge_turns_away():
    """A block turned 30 degrees about z: the first pad meets a vertical edge 8 mm off the block's
    centre and turns it further, past a 0.2 rad push-out limit, before the second pad arrives (so
    it does at the convergence reference, dt / 4, newton_tolerance / 10, dhat / 2; hit 6 mm off a
    block turned 35 degrees, the block is held there, and turned past the limit only by coarser
    closing steps)."""
    turned = np.eye(4)
    c, s = np.cos(np.radians(30)), np.sin(np.radians(30))
    turned[:2, :2] = [[c, -s], [s, c]]
    params = SimParams(pushed_out_rotation=0.2, **FAST)
    r = simulate_grasp(block(0.01), turned, top_down_grasp(sideways=0.008, along=0.008), params, seed=0)
    labelled(r, "pushed_out")
    assert r.object_rotation > 0.2 and "turned" in r.reason


def test_stall_a_psi_th_the_pads_cannot_store_stalls_the_gripper_at_its_force_limit():
    params = SimParams(close_rule="psi", psi_th=1.0, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0)
    labelled(r, "stall")
    assert "max_grip_force" in r.reason and math.isnan(r.close_time)
    assert r.steps < 200  # stalled by force, not crawled into a budget


def test_unequal_effort_psi_energies_reached_but_the_forces_never_balance():
    """psi_tol 0: the balance B asks for exactly equal pad forces, which a block grasped 4 mm off
    its centre never gives to the bit (a centred one can: both pads then squeeze the same
    configuration mirrored), so the jaws close past Psi_th until the force limit stalls them."""
    params = SimParams(close_rule="psi", psi_tol=0.0, max_grip_force=40.0, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(along=0.004), params, seed=0)
    labelled(r, "unequal_effort")
    assert "never balanced" in r.reason and "max_grip_force" in r.reason


def test_error_a_trial_that_raises_is_recorded_not_raised():
    from ipcgrasp.grasp.simulate import run_trial

    def broken_backend(*args):
        raise RuntimeError("a bug in a backend")

    r = run_trial(block(0.01), np.eye(4), top_down_grasp(), SimParams(**FAST), seed=0, backend=broken_backend)
    labelled(r, "error")
    assert "a bug in a backend" in r.reason


def test_jaws_meet_the_cube_squeezed_out_between_the_pads():
    """Physical cube grasp 2 (physical robustness 0.2) without noise: the pads catch the cube near
    an edge, it slides out sideways between them and the pads meet."""
    data = resolve_data_dir()
    cube = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003, "cube_3cm")
    physical = load_physical_grasps(data, "cube_3cm")
    params = SimParams(noise_translation=0.0, noise_rotation=0.0)
    r = simulate_grasp(cube, physical.object_poses[2], physical.grasp_poses[2], params, seed=0)
    labelled(r, "jaws_meet")
    assert "then they met" in r.reason


def test_slip_a_heavy_block_without_friction_is_not_lifted():
    params = SimParams(close_rule="force", mu=1e-3, **FAST)
    r = simulate_grasp(block(2.0), np.eye(4), top_down_grasp(), params, seed=0)
    labelled(r, "slip")
    assert np.isfinite(r.close_time)
    assert "not lifted" in r.reason and r.lift_height < params.lift_height


def test_solver_a_trial_past_its_newton_budget():
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(newton_budget=2, **FAST), seed=0)
    labelled(r, "solver")
    assert "newton_budget" in r.reason


def test_a_pushing_jaw_moves_the_block_at_the_closing_speed():
    """The first pad meets the block 12 mm before the second: it pushes it along the closing
    direction at the jaw's commanded speed (nothing of the drive is dropped), and the block is
    then held (motion along the closing direction is not a push-out)."""
    params = SimParams(close_rule="force", closing_speed=0.0125, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(along=0.012), params, seed=0, record="frames")
    assert r.success, r.reason
    x = np.array([f["object"][:, 0].mean() for f in r.frames])
    speeds = np.abs(np.diff(x)) / params.dt
    pushing = speeds[speeds > 0.5 * params.closing_speed]
    assert len(pushing) > 20  # about 12 mm / 0.25 mm per step of pushing
    assert np.median(pushing) == pytest.approx(params.closing_speed, rel=0.02)
    assert r.object_lateral_translation < 0.2 * r.object_translation


# --------------------------------------------------------- a drop that makes the solver fail
class ScriptedBackend(Backend):
    """A stand-in model: both pads meet the object 2 mm into the squeeze and their force grows
    10 N per 0.1 mm; the object rises with the jaws. At lift step `fail_at` the step fails; with
    `dropped` the object has left the pads by then."""

    has_strain_energy = False

    def __init__(self, fail_at, dropped):
        self.dt, self.approach_distance = 0.02, 1e-4
        self.fail_at, self.dropped = fail_at, dropped
        self.time, self.closed, self.lifted, self.lift_steps = 0.0, 0.0, 0.0, 0

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        if lifted > 0.0:
            self.lift_steps += 1
            if self.lift_steps == self.fail_at:
                raise BackendFailed("Newton did not converge in 100 iterations")
        self.time += self.dt
        self.closed, self.lifted = closed, lifted
        force = max(closed - 0.002, 0.0) * 1e5
        return StepReport(self.time, (force, force))

    def save(self):
        return self.time, self.closed, self.lifted

    def restore(self, snapshot):
        self.time, self.closed, self.lifted = snapshot

    def object_pose(self):
        return np.eye(4)

    def object_vertices(self):
        return np.array([[0.0, 0.0, 0.001 + self.lifted]])

    def pad_object_distance(self, pad, cutoff):
        gap = 0.05 if self.dropped and self.lift_steps >= self.fail_at - 1 else 0.0
        return gap if gap <= cutoff else math.inf

    def pad_pad_distance(self, cutoff):
        return math.inf

    def object_centre(self):
        return np.zeros(3)

    def pads_centre(self):
        return np.zeros(3)

    def set_object_mass(self, mass):
        pass

    object_mass = 0.01
    static_speed = 1e-3


class ScriptedSqueeze(ScriptedBackend):
    """A squeeze whose pad forces (N) are `forces(closed)` (closed: m each jaw travelled), whose
    jaws' forces (pad and backing plate together) are `jaw_forces(closed)` (None: the pads'), and
    whose pads touch each other once the jaws are `pads_meet` m closed (None: never)."""

    def __init__(self, forces, pads_meet=None, jaw_forces=None):
        super().__init__(fail_at=0, dropped=False)
        self.forces, self.pads_meet, self.jaw_forces = forces, pads_meet, jaw_forces

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        self.time += self.dt
        self.closed, self.lifted = closed, lifted
        touch = self.pads_meet is not None and closed >= self.pads_meet
        jaws = None if self.jaw_forces is None else tuple(float(f) for f in self.jaw_forces(closed))
        return StepReport(self.time, tuple(float(f) for f in self.forces(closed)), pads_touch=touch, jaw_forces=jaws)


def test_graze_one_pad_brushes_the_object_then_the_pads_meet():
    """Pad 0 has a contact force on the object for a millimetre of its travel, pad 1 never: the
    pads then meet. Not a push-out (the object did not move), not a miss (one pad touched)."""
    def forces(closed):
        return (1.0 if 0.004 <= closed <= 0.005 else 0.0, 0.0)

    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST), seed=0,
                       backend=lambda *args: ScriptedSqueeze(forces, pads_meet=0.008))
    labelled(r, "graze")
    assert "only pad 0" in r.reason


def test_end_of_travel_both_pads_on_the_object_never_reach_the_close_force():
    """Both pads press the object with 5 N from 2 mm of travel on, up to the end of the jaws'
    travel, where their front faces would meet, and the pads never touch: the force rule at 20 N
    never fires and the gripper never reaches its force limit."""
    def forces(closed):
        return (5.0, 5.0) if closed >= 0.002 else (0.0, 0.0)

    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST), seed=0,
                       backend=lambda *args: ScriptedSqueeze(forces))
    labelled(r, "end_of_travel")
    assert "end of their travel" in r.reason and math.isnan(r.close_time)



@pytest.mark.parametrize("duration, mode", [(None, "end_of_travel"), (0.5, "solver")])
def test_a_squeeze_longer_than_its_duration_bound_is_a_solver_failure(monkeypatch, duration, mode):
    """The end-of-travel squeeze above takes about the time its jaws need to close their whole
    travel at the closing speed: within MAX_SQUEEZE_DURATION (10 times that). With the bound at
    half of it the squeeze is cut short, whatever model runs it (this scripted one reports no
    Newton iterations, as MuJoCo): a "solver" failure naming the time taken."""
    if duration is not None:
        monkeypatch.setattr(procedure, "MAX_SQUEEZE_DURATION", duration)

    def forces(closed):
        return (5.0, 5.0) if closed >= 0.002 else (0.0, 0.0)

    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST), seed=0,
                       backend=lambda *args: ScriptedSqueeze(forces))
    labelled(r, mode)
    if mode == "solver":
        assert r.reason.startswith("squeeze: the squeeze took") and "they creep" in r.reason

class ObjectMovesAway(ScriptedSqueeze):
    """Both pads meet the object 2 mm into the squeeze, pad 1 with a force that jumps to 19 N in
    0.03 mm (the close rule's secant then takes the shortest steps); from 2.03 mm the object has
    moved away from pad 0 (pad 1 nudges it with 0.01 N) until pad 0 meets it again at 5 mm, where
    both forces rise 10 N per 0.1 mm."""

    AWAY, BACK = 0.00203, 0.005

    def __init__(self):
        def forces(closed):
            if closed < 0.002:
                return 0.0, 0.0
            if closed < self.AWAY:
                return (2.0, 2.0) if closed < 0.00201 else (19.0, 19.0)
            if closed < self.BACK:
                return 0.0, 0.01
            return (max(closed - self.BACK, 1e-6) * 1e5,) * 2
        super().__init__(forces)

    def pad_object_distance(self, pad, cutoff):
        if self.closed < 0.002:
            gap = 0.002 - self.closed
        else:
            gap = self.BACK - self.closed if pad == 0 and self.AWAY <= self.closed < self.BACK else 0.0
        return gap if gap <= cutoff else math.inf


def test_a_pad_the_object_moved_away_from_closes_at_the_closing_speed():
    """Once both pads have touched, the close rule's secant steps the jaws toward its force; when
    the object then moves off one pad, that pad is free again and the jaws close on it at the
    closing speed (a force-limited gripper feels no force to slow down for), instead of creeping
    on at the secant's shortest step until the squeeze's duration bound ends the trial."""
    params = SimParams(close_rule="force", closing_speed=0.01, **FAST)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, backend=lambda *a: ObjectMovesAway())
    assert math.isfinite(r.close_time), (r.failure_mode, r.reason)
    assert r.close_forces[0] == pytest.approx(params.close_force, rel=FORCE_TOLERANCE)
    # the 3 mm the pad was free take about 3 mm / closing speed, plus the contact steps on either side
    assert r.close_time - r.squeeze_time < 2.0 * ObjectMovesAway.BACK / params.closing_speed


class CarriedObject(ScriptedSqueeze):
    """Pad 0 meets the object 2 mm into the squeeze and from there carries it along towards pad 1
    (0.05 N), 0.62 mm away then: that gap closes twice as fast as each jaw travels, and pad 1
    meets the object at 2.31 mm, after which both forces rise 10 N per 0.1 mm."""

    TOUCH, GAP = 0.002, 0.00062
    MEET = TOUCH + 0.5 * GAP

    def __init__(self):
        self.pad_1_touched_at = None

        def forces(closed):
            if closed < self.TOUCH:
                return 0.0, 0.0
            pressed = max(closed - self.MEET, 0.0) * 1e5
            if pressed > 0.0 and self.pad_1_touched_at is None:
                self.pad_1_touched_at = closed
            return 0.05 + pressed, pressed
        super().__init__(forces)

    def pad_object_distance(self, pad, cutoff):
        if pad == 0:
            gap = max(self.TOUCH - self.closed, 0.0)
        elif self.closed < self.TOUCH:
            gap = self.TOUCH + self.GAP - self.closed
        else:
            gap = max(self.GAP - 2.0 * (self.closed - self.TOUCH), 0.0)
        return gap if gap <= cutoff else math.inf


def test_a_free_pad_lands_short_of_an_object_the_other_pad_carries_towards_it():
    """While pad 0 carries the object towards pad 1, both jaws close the gap between pad 1 and the
    object: the step that lands pad 1 aims at half that gap, and pad 1 first touches the object
    at most a first contact step past where they meet (sent the whole gap, the jaws would pass
    it by up to the gap)."""
    params = SimParams(close_rule="force", closing_speed=0.01, **FAST)
    backend = CarriedObject()
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, backend=lambda *args: backend)
    assert math.isfinite(r.close_time), (r.failure_mode, r.reason)
    assert backend.pad_1_touched_at - CarriedObject.MEET <= procedure.FIRST_CONTACT_STEP * backend.approach_distance


@pytest.mark.parametrize("jitter", [0.0, 0.02])
def test_a_squeeze_the_object_gives_way_to_crosses_at_growing_steps(jitter):
    """Both pads meet the object 2 mm into the squeeze with 0.35 N that does not rise while the
    object gives way (it slides or turns between them) until 5 mm, where both forces rise 10 N
    per 0.1 mm; with `jitter` the force rises and falls by that much (N) at alternate steps, as
    an object pushed along between the pads. With no lasting rise to aim the close rule's secant
    at, each step is STEP_GROWTH times the last, up to the closing speed: the jaws cross the 3 mm
    in about 3 mm / (closing speed x dt) steps, where steps of the first contact length (0.25
    approach distances) took 120 without jitter and, with an object as soft, ran into the
    squeeze's duration bound; with jitter, growth after two steps without a rise alone never
    came, and the steps stayed at one or two first contact lengths."""
    given_way = []

    def forces(closed):
        if 0.002 <= closed < 0.005:
            given_way.append(closed)
        wobble = jitter * (len(given_way) % 2)
        return (0.0, 0.0) if closed < 0.002 else (0.35 + wobble + max(closed - 0.005, 0.0) * 1e5,) * 2

    params = SimParams(close_rule="force", closing_speed=0.01, **FAST)
    backend = ScriptedSqueeze(forces)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, backend=lambda *args: backend)
    assert math.isfinite(r.close_time), (r.failure_mode, r.reason)
    assert r.close_forces[0] == pytest.approx(params.close_force, rel=FORCE_TOLERANCE)
    closing_step = params.closing_speed * backend.dt
    growing = math.log2(closing_step / (procedure.FIRST_CONTACT_STEP * backend.approach_distance))
    assert len(given_way) <= 0.003 / closing_step + growing + 2


class RoundedSqueeze(ScriptedSqueeze):
    """ScriptedSqueeze reaching a step's end through drive rounds a quarter of its travel apart,
    asking give_up at the first three as IPC's drive-and-settle rounds do (the jaws' lag: the
    travel left); `tries` records each step asked: (where the jaws started, the target, where it
    was given up or None)."""

    def __init__(self, forces):
        super().__init__(forces)
        self.tries = []

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        start = self.closed
        for quarter in (1, 2, 3) if give_up is not None else ():
            at = start + 0.25 * quarter * (closed - start)
            pads = tuple(float(f) for f in self.forces(at))
            if give_up(pads, (0.0, 0.0), pads, closed - at):
                self.tries.append((start, closed, at))
                return None
        self.tries.append((start, closed, None))
        return super().step(closed, lifted)


def test_a_given_up_squeeze_step_is_retried_by_the_secant_through_the_round_it_was_given_up_at():
    """Both pads meet the object 2 mm into the squeeze; its force rises 2 N per 0.1 mm, then from
    2.5 mm on 100 N per 0.1 mm (a contact that stiffens). A try that runs past the knee is given up
    at the drive round that overshoots the close window; its retry goes from where the jaws
    started towards the close window along the secant through that round (TARGET_LEVEL, kept
    between 0.1 and 0.8 of the round's travel), not half the increment, and the squeeze closes
    inside the window."""
    params = SimParams(close_rule="force", closing_speed=0.01, **FAST)

    def forces(closed):
        rise = 2e4 * min(max(closed - 0.002, 0.0), 0.0005) + 1e6 * max(closed - 0.0025, 0.0)
        return (rise, rise)

    backend = RoundedSqueeze(forces)
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, backend=lambda *args: backend)
    assert r.close_forces[0] == pytest.approx(params.close_force, rel=FORCE_TOLERANCE)
    retried = [(given_up, retry) for given_up, retry in zip(backend.tries, backend.tries[1:])
               if given_up[2] is not None and forces(given_up[0])[0] > 0.0]
    assert retried
    for (start, _, at), (again, target, _) in retried:
        before, end = forces(start)[0] / params.close_force, forces(at)[0] / params.close_force
        share = min(max((procedure.TARGET_LEVEL - before) / (end - before), 0.1), 0.8)
        assert again == start
        assert target - start == pytest.approx(share * (at - start), rel=1e-9)


def test_a_backing_plate_pressing_the_object_stalls_the_jaws_at_the_force_limit():
    """Pad 0 rests on the object with 0.9 N and pad 1 never reaches it, while from 3 mm of travel
    on the jaws' backing plates press the object, 10 N more per 0.1 mm (a mug's body against the
    plates while the pads reach for its handle). The jaws' force is what the gripper's force
    limit bounds: the squeeze stalls there, within FORCE_TOLERANCE below it, instead of closing
    on at the pads' small force until the end of the travel."""
    def forces(closed):
        return (0.9 if closed >= 0.002 else 0.0, 0.0)

    def jaw_forces(closed):
        plate = max(closed - 0.003, 0.0) * 1e5
        return (forces(closed)[0] + plate, plate)

    params = SimParams(close_rule="force", **FAST)
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params,
                               lambda *args: ScriptedSqueeze(forces, jaw_forces=jaw_forces))
    r = procedure.run()
    labelled(r, "stall")
    assert "backing plate" in r.reason and "the pads only 0.9 and 0.0 N" in r.reason
    jaw = max(jaw_forces(procedure.closed))
    assert (1.0 - FORCE_TOLERANCE) * procedure.max_grip_force <= jaw <= procedure.max_grip_force


def test_a_stall_past_the_force_limit_says_which_try_took_the_jaws_there():
    """From 3 mm of travel on the backing plates press the object, 37 N at first contact and 1 N
    more per picometre beyond (a rigid plate on a rigid body, the pads on nothing): the closing
    step that reaches it, its retries halved down to a fraction of a nanometre, passes the force
    limit at every try, and the last one stands. The stall's reason says so, with the force the
    step began from (the plates still off the object), instead of a force limit the jaws seem to
    have exceeded."""
    def forces(closed):
        return (0.0, 0.0)

    def jaw_forces(closed):
        plate = 0.0 if closed < 0.003 else 37.0 + (closed - 0.003) * 1e12
        return (plate, plate)

    params = SimParams(close_rule="force", **FAST)
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params,
                               lambda *args: ScriptedSqueeze(forces, jaw_forces=jaw_forces))
    r = procedure.run()
    labelled(r, "stall")
    jaw = max(jaw_forces(procedure.closed))
    assert jaw > procedure.max_grip_force  # the last try stood past the limit
    assert f"({jaw:.1f} N, max_grip_force = 100.0 N; the step's last try" in r.reason
    assert "took the jaws past it from 0.0 N" in r.reason and "stiffer than a closing step's refinement" in r.reason


class YieldingObject(ScriptedSqueeze):
    """From 2 mm of travel both pads press the object with 95 N, which relaxes back after every
    step (the object yields); a step's own travel raises it by up to 2 N over its first YIELD,
    by 10 N, past the force limit, beyond. The psi rule's energy stays at 1e-9 J."""

    YIELD = 5e-7

    def __init__(self):
        super().__init__(None)
        self.start = 0.0

    def save(self):
        return super().save(), self.start

    def restore(self, snapshot):
        super().restore(snapshot[0])
        self.start = snapshot[1]

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        self.time += self.dt
        travel = closed - max(self.start, 0.002)
        self.closed, self.lifted, self.start = closed, lifted, closed
        force = 0.0 if closed < 0.002 else 95.0 + (2.0 * travel / self.YIELD if travel < self.YIELD else 10.0)
        return StepReport(self.time, (force, force), pad_energies=(1e-9, 1e-9))


def test_stall_the_jaws_creep_below_the_force_limit_while_every_longer_step_passes_it():
    """A squeeze whose every step longer than half a micrometre passes the force limit, the
    shorter ones staying at 95-97 N: the jaws creep below the contact scale (MIN_CONTACT_STEP
    approach distances a step). After MAX_CREEP_STEPS such steps, one with a try past the limit
    ends the squeeze as a stall below the limit, instead of creeping on to the squeeze's
    duration bound."""
    params = SimParams(close_rule="psi", psi_th=1.0, **FAST)
    backend = YieldingObject()
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), params, seed=0, backend=lambda *args: backend)
    labelled(r, "stall")
    assert "every longer step passed it" in r.reason
    assert backend.closed - 0.002 < procedure.MAX_CREEP_STEPS * procedure.MIN_CONTACT_STEP * backend.approach_distance


@pytest.mark.parametrize("dropped, mode", [(True, "slip"), (False, "solver")])
def test_a_failed_step_during_the_lift_is_judged_from_the_object(dropped, mode):
    r = simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST), seed=0,
                       backend=lambda *args: ScriptedBackend(fail_at=3, dropped=dropped))
    assert np.isfinite(r.close_time)
    assert r.failure_mode == mode, r.reason
    assert "Newton did not converge" in r.reason
    if dropped:
        assert "left the pads during the lift" in r.reason


class CountingBackend(ScriptedBackend):
    """ScriptedBackend whose every step attempt runs `iterations` Newton iterations (counted in
    newton_iterations_run, reported by the steps taken) and records the phase the procedure
    `procedure` is in. Its pads' force rises 10 N per micrometre of travel: the squeeze's first
    steps on the object overshoot and are refined."""

    def __init__(self, iterations):
        super().__init__(fail_at=0, dropped=False)
        self.iterations, self.run, self.phases, self.procedure = iterations, 0, [], None

    @property
    def newton_iterations_run(self):
        return self.run

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        self.phases.append(self.procedure.phase)
        self.run += self.iterations
        report = super().step(closed, lifted, give_up, coarse_rounds)
        force = max(closed - 0.002, 0.0) * 1e7
        return dataclasses.replace(report, pad_forces=(force, force), newton_iterations=self.iterations)


AFTER_THE_HOLD = dict(shake_amplitude=0.002, critical_mass=True, max_mass=0.5)


def counted_trial(iterations, **changes):
    """A trial on a CountingBackend (shake and mass ramp on): (result, backend)."""
    backend = CountingBackend(iterations)
    params = SimParams(close_rule="force", **{**FAST, **AFTER_THE_HOLD, **changes})
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params, lambda *args: backend)
    backend.procedure = procedure
    return procedure.run(), backend


def test_solver_retried_step_attempts_count_against_the_newton_budget():
    """The scripted squeeze overshoots the close force and refines its steps, and the force grip
    retries its steps: the attempts run more Newton iterations than the steps taken report. A
    budget the taken steps fit in but the attempts do not ends the trial."""
    unbounded, backend = counted_trial(3, shake_amplitude=0.0, critical_mass=False)
    assert unbounded.success and unbounded.newton_iterations == 3 * unbounded.steps
    assert len(backend.phases) > unbounded.steps
    r, _ = counted_trial(3, shake_amplitude=0.0, critical_mass=False, newton_budget=unbounded.newton_iterations)
    labelled(r, "solver")
    assert f"past newton_budget = {unbounded.newton_iterations}" in r.reason


def test_solver_newton_attempts_that_run_no_iteration_still_count_one_each():
    r, backend = counted_trial(0, newton_budget=10)
    labelled(r, "solver")
    assert len(backend.phases) == 11 and "newton_budget = 10" in r.reason


class StepCountingBackend(CountingBackend):
    """A model that counts only the steps it takes (no newton_iterations_run), as MuJoCo."""

    @property
    def newton_iterations_run(self):
        return None


def test_a_model_without_newton_iterations_is_not_stopped_by_the_newton_budget():
    """MuJoCo's steps have no Newton iterations: its trials, many retried steps long under the
    force grip, are not failed by a budget of Newton iterations."""
    backend = StepCountingBackend(0)
    params = SimParams(close_rule="force", **{**FAST, "shake_amplitude": 0.0, "critical_mass": False,
                                               "newton_budget": 10})
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params, lambda *args: backend)
    backend.procedure = procedure
    r = procedure.run()
    assert r.success, r.reason
    assert len(backend.phases) > 10


@pytest.mark.parametrize("phase", ["settle", "squeeze", "lift", "hold", "shake", "critical_mass"])
def test_solver_every_phase_counts_against_the_newton_budget_and_is_named(phase):
    """A budget that runs out at the first step attempt of `phase` ends that phase: a solver
    failure naming the phase and the budget up to the hold; after it (the verdict stands) the
    shake's outcome or the mass ramp's reason."""
    _, backend = counted_trial(1)
    first = backend.phases.index(phase)
    r, ended = counted_trial(1, newton_budget=max(first, 1))
    assert ended.phases[max(first, 1)] == phase  # the attempt past the budget
    bound = f"past newton_budget = {max(first, 1)}"
    if phase == "shake":
        assert r.success and r.shake_outcome == "solver"
        assert r.shake_reason.startswith("shake: ") and bound in r.shake_reason
    elif phase == "critical_mass":
        assert r.success and math.isnan(r.critical_mass) and bound in r.critical_mass_reason
    else:
        labelled(r, "solver")
        assert r.reason.startswith(f"{phase}: ") and bound in r.reason
        assert len(ended.phases) == max(first, 1) + 1  # nothing after it


@pytest.mark.parametrize("duration", [0.5, 2.0, 4.0])
def test_close_duration_sets_the_closing_speed(duration):
    """Each backing covers half the widest opening (the YuMi's 50 mm) in close_duration, but
    never slower than 10 mm/s (the original's rule)."""
    params = SimParams(close_rule="force", close_duration=duration, **FAST)
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params,
                               lambda *args: ScriptedBackend(fail_at=0, dropped=False))
    assert procedure.run().success
    assert procedure.closing_speed == pytest.approx(max(0.01, 0.025 / duration))
