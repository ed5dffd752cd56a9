"""Penalty (BLEM) contact in the simulator against closed forms, and the artifact measures of both
contact models.

A rigid box of mass m on the ground rests on its four bottom corners, each a vertex-plane
penalty contact pushing with k (r - h): in equilibrium 4 k (r - h) = m g, so the corners rest at
h = r - m g / (4 k). With a tiny margin that is below the ground (interpenetration m g / (4 k) - r,
shrinking as k grows); with a large one the box floats visibly above it (the force field). The
barrier model on the same drop never interpenetrates and acts only below dhat.
"""

import numpy as np
import pytest

from ipcgrasp.engine.bodies import Ground
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings

from .scenes import affine_box, assert_intersection_free, kinematic_box, pose, rotation_z

G = 9.81
MASS = 0.1
SIDE = 0.03


def penalty_box(stiffness, margin, clusters=0, start_gap=1e-3):
    box = affine_box("box", (SIDE, SIDE, SIDE), MASS)
    settings = SolverSettings(dt=0.01, eps_v=1e-4, newton_tolerance=1e-5, contact_model="penalty",
                              penalty_stiffness=stiffness, penalty_margin=margin, penalty_clusters=clusters)
    return Simulation([box], poses={"box": pose((0, 0, SIDE / 2 + margin + start_gap))}, ground=Ground(mu=0.5),
                      settings=settings)


def settle(sim, steps=120):
    for _ in range(steps):
        stats = sim.step()
    return stats


@pytest.mark.parametrize("stiffness", [2e3, 2e4])
def test_resting_block_sinks_into_the_ground_by_m_g_over_k(stiffness):
    margin = 1e-7
    sim = penalty_box(stiffness, margin)
    stats = settle(sim)
    depth = MASS * G / (4 * stiffness) - margin
    assert -sim.vertices("box")[:, 2].min() == pytest.approx(depth, rel=1e-3)
    assert stats.max_penetration == pytest.approx(depth, rel=1e-3)  # penetration.py agrees
    assert stats.max_force_gap == 0.0  # every corner pushing is below the ground
    assert stats.contact_force[0, 1][2] == pytest.approx(MASS * G, rel=0.01)
    assert np.isnan(stats.barrier_stiffness)


def test_interpenetration_shrinks_as_the_stiffness_grows():
    depths = [settle(penalty_box(k, 1e-7)).max_penetration for k in (1e3, 1e4, 1e5)]
    assert depths[0] > 5 * depths[1] > 25 * depths[2] > 0.0


@pytest.mark.parametrize("clusters", [0, 2])
def test_dropped_block_with_a_large_margin_rests_visibly_above_the_ground(clusters):
    margin, stiffness = 2e-3, 1e4
    sim = penalty_box(stiffness, margin, clusters=clusters, start_gap=5e-3)
    stats = settle(sim)
    gap = margin - MASS * G / (4 * stiffness)
    lowest = sim.vertices("box")[:, 2].min()
    assert lowest == pytest.approx(gap, rel=1e-3) and lowest > 1e-3
    assert stats.max_penetration == 0.0
    assert stats.max_force_gap == pytest.approx(gap, rel=1e-3)
    assert stats.contact_force[0, 1] == pytest.approx([0.0, 0.0, MASS * G], rel=0.01, abs=1e-6)
    assert stats.n_contacts == (4 if clusters == 0 else 2)


@pytest.mark.parametrize("clusters", [0, 3])
def test_box_on_a_turned_slab_rests_across_the_boundary_layers(clusters):
    """Mesh-mesh contact (vertex-face, edge-edge): reaction m g, surfaces apart by less than 2 r,
    nothing inside anything."""
    margin, stiffness = 1e-3, 2e4
    box = affine_box("box", (SIDE, SIDE, SIDE), MASS)
    slab = kinematic_box("slab", (0.1, 0.1, 0.01))
    settings = SolverSettings(dt=0.01, eps_v=1e-4, newton_tolerance=1e-5, contact_model="penalty",
                              penalty_stiffness=stiffness, penalty_margin=margin, penalty_clusters=clusters)
    sim = Simulation([box, slab], poses={"box": pose((0.004, -0.003, 0.01 + SIDE / 2 + 2.5 * margin), rotation_z(0.5)),
                                         "slab": pose((0, 0, 0.005))},
                     ground=Ground(mu=0.5), friction={("box", "slab"): 0.5}, settings=settings)
    stats = settle(sim)
    gap = sim.vertices("box")[:, 2].min() - 0.01
    assert 0.0 < gap < 2 * margin
    assert stats.max_penetration == 0.0
    assert 0.0 < stats.max_force_gap < 2 * margin
    assert stats.contact_force[0, 1][2] == pytest.approx(MASS * G, rel=0.01)
    total = stats.contact_force[0, 1] + stats.friction_force[0, 1]  # edge contacts lean: friction balances
    assert total == pytest.approx([0.0, 0.0, MASS * G], rel=0.01, abs=1e-4 * MASS * G)
    if clusters:
        assert stats.n_contacts <= clusters


def test_barrier_drop_never_interpenetrates_and_acts_only_below_dhat():
    box = affine_box("box", (SIDE, SIDE, SIDE), MASS)
    settings = SolverSettings(dt=0.01, dhat=1e-4, eps_v=1e-4, newton_tolerance=1e-5)
    sim = Simulation([box], poses={"box": pose((0, 0, SIDE / 2 + 1e-3))}, ground=Ground(mu=0.5), settings=settings)
    gaps = []
    for _ in range(60):
        stats = sim.step()
        assert stats.max_penetration == 0.0
        assert_intersection_free(sim)
        gaps.append(stats.max_force_gap)
    assert 0.0 < max(gaps) < sim.dhat
    assert stats.max_force_gap >= sim.vertices("box")[:, 2].min() > 0.0
