"""The force grip against closed forms, through the public API: two pads squeezing a box with
force F carry it by friction iff 2 mu F >= m g, and the pads' normal force stays at the force the
close rule fired at through the lift and the hold; under the position grip the same force is not
held (docs/grasp_procedure.md, "Grip")."""

import warnings
from collections import Counter

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.backend import StepReport
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.pose import PoseRoundingWarning
from ipcgrasp.grasp.procedure import FORCE_TOLERANCE, GraspProcedure

from .test_failure_labels import ScriptedBackend
from .test_procedure import FAST, block, top_down_grasp

G = 9.81  # m/s^2, the engine's gravity
CLOSE_FORCE = 20.0  # N
SETTINGS = dict(E=1e8, close_rule="force", close_force=CLOSE_FORCE, noise_translation=0.0, noise_rotation=0.0,
                lift_height=0.005, hold_time=0.1)


def box(edge: float, mass: float) -> GraspObject:
    """A cube of `edge` m centred at the origin (any density: the masses here are the point)."""
    return GraspObject.from_mesh(trimesh.creation.box(extents=[edge] * 3), mass=mass, name="box",
                                 density_range=(0.0, float("inf")))


def grip_trial(edge: float, mass: float, mu: float, grip: str = "force"):
    """A top-down grasp at the box's mid-height, recording the trajectory."""
    params = SimParams(mu=mu, grip=grip, **SETTINGS)
    return simulate_grasp(box(edge, mass), np.eye(4), Gripper.yumi().top_down_grasp(), params, seed=0,
                          record=("trajectory",))


def held_forces(result) -> np.ndarray:
    """The pads' mean normal force (N) in every lift and hold step."""
    return np.array([np.mean(s.pad_normal_force) for s in result.trajectory if s.phase in ("lift", "hold")])


@pytest.mark.parametrize("edge", [0.03, 0.05])
@pytest.mark.parametrize("mu", [0.15, 0.3, 0.6])
def test_two_pads_hold_a_box_iff_their_friction_carries_its_weight(mu, edge):
    """m* = 2 mu F / g with F the closing force: 0.5 m* and 0.9 m* are held, the pads' force
    within FORCE_TOLERANCE of F through lift and hold; 1.1 m* slips."""
    limit = 2 * mu * CLOSE_FORCE / G  # kg
    for ratio, held in ((0.5, True), (0.9, True), (1.1, False)):
        result = grip_trial(edge, ratio * limit, mu)
        assert CLOSE_FORCE <= min(result.close_forces) <= (1 + FORCE_TOLERANCE) * CLOSE_FORCE, result
        assert result.success is held, (ratio, result.reason)
        if held:
            forces = held_forces(result)
            grip = np.mean(result.close_forces)
            assert np.all(np.abs(forces - grip) <= FORCE_TOLERANCE * grip), (forces.min(), forces.max(), grip)
        else:
            assert result.failure_mode == "slip", result.reason


def test_the_position_grip_lets_the_pads_press_harder_than_the_closing_force():
    """The paper's position grip: with the jaws fixed after the close, the friction that lifts a
    heavy box shears the pads and their normal force rises well past the closing force; the force
    grip keeps it there (the reason force is the default)."""
    mass = 0.8 * 2 * 0.3 * CLOSE_FORCE / G
    position, force = grip_trial(0.04, mass, 0.3, grip="position"), grip_trial(0.04, mass, 0.3)
    assert position.success and force.success
    assert held_forces(position).max() > 1.1 * np.mean(position.close_forces)
    assert held_forces(force).max() <= (1 + FORCE_TOLERANCE) * np.mean(force.close_forces)


@pytest.mark.parametrize("dhat", [None, 2e-6])
def test_the_grip_force_does_not_depend_on_the_contact_layer(dhat):
    """The barrier's activation distance sets how stiff the contact is at the pads' surface (at 2
    um the force rises from 0 to F within about a micrometre of jaw travel, at SimParams' default
    over tens of micrometres); the force grip holds F through lift and hold all the same, and a box
    friction can just carry (0.9 m*) is held."""
    mu, edge = 0.3, 0.04
    params = SimParams(mu=mu, dhat=dhat, **SETTINGS)
    result = simulate_grasp(box(edge, 0.9 * 2 * mu * CLOSE_FORCE / G), np.eye(4), Gripper.yumi().top_down_grasp(),
                            params, seed=0, record=("trajectory",))
    assert result.success, result.reason
    assert CLOSE_FORCE <= min(result.close_forces) <= (1 + FORCE_TOLERANCE) * CLOSE_FORCE
    forces, grip = held_forces(result), np.mean(result.close_forces)
    assert np.all(np.abs(forces - grip) <= FORCE_TOLERANCE * grip), (forces.min(), forces.max(), grip)


def test_a_stiff_contact_layer_does_not_shake_a_light_cube_out_of_the_pads():
    """The bundled 3 cm cube (3 g, mu 0.4), physical grasp 5, closed by the psi rule at about 26 N
    with a 2 um contact layer: 2 mu F is 700 x its weight, so it is held, the pads' force within
    FORCE_TOLERANCE of the closing force through lift and hold. Where the force on the jaws
    rises from 0 to F within a micrometre of travel, a secant through a try that lost the
    object, or through the closing steps' force history (which need not rise where the object
    turned), sends the jaws far off; the grip keeps the contact's own slope and the closest try."""
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PoseRoundingWarning)
        grasps = load_physical_grasps(data, "cube_3cm")
    params = SimParams(E=1e8, mu=0.4, close_rule="psi", dhat=2e-6, noise_translation=0.0, noise_rotation=0.0)
    result = simulate_grasp(GraspObject.from_file(mesh_path, mass, "cube_3cm"), grasps.object_poses[5],
                            grasps.grasp_poses[5], params, seed=0, record=("trajectory",))
    assert result.success, result.reason
    forces, grip = held_forces(result), np.mean(result.close_forces)
    assert np.all(np.abs(forces - grip) <= FORCE_TOLERANCE * grip), (forces.min(), forces.max(), grip)


class SlidingOut(ScriptedBackend):
    """ScriptedBackend (both pads meet the object 2 mm into the squeeze, 10 N more per 0.1 mm)
    whose object, once lifted, slides out between the pads: their force stays 5 N wherever the
    jaws are. Counts the step attempts per lift height."""

    def __init__(self):
        super().__init__(fail_at=0, dropped=False)
        self.tries = Counter()

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        report = super().step(closed, lifted, give_up, coarse_rounds)
        if lifted == 0.0:
            return report
        self.tries[lifted] += 1
        return StepReport(report.time, (5.0, 5.0))


def test_the_force_grip_follows_an_object_sliding_out_at_the_closing_speed_in_two_tries():
    """The pads' force stays a quarter of the grip force however far the jaws close: once a
    step's guess lies beyond the jaws' reach, the reach itself is tried and stands, and the next
    steps start there (not every try of MAX_GRIP_TRIES bisecting towards it, step after step)."""
    backend = SlidingOut()
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST),
                               lambda *args: backend)
    procedure.run()
    reach = procedure.closing_speed * backend.dt
    steps = [backend.tries[height] for height in sorted(backend.tries)]
    assert len(steps) >= 5 and steps[0] <= 3 and max(steps[1:]) <= 2
    assert sum(steps) <= len(steps) + 3
    assert procedure._grip_drift == pytest.approx(reach)


class StuckJaws(ScriptedBackend):
    """ScriptedBackend whose jaws cannot be lifted (`stuck`): each lift step leaves them as far
    short of where they were sent as they were sent, and the object stays on the ground."""

    def __init__(self, stuck):
        super().__init__(fail_at=0, dropped=False)
        self.stuck = stuck

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        report = super().step(closed, lifted, give_up, coarse_rounds)
        return StepReport(report.time, report.pad_forces, jaw_lag=lifted if self.stuck else 0.0)

    def object_vertices(self):
        return np.array([[0.0, 0.0, 0.001]])


@pytest.mark.parametrize("stuck", [True, False])
def test_a_slip_names_jaws_the_model_left_short_of_where_they_were_sent(stuck):
    """The grip's slide is measured from where the jaws were sent. Jaws the model did not lift
    leave the object where it was, a slide as long as the lift, and the reason says how far
    short they ended; jaws that got there leave no such words."""
    backend = StuckJaws(stuck)
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), SimParams(close_rule="force", **FAST),
                               lambda *args: backend)
    result = procedure.run()
    assert result.failure_mode == "slip" and result.slip_kind == "slid", result.reason
    assert result.grip_slide == pytest.approx(procedure.lifted, rel=1e-6)
    assert ("short of where they were sent" in result.reason) == stuck, result.reason
    if stuck:
        assert f"ended {procedure.lifted * 1e3:.1f} mm short" in result.reason


class Relaxing(ScriptedBackend):
    """ScriptedBackend (both pads meet the object 2 mm into the squeeze, 10 N more per 0.1 mm)
    whose pads' force, once the lift starts, falls by `relax` N every step at fixed jaws (the
    object settling into the pads at a steady rate). Counts the step attempts per step."""

    def __init__(self, relax):
        super().__init__(fail_at=0, dropped=False)
        self.relax, self.start, self.tries = relax, None, Counter()

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        report = super().step(closed, lifted, give_up, coarse_rounds)
        if lifted == 0.0:
            return report
        if self.start is None:
            self.start = self.time - self.dt
        steps = round((self.time - self.start) / self.dt)
        self.tries[steps] += 1
        force = report.pad_forces[0] - self.relax * steps
        return StepReport(report.time, (force, force))


def test_the_force_grip_follows_a_steadily_relaxing_force_at_one_try_a_step():
    """The pads' force falls by 0.6 x the grip's window every step the jaws stand still. The
    first try of a step moves the jaws as the last step did, less what the last two steps'
    force errors say that motion will miss: after the first steps, every step's first try lands
    inside the window. Moving the jaws as the last step did alone would carry each retry's
    correction into the next step and overshoot by it, a retry every other step."""
    params = SimParams(close_rule="force", **FAST)
    window = 0.5 * FORCE_TOLERANCE * params.close_force
    backend = Relaxing(0.6 * window)
    procedure = GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params, lambda *args: backend)
    result = procedure.run()
    assert result.success, result.reason
    tries = [backend.tries[step] for step in sorted(backend.tries)]
    assert len(tries) >= 8 and all(t == 1 for t in tries[2:]), tries


class Wedged(ScriptedBackend):
    """ScriptedBackend (both pads meet the object 2 mm into the squeeze, 10 N more per 0.1 mm)
    whose first lift step wedges the object between the pads: its force is 190 N at the jaws'
    close position and falls as they open, 1 N per micrometre, to nothing 190 um out, the
    curve bending within 2 um there (a softplus). Records the pads' force of every try per lift
    height."""

    def __init__(self):
        super().__init__(fail_at=0, dropped=False)
        self.at_lift, self.tries = None, {}

    def step(self, closed, lifted, give_up=None, coarse_rounds=False):
        report = super().step(closed, lifted, give_up, coarse_rounds)
        if lifted == 0.0:
            return report
        if self.at_lift is None:
            self.at_lift = closed
        force = 2.0 * float(np.logaddexp(0.0, (closed - self.at_lift + 190e-6) / 2e-6))
        self.tries.setdefault(lifted, []).append(force)
        return StepReport(report.time, (force, force))


def test_the_force_grip_finds_its_force_on_a_curve_bending_sharply_at_contact():
    """The first lift step's force jumps tenfold at the close position, and where the jaws open
    far enough the pads let go: the tries bracket the grip force with every try but the first
    below it. Their secant then keeps landing on the side where the force vanishes; with the far
    end's weight halved for each such try (Illinois) the step ends within the grip's window."""
    params = SimParams(close_rule="force", **FAST)
    backend = Wedged()
    GraspProcedure(block(0.01), np.eye(4), top_down_grasp(), params, lambda *args: backend).run()
    first = backend.tries[min(backend.tries)]
    assert first[0] > 9 * params.close_force and min(first) < 0.05 * params.close_force  # wedged, then let go
    assert abs(first[-1] - params.close_force) <= 0.5 * FORCE_TOLERANCE * params.close_force, first
