"""Lagged smoothed friction: mollifier, bases, closest points, Gamma and the per-contact potential.

Oracles: central finite differences for every derivative, ipctk 1.6.1 for the mollifier family,
tangent bases (through the projector T T^T, since a basis is defined up to a rotation in its
plane), closest-point coordinates, relative-velocity Jacobians and the whole friction potential
on a small CollisionMesh.
"""

import ipctk
import numba
import numpy as np
import pytest

from ipcgrasp.engine.barrier import barrier_first_derivative
from ipcgrasp.engine.friction import (
    _friction_potential,
    _friction_potential_gradient,
    _friction_potential_hessian,
    _point_triangle_closest_point,
    _point_triangle_relative_displacement_matrix,
    _point_triangle_tangent_basis,
    edge_edge_closest_point,
    edge_edge_relative_displacement_matrix,
    edge_edge_tangent_basis,
    friction_potential,
    friction_potential_gradient,
    friction_potential_hessian,
    point_edge_closest_point,
    point_edge_relative_displacement_matrix,
    point_edge_tangent_basis,
    point_plane_relative_displacement_matrix,
    point_plane_tangent_basis,
    point_point_relative_displacement_matrix,
    point_point_tangent_basis,
    point_triangle_closest_point,
    point_triangle_relative_displacement_matrix,
    point_triangle_tangent_basis,
    smooth_friction_f0,
    smooth_friction_f1,
    smooth_friction_f1_over_x,
    smooth_friction_f2,
    smooth_friction_f2_x_minus_f1_over_x3,
)

# (ours, ipctk's, size of the terms that cancel in the polynomial branch)
MOLLIFIERS = [
    (smooth_friction_f0, ipctk.smooth_friction_f0, lambda y, eps: eps),
    (smooth_friction_f1, ipctk.smooth_friction_f1, lambda y, eps: 1.0),
    (smooth_friction_f1_over_x, ipctk.smooth_friction_f1_over_x, lambda y, eps: 1.0 / eps),
    (smooth_friction_f2, ipctk.smooth_friction_f2, lambda y, eps: 1.0 / eps),
    (
        smooth_friction_f2_x_minus_f1_over_x3,
        ipctk.smooth_friction_f2_x_minus_f1_over_x3,
        lambda y, eps: 0.0,
    ),
]


# -- Mollifier ------------------------------------------------------------------------------------


def _mollifier_samples(rng, n):
    eps = 10.0 ** rng.uniform(-8, -1, n)
    y = eps * np.concatenate([rng.uniform(0, 3, n - 6), [0.0, 1e-9, 0.5, 1.0 - 1e-9, 1.0, 1e6]])
    return y, eps


def test_mollifier_family_matches_ipctk():
    rng = np.random.default_rng(10)
    y, eps = _mollifier_samples(rng, 1000)
    for ours, theirs, term_size in MOLLIFIERS:
        for yi, ei in zip(y, eps):
            expected = theirs(yi, ei)
            if np.isfinite(expected):
                assert ours(yi, ei) == pytest.approx(
                    expected, rel=1e-13, abs=1e-15 * term_size(yi, ei)
                ), (ours, yi, ei)
            else:
                assert ours(yi, ei) == expected  # -inf of (f1' y - f1)/y^3 at y = 0


def test_mollifier_derivatives_match_central_differences():
    rng = np.random.default_rng(11)
    eps = 10.0 ** rng.uniform(-6, -2, 600)
    ratio = np.concatenate([rng.uniform(0.01, 0.99, 300), rng.uniform(1.01, 5.0, 300)])
    for r, e in zip(ratio, eps):
        y = r * e
        h = 1e-6 * e
        fd_f0 = (smooth_friction_f0(y + h, e) - smooth_friction_f0(y - h, e)) / (2 * h)
        fd_f1 = (smooth_friction_f1(y + h, e) - smooth_friction_f1(y - h, e)) / (2 * h)
        f1 = smooth_friction_f1(y, e)
        f2 = smooth_friction_f2(y, e)
        assert fd_f0 == pytest.approx(f1, rel=1e-8, abs=1e-9)
        assert fd_f1 == pytest.approx(f2, rel=1e-7, abs=1e-9 / e)
        assert smooth_friction_f1_over_x(y, e) == pytest.approx(f1 / y, rel=1e-13)
        assert smooth_friction_f2_x_minus_f1_over_x3(y, e) == pytest.approx(
            (f2 * y - f1) / y**3, rel=1e-12
        )


def test_mollifier_shape():
    eps = 2e-4
    assert smooth_friction_f0(0.0, eps) == pytest.approx(eps / 3)
    assert smooth_friction_f1(0.0, eps) == 0.0
    assert smooth_friction_f1_over_x(0.0, eps) == pytest.approx(2 / eps)
    assert smooth_friction_f2(0.0, eps) == pytest.approx(2 / eps)
    # C1 at eps: value and slope continuous; above eps Coulomb (f1 = 1).
    below, above = eps * (1 - 1e-12), eps * (1 + 1e-12)
    assert smooth_friction_f0(below, eps) == pytest.approx(
        smooth_friction_f0(above, eps), rel=1e-10
    )
    assert smooth_friction_f1(below, eps) == pytest.approx(1.0, rel=1e-10)
    assert smooth_friction_f1(3 * eps, eps) == 1.0
    assert smooth_friction_f0(3 * eps, eps) == 3 * eps
    y = np.linspace(0, 2 * eps, 101)
    f1 = np.array([smooth_friction_f1(v, eps) for v in y])
    assert np.all(np.diff(f1) >= 0.0) and np.all((f1 >= 0.0) & (f1 <= 1.0))


@pytest.mark.parametrize("y, eps", [(-1e-6, 1e-3), (np.nan, 1e-3), (1e-4, 0.0), (1e-4, -1.0)])
def test_mollifier_rejects_bad_input(y, eps):
    for ours, _, _ in MOLLIFIERS:
        with pytest.raises(ValueError):
            ours(y, eps)


# -- Bases, closest points, Gamma -----------------------------------------------------------------


def _projector(T):
    return T @ T.T


def _assert_orthonormal_tangent(T, normal):
    assert T.shape == (3, 2)
    np.testing.assert_allclose(T.T @ T, np.eye(2), atol=1e-12)
    n = normal / np.linalg.norm(normal)
    np.testing.assert_allclose(T.T @ n, 0.0, atol=1e-10)


def test_tangent_bases_match_ipctk_projectors_and_are_orthogonal_to_the_normal():
    rng = np.random.default_rng(12)
    for _ in range(500):
        p, a, b, c = rng.normal(size=(4, 3))
        T = point_point_tangent_basis(p, a)
        _assert_orthonormal_tangent(T, a - p)
        np.testing.assert_allclose(
            _projector(T), _projector(ipctk.point_point_tangent_basis(p, a)), atol=1e-12
        )

        T = point_edge_tangent_basis(p, a, b)
        alpha = point_edge_closest_point(p, a, b)
        _assert_orthonormal_tangent(T, p - (a + alpha * (b - a)))
        np.testing.assert_allclose(
            _projector(T), _projector(ipctk.point_edge_tangent_basis(p, a, b)), atol=1e-10
        )

        T = point_triangle_tangent_basis(p, a, b, c)
        _assert_orthonormal_tangent(T, np.cross(b - a, c - a))
        np.testing.assert_allclose(
            _projector(T), _projector(ipctk.point_triangle_tangent_basis(p, a, b, c)), atol=1e-10
        )

        T = edge_edge_tangent_basis(p, a, b, c)
        _assert_orthonormal_tangent(T, np.cross(a - p, c - b))
        np.testing.assert_allclose(
            _projector(T), _projector(ipctk.edge_edge_tangent_basis(p, a, b, c)), atol=1e-10
        )

        normal = rng.normal(size=3)
        _assert_orthonormal_tangent(point_plane_tangent_basis(normal), normal)


@pytest.mark.parametrize(
    "normal", [[0.0, 0.0, 1.0], [0.0, 0.0, -3.0], [1.0, 0.0, 0.0], [0.0, 1e-300, 1.0], [1, 1, 1]]
)
def test_point_plane_basis_on_axis_aligned_normals_matches_ipctk(normal):
    normal = np.asarray(normal, dtype=float)
    T = point_plane_tangent_basis(normal)
    _assert_orthonormal_tangent(T, normal)
    plane = ipctk.Hyperplane(normal / np.linalg.norm(normal), np.zeros(3))
    mesh_positions = np.array([[0.3, -0.2, 0.1]]) + 1e-4 * normal / np.linalg.norm(normal)
    collision = ipctk.PlaneVertexTangentialCollision(
        ipctk.PlaneVertexNormalCollision(plane, 0),
        mesh_positions[0],
        ipctk.BarrierPotential(1e-3, 1.0),
    )
    np.testing.assert_allclose(_projector(T), _projector(collision.tangent_basis), atol=1e-12)
    np.testing.assert_array_equal(
        point_plane_relative_displacement_matrix(), collision.relative_velocity_jacobian()
    )


def test_closest_point_coordinates_match_ipctk():
    rng = np.random.default_rng(13)
    for _ in range(1000):
        p, a, b, c = rng.normal(size=(4, 3))
        alpha = point_edge_closest_point(p, a, b)
        assert alpha == pytest.approx(ipctk.point_edge_closest_point(p, a, b), rel=1e-12, abs=1e-12)
        assert abs((p - (a + alpha * (b - a))) @ (b - a)) < 1e-12  # foot of the perpendicular

        beta_gamma = point_triangle_closest_point(p, a, b, c)
        np.testing.assert_allclose(
            beta_gamma, ipctk.point_triangle_closest_point(p, a, b, c), rtol=1e-9, atol=1e-11
        )
        foot = a + beta_gamma[0] * (b - a) + beta_gamma[1] * (c - a)
        np.testing.assert_allclose([(p - foot) @ (b - a), (p - foot) @ (c - a)], 0.0, atol=1e-10)

        ab = edge_edge_closest_point(p, a, b, c)
        np.testing.assert_allclose(
            ab, ipctk.edge_edge_closest_point(p, a, b, c), rtol=1e-9, atol=1e-11
        )
        gap = (p + ab[0] * (a - p)) - (b + ab[1] * (c - b))
        np.testing.assert_allclose([gap @ (a - p), gap @ (c - b)], 0.0, atol=1e-10)


def test_closest_points_are_not_clamped_to_the_primitives():
    o, x, y = np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    assert point_edge_closest_point(np.array([3.0, 1, 0]), o, x) == 3.0
    np.testing.assert_allclose(point_triangle_closest_point(np.array([3.0, 3, 1]), o, x, y), [3, 3])
    np.testing.assert_allclose(
        edge_edge_closest_point(o, x, np.array([3.0, -1, 1]), np.array([3.0, -2, 1])), [3, -1]
    )


def test_degenerate_geometry_raises_value_error():
    p, a, b = np.array([0.0, 0, 1]), np.zeros(3), np.array([1.0, 0, 0])
    with pytest.raises(ValueError, match="degenerate"):
        point_edge_tangent_basis(p, a, a)
    with pytest.raises(ValueError, match="degenerate"):
        point_point_tangent_basis(p, p)
    with pytest.raises(ValueError, match="degenerate"):
        edge_edge_closest_point(a, b, a + p, b + p)  # parallel lines
    with pytest.raises(ValueError, match="degenerate"):
        point_triangle_tangent_basis(p, a, b, 2 * b)
    with pytest.raises(ValueError, match="3-vector"):
        point_point_tangent_basis(np.zeros(2), p)


def test_relative_displacement_matrices_match_ipctk_jacobians():
    rng = np.random.default_rng(14)
    np.testing.assert_array_equal(
        point_point_relative_displacement_matrix(), ipctk.point_point_relative_velocity_jacobian(3)
    )
    for _ in range(50):
        alpha = rng.uniform(-0.5, 1.5)
        coords = rng.uniform(-0.5, 1.5, 2)
        np.testing.assert_allclose(
            point_edge_relative_displacement_matrix(alpha),
            ipctk.point_edge_relative_velocity_jacobian(3, alpha),
            rtol=0,
            atol=1e-15,
        )
        np.testing.assert_allclose(
            point_triangle_relative_displacement_matrix(coords),
            ipctk.point_triangle_relative_velocity_jacobian(coords),
            rtol=0,
            atol=1e-15,
        )
        np.testing.assert_allclose(
            edge_edge_relative_displacement_matrix(coords),
            ipctk.edge_edge_relative_velocity_jacobian(coords),
            rtol=0,
            atol=1e-15,
        )
    # Rigid translations produce no relative motion.
    shift = np.tile(rng.normal(size=3), 4)
    np.testing.assert_allclose(
        edge_edge_relative_displacement_matrix(coords) @ shift, 0, atol=1e-14
    )


# -- Friction potential of one contact ------------------------------------------------------------


def _random_contact(rng, kind):
    """Lagged Gamma and basis of a random contact of the given type."""
    if kind == "point_point":
        p0, p1 = rng.normal(size=(2, 3))
        return point_point_relative_displacement_matrix(), point_point_tangent_basis(p0, p1)
    if kind == "point_edge":
        p, e0, e1 = rng.normal(size=(3, 3))
        alpha = point_edge_closest_point(p, e0, e1)
        return point_edge_relative_displacement_matrix(alpha), point_edge_tangent_basis(p, e0, e1)
    if kind == "point_triangle":
        p, t0, t1, t2 = rng.normal(size=(4, 3))
        coords = point_triangle_closest_point(p, t0, t1, t2)
        return (
            point_triangle_relative_displacement_matrix(coords),
            point_triangle_tangent_basis(p, t0, t1, t2),
        )
    if kind == "edge_edge":
        ea0, ea1, eb0, eb1 = rng.normal(size=(4, 3))
        coords = edge_edge_closest_point(ea0, ea1, eb0, eb1)
        return (
            edge_edge_relative_displacement_matrix(coords),
            edge_edge_tangent_basis(ea0, ea1, eb0, eb1),
        )
    normal = rng.normal(size=3)
    return point_plane_relative_displacement_matrix(), point_plane_tangent_basis(normal)


def _displacement_with_tangential_norm(rng, gamma, basis, target):
    """A random du whose tangential relative displacement |T^T Gamma du| equals target."""
    jac = gamma.T @ basis
    du = rng.normal(size=gamma.shape[1]) * 1e-3
    u_t = jac.T @ du
    # Move du along J (J^T J is invertible) so that u_t becomes target * (random direction).
    direction = rng.normal(size=2)
    goal = target * direction / np.linalg.norm(direction)
    return du + jac @ np.linalg.solve(jac.T @ jac, goal - u_t)


KINDS = ["point_point", "point_edge", "point_triangle", "edge_edge", "point_plane"]
# |u_t| / eps_u: static, around the transition (on either side), sliding.
REGIMES = [0.0, 1e-9, 1e-3, 0.5, 1 - 1e-3, 1 + 1e-3, 10.0, 1e4]


@pytest.mark.parametrize("kind", KINDS)
def test_friction_gradient_and_hessian_match_central_differences(kind):
    rng = np.random.default_rng(20 + KINDS.index(kind))
    mu, normal_force, eps_v, dt = 0.45, 3.7, 1e-3, 1e-2
    eps_u = eps_v * dt
    for _ in range(6):
        gamma, basis = _random_contact(rng, kind)
        for ratio in REGIMES:
            du = _displacement_with_tangential_norm(rng, gamma, basis, ratio * eps_u)
            args = (gamma, basis, mu, normal_force, eps_v, dt)
            g = friction_potential_gradient(du, *args)
            H = friction_potential_hessian(du, *args)
            step = 1e-6 * eps_u * max(ratio, 1.0)
            fd_g = np.empty_like(g)
            fd_H = np.empty_like(H)
            for a in range(du.size):
                e = np.zeros_like(du)
                e[a] = step
                fd_g[a] = (
                    friction_potential(du + e, *args) - friction_potential(du - e, *args)
                ) / (2 * step)
                fd_H[:, a] = (
                    friction_potential_gradient(du + e, *args)
                    - friction_potential_gradient(du - e, *args)
                ) / (2 * step)
            g_scale = mu * normal_force * np.abs(gamma.T @ basis).max()
            h_scale = g_scale * np.abs(gamma.T @ basis).max() / eps_u
            if ratio > 1e-6:
                assert np.abs(g).max() > 1e-4 * min(ratio, 1.0) * g_scale  # not a zero gradient
            # Rounding: D ~ mu lambda max(|u_t|, eps_u) cancels in the FD numerator.
            value_scale = mu * normal_force * max(ratio, 1.0) * eps_u
            np.testing.assert_allclose(
                g, fd_g, rtol=0, atol=1e-7 * g_scale + 1e-15 * value_scale / step
            )
            # The gradient's |u_t| u_t term is only C1 at u_t = 0: O(step / eps_u) FD error there.
            truncation = 1e-5 if ratio < 1e-3 else 1e-6
            h_tol = truncation * h_scale / max(ratio, 1.0) + 1e-14 * g_scale / step
            np.testing.assert_allclose(H, fd_H, rtol=0, atol=h_tol)
            assert np.abs(H).max() > 1e-4 * h_scale / max(ratio, 1.0)
            np.testing.assert_array_equal(H, H.T)
            assert np.linalg.eigvalsh(H).min() >= -1e-10 * h_scale


def test_sliding_friction_force_has_coulomb_magnitude():
    rng = np.random.default_rng(15)
    mu, normal_force, eps_v, dt = 0.6, 12.0, 1e-3, 5e-3
    eps_u = eps_v * dt
    for kind in KINDS:
        gamma, basis = _random_contact(rng, kind)
        du = _displacement_with_tangential_norm(rng, gamma, basis, 1e3 * eps_u)
        u_t = basis.T @ gamma @ du
        grad = friction_potential_gradient(du, gamma, basis, mu, normal_force, eps_v, dt)
        # Force on the relative motion: T^T Gamma (Gamma^T Gamma)^-1 of the gradient,
        # equivalently mu lambda times the unit sliding direction.
        weights = gamma[0, ::3]
        relative_force = (gamma @ grad) / (weights @ weights)
        np.testing.assert_allclose(
            relative_force, mu * normal_force * basis @ (u_t / np.linalg.norm(u_t)), rtol=1e-12
        )
        assert np.linalg.norm(relative_force) == pytest.approx(mu * normal_force, rel=1e-12)
        # Each vertex gets its weight's share, and the two sides balance (action = reaction)
        # except against a static plane.
        per_vertex = grad.reshape(-1, 3)
        np.testing.assert_allclose(
            per_vertex, np.outer(weights, relative_force), rtol=0, atol=1e-12 * mu * normal_force
        )
        if kind != "point_plane":
            np.testing.assert_allclose(per_vertex.sum(axis=0), 0.0, atol=1e-12 * mu * normal_force)
        value = friction_potential(du, gamma, basis, mu, normal_force, eps_v, dt)
        assert value == pytest.approx(mu * normal_force * np.linalg.norm(u_t), rel=1e-12)


def test_point_on_static_plane_closed_form():
    # A vertex sliding 1 cm along x on the ground: force -mu lambda x_hat, D = mu lambda |u|.
    basis = point_plane_tangent_basis(np.array([0.0, 0.0, 1.0]))
    gamma = point_plane_relative_displacement_matrix()
    du = np.array([0.01, 0.0, -3e-5])  # the normal component does not count
    args = (gamma, basis, 0.5, 9.81, 1e-3, 1e-2)
    assert friction_potential(du, *args) == pytest.approx(0.5 * 9.81 * 0.01, rel=1e-14)
    np.testing.assert_allclose(
        friction_potential_gradient(du, *args), [0.5 * 9.81, 0, 0], atol=1e-14
    )
    # Static regime: the force grows linearly, 2 mu lambda |u| / eps_u for |u| << eps_u.
    du = np.array([1e-9, 0.0, 0.0])
    np.testing.assert_allclose(
        friction_potential_gradient(du, *args), [2 * 0.5 * 9.81 * 1e-9 / 1e-5, 0, 0], rtol=1e-3
    )


def test_zero_normal_force_or_mu_gives_zero_friction():
    rng = np.random.default_rng(16)
    gamma, basis = _random_contact(rng, "point_triangle")
    du = rng.normal(size=12) * 1e-4
    for mu, lam in ((0.0, 5.0), (0.5, 0.0)):
        assert friction_potential(du, gamma, basis, mu, lam, 1e-3, 1e-2) == 0.0
        assert not np.any(friction_potential_gradient(du, gamma, basis, mu, lam, 1e-3, 1e-2))
        assert not np.any(friction_potential_hessian(du, gamma, basis, mu, lam, 1e-3, 1e-2))


def test_friction_potential_rejects_bad_input():
    gamma, basis = point_plane_relative_displacement_matrix(), np.eye(3)[:, :2]
    good = (np.zeros(3), gamma, basis, 0.5, 1.0, 1e-3, 1e-2)
    for index, bad, match in [
        (0, np.zeros(4), "entries"),
        (1, np.zeros((2, 3)), "gamma"),
        (2, np.eye(3), "basis"),
        (3, -0.1, "mu"),
        (4, np.inf, "normal_force"),
        (5, 0.0, "eps_v"),
        (6, -1.0, "dt"),
        (0, np.array([np.nan, 0, 0]), "NaN"),
    ]:
        args = list(good)
        args[index] = bad
        with pytest.raises(ValueError, match=match):
            friction_potential(*args)


def test_friction_kernels_callable_from_njit():
    @numba.njit
    def assemble(p, t0, t1, t2, du):
        basis = _point_triangle_tangent_basis(p, t0, t1, t2)
        gamma = _point_triangle_relative_displacement_matrix(
            _point_triangle_closest_point(p, t0, t1, t2)
        )
        value = _friction_potential(du, gamma, basis, 0.4, 2.0, 1e-5)
        grad = _friction_potential_gradient(du, gamma, basis, 0.4, 2.0, 1e-5)
        hess = _friction_potential_hessian(du, gamma, basis, 0.4, 2.0, 1e-5)
        return value, grad, hess

    rng = np.random.default_rng(17)
    p, t0, t1, t2 = rng.normal(size=(4, 3))
    du = rng.normal(size=12) * 1e-5
    value, grad, hess = assemble(p, t0, t1, t2, du)
    gamma = point_triangle_relative_displacement_matrix(point_triangle_closest_point(p, t0, t1, t2))
    basis = point_triangle_tangent_basis(p, t0, t1, t2)
    args = (du, gamma, basis, 0.4, 2.0, 1e-3, 1e-2)
    assert value == friction_potential(*args)
    np.testing.assert_array_equal(grad, friction_potential_gradient(*args))
    np.testing.assert_array_equal(hess, friction_potential_hessian(*args))


# -- Whole friction potential vs ipctk on a CollisionMesh -----------------------------------------

DHAT, KAPPA = 1e-3, 1e3


def _contact_scene():
    """One mesh holding a face-vertex, edge-vertex, vertex-vertex, edge-edge and plane-vertex
    contact, each at a distance below DHAT and far from the others."""
    tri = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    vertices = [
        tri,
        [[0.2, 0.3, 4e-4]],  # above the interior of triangle 0: face-vertex
        tri + [10, 0, 0],
        [[10.5, -3e-4, 2e-4]],  # beside the edge (0, 1) of triangle 1: edge-vertex
        tri + [20, 0, 0],
        [[20 - 2e-4, -3e-4, 3e-4]],  # beside the corner 0 of triangle 2: vertex-vertex
        [[30.5, -1, 0.3], [30.6, 1, 0.3], [29.6, 0.1, 0.3006], [31.6, 0.25, 0.3006]],  # edge-edge
    ]
    V = np.concatenate([np.asarray(v, dtype=float) for v in vertices])
    faces = np.array([[0, 1, 2], [4, 5, 6], [8, 9, 10]], dtype=np.int32)
    edges = np.array(
        [
            [0, 1],
            [1, 2],
            [2, 0],
            [4, 5],
            [5, 6],
            [6, 4],
            [8, 9],
            [9, 10],
            [10, 8],
            [12, 13],
            [14, 15],
        ],
        dtype=np.int32,
    )
    plane_normal = np.array([0.0, 0.3, 1.0]) / np.linalg.norm([0.0, 0.3, 1.0])
    plane_origin = np.array([40.0, 0.0, -5.0])
    # 0.3 mm above the plane (ipctk 1.6.1 finds plane-vertex pairs only closer than dhat / 2).
    offset = np.array([0.3, 0.2, 0.0])
    offset -= (offset @ plane_normal) * plane_normal
    rest = (plane_origin + offset + 3e-4 * plane_normal)[None, :]
    V = np.concatenate([V, rest])
    mesh = ipctk.CollisionMesh(V, edges, faces)
    mesh.planes = [ipctk.Hyperplane(plane_normal, plane_origin)]
    return mesh, V, plane_normal, plane_origin


def _our_contact(name, ids, V, plane_normal, plane_origin):
    """Lagged Gamma, basis and squared distance from our kernels for an ipctk collision."""
    x = V[ids]
    if name == "FaceVertexTangentialCollision":
        p, t0, t1, t2 = x
        n = np.cross(t1 - t0, t2 - t0)
        d2 = ((p - t0) @ n) ** 2 / (n @ n)
        coords = point_triangle_closest_point(p, t0, t1, t2)
        return (
            point_triangle_relative_displacement_matrix(coords),
            point_triangle_tangent_basis(p, t0, t1, t2),
            d2,
        )
    if name == "EdgeVertexTangentialCollision":
        p, e0, e1 = x
        d2 = np.sum(np.cross(e1 - e0, p - e0) ** 2) / np.sum((e1 - e0) ** 2)
        alpha = point_edge_closest_point(p, e0, e1)
        return (
            point_edge_relative_displacement_matrix(alpha),
            point_edge_tangent_basis(p, e0, e1),
            d2,
        )
    if name == "VertexVertexTangentialCollision":
        p0, p1 = x
        return (
            point_point_relative_displacement_matrix(),
            point_point_tangent_basis(p0, p1),
            np.sum((p0 - p1) ** 2),
        )
    if name == "EdgeEdgeTangentialCollision":
        ea0, ea1, eb0, eb1 = x
        n = np.cross(ea1 - ea0, eb1 - eb0)
        d2 = ((eb0 - ea0) @ n) ** 2 / (n @ n)
        coords = edge_edge_closest_point(ea0, ea1, eb0, eb1)
        return (
            edge_edge_relative_displacement_matrix(coords),
            edge_edge_tangent_basis(ea0, ea1, eb0, eb1),
            d2,
        )
    assert name == "PlaneVertexTangentialCollision"
    d2 = ((x[0] - plane_origin) @ plane_normal) ** 2
    return point_plane_relative_displacement_matrix(), point_plane_tangent_basis(plane_normal), d2


def _our_friction(collisions, mesh, V, U, mu, eps_v, dt, plane_normal, plane_origin):
    """Sum of our per-contact potentials, gradients and Hessians over ipctk's contact set."""
    value, grad, hess = 0.0, np.zeros(V.size), np.zeros((V.size, V.size))
    names = []
    for i in range(len(collisions)):
        c = collisions[i]
        name = type(c).__name__
        ids = [v for v in c.vertex_ids(mesh.edges, mesh.faces) if v >= 0]
        gamma, basis, d2 = _our_contact(name, ids, V, plane_normal, plane_origin)
        # Lagged normal force of the barrier kappa b(d^2, dhat^2): lambda = -kappa b' * 2 d.
        normal_force = -KAPPA * barrier_first_derivative(d2, DHAT**2) * 2 * np.sqrt(d2)
        assert normal_force == pytest.approx(c.normal_force_magnitude, rel=1e-10)
        np.testing.assert_allclose(basis @ basis.T, c.tangent_basis @ c.tangent_basis.T, atol=1e-10)
        dofs = np.array([3 * v + k for v in ids for k in range(3)])
        args = (U[ids].ravel(), gamma, basis, mu, normal_force, eps_v, dt)
        value += friction_potential(*args)
        grad[dofs] += friction_potential_gradient(*args)
        hess[np.ix_(dofs, dofs)] += friction_potential_hessian(*args)
        names.append(name)
    return value, grad, hess, names


def test_friction_potential_matches_ipctk_on_a_collision_mesh():
    mesh, V, plane_normal, plane_origin = _contact_scene()
    normal_collisions = ipctk.NormalCollisions()
    normal_collisions.build(mesh, V, DHAT)
    mu, eps_v, dt = 0.4, 2e-3, 1e-2
    collisions = ipctk.TangentialCollisions()
    collisions.build(mesh, V, normal_collisions, ipctk.BarrierPotential(DHAT, KAPPA), mu)
    # ipctk's potential is written in velocities v with eps_v in m/s:
    #   D_ipctk(v; eps_v) = mu N f0(|T^T Gamma v|, eps_v).
    # f0 is positively homogeneous, f0(dt y, dt eps) = dt f0(y, eps), so with v = du / dt
    #   D(du) = dt D_ipctk(du / dt; eps_v),  grad D = grad_v D_ipctk,  hess D = hess_v D_ipctk / dt,
    # and equivalently D(du) = D_ipctk(du; eps_v dt) (displacements as "velocities").
    ipctk_velocity = ipctk.FrictionPotential(eps_v)
    ipctk_displacement = ipctk.FrictionPotential(eps_v * dt)
    rng = np.random.default_rng(18)
    seen = set()
    for scale in (0.0, 1e-3, 0.3, 1.0, 3.0, 100.0):  # |du| relative to eps_v dt
        U = rng.normal(size=V.shape) * scale * eps_v * dt
        value, grad, hess, names = _our_friction(
            collisions, mesh, V, U, mu, eps_v, dt, plane_normal, plane_origin
        )
        seen.update(names)
        assert value == pytest.approx(ipctk_displacement(collisions, mesh, U), rel=1e-12)
        assert value == pytest.approx(dt * ipctk_velocity(collisions, mesh, U / dt), rel=1e-12)
        g_ref = ipctk_displacement.gradient(collisions, mesh, U)
        assert np.abs(g_ref).max() > 0.0 or scale == 0.0
        np.testing.assert_allclose(grad, g_ref, rtol=0, atol=1e-10 * np.abs(g_ref).max())
        np.testing.assert_allclose(
            grad,
            ipctk_velocity.gradient(collisions, mesh, U / dt),
            rtol=0,
            atol=1e-10 * np.abs(g_ref).max(),
        )
        for method in (ipctk.PSDProjectionMethod.NONE, ipctk.PSDProjectionMethod.CLAMP):
            h_ref = ipctk_displacement.hessian(collisions, mesh, U, method).toarray()
            h_tol = 1e-10 * np.abs(h_ref).max()
            np.testing.assert_allclose(hess, h_ref, rtol=0, atol=h_tol)
            h_vel = ipctk_velocity.hessian(collisions, mesh, U / dt, method).toarray() / dt
            np.testing.assert_allclose(hess, h_vel, rtol=0, atol=h_tol)
    assert seen == {
        "FaceVertexTangentialCollision",
        "EdgeVertexTangentialCollision",
        "VertexVertexTangentialCollision",
        "EdgeEdgeTangentialCollision",
        "PlaneVertexTangentialCollision",
    }
