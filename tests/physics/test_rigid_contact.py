"""A rigid (affine) box on the ground: resting reaction m g, sliding iff tan(theta) > mu, pushed by a
kinematic plate at the plate's speed against ground friction mu m g."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from ipcgrasp.engine import collisions as col
from ipcgrasp.engine.bodies import Ground
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings

from .scenes import affine_box, assert_intersection_free, kinematic_box, pose

G = 9.81


def box_on_ground(mass=0.1, gap=1e-3, mu=0.5, gravity=(0, 0, -G), dt=0.01, eps_v=1e-4):
    box = affine_box("box", (0.03, 0.03, 0.03), mass)
    settings = SolverSettings(dt=dt, gravity=gravity, dhat=1e-4, eps_v=eps_v, newton_tolerance=1e-5)
    return Simulation([box], poses={"box": pose((0, 0, 0.015 + gap))}, ground=Ground(mu=mu), settings=settings)


def test_dropped_box_rests_above_ground_with_reaction_mg():
    sim = box_on_ground(mass=0.1)
    for _ in range(60):
        stats = sim.step()
        assert_intersection_free(sim)
    lowest = sim.vertices("box")[:, 2].min()
    assert 0.0 < lowest < sim.dhat
    assert np.linalg.norm(sim.state.affine_qdot[0][:3]) < 1e-3
    reaction = stats.contact_force[0, 1]  # on the box from the ground
    assert reaction[2] == pytest.approx(0.1 * G, rel=0.01)
    assert abs(reaction[0]) < 1e-6 and abs(reaction[1]) < 1e-6


def slide_distance(mu, theta, duration=0.3):
    g = (G * math.sin(theta), 0.0, -G * math.cos(theta))
    sim = box_on_ground(mass=0.1, gap=2e-5, mu=mu)
    sim.set_gravity((0, 0, -G))
    for _ in range(5):  # settle onto the ground first
        sim.step()
    start = sim.affine_pose("box")[:3, 3].copy()
    sim.set_gravity(g)
    for _ in range(int(round(duration / sim.settings.dt))):
        sim.step()
        assert_intersection_free(sim)
    return sim.affine_pose("box")[0, 3] - start[0]


@pytest.mark.parametrize("mu", [0.2, 0.5])
def test_tilted_gravity_slides_iff_tan_theta_exceeds_mu(mu):
    margin = 0.1
    stays = slide_distance(mu, math.atan(mu - margin))
    slides = slide_distance(mu, math.atan(mu + margin), duration=0.3)
    assert abs(stays) < 5e-5
    theta = math.atan(mu + margin)
    expected = 0.5 * G * (math.sin(theta) - mu * math.cos(theta)) * 0.3 ** 2
    assert slides == pytest.approx(expected, rel=0.15)


def test_friction_set_during_a_run_decides_whether_the_box_slides():
    """A box resting on the ground under gravity tilted to tan(theta) = 0.5 stays at mu 0.8; set
    to mu 0.3 it slides with a = g (sin(theta) - 0.3 cos(theta))."""
    theta = math.atan(0.5)
    sim = box_on_ground(mass=0.1, gap=2e-5, mu=0.8)
    for _ in range(5):
        sim.step()
    sim.set_gravity((G * math.sin(theta), 0.0, -G * math.cos(theta)))
    start = sim.affine_pose("box")[0, 3]
    for _ in range(10):
        sim.step()
    assert abs(sim.affine_pose("box")[0, 3] - start) < 5e-5
    sim.set_friction({("box", "ground"): 0.3})
    sim.step()  # friction is lagged at the step's start: the new coefficient acts from here on
    start = sim.affine_pose("box")[0, 3]
    for _ in range(30):
        sim.step()
        assert_intersection_free(sim)
    expected = 0.5 * G * (math.sin(theta) - 0.3 * math.cos(theta)) * 0.3 ** 2
    assert sim.affine_pose("box")[0, 3] - start == pytest.approx(expected, rel=0.15)
    with pytest.raises(ValueError, match="finite and >= 0"):
        sim.set_friction({("box", "ground"): -0.1})


def test_friction_set_before_the_first_step_is_the_friction_built_in():
    """Setting the coefficients before any step gives, to the bit, the run of a scene built with
    them."""
    g = (G * math.sin(0.4), 0.0, -G * math.cos(0.4))
    built, changed = box_on_ground(mass=0.1, gap=2e-5, mu=0.2, gravity=g), box_on_ground(mass=0.1, gap=2e-5, mu=0.7,
                                                                                          gravity=g)
    changed.set_friction({("box", "ground"): 0.2})
    for _ in range(20):
        built.step(), changed.step()
    np.testing.assert_array_equal(built.state.affine_q[0], changed.state.affine_q[0])
    assert built.affine_pose("box")[0, 3] > 1e-3  # it slid: friction mattered


def test_contact_force_scale_is_carried_at_a_tenth_of_dhat():
    """With contact_force_scale = m g, a box standing on one vertex-plane contact per corner
    (4 corners share the weight) rests with its corners near dhat/10 or farther."""
    box = affine_box("box", (0.03, 0.03, 0.03), 0.1)
    settings = SolverSettings(dt=0.01, dhat=1e-4, eps_v=1e-3, newton_tolerance=1e-5, contact_force_scale=0.1 * G)
    sim = Simulation([box], poses={"box": pose((0, 0, 0.015 + 2e-5))}, ground=Ground(mu=0.5), settings=settings)
    for _ in range(30):
        stats = sim.step()
    lowest = sim.vertices("box")[:, 2].min()
    assert 0.1 * sim.dhat < lowest < sim.dhat
    assert stats.contact_force[0, 1][2] == pytest.approx(0.1 * G, rel=0.01)


def test_mass_scale_changes_the_ground_reaction_and_rejects_bad_input():
    sim = box_on_ground(mass=0.1)
    for _ in range(40):
        sim.step()
    sim.set_mass_scale("box", 3.0)
    for _ in range(40):
        stats = sim.step()
        assert_intersection_free(sim)
    assert stats.contact_force[0, 1][2] == pytest.approx(0.3 * G, rel=0.01)
    with pytest.raises(ValueError, match="positive"):
        sim.set_mass_scale("box", 0.0)


@pytest.mark.parametrize("fallback", [None, 1e3])
def test_newton_fallback_accepts_only_within_its_tolerance(fallback):
    """A box landing on the ground with a 1-iteration cap: without the fallback the landing step
    fails; with a loose fallback it is accepted (flagged not converged) at an intersection-free
    iterate."""
    from ipcgrasp.engine.solver.settings import StepFailed

    sim = box_on_ground(mass=0.1, gap=1e-3)
    # the solver's parts share its one SolverSettings: change it in place
    sim.settings.max_newton_iterations, sim.settings.newton_fallback_tolerance = 1, fallback
    if fallback is None:
        with pytest.raises(StepFailed, match="did not converge"):
            for _ in range(40):
                sim.step()
        assert_intersection_free(sim)
        return
    flags = []
    for _ in range(40):
        flags.append(sim.step().newton_converged)
        assert_intersection_free(sim)
    assert not all(flags)


def test_newton_fallback_tolerance_is_validated():
    with pytest.raises(ValueError, match="newton_fallback_tolerance"):
        SolverSettings(newton_fallback_tolerance=0.0)


def largest_momentum_residual(newton_force_tolerance, mass=0.003, dt=0.01, steps=40):
    """A 3 g box dropped 0.2 mm onto the ground with a 1 um contact layer and a loose Newton step
    tolerance: the largest |m (v1 - v0) / dt - (contact + friction + gravity)| (N) over its steps,
    implicit Euler's momentum balance measured from the reported forces and velocities."""
    box = affine_box("box", (0.03, 0.03, 0.03), mass)
    settings = SolverSettings(dt=dt, dhat=1e-6, eps_v=1e-4, newton_tolerance=1e-4,
                              newton_force_tolerance=newton_force_tolerance)
    sim = Simulation([box], poses={"box": pose((0, 0, 0.015 + 2e-4))}, ground=Ground(mu=0.5), settings=settings)
    worst = 0.0
    for _ in range(steps):
        v0 = sim.state.affine_qdot[0][:3].copy()
        stats = sim.step()
        assert_intersection_free(sim)
        acceleration = (sim.state.affine_qdot[0][:3] - v0) / dt
        force = stats.contact_force[0, 1] + stats.friction_force[0, 1] + mass * np.array(settings.gravity)
        worst = max(worst, float(np.linalg.norm(mass * acceleration - force)))
    return worst


def test_newton_force_tolerance_bounds_the_momentum_residual():
    """A small Newton step is no balanced step when the contact layer is thin and stiff: the step
    test alone accepts steps that leave more than half the box's weight unbalanced; with
    newton_force_tolerance at 1 % of the weight, every step balances to within it."""
    weight = 0.003 * G
    assert largest_momentum_residual(None) > 0.5 * weight
    assert largest_momentum_residual(0.01 * weight) <= 0.0105 * weight


def test_newton_force_tolerance_is_validated():
    with pytest.raises(ValueError, match="newton_force_tolerance"):
        SolverSettings(newton_force_tolerance=-1.0)


def test_a_kinematic_plate_pushing_a_box_along_the_ground_carries_it_at_its_speed():
    """A kinematic plate (a gripper's backing plate) driven at 12.5 mm/s into a 50 g box on the
    ground (mu 0.5) at the study's solver settings (dhat 10 um): each step the drivers reach
    their targets and the box moves with the plate, whose push balances ground friction,
    mu m g = 0.245 N. The drive round carries the box through the plate's contact coupling
    (DriveRound.contact_coupling); without it the plate crept on by a fraction of its contact
    distance per round and fell 0.2 mm further behind its target every step."""
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    plate = kinematic_box("plate", (0.004, 0.03, 0.016))
    settings = SolverSettings()
    start = -0.0125 - 5e-6
    sim = Simulation([box, plate], poses={"box": pose((0, 0, 0.01 + 2e-6)), "plate": pose((start, 0, 0.0105))},
                     ground=Ground(mu=0.5), friction={("box", "plate"): 0.5}, settings=settings)
    speed, stats, box_x = 0.0125, [], []
    for k in range(1, 16):
        stats.append(sim.step({"plate": pose((start + speed * settings.dt * k, 0, 0.0105))}))
        assert_intersection_free(sim)
        box_x.append(sim.affine_pose("box")[0, 3])
    assert all(s.driver_fraction == 1.0 and s.driver_lag == 0.0 for s in stats)
    velocity = np.diff(box_x) / settings.dt
    assert np.allclose(velocity[2:], speed, rtol=1e-3, atol=0)
    push = np.linalg.norm(stats[-1].contact_force[0, 1])
    assert 0.5 * 0.05 * G <= push <= 0.5 * 0.05 * G * 1.02
    assert sum(s.newton_iterations for s in stats) < 60  # 36 a step, 540 in all, without the coupling


def test_a_kinematic_bodys_contact_coupling_is_its_barrier_hessian_applied_to_its_motion():
    """DriveRound.contact_coupling (a central difference of the contact gradient) against the
    barrier's x-space Hessian, which tests/engine/test_collisions.py checks against ipctk:
    H_zk dk = P^T kappa H_xx dk, dk the plate's motion, for a plate 4 um from a box's face; to 1e-4
    of its largest entry (the difference's truncation error, 2e-5 here: a predictor needs no more)."""
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    plate = kinematic_box("plate", (0.004, 0.03, 0.016))
    sim = Simulation([box, plate], poses={"box": pose((0, 0, 0.02)), "plate": pose((-0.012 - 4e-6, 0.001, 0.02))},
                     settings=SolverSettings(gravity=(0.0, 0.0, 0.0)))
    sim.step()  # sets kappa
    x = sim.collision_positions()
    coll = sim.potential.collisions(x)
    assert len(coll) > 0
    motion = np.array([2e-4, 5e-5, -3e-5])
    targets_kin = {0: sim.state.kinematic_x[0] + motion}
    coupling = sim.drive_round.contact_coupling(sim.state, targets_kin, None, x, x, coll)
    rows, cols, vals = col.barrier_potential_hessian(coll, sim.mesh, x, sim.dhat, project_to_psd=False)
    H = sp.coo_matrix((vals, (rows, cols)), shape=(x.size, x.size)).tocsr()
    dk = np.zeros_like(x)
    for k, lo, hi in sim.contact_map.driven_kinematic:
        dk[lo:hi] = motion
    expected = sim.contact_map.PT @ (sim.barrier_stiffness * (H @ dk.ravel()))
    assert np.abs(expected).max() > 0.0
    np.testing.assert_allclose(coupling, expected, rtol=0, atol=1e-4 * np.abs(expected).max())
    # a plate standing still pulls nothing
    assert sim.drive_round.contact_coupling(sim.state, {0: sim.state.kinematic_x[0]}, None, x, x, coll) == 0.0
