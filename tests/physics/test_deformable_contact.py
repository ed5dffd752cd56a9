"""Deformable bodies in contact: uniaxial Neo-Hookean compression, and a box held by two pads."""

import collections

import numpy as np
import pytest

from ipcgrasp.engine.bodies import Ground
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import (
    COARSE_ROUND_TOLERANCE,
    SolverSettings,
    StepFailed,
)

from .scenes import assert_intersection_free, box_between_pads, deformable_block, pose


def test_uniaxial_compression_matches_neo_hookean_response():
    """A block on frictionless ground, its top face driven down. With nu = 0 the glued top face
    does not constrain lateral motion, so the stress is uniaxial: the first Piola stress is
    P = mu (s - 1/s) = E/2 (s - 1/s) for the stretch s, and the ground reaction is -P A."""
    E, L = 1e5, 0.01
    block = deformable_block("block", (L, L, L), (2, 2, 2), E=E, nu=0.0, prescribed_side="+z")
    # The 0.1 N reaction spreads over the 9 bottom vertices; contact_force_scale keeps their gap
    # resolvable (about dhat / 10) so the Newton tolerance bounds the force error.
    settings = SolverSettings(dt=0.01, gravity=(0, 0, 0), dhat=1e-5, eps_v=1e-3, newton_tolerance=1e-6,
                              contact_force_scale=0.1 / 9)
    z0 = L / 2 + 5e-6
    sim = Simulation([block], poses={"block": pose((0, 0, z0))}, ground=Ground(mu=0.0), settings=settings)
    travel = 5e-6 + 0.01 * L
    for k in range(40):
        stats = sim.step({"block": pose((0, 0, z0 - travel * min(1.0, (k + 1) / 20)))})
        assert_intersection_free(sim)
    x = sim.vertices("block")
    stretch = (x[:, 2].max() - x[:, 2].min()) / L
    assert 0.985 < stretch < 0.995
    reaction = stats.contact_force[0, 1][2]
    assert reaction == pytest.approx(-E / 2 * (stretch - 1 / stretch) * L * L, rel=0.03)
    assert reaction == pytest.approx(E * (1 - stretch) * L * L, rel=0.03)  # small-strain Young's modulus


PAD_E = 1e7  # stiff enough that loading the box barely changes the pads' normal force


def grip_box(mu, ratio):
    """Squeeze a box between two pads without gravity, then turn on gravity g' such that
    2 mu F / (m g') = ratio. Returns the box's vertical displacement after 0.3 s (m) and its
    mean vertical speed over the last 0.1 s (m/s)."""
    m = 1.0
    # About 80 N of squeeze over some tens of contacts: contact_force_scale keeps their gaps resolvable.
    sim, drivers, (f_left, f_right) = box_between_pads(mu, PAD_E, contact_force_scale=5.0, mass=m,
                                                       on_step=assert_intersection_free)
    assert f_left == pytest.approx(f_right, rel=0.02)
    F = 0.5 * (f_left + f_right)
    sim.set_gravity((0, 0, -2 * mu * F / (m * ratio)))
    heights = [sim.affine_pose("box")[2, 3]]
    for _ in range(30):
        sim.step(drivers)
        assert_intersection_free(sim)
        heights.append(sim.affine_pose("box")[2, 3])
    return heights[-1] - heights[0], (heights[-1] - heights[-11]) / (10 * sim.settings.dt), F


@pytest.mark.parametrize("mu", [0.3, 0.6])
def test_box_between_pads_holds_iff_2_mu_F_exceeds_mg(mu):
    eps_v = 1e-4
    sag, speed, F = grip_box(mu, ratio=1.2)
    # Held: the box sags by the pads' elastic shear under half its weight each (shear stiffness
    # G A / t of a 16 x 16 x 4 mm pad, nu = 0.45), then stops; smoothed static friction lets it
    # creep at most at eps_v.
    shear_stiffness = PAD_E / (2 * 1.45) * 0.016 ** 2 / 0.004
    weight = 2 * mu * F / 1.2
    assert -3 * (weight / 2) / shear_stiffness < sag < 0 and abs(speed) < eps_v
    drop, speed, _ = grip_box(mu, ratio=0.8)
    assert drop < -5e-3 and speed < -10 * eps_v


def test_a_driven_pad_pushing_a_free_box_follows_its_trajectory():
    """A pad glued to a driven back face pushes a free box (no gravity, no friction) at 12.5 mm/s:
    after every step the driven face is exactly where it was sent (no part of its motion is
    dropped, however close the contact gets), the configuration is intersection-free, and the
    box is driven ahead of the pad: it ends at least as fast as the pad and, the push being
    partly elastic (the squeezed pad springs back), at most twice as fast (a perfectly elastic
    bounce off a wall moving at v)."""

    from .scenes import affine_box

    box = affine_box("box", (0.02, 0.02, 0.02), 0.003)
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (2, 3, 3), E=1e8, prescribed_side="-x")
    start = -(0.01 + 2e-4 + 0.002)  # the pad's front face 0.2 mm from the box
    settings = SolverSettings(dt=0.02, gravity=(0, 0, 0), dhat=None, eps_v=1e-4, newton_tolerance=1e-5)
    sim = Simulation([box, pad], poses={"pad": pose((start, 0, 0))}, settings=settings)
    speed, box_x = 0.0125, []
    for k in range(1, 31):
        stats = sim.step({"pad": pose((start + speed * settings.dt * k, 0, 0))})
        assert stats.driver_fraction == 1.0 and stats.driver_lag == 0.0
        assert_intersection_free(sim)
        box_x.append(sim.affine_pose("box")[0, 3])
    velocity = np.diff(box_x) / settings.dt
    assert np.all(velocity[-10:] >= speed * (1 - 1e-3)) and np.all(velocity[-10:] <= 2 * speed)
    assert box_x[-1] - box_x[0] >= speed * settings.dt * 29 - 2e-4  # kept ahead of the pad all along


def _push_box_along_the_ground(steps=30, warm_start=True):
    """A pad glued to a driven back face pushes a 50 g box across the ground (mu 0.3) at
    12.5 mm/s from 0.2 mm away (warm_start: SolverSettings.warm_start). Returns the simulation,
    the per-step stats, the box's x after every step and the number of drive rounds
    (DriveRound.rounds) per step."""

    from .scenes import affine_box

    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (2, 3, 3), E=1e6, prescribed_side="-x")
    start = -(0.01 + 2e-4 + 0.002)
    settings = SolverSettings(dt=0.02, dhat=1e-4, eps_v=1e-4, newton_tolerance=1e-5, warm_start=warm_start)
    sim = Simulation([box, pad], poses={"box": pose((0, 0, 0.01 + 5e-5)), "pad": pose((start, 0, 0.011))},
                     ground=Ground(mu=0.3), friction={("box", "pad"): 0.5}, settings=settings)
    speed, stats, box_x, rounds = 0.0125, [], [], []
    for k in range(1, steps + 1):
        before = sim.drive_round.rounds
        stats.append(sim.step({"pad": pose((start + speed * settings.dt * k, 0, 0.011))}))
        rounds.append(sim.drive_round.rounds - before)
        assert_intersection_free(sim)
        box_x.append(sim.affine_pose("box")[0, 3])
    return sim, stats, np.array(box_x), rounds


def test_a_pad_pushing_a_box_along_the_ground_settles_each_step_in_one_newton_iteration():
    """Once the box moves with the pad, each step starts from the driven face at its target, the
    pad moved with it and the box carried on at its velocity (solver.warm_start): no drive round, one
    Newton iteration (the drive-and-settle continuation took 4-8 here), the pad exactly at its
    target and the box at the pad's speed; the pad's push balances ground friction
    (0.3 x 0.05 kg x g = 0.147 N) to within the smoothing."""

    sim, stats, box_x, rounds = _push_box_along_the_ground()
    assert all(s.driver_fraction == 1.0 and s.driver_lag == 0.0 for s in stats)
    assert sum(rounds[3:]) == 0 and all(s.newton_iterations == 1 for s in stats[3:])
    assert sum(rounds[:3]) > 0  # the first contact is driven: the warm start would cross it
    velocity = np.diff(box_x) / sim.settings.dt
    assert np.allclose(velocity[3:], 0.0125, rtol=1e-3, atol=0)
    push = np.linalg.norm(stats[-1].contact_force[0, 1])
    assert 0.147 <= push <= 0.147 * 1.02


def test_the_warm_start_lands_where_the_drive_and_settle_continuation_does():
    """Both start the same Newton solve of the same incremental potential, from different
    points: after 30 steps the box is where the continuation alone puts it to within the Newton
    tolerance, 2e-7 m per step, and pushed with the same force to 2e-3 N: the contact sits about
    1.8e-5 m from the box, where the barrier's force (0.155 N) changes by about F / d = 8.6e3 N/m,
    1.7e-3 N over the tolerance."""
    sim, stats, box_x, _ = _push_box_along_the_ground()
    sim_c, stats_c, box_x_c, rounds_c = _push_box_along_the_ground(warm_start=False)
    tolerance = sim.settings.newton_tolerance * sim.settings.dt
    assert all(r > 0 for r in rounds_c)
    assert np.abs(box_x - box_x_c).max() < tolerance
    assert np.abs(sim.vertices("pad") - sim_c.vertices("pad")).max() < tolerance
    forces = [np.linalg.norm(s.contact_force[0, 1]) for s in stats]
    forces_c = [np.linalg.norm(s.contact_force[0, 1]) for s in stats_c]
    assert np.abs(np.subtract(forces, forces_c)).max() < 2e-3


def _lift_held_box(steps, hold=0, carry_factorisation=True, closing=0.0):
    """A 1 kg box squeezed between two pads (mu 0.5, about 60 N each), lifted 0.1 mm per 10 ms step
    under gravity and held still for `hold` steps, checked intersection-free after every step
    (carry_factorisation: SolverSettings.carry_factorisation; closing: how far (m) each pad's
    driven face also moves towards the box per lifting step): (the simulation, per step its
    StepStats, drive rounds and Hessians assembled, the box heights)."""

    sim, drivers, _ = box_between_pads(0.5, pad_E=1e7, contact_force_scale=2.0, box_offset=(0.0, 0.0, -1e-6),
                                       carry_factorisation=carry_factorisation)
    sim.set_gravity((0, 0, -9.81))
    rounds, hessians, heights, stats = [], [], [], []
    for k in range(1, steps + hold + 1):
        drives, assembled = sim.drive_round.rounds, sim.potential.hessians_assembled
        lifted = {name: p.copy() for name, p in drivers.items()}
        for p in lifted.values():
            p[2, 3] += 1e-4 * min(k, steps)
        lifted["left"][0, 3] += closing * min(k, steps)
        lifted["right"][0, 3] -= closing * min(k, steps)
        stats.append(sim.step(lifted))
        rounds.append(sim.drive_round.rounds - drives)
        hessians.append(sim.potential.hessians_assembled - assembled)
        assert_intersection_free(sim)
        heights.append(sim.affine_pose("box")[2, 3])
    return sim, stats, rounds, hessians, np.array(heights)


def test_a_held_box_lifted_by_its_pads_is_warm_started_with_the_pads_carrying_it():
    """A guess with the pads moved up and the box still at rest would slide them past it
    (solver.warm_start refuses guesses that slide friction contacts more than the bodies' own
    velocities do); the box the pads press moves with them in the second guess, which slides
    nothing: no step of the lift is driven, from the fifth on each takes one Newton iteration,
    and the box rises at the pads' speed."""

    _, stats, rounds, _, heights = _lift_held_box(10)
    assert all(s.driver_lag == 0.0 for s in stats)
    assert sum(rounds) == 0 and all(s.newton_iterations == 1 for s in stats[4:])
    assert np.allclose(np.diff(heights[4:]), 1e-4, rtol=1e-3, atol=0)


def test_a_box_lifted_by_pads_that_also_close_on_it_is_warm_started_with_the_pads_squeezed():
    """As a force grip adjusts its jaws during a lift: the pads' driven faces also close 1 um on
    the box per step, more than the pads' surfaces are from it (0.4 um, a fiftieth of dhat; the
    squeeze rises 1.6 N a step). In the second guess the pads' free vertices move
    with the box they press, and only their driven faces close, squeezing them: no step of the
    lift is driven, and the box rises at the pads' speed. With the free vertices carried with
    their own driven faces, the guess would push the pads' surfaces into the box, CCD would
    refuse it, and every step would be driven."""
    _, stats, rounds, _, heights = _lift_held_box(10, closing=1e-6)
    assert all(s.driver_lag == 0.0 for s in stats)
    assert sum(rounds) == 0
    assert np.allclose(np.diff(heights[4:]), 1e-4, rtol=1e-3, atol=0)


def test_a_lift_takes_its_forced_newton_steps_with_the_last_steps_factorisation():
    """While the pads carry the box up unchanged, a warm-started step's forced Newton step reuses
    the factorisation where the last step ended, which then also tests convergence (CARRIED_MODEL,
    CARRIED_CONVERGED): no Hessian per step instead of two, and each step moves the box as with
    fresh Hessians to half the Newton tolerance (newton_tolerance dt = 1e-7 m per step here); both
    rise at the pads' speed. Held still, a step's drive predictor uses it too: one Hessian (the
    Newton solve's) instead of two."""

    _, _, _, hessians, heights = _lift_held_box(12, hold=3)
    sim, _, _, hessians_f, heights_f = _lift_held_box(12, hold=3, carry_factorisation=False)
    lift, hold = slice(5, 12), slice(12, None)
    assert all(h == 2 for h in hessians_f[lift]) and all(h == 0 for h in hessians[lift])
    assert all(h == 2 for h in hessians_f[hold]) and all(h == 1 for h in hessians[hold])
    tolerance = sim.settings.newton_tolerance * sim.settings.dt
    assert np.abs(np.diff(heights) - np.diff(heights_f)).max() < 0.5 * tolerance
    assert np.allclose(np.diff(heights[4:12]), 1e-4, rtol=1e-3, atol=0)


def _pads_touching_a_box():
    """A free 50 g box between two 16 x 16 x 4 mm pads (E = 1 MPa, mu 0.5) that close on it
    without gravity: after one step their front faces are 10 um from it (dhat 20 um). Returns the
    simulation and the drivers of a closing step of 60 um more, which the drive takes in several
    drive-and-settle rounds (the barrier stiffens as the gaps shrink)."""
    from .scenes import affine_box

    half, t, gap = 0.01, 0.004, 5e-4
    pads = [deformable_block(name, (t, 0.016, 0.016), (2, 3, 3), E=1e6, density=1000.0, prescribed_side=side)
            for name, side in (("left", "-x"), ("right", "+x"))]
    xl, xr = -(half + gap + t / 2), half + gap + t / 2
    settings = SolverSettings(dt=0.01, gravity=(0, 0, 0), dhat=2e-5, eps_v=1e-4, newton_tolerance=1e-5)
    sim = Simulation([affine_box("box", (2 * half,) * 3, 0.05), *pads],
                     poses={"left": pose((xl, 0, 0)), "right": pose((xr, 0, 0))},
                     friction={("box", "left"): 0.5, ("box", "right"): 0.5}, settings=settings)

    def drivers(d):
        return {"left": pose((xl + d, 0, 0)), "right": pose((xr - d, 0, 0))}

    sim.step(drivers(gap - 1e-5))
    return sim, drivers(gap + 5e-5)


def test_give_up_sees_each_drive_round_and_abandons_the_step_untaken():
    """Simulation.step(give_up=...) is asked after every drive-and-settle round with the pads'
    forces, strain energies and the drivers' distance from their targets there: each round's
    equilibrium, the pads part of the way. On a box centred between them the squeeze grows from
    round to round, the same on both pads, and stays below the step's own, while the drivers'
    distance shrinks and stays above 0 (a round that reaches the targets is the step's end). Asking changes nothing; answering True
    leaves the state, time and barrier stiffness as they were and returns None, and the step
    taken afterwards ends where it would have (within Newton's tolerance: the engine's caches
    saw the abandoned rounds)."""

    sim, drivers = _pads_touching_a_box()
    rounds = []

    def record(contact_force, strain_energy, driver_lag):
        assert contact_force.shape == (4, 4, 3) and set(strain_energy) == {"left", "right"}
        np.testing.assert_allclose(contact_force[1, 0], -contact_force[0, 1], rtol=1e-12, atol=1e-12)
        rounds.append((np.linalg.norm(contact_force[0, 1]), np.linalg.norm(contact_force[0, 2]),
                       strain_energy["left"], driver_lag))
        return False

    asked = sim.step(drivers, give_up=record)
    left, right, energy, lag = np.array(rounds).T
    assert len(rounds) >= 3 and asked.driver_lag == 0.0
    assert np.all(np.diff(left) > 0) and np.all(np.diff(energy) >= 0)
    assert np.all(np.diff(lag) < 0) and lag[-1] > 0.0
    np.testing.assert_allclose(right, left, rtol=0.02)
    assert left[-1] < np.linalg.norm(asked.contact_force[0, 1])

    plain = _pads_touching_a_box()[0].step(drivers)
    np.testing.assert_array_equal(plain.contact_force, asked.contact_force)

    sim = _pads_touching_a_box()[0]
    before, kappa = sim.state.copy(), sim.barrier_stiffness
    assert sim.step(drivers, give_up=lambda contact_force, *_: np.linalg.norm(contact_force[0, 1]) > left[1]) is None
    assert sim.state.time == before.time and sim.barrier_stiffness == kappa
    for now, then in zip(sim.state.deformable_x + sim.state.affine_q, before.deformable_x + before.affine_q):
        np.testing.assert_array_equal(now, then)
    assert_intersection_free(sim)
    retried = sim.step(drivers)
    assert retried.newton_iterations == plain.newton_iterations
    np.testing.assert_allclose(retried.contact_force, plain.contact_force, rtol=0, atol=1e-5)


def test_newton_iterations_run_counts_every_attempt_taken_abandoned_or_failed():
    """Simulation.newton_iterations_run grows by a taken step's StepStats.newton_iterations, by
    the drive rounds' iterations of a step give_up abandons and by what a failed step ran, and
    restoring a state leaves it as it is."""
    sim, drivers = _pads_touching_a_box()
    before = sim.newton_iterations_run
    taken = sim.step(drivers)
    assert taken.newton_iterations > 0 and sim.newton_iterations_run - before == taken.newton_iterations

    sim = _pads_touching_a_box()[0]
    before, state = sim.newton_iterations_run, sim.state.copy()
    assert sim.step(drivers, give_up=lambda *_: True) is None
    abandoned = sim.newton_iterations_run - before
    assert abandoned > 0
    sim.restore(state)
    assert sim.newton_iterations_run - before == abandoned

    sim = _pads_touching_a_box()[0]
    sim.settings.max_newton_iterations, sim.settings.newton_fallback_tolerance = 1, None
    before = sim.newton_iterations_run
    with pytest.raises(StepFailed, match="did not converge in 1 iterations"):
        sim.step(drivers)
    assert sim.newton_iterations_run - before >= 1


def test_coarse_rounds_end_the_step_where_full_rounds_do(monkeypatch):
    """Simulation.step(coarse_rounds=True) stops the Newton solves of the drive-and-settle rounds
    at COARSE_ROUND_TOLERANCE times the tolerance and the step's last solve at the tolerance: the
    pads closing 60 um on the box take fewer Newton iterations, give_up still sees the squeeze
    grow from round to round, and the step ends intersection-free with the box and pads where the
    fully solved rounds leave them (within newton_tolerance dt, 100 nm). The rounds themselves
    differ: each drive starts from a less settled equilibrium, and the last coarse round can read
    above the force the step ends at. The pads end 56-87 nm from the box (dhat 20 um), closer than
    the tolerance, where a nanometre of gap is a percent of force: the forces agree within 15 %."""
    from ipcgrasp.engine.solver.newton import Newton

    newton = Newton.solve

    def squeeze(coarse):
        sim, drivers = _pads_touching_a_box()
        tolerances, rounds = [], []

        def recorded(self, *args, tolerance=1.0, **kwargs):
            tolerances.append(tolerance)
            return newton(self, *args, tolerance=tolerance, **kwargs)

        monkeypatch.setattr(Newton, "solve", recorded)
        stats = sim.step(drivers, give_up=lambda force, *_: rounds.append(np.linalg.norm(force[0, 1])) or False,
                         coarse_rounds=coarse)
        assert_intersection_free(sim)
        return sim, stats, tolerances, np.array(rounds)

    full, full_stats, full_tolerances, full_rounds = squeeze(False)
    coarse, stats, tolerances, rounds = squeeze(True)
    assert set(full_tolerances) == {1.0}
    assert tolerances[-1] == 1.0 and set(tolerances[:-1]) == {COARSE_ROUND_TOLERANCE}
    assert len(rounds) >= 3 and len(full_rounds) >= 3 and stats.driver_lag == 0.0
    assert np.all(np.diff(rounds) > 0)
    assert stats.newton_iterations < full_stats.newton_iterations
    tolerance = full.settings.newton_tolerance * full.settings.dt
    for name in ("box", "left", "right"):
        np.testing.assert_allclose(coarse.vertices(name), full.vertices(name), rtol=0, atol=tolerance)
    assert stats.min_distance < tolerance
    for pad in (1, 2):
        assert np.linalg.norm(stats.contact_force[0, pad]) == pytest.approx(
            np.linalg.norm(full_stats.contact_force[0, pad]), rel=0.15)


def test_unprojected_contact_hessians_near_convergence_change_no_outcome(monkeypatch):
    """A box squeezed off-centre between pads (it rolls a little under the pads' barrier) with the
    barrier Hessians unprojected once Newton is near convergence, and always projected: the
    unprojected Hessian is used and takes no more Newton iterations (on the cube grasps it takes
    fewer: benchmarks/bench_trial.py), every step stays intersection-free, and the box ends where
    the always-projected solve puts it and with the same pad forces, within the Newton tolerance."""
    from ipcgrasp.engine.solver.newton import Newton

    direction = Newton.direction

    def squeeze(unprojected):
        calls = collections.Counter()

        def counted(self, *args, project_contacts):
            calls[project_contacts] += 1
            return direction(self, *args, project_contacts=project_contacts)

        monkeypatch.setattr(Newton, "direction", counted)
        sim, _, forces = box_between_pads(0.5, pad_E=1e6, contact_force_scale=2.0, box_offset=(0.0, 3e-3, 2e-3),
                                          on_step=assert_intersection_free, unprojected_contacts=unprojected)
        return sim, forces, calls

    projected, forces_projected, calls_projected = squeeze(False)
    unprojected, forces_unprojected, calls = squeeze(True)
    assert calls_projected[False] == 0 and calls[False] > 0
    assert sum(calls.values()) <= sum(calls_projected.values())
    tolerance = unprojected.settings.newton_tolerance * unprojected.settings.dt
    np.testing.assert_allclose(unprojected.vertices("box"), projected.vertices("box"), rtol=0, atol=10 * tolerance)
    np.testing.assert_allclose(forces_unprojected, forces_projected, rtol=1e-3)


def test_contacts_between_a_body_pair_are_a_broad_phase_over_that_pair():
    """Simulation.contacts_between: the pairs closer than dhat between the box and one pad, equal
    in every field and in order to a broad phase and collision build over that pair alone, both
    where the last step ended (taken from the step's contacts) and after the state moved."""
    from dataclasses import fields

    from ipcgrasp.engine.broadphase import candidates
    from ipcgrasp.engine.collisions import build_collisions

    sim, _, _ = box_between_pads(0.5, PAD_E, contact_force_scale=5.0)

    def over_the_pair(name, other):
        x, m = sim.collision_positions(), sim.mesh
        pair = np.zeros_like(m.can_collide)
        pair[sim.index[name], sim.index[other]] = pair[sim.index[other], sim.index[name]] = True
        vf, ee, _ = candidates(x, x, m.edges, m.faces, m.vertex_body, sim.dhat, can_collide=pair)
        return build_collisions(m, x, sim.dhat, candidates=(vf, ee, np.zeros(0, dtype=np.int64)))

    for moved in (False, True):
        if moved:
            state = sim.state.copy()
            state.affine_q[0][:3] += (0.0, 2e-6, 0.0)  # the box slides along the pads' faces
            sim.restore(state)
        for pad in ("left", "right"):
            coll, x = sim.contacts_between("box", [pad])
            np.testing.assert_array_equal(x, sim.collision_positions())
            expected = over_the_pair("box", pad)
            assert len(coll) > 0
            for f in fields(coll):
                np.testing.assert_array_equal(getattr(coll, f.name), getattr(expected, f.name), err_msg=f.name)


def test_a_barrier_stiffness_at_its_bound_skips_the_heuristic_and_changes_nothing(monkeypatch):
    """Once kappa is at max(IPC's upper bound, the contact-force floor) the step skips the balance
    heuristic's gradients (the heuristic is clamped below kappa): the squeezed box ends in the
    same state, to the bit, as with the heuristic evaluated at every step. A 100 N contact force
    scale puts the floor above the bound, as in the grasp scenes."""
    from ipcgrasp.engine.barrier import barrier_stiffness_bounds
    from ipcgrasp.engine.solver import barrier_stiffness

    skipped, _, forces = box_between_pads(0.5, PAD_E, contact_force_scale=100.0)
    _, bound = barrier_stiffness_bounds(skipped.bbox_diagonal, skipped.dhat, skipped.model.average_mass,
                                        skipped.settings.min_barrier_stiffness_scale)
    assert skipped.barrier_stiffness >= bound  # every step after the first took the shortcut
    monkeypatch.setattr(barrier_stiffness, "barrier_stiffness_bounds", lambda *args: (np.inf, np.inf))
    evaluated, _, forces_evaluated = box_between_pads(0.5, PAD_E, contact_force_scale=100.0)
    assert skipped.barrier_stiffness == evaluated.barrier_stiffness
    assert skipped.max_barrier_stiffness == evaluated.max_barrier_stiffness
    np.testing.assert_array_equal(skipped.pack(), evaluated.pack())
    assert forces == forces_evaluated
