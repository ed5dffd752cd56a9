"""Rocchi et al.'s contact-stability metrics (eqs. 7-9) against hand computations, and the point
contacts derived from IPC collisions against known closest points."""

import math

import numpy as np
import pytest

from ipcgrasp.engine import collisions as contact
from ipcgrasp.grasp.stability import (
    contact_average,
    contact_force_variation,
    contact_normal_variation,
    contact_points,
    contact_position_variation,
    spread,
)


def constant(value, steps=7):
    return np.tile(np.asarray(value, dtype=float), (steps, 1))


def test_constant_signals_score_zero():
    forces = [constant([0.3, 12.0, -0.5]), constant([-0.2, -11.0, 0.4])]
    positions = [constant([0.4, -0.015, 0.04]), constant([0.4, 0.015, 0.04])]
    normals = [constant([0.0, 1.0, 0.0]), constant([0.05, -0.99, 0.0])]
    assert contact_force_variation(forces) == 0.0
    assert contact_position_variation(positions) == 0.0
    assert contact_normal_variation(normals) == 0.0


def test_force_variation_matches_a_hand_computation():
    # body A: mean (10, 0, 0), population covariance diag(0.5, 2, 0): ||.||_F = sqrt(4.25)
    a = [[11, 0, 0], [9, 0, 0], [10, 2, 0], [10, -2, 0]]
    # body B: (5 +- 1, +-1, 0) together: covariance [[1, 1], [1, 1]], ||.||_F = 2 (the
    # off-diagonal terms count)
    b = [[6, 1, 0], [4, -1, 0]]
    ratio_a = 4.25 ** 0.25 / ((11 + 9 + 2 * math.sqrt(104)) / 4)
    ratio_b = math.sqrt(2) / ((math.sqrt(37) + math.sqrt(17)) / 2)
    assert contact_force_variation([a, b]) == pytest.approx((ratio_a + ratio_b) / 2, rel=1e-12)
    # dimensionless: scaling every force leaves it unchanged
    assert contact_force_variation([2.5 * np.array(a), 2.5 * np.array(b)]) == pytest.approx(
        (ratio_a + ratio_b) / 2, rel=1e-12)


def test_position_variation_skips_steps_without_contact():
    moving = [[0, 0, 0], [2e-3, 0, 0], [np.nan] * 3]  # var_x = (1e-3)^2 over the two contact steps
    still = [[0.1, 0.2, 0.3], [np.nan] * 3, [0.1, 0.2, 0.3]]
    assert contact_position_variation([moving, still]) == pytest.approx(0.5e-3, rel=1e-12)


@pytest.mark.parametrize("angle", [0.01, 0.3, 1.0])
def test_normal_variation_of_a_normal_flipping_between_two_directions(angle):
    # a two-valued signal u, v has covariance d d^T / 4 with d = u - v, so sqrt(||.||_F) = |d| / 2
    # = sin(angle / 2) for unit vectors at that angle
    u, v = [0.0, 0.0, 1.0], [0.0, math.sin(angle), math.cos(angle)]
    assert contact_normal_variation([[u, v, u, v]]) == pytest.approx(math.sin(angle / 2), rel=1e-12)
    assert spread([u, v]) == pytest.approx(math.sin(angle / 2), rel=1e-12)


def test_no_body_in_contact_gives_nan_and_bad_input_is_named():
    assert math.isnan(contact_force_variation([]))
    assert math.isnan(contact_position_variation([]))
    assert math.isnan(contact_normal_variation([]))
    assert math.isnan(spread([[np.nan] * 3]))
    with pytest.raises(ValueError, match=r"forces\[1\].*not in C"):
        contact_force_variation([constant([1.0, 0, 0]), constant([0.0, 0, 0])])
    with pytest.raises(ValueError, match=r"positions\[0\]"):
        contact_position_variation([np.zeros((4, 2))])


def _single_collision(object_tri, pad_tri, dhat=1e-3):
    """The collisions of two triangles (body 0: object, body 1: pad) with their per-vertex
    barrier forces, as the IPC backend turns them into point contacts."""
    x = np.vstack([object_tri, pad_tri]).astype(float)
    mesh = contact.CollisionMesh.build(x, [[0, 1, 2], [3, 4, 5]], [0, 0, 0, 1, 1, 1])
    coll = contact.build_collisions(mesh, x, dhat)
    forces = contact.contact_forces(coll, mesh, x, dhat, 1.0)
    valid = coll.vertices >= 0
    vertices = np.where(valid, coll.vertices, 0)
    positions = np.where(valid[:, :, None], x[vertices], 0.0)
    return len(coll), contact_points(positions, forces, valid & (mesh.vertex_body[vertices] == 0))


def test_point_contact_of_a_vertex_over_a_face_is_the_midpoint_of_the_gap():
    h = 2e-4
    n, (points, normals) = _single_collision([[0, 0, 0], [1, 0, 0], [0, 1, 0]],
                                             [[0.2, 0.3, h], [0.1, 0.3, 0.5], [0.3, 0.35, 0.5]])
    assert n == 1
    np.testing.assert_allclose(points, [[0.2, 0.3, h / 2]], atol=1e-12)
    np.testing.assert_allclose(normals, [[0, 0, -1]], atol=1e-12)  # the pad pushes the object down


def test_point_contact_of_crossing_edges_is_the_midpoint_of_their_closest_points():
    h = 3e-4
    n, (points, normals) = _single_collision([[-1, 0, 0], [1, 0, 0], [0, -1, -1]],
                                             [[0.3, -1, h], [0.3, 1, h], [0.3, 0, 1]])
    assert n == 1
    np.testing.assert_allclose(points, [[0.3, 0, h / 2]], atol=1e-12)
    np.testing.assert_allclose(normals, [[0, 0, -1]], atol=1e-9)


def test_contact_average_is_the_plain_mean_and_nan_without_contacts():
    x, n = contact_average([[0, 0, 0], [1, 2, 0], [2, 1, 3]], [[0, 0, 1], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_allclose(x, [1, 1, 1])
    np.testing.assert_allclose(n, [0, 1 / 3, 2 / 3])
    x, n = contact_average(np.zeros((0, 3)), np.zeros((0, 3)))
    assert np.all(np.isnan(x)) and np.all(np.isnan(n))
