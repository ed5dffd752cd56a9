import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.transform import Rotation

from ipcgrasp.engine.affine_body import (
    affine_jacobian,
    affine_mass_matrix,
    affine_positions,
    nearest_rotation,
    orthogonality_potential,
    orthogonality_potential_gradient,
    orthogonality_potential_hessian,
    pullback_gradient,
    pullback_hessian,
    pullback_hessian_block,
    pullback_rows,
)

KAPPA, VOLUME = 1.0e9, 2.7e-5  # Pa, m^3 (a 3 cm cube)


def make_q(p, A):
    return np.concatenate([p, np.asarray(A).ravel()])


def box_closed_form(extents, offset, mass):
    c = np.asarray(offset, dtype=float)
    S = mass * (np.diag(np.asarray(extents) ** 2 / 12.0) + np.outer(c, c))
    return c, S


# ----------------------------------------------------------------------------------------------
# Kinematics


def test_jacobian_and_positions_follow_q_ordering():
    rng = np.random.default_rng(0)
    p, A = rng.standard_normal(3), rng.standard_normal((3, 3))
    q = make_q(p, A)
    X = rng.standard_normal((7, 3))
    x = affine_positions(q, X)
    np.testing.assert_allclose(x, p + X @ A.T, rtol=1e-14, atol=1e-14)
    J = affine_jacobian(X)
    assert J.shape == (7, 3, 12)
    np.testing.assert_allclose(J @ q, x, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(affine_jacobian(X[0]), J[0])
    # q[3 + 3 i + j] is A_ij
    J0 = affine_jacobian(np.array([2.0, 3.0, 5.0]))
    assert J0[1, 1] == 1.0 and J0[1, 6] == 2.0 and J0[1, 7] == 3.0 and J0[1, 8] == 5.0
    assert np.count_nonzero(J0) == 12


# ----------------------------------------------------------------------------------------------
# Mass matrix


def test_mass_matrix_blocks_of_a_box():
    extents, offset, mass = np.array([0.03, 0.05, 0.02]), np.array([0.3, -0.2, 0.05]), 0.35
    com, S = box_closed_form(extents, offset, mass)
    M = affine_mass_matrix(mass, com, S)
    np.testing.assert_allclose(M[:3, :3], mass * np.eye(3))
    np.testing.assert_allclose(M[0, 3:6], mass * com, rtol=1e-12)
    np.testing.assert_allclose(M[2, 9:12], mass * com, rtol=1e-12)
    assert np.all(M[0, 6:] == 0.0)
    np.testing.assert_allclose(M[6:9, 6:9], S, rtol=1e-12)
    np.testing.assert_array_equal(M, M.T)
    assert np.linalg.eigvalsh(M)[0] > 0


def test_mass_matrix_rejects_bad_mass_and_second_moment():
    with pytest.raises(ValueError, match="mass"):
        affine_mass_matrix(-1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="positive definite"):
        affine_mass_matrix(1.0, np.zeros(3), np.diag([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="positive definite"):
        affine_mass_matrix(1.0, np.array([1.0, 0.0, 0.0]), np.eye(3))  # S < m c c^T along x


def test_kinetic_energy_equals_point_cloud_sum():
    rng = np.random.default_rng(2)
    points = 0.05 * rng.standard_normal((200, 3)) + [0.02, -0.01, 0.03]
    masses = rng.uniform(0.1, 1.0, 200) * 1e-3
    m = masses.sum()
    com = masses @ points / m
    S = np.einsum("v,vi,vj->ij", masses, points, points)
    M = affine_mass_matrix(m, com, S)
    for _ in range(20):
        qdot = rng.standard_normal(12)
        velocities = affine_positions(qdot, points)  # x = J q is linear, so xdot = J qdot
        expected = 0.5 * np.sum(masses * np.sum(velocities**2, axis=1))
        assert 0.5 * qdot @ M @ qdot == pytest.approx(expected, rel=1e-12)


def test_kinetic_energy_of_box_by_gauss_quadrature():
    # 2-point Gauss-Legendre per axis integrates the quadratic |pdot + Adot X|^2 exactly
    extents, offset, mass = np.array([0.04, 0.03, 0.06]), np.array([0.01, 0.02, -0.03]), 0.5
    M = affine_mass_matrix(mass, *box_closed_form(extents, offset, mass))
    g = np.array([-1.0, 1.0]) / np.sqrt(3.0)
    nodes = np.array([[a, b, c] for a in g for b in g for c in g]) * extents / 2 + offset
    weights = np.full(8, mass / 8)
    rng = np.random.default_rng(3)
    for _ in range(10):
        qdot = rng.standard_normal(12)
        v = affine_positions(qdot, nodes)
        assert 0.5 * qdot @ M @ qdot == pytest.approx(0.5 * weights @ np.sum(v**2, 1), rel=1e-11)


# ----------------------------------------------------------------------------------------------
# Orthogonality potential


def test_orthogonality_potential_vanishes_on_rotations():
    rng = np.random.default_rng(4)
    for R in Rotation.random(20, random_state=rng).as_matrix():
        q = make_q(rng.standard_normal(3), R)
        assert orthogonality_potential(q, KAPPA, VOLUME) < 1e-20 * KAPPA * VOLUME
        g = orthogonality_potential_gradient(q, KAPPA, VOLUME)
        assert np.abs(g).max() < 1e-12 * KAPPA * VOLUME
    A = np.diag([1.1, 1.0, 1.0])
    expected = KAPPA * VOLUME * (1.21 - 1.0) ** 2
    assert orthogonality_potential(make_q(np.zeros(3), A), KAPPA, VOLUME) == pytest.approx(expected)


@pytest.mark.parametrize("spread", [0.05, 0.5])
def test_orthogonality_derivatives_match_finite_differences(spread, fd_gradient, fd_jacobian):
    rng = np.random.default_rng(5)
    for _ in range(10):
        R = Rotation.random(random_state=rng).as_matrix()
        q = make_q(rng.standard_normal(3), R + spread * rng.standard_normal((3, 3)))
        g = orthogonality_potential_gradient(q, KAPPA, VOLUME)
        g_fd = fd_gradient(lambda y: orthogonality_potential(y, KAPPA, VOLUME), q, 1e-7)
        np.testing.assert_allclose(g, g_fd, rtol=0, atol=1e-6 * np.abs(g).max())
        assert np.all(g[:3] == 0) and np.abs(g[3:]).max() > 0
        H = orthogonality_potential_hessian(q, KAPPA, VOLUME, project=False)
        H_fd = fd_jacobian(lambda y: orthogonality_potential_gradient(y, KAPPA, VOLUME), q, 1e-7)
        np.testing.assert_allclose(H, H_fd, rtol=0, atol=1e-6 * np.abs(H).max())
        assert np.all(H[:3] == 0) and np.all(H[:, :3] == 0)


def test_orthogonality_hessian_projection():
    rng = np.random.default_rng(6)
    n_indefinite = 0
    for _ in range(50):
        q = make_q(np.zeros(3), 0.7 * rng.standard_normal((3, 3)))
        H = orthogonality_potential_hessian(q, KAPPA, VOLUME, project=False)
        H_psd = orthogonality_potential_hessian(q, KAPPA, VOLUME)
        w, Q = np.linalg.eigh(H)
        n_indefinite += w[0] < -1e-9 * np.abs(w).max()
        H_ref = (Q * np.maximum(w, 0)) @ Q.T
        np.testing.assert_allclose(H_psd, H_ref, atol=1e-10 * np.abs(w).max())
        assert np.linalg.eigvalsh(H_psd)[0] > -1e-10 * np.abs(w).max()
    assert n_indefinite > 10
    # PSD already (rotation, or a uniformly enlarged rotation): projection changes nothing
    R = Rotation.random(random_state=rng).as_matrix()
    for A in (R, 1.1 * R):
        q = make_q(np.ones(3), A)
        H = orthogonality_potential_hessian(q, KAPPA, VOLUME, project=False)
        np.testing.assert_allclose(
            orthogonality_potential_hessian(q, KAPPA, VOLUME), H, atol=1e-9 * np.abs(H).max()
        )


# ----------------------------------------------------------------------------------------------
# Pose


def test_nearest_rotation():
    rng = np.random.default_rng(7)
    for R in Rotation.random(20, random_state=rng).as_matrix():
        A = R + 1e-3 * rng.standard_normal((3, 3))
        Rn = nearest_rotation(A)
        np.testing.assert_allclose(Rn @ Rn.T, np.eye(3), atol=1e-14)
        assert np.linalg.det(Rn) == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_allclose(Rn, scipy.linalg.polar(A)[0], atol=1e-13)
        assert np.abs(Rn - R).max() < 1e-2
        np.testing.assert_allclose(nearest_rotation(2.5 * R), R, atol=1e-14)
    reflection = np.diag([1.0, 1.0, -1.0]) @ Rotation.random(random_state=rng).as_matrix()
    assert np.linalg.det(nearest_rotation(reflection)) == pytest.approx(1.0)


# ----------------------------------------------------------------------------------------------
# Pull-back to q-space


def test_pullback_matches_derivatives_in_q(fd_gradient, fd_jacobian):
    """E(q) = sum_v 1/2 (x_v - c_v)^T K_v (x_v - c_v) + x_a^T C x_b with x = J(X) q."""
    rng = np.random.default_rng(8)
    n = 6
    X = 0.03 * rng.standard_normal((n, 3))
    c = rng.standard_normal((n, 3))
    K = rng.standard_normal((n, 3, 3))
    K = K @ np.swapaxes(K, 1, 2)  # SPD blocks
    C = rng.standard_normal((3, 3))
    a, b = 1, 4

    def energy(q):
        x = affine_positions(q, X)
        d = x - c
        return 0.5 * np.einsum("vi,vij,vj->", d, K, d) + x[a] @ C @ x[b]

    q = make_q(rng.standard_normal(3), np.eye(3) + 0.2 * rng.standard_normal((3, 3)))
    x = affine_positions(q, X)
    g_vertex = np.einsum("vij,vj->vi", K, x - c)
    g_vertex[a] += C @ x[b]
    g_vertex[b] += C.T @ x[a]
    g = pullback_gradient(X, g_vertex)
    # E is quadratic in q, so central differences are exact up to rounding even with a large step
    g_fd = fd_gradient(energy, q, 1e-3)
    np.testing.assert_allclose(g, g_fd, rtol=0, atol=1e-9 * np.abs(g).max())

    H = pullback_hessian(X, K) + pullback_hessian_block(X[a], X[b], C)
    H += pullback_hessian_block(X[b], X[a], C.T)
    H_fd = fd_jacobian(lambda y: fd_gradient(energy, y, 1e-3), q, 1e-3)
    np.testing.assert_allclose(H, H_fd, rtol=1e-6, atol=1e-6 * np.abs(H).max())
    np.testing.assert_allclose(H, H.T, atol=1e-14 * np.abs(H).max())
    assert np.linalg.eigvalsh(pullback_hessian(X, K))[0] > -1e-12 * np.abs(H).max()


def test_pullback_rows_is_jacobian_transpose_product():
    rng = np.random.default_rng(9)
    Xa = rng.standard_normal(3)
    M = rng.standard_normal((3, 5))
    np.testing.assert_allclose(pullback_rows(Xa, M), affine_jacobian(Xa).T @ M, rtol=1e-15)
    Xb, H = rng.standard_normal(3), rng.standard_normal((3, 3))
    np.testing.assert_allclose(
        pullback_hessian_block(Xa, Xb, H),
        affine_jacobian(Xa).T @ H @ affine_jacobian(Xb),
        rtol=1e-14,
        atol=1e-14,
    )
