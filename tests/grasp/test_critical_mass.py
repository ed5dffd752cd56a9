"""PrendoSim's critical mass: a block held between two pads by a normal force F with friction mu
starts to slide when its weight reaches 2 mu F, so a slow mass ramp finds m_c = 2 mu F / g (plus
the overshoot the slip-speed threshold needs); the ramp's inf/NaN rules; and the same through a
grasp procedure on the cube."""

import math

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.engine.solver.settings import StepFailed
from ipcgrasp.grasp import procedure
from ipcgrasp.grasp.backend import BackendFailed, StepReport
from ipcgrasp.grasp.params import STATIC_SPEED_FACTOR
from ipcgrasp.grasp.procedure import FORCE_TOLERANCE, critical_mass_ramp

from ..physics.scenes import box_between_pads
from .test_procedure import top_down_grasp

G = 9.81
SLIP_SPEED = 0.025  # m/s, PrendoSim's threshold
BOX_MASS = 1.0  # kg, the mass the box is built with (the ramp rescales it)


def overshoot(limit: float, rate: float) -> float:
    """Mass (kg) the ramp adds after the friction limit `limit` (kg) before the block's speed
    reaches SLIP_SPEED: past the limit the net force is (m - limit) g = rate t g, so the block
    accelerates at about rate t g / limit and reaches v after t = sqrt(2 v limit / (rate g)),
    when the ramp has added rate t."""
    return math.sqrt(2 * SLIP_SPEED * limit * rate / G)


class HeldBox:
    """The box scene as the ramp sees a backend: the box's mass and centre, the pads' centre, and
    a step with the pads held where `drivers` put them."""

    def __init__(self, sim, drivers):
        self.sim, self.drivers, self.dt = sim, drivers, sim.settings.dt
        self.object_mass = sim.bodies[0].mass * 1.0
        self.static_speed = STATIC_SPEED_FACTOR * sim.settings.eps_v

    def set_object_mass(self, mass):
        self.sim.set_mass_scale("box", mass / BOX_MASS)
        self.object_mass = mass

    def object_centre(self):
        pose = self.sim.affine_pose("box")
        return pose[:3, :3] @ self.sim.bodies[0].center_of_mass + pose[:3, 3]

    def pads_centre(self):
        return np.mean([self.sim.vertices(p).mean(axis=0) for p in ("left", "right")], axis=0)

    def step(self):
        try:
            stats = self.sim.step(self.drivers)
        except StepFailed as exc:
            raise BackendFailed(exc.reason) from exc
        return StepReport(stats.time, tuple(float(np.linalg.norm(stats.contact_force[0, j])) for j in (1, 2)))


def squeezed_box(mu: float):
    """The physics tests' box between pads (E = 1e7 Pa) with gravity off: the simulation, the
    drivers that hold the pads, and the mean normal force of the pads on the box (N).

    The box starts 1 um below the pads' centre line. Centred, the scene is symmetric and the
    squeezed box's slight rotation takes its sense from rounding (a 1 nm shift of the whole
    scene flips it); hung under gravity, one sense lets the box sag (the pads' force eases a few
    percent) and the other wedges it (the force rises by about 30 %). The offset makes the
    geometry, not rounding, choose: the sag."""
    sim, drivers, forces = box_between_pads(mu, pad_E=1e7, contact_force_scale=2.0, mass=BOX_MASS,
                                            box_offset=(0.0, 0.0, -1e-6))
    return sim, drivers, 0.5 * sum(forces)


def hang(sim, drivers, mass):
    """Give the box `mass` (kg), turn gravity on and let it settle in the pads."""
    sim.set_mass_scale("box", mass / BOX_MASS)
    sim.set_gravity((0, 0, -G))
    for _ in range(10):
        sim.step(drivers)


@pytest.fixture(scope="module")
def box_03():
    sim, drivers, force = squeezed_box(0.3)
    return sim, drivers, force, sim.state.copy()


@pytest.mark.parametrize("mu", [0.3, 0.5])
def test_slow_ramp_finds_2_mu_F_over_g(mu, box_03):
    sim, drivers, force, _ = box_03 if mu == 0.3 else (*squeezed_box(mu), None)
    start = 0.9 * 2 * mu * force / G  # start just below the limit so a slow ramp stays short
    hang(sim, drivers, start)
    rate = 0.3  # kg/s: the slip-speed overshoot is then under 2 % of m_c
    box = HeldBox(sim, drivers)
    r = critical_mass_ramp(box, box.step, rate, SLIP_SPEED, 100.0, start_mass=start)
    assert math.isfinite(r.mass) and "slipped" in r.reason
    limit = 2 * mu * r.force / G  # the pads' normal force while still held (it shifts under load)
    assert abs(r.force - force) < 0.15 * force
    # What remains beyond the overshoot model: the ramp's step (rate dt = 3 g), the smoothed
    # friction's transition (eps_v) and the normal force changing during the slip step: 2 %.
    assert r.mass == pytest.approx(limit + overshoot(limit, rate), rel=0.02)
    assert r.mass == pytest.approx(limit, rel=0.04)


def test_no_slip_below_the_cap_gives_inf(box_03):
    sim, drivers, force, state = box_03
    sim.restore(state)
    limit = 2 * 0.3 * force / G
    hang(sim, drivers, 0.8 * limit)
    box = HeldBox(sim, drivers)
    r = critical_mass_ramp(box, box.step, 1.2, SLIP_SPEED, 0.9 * limit, start_mass=0.8 * limit)
    assert r.mass == math.inf
    assert "max_mass" in r.reason and r.force > 0.5 * force
    assert r.ramp_time == pytest.approx(math.ceil(0.1 * limit / 1.2 / sim.settings.dt) * sim.settings.dt)


def test_solver_failure_during_the_ramp_gives_nan_and_keeps_the_last_good_state(box_03):
    sim, drivers, force, state = box_03
    sim.restore(state)
    hang(sim, drivers, 0.5)
    calls = []
    box = HeldBox(sim, drivers)

    def failing_step():
        calls.append(sim.state.time)
        if len(calls) == 3:
            raise BackendFailed("injected")
        return box.step()

    r = critical_mass_ramp(box, failing_step, 1.2, SLIP_SPEED, 100.0, start_mass=0.5)
    assert math.isnan(r.mass)
    assert "solver failed" in r.reason and "injected" in r.reason
    assert r.force > 0.5 * force  # the normal force of the last step that held
    assert sim.state.time == pytest.approx(calls[-1])


@pytest.fixture(scope="module")
def cube():
    return GraspObject.from_file(resolve_data_dir() / "object_meshes" / "cube_3cm.obj", 0.003)


CENTRED = dict(noise_translation=0.0, noise_rotation=0.0, lift_height=0.005, hold_time=0.04)


def recorded_ramp(monkeypatch):
    """Patch the procedure's critical_mass_ramp so every ramp step is recorded: per step the
    object's centre speed relative to the pads (m/s, as the ramp measures it) and, per pad, the
    normal and friction force resultants on the object (N, from the engine's step statistics).
    Returns the list of records."""
    steps = []

    def ramp(backend, step, rate, slip_speed, max_mass, start_mass=None):
        sim = backend.sim
        o, pads = sim.index["object"], [sim.index[p] for p in ("pad0", "pad1")]

        def recording_step():
            before = backend.object_centre() - backend.pads_centre()
            report = step()
            after = backend.object_centre() - backend.pads_centre()
            stats = backend.stats
            steps.append({"speed": float(np.linalg.norm(after - before)) / backend.dt,
                          "normal": [stats.contact_force[o, p].copy() for p in pads],
                          "friction": [stats.friction_force[o, p].copy() for p in pads]})
            return report

        return critical_mass_ramp(backend, recording_step, rate, slip_speed, max_mass, start_mass)

    monkeypatch.setattr(procedure, "critical_mass_ramp", ramp)
    return steps


def test_under_the_force_grip_the_pads_keep_the_closing_force_until_their_friction_saturates(cube, monkeypatch):
    """The 3 cm cube grasped through its centre under the force grip (the default): through the
    mass ramp the jaws keep each pad's normal force within FORCE_TOLERANCE of the closing force F
    while the cube sticks, so nothing slips below 2 mu F / g; in the step it breaks loose each
    pad's friction is mu times its (lagged) normal force (Coulomb). The slip comes later than 2 mu F / g
    (about 14 %): the sheared pads' contact normals tilt as the cube creeps down tens of
    micrometres at below eps_v, so the normal forces carry part of the weight."""
    params = SimParams(critical_mass=True, grip="force", **CENTRED)
    ramp = recorded_ramp(monkeypatch)
    r = simulate_grasp(cube, np.eye(4), top_down_grasp(), params, seed=0)
    assert r.success, r.reason
    assert "slipped" in r.critical_mass_reason
    grip = np.mean(r.close_forces)
    onset = next(k for k, s in enumerate(ramp) if s["speed"] > 10 * params.eps_v)
    assert onset > 0
    for step in ramp[:onset]:
        normal = np.linalg.norm(step["normal"], axis=1)
        assert np.all(np.abs(normal - grip) <= FORCE_TOLERANCE * grip), (normal, grip)
    # friction is lagged on the last stuck step's normal force (as in the position grip's test)
    for friction, normal in zip(ramp[onset]["friction"], ramp[onset - 1]["normal"]):
        assert np.linalg.norm(friction) == pytest.approx(params.mu * np.linalg.norm(normal), rel=0.01)
    assert r.critical_mass >= 2 * params.mu * grip / G - params.mass_rate * params.dt


@pytest.mark.slow
def test_cube_grasp_critical_mass_matches_2_mu_F_over_g(cube, monkeypatch):
    """Through the grasp procedure under the position grip: the 3 cm cube grasped through its
    centre (no torque to resist) holds until its weight reaches the pads' friction 2 mu F, at the
    PrendoSim rate of 1.2 kg/s.

    F is the pads' normal force when the slip begins (the object's speed relative to the pads
    first exceeds 10 eps_v, so its friction is sliding), i.e. at the end of the last step it
    stuck, which the sliding friction of the onset step is lagged on. While it sticks the
    sheared silicone pads squeeze harder (about 27 -> 35 N, with eps_v = 1e-4 m/s); once it
    slides they relax (to about 29 N in that step), so the ramp's critical_mass_force, the normal
    force of the last step under the 2.5 cm/s detection speed, is already the relaxed force and
    2 mu critical_mass_force / g falls about 17 % short of the limit. The slip then runs away
    within a step or two (the friction drops with the normal force), so the detected mass is the
    limit plus at most the quasi-static overshoot and one ramp step."""
    params = SimParams(critical_mass=True, grip="position", **CENTRED)
    ramp = recorded_ramp(monkeypatch)
    r = simulate_grasp(cube, np.eye(4), top_down_grasp(), params, seed=0)
    assert r.success, r.reason
    assert "slipped" in r.critical_mass_reason
    onset = next(k for k, s in enumerate(ramp) if s["speed"] > 10 * params.eps_v)
    assert 0 < onset < len(ramp) - 1  # the ramp sees the slip start before it detects it
    stuck, sliding = ramp[onset - 1], ramp[onset]
    normal = [np.linalg.norm(f) for f in stuck["normal"]]
    # Coulomb in the onset step: each pad's friction saturates at mu times its lagged normal force
    for friction, lagged in zip(sliding["friction"], normal):
        assert np.linalg.norm(friction) == pytest.approx(params.mu * lagged, rel=0.01)
    limit = 2 * params.mu * np.mean(normal) / G
    assert limit - params.mass_rate * params.dt <= r.critical_mass
    assert r.critical_mass <= limit + overshoot(limit, params.mass_rate) + params.mass_rate * params.dt
    assert "critical_mass" in r.phase_wall_time
    # the ramp comes after the verdict and leaves it alone
    monkeypatch.undo()
    off = simulate_grasp(cube, np.eye(4), top_down_grasp(), SimParams(grip="position", **CENTRED), seed=0)
    assert off.success and math.isnan(off.critical_mass) and off.critical_mass_reason == ""
    assert "critical_mass" not in off.phase_wall_time
    assert r.steps > off.steps
    for name in ("s_cf", "s_cp", "s_cn", "close_time", "lift_height"):
        assert getattr(r, name) == getattr(off, name)


def test_failed_trial_has_no_critical_mass():
    obj = GraspObject.from_mesh(trimesh.creation.box(extents=(0.03, 0.02, 0.03)), mass=0.01, name="block")
    beside = top_down_grasp(0.03)  # the pads close next to the block
    r = simulate_grasp(obj, np.eye(4), beside, SimParams(critical_mass=True, **CENTRED), seed=0)
    assert not r.success and r.failure_mode == "miss"
    assert math.isnan(r.critical_mass) and "nothing to ramp" in r.critical_mass_reason
    assert "critical_mass" not in r.phase_wall_time
