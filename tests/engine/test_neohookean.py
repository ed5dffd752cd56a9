import itertools

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.spatial.transform import Rotation

from ipcgrasp.engine.neohookean import (
    _rotation_svd,
    _symmetric_eigen3,
    any_inverted,
    elastic_energy,
    elastic_gradient,
    elastic_hessians,
    energy_density,
    first_piola_kirchhoff,
    lame_parameters,
    lumped_masses,
    max_noninverting_step,
    min_jacobian,
    rest_shape_inverse,
    tet_energies,
)

E_PAD, NU_PAD = 1.0e6, 0.45
MU, LAM = lame_parameters(E_PAD, NU_PAD)
KUHN = [[0, 1 << p[0], (1 << p[0]) | (1 << p[1]), 7] for p in itertools.permutations(range(3))]


def box_mesh(n, size):
    """Box [0, size]^3 cut into n^3 cells of six positively oriented Kuhn tets."""
    m = n + 1
    X = size / n * np.array(
        [[i, j, k] for k in range(m) for j in range(m) for i in range(m)], dtype=float
    )
    tets = []
    for i, j, k in itertools.product(range(n), repeat=3):
        base = i + m * j + m * m * k
        corner = [base + (c & 1) + m * ((c >> 1) & 1) + m * m * ((c >> 2) & 1) for c in range(8)]
        tets += [[corner[v] for v in t] for t in KUHN]
    tets = np.array(tets)
    a, b, c, d = (X[tets[:, k]] for k in range(4))
    negative = np.einsum("ij,ij->i", b - a, np.cross(c - a, d - a)) < 0
    tets[negative] = tets[negative][:, [0, 2, 1, 3]]
    return X, tets


def one_tet(rng):
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]) * 0.01
    X = X + 0.002 * rng.standard_normal(X.shape)
    tets = np.array([[0, 1, 2, 3]])
    if np.linalg.det((X[1:] - X[0]).T) < 0:
        tets = tets[:, [0, 2, 1, 3]]
    return X, tets


def random_F(rng, spread):
    """Random F with det > 0: rotation * diag(singular values) * rotation."""
    s = np.exp(spread * rng.standard_normal(3))
    return Rotation.random(random_state=rng).as_matrix() @ np.diag(s) @ Rotation.random(
        random_state=rng
    ).as_matrix()


def reference_stiffness(F, mu, lam):
    """d2Psi/dF2 (9,9), row-major vec, from dP = mu dF + lam tr(F^-1 dF) F^-T
    - (lam ln J - mu) F^-T dF^T F^-T."""
    Finv = np.linalg.inv(F)
    FinvT = Finv.T
    lnJ = np.log(np.linalg.det(F))
    C = np.zeros((9, 9))
    for k in range(9):
        dF = np.zeros(9)
        dF[k] = 1.0
        dF = dF.reshape(3, 3)
        dP = mu * dF + lam * np.trace(Finv @ dF) * FinvT - (lam * lnJ - mu) * FinvT @ dF.T @ FinvT
        C[:, k] = dP.ravel()
    return C


def shape_matrix(Dm_inv):
    """B (9,12) with vec(F) = B x_tet (row-major F, vertex-major x)."""
    D = np.vstack([-Dm_inv.sum(axis=0), Dm_inv])
    B = np.zeros((9, 12))
    for a, b, m in itertools.product(range(3), range(3), range(4)):
        B[3 * a + b, 3 * m + a] = D[m, b]
    return B


def deformed(X, F):
    return X @ F.T


# ----------------------------------------------------------------------------------------------


def test_lame_parameters():
    mu, lam = lame_parameters(1.0e6, 0.3)
    assert mu == pytest.approx(1.0e6 / 2.6, rel=1e-15)
    assert lam == pytest.approx(0.3e6 / (1.3 * 0.4), rel=1e-15)
    assert lame_parameters(2.0, 0.0) == (1.0, 0.0)
    for bad in [(0.0, 0.3), (-1.0, 0.3), (1.0, 0.5), (1.0, -1.0), (np.nan, 0.3)]:
        with pytest.raises(ValueError):
            lame_parameters(*bad)


def test_rest_shape_inverse_and_volumes():
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    Dm = np.swapaxes(X[tets[:, 1:]] - X[tets[:, :1]], 1, 2)
    np.testing.assert_allclose(Dm_inv @ Dm, np.broadcast_to(np.eye(3), Dm.shape), atol=1e-12)
    assert np.all(volumes > 0)
    assert volumes.sum() == pytest.approx(0.02**3, rel=1e-12)
    flipped = tets.copy()
    flipped[5] = flipped[5][[1, 0, 2, 3]]
    with pytest.raises(ValueError, match="tet 5 "):
        rest_shape_inverse(X, flipped)
    flat = X.copy()
    flat[tets[0]] = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]
    with pytest.raises(ValueError, match="tet 0 "):
        rest_shape_inverse(flat, tets)


def test_lumped_masses():
    X, tets = box_mesh(3, 0.03)
    rho = 1100.0
    masses = lumped_masses(X, tets, rho)
    assert masses.sum() == pytest.approx(rho * 0.03**3, rel=1e-12)
    _, volumes = rest_shape_inverse(X, tets)
    corner = 0  # vertex (0, 0, 0)
    assert masses[corner] == pytest.approx(rho * volumes[np.any(tets == corner, 1)].sum() / 4)
    assert np.all(masses > 0)
    with pytest.raises(ValueError):
        lumped_masses(X, tets, 0.0)


def test_energy_density_values(fd_gradient):
    rng = np.random.default_rng(0)
    for _ in range(20):
        F = random_F(rng, 0.3)
        J = np.linalg.det(F)
        expected = MU / 2 * (np.sum(F * F) - 3) - MU * np.log(J) + LAM / 2 * np.log(J) ** 2
        assert energy_density(F, MU, LAM) == pytest.approx(expected, rel=1e-12)
        P = first_piola_kirchhoff(F, MU, LAM)
        P_fd = fd_gradient(lambda f: energy_density(f.reshape(3, 3), MU, LAM), F.ravel(), 1e-7)
        np.testing.assert_allclose(P.ravel(), P_fd, rtol=1e-6, atol=1e-6 * np.abs(P).max())
    assert energy_density(np.eye(3), MU, LAM) == 0.0
    assert energy_density(np.diag([1.0, 1.0, -0.5]), MU, LAM) == np.inf
    batch = np.stack([np.eye(3), 1.1 * np.eye(3)])
    assert energy_density(batch, MU, LAM).shape == (2,)


def test_energy_density_of_a_tiny_strain_on_a_turned_element_is_its_linear_elastic_energy():
    """A stiff pad turned half a revolution from its rest frame under a 1e-9 strain: Psi must be
    the small-strain energy mu eps:eps + lam/2 (tr eps)^2 (relative error O(eps)), not the
    1e-16 mu rounding of two O(mu) terms that cancel (the line search compares such energies)."""
    mu, lam = lame_parameters(1e11, 0.45)
    rng = np.random.default_rng(3)
    for angle in (np.pi, 0.5, 1e-3):
        R = Rotation.from_rotvec(angle * np.array([0.36, 0.48, 0.8])).as_matrix()
        eps = 1e-9 * rng.standard_normal((3, 3))
        eps = 0.5 * (eps + eps.T)
        linear = mu * np.sum(eps * eps) + 0.5 * lam * np.trace(eps) ** 2
        assert energy_density(R @ (np.eye(3) + eps), mu, lam) == pytest.approx(linear, rel=1e-6)


def test_zero_energy_and_gradient_at_rest_and_under_rigid_motion():
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    R = Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix()
    scale_force = MU * 0.02**2  # a 100 % strain force on the box face
    for x in (X, X @ R.T + np.array([0.1, -0.2, 0.3])):
        assert abs(elastic_energy(x, tets, Dm_inv, volumes, MU, LAM)) < 1e-12 * MU * 0.02**3
        g = elastic_gradient(x, tets, Dm_inv, volumes, MU, LAM)
        assert np.abs(g).max() < 1e-10 * scale_force
        assert min_jacobian(x, tets, Dm_inv) == pytest.approx(1.0, abs=1e-12)
        assert not any_inverted(x, tets, Dm_inv)


def test_gradient_matches_finite_differences(fd_gradient):
    rng = np.random.default_rng(1)
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    x = deformed(X, random_F(rng, 0.2)) + 0.001 * rng.standard_normal(X.shape)
    g = elastic_gradient(x, tets, Dm_inv, volumes, MU, LAM)
    assert np.abs(g).max() > 1.0  # the check below cannot pass on a zero gradient
    energy = lambda y: elastic_energy(y.reshape(-1, 3), tets, Dm_inv, volumes, MU, LAM)
    g_fd = fd_gradient(energy, x.ravel(), 1e-8)
    np.testing.assert_allclose(g.ravel(), g_fd, rtol=0, atol=1e-6 * np.abs(g).max())
    assert tet_energies(x, tets, Dm_inv, volumes, MU, LAM).sum() == pytest.approx(
        energy(x.ravel()), rel=1e-13
    )


def assembled(hessians, tets, n):
    H = np.zeros((3 * n, 3 * n))
    for t, tet in enumerate(tets):
        idx = (3 * tet[:, None] + np.arange(3)).ravel()
        H[np.ix_(idx, idx)] += hessians[t]
    return H


def test_assembled_hessian_matches_finite_differences(fd_jacobian):
    rng = np.random.default_rng(2)
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    x = deformed(X, random_F(rng, 0.3)) + 0.001 * rng.standard_normal(X.shape)
    H = assembled(elastic_hessians(x, tets, Dm_inv, volumes, MU, LAM, project=False), tets, len(X))
    grad = lambda y: elastic_gradient(y.reshape(-1, 3), tets, Dm_inv, volumes, MU, LAM).ravel()
    H_fd = fd_jacobian(grad, x.ravel(), 1e-8)
    np.testing.assert_allclose(H, H_fd, rtol=0, atol=1e-6 * np.abs(H).max())


def test_rotation_svd_and_symmetric_eigen3_kernels():
    rng = np.random.default_rng(3)
    R = Rotation.from_rotvec([0.3, -0.2, 0.9]).as_matrix()
    cases = [random_F(rng, 0.5) for _ in range(200)]
    cases += [rng.standard_normal((3, 3)) for _ in range(200)]  # either sign of det F
    cases += [
        np.eye(3),
        -np.eye(3),
        2.0 * R,
        R @ np.diag([1.0, 1.0, 1e-9]),
        R @ np.diag([3.0, 1e-7, 1e-7]) @ R.T,
        np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
        np.diag([1.0, 2.0, 3.0]),
    ]
    for F in cases:
        U, sigma, V = _rotation_svd(F)
        tol = 4e-14 * np.abs(F).max()
        np.testing.assert_allclose(U @ np.diag(sigma) @ V.T, F, rtol=0, atol=tol)
        for Q in (U, V):
            np.testing.assert_allclose(Q @ Q.T, np.eye(3), atol=1e-14)
            assert np.linalg.det(Q) == pytest.approx(1.0, abs=1e-14)
        s_ref = np.linalg.svd(F, compute_uv=False)
        np.testing.assert_allclose(np.abs(sigma), s_ref, rtol=1e-13, atol=1e-15 * s_ref[0])
        assert np.sign(sigma[2]) == np.sign(np.linalg.det(F))
        A = F + F.T
        tol = 4e-14 * np.abs(A).max()
        w, W = _symmetric_eigen3(A)
        np.testing.assert_allclose(W @ np.diag(w) @ W.T, A, atol=tol)
        np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-14)
        np.testing.assert_allclose(np.sort(w), np.linalg.eigvalsh(A), atol=tol)


# Deformation gradients where an SVD-based eigensystem could go wrong: repeated and
# nearly repeated singular values, strong compression (indefinite Hessian), reflection-free
# rotations only, and the rest state.
SPECIAL_F = {
    "rest": np.eye(3),
    "isotropic_scale": 0.7 * Rotation.from_rotvec([0.2, 0.5, -0.4]).as_matrix(),
    "two_equal": Rotation.from_rotvec([1.0, 0.1, 0.3]).as_matrix() @ np.diag([1.3, 1.3, 0.6]),
    "nearly_equal": np.diag([0.9, 0.9 + 1e-9, 1.2]),
    "strong_compression": np.diag([0.25, 0.4, 1.1]) @ Rotation.from_rotvec([0, 0.4, 0]).as_matrix(),
    "shear": np.array([[1.0, 0.8, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]]),
}


@pytest.mark.parametrize("name", list(SPECIAL_F))
def test_tet_hessian_exact_at_special_configurations(name, fd_jacobian):
    rng = np.random.default_rng(4)
    X, tets = one_tet(rng)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    x = deformed(X, SPECIAL_F[name])
    H = elastic_hessians(x, tets, Dm_inv, volumes, MU, LAM, project=False)[0]
    # independent closed form: vol B^T (d2Psi/dF2) B
    B = shape_matrix(Dm_inv[0])
    H_ref = volumes[0] * B.T @ reference_stiffness(SPECIAL_F[name], MU, LAM) @ B
    np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-10 * np.abs(H_ref).max())
    grad = lambda y: elastic_gradient(y.reshape(-1, 3), tets, Dm_inv, volumes, MU, LAM).ravel()
    H_fd = fd_jacobian(grad, x.ravel(), 1e-9)
    np.testing.assert_allclose(H, H_fd, rtol=0, atol=1e-6 * np.abs(H).max())


def test_projected_hessian_is_the_psd_part_in_F_space():
    rng = np.random.default_rng(5)
    X, tets = one_tet(rng)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    B = shape_matrix(Dm_inv[0])
    n_indefinite = 0
    for trial in range(300):
        F = random_F(rng, 0.6) if trial else SPECIAL_F["strong_compression"]
        x = deformed(X, F)
        H = elastic_hessians(x, tets, Dm_inv, volumes, MU, LAM)[0]
        w, Q = np.linalg.eigh(reference_stiffness(F, MU, LAM))
        n_indefinite += w[0] < 0
        H_ref = volumes[0] * B.T @ (Q * np.maximum(w, 0)) @ Q.T @ B
        scale = np.abs(H_ref).max()
        np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-9 * scale)
        assert np.linalg.eigvalsh(H)[0] > -1e-12 * scale
        np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-12 * scale)
    assert n_indefinite > 50  # the projection was exercised


def test_projection_is_identity_when_already_psd():
    rng = np.random.default_rng(6)
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    x = deformed(X, random_F(rng, 0.01))  # small strain: the Hessian is PSD
    H_raw = elastic_hessians(x, tets, Dm_inv, volumes, MU, LAM, project=False)
    H_psd = elastic_hessians(x, tets, Dm_inv, volumes, MU, LAM, project=True)
    scale = np.abs(H_raw).max()
    assert min(np.linalg.eigvalsh(h)[0] for h in H_raw) > -1e-9 * scale
    np.testing.assert_allclose(H_psd, H_raw, rtol=0, atol=1e-10 * scale)
    # and it equals a brute-force 12x12 eigenvalue clamp
    for h_raw, h_psd in zip(H_raw[:5], H_psd[:5]):
        w, Q = np.linalg.eigh(h_raw)
        np.testing.assert_allclose(h_psd, (Q * np.maximum(w, 0)) @ Q.T, atol=1e-9 * scale)


def test_rotation_invariance():
    rng = np.random.default_rng(7)
    X, tets = box_mesh(2, 0.02)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    x = deformed(X, random_F(rng, 0.4)) + 0.001 * rng.standard_normal(X.shape)
    R = Rotation.random(random_state=rng).as_matrix()
    xr = x @ R.T + rng.standard_normal(3)
    args = (tets, Dm_inv, volumes, MU, LAM)
    assert elastic_energy(xr, *args) == pytest.approx(elastic_energy(x, *args), rel=1e-12)
    g = elastic_gradient(x, *args)
    np.testing.assert_allclose(elastic_gradient(xr, *args), g @ R.T, atol=1e-10 * np.abs(g).max())
    R12 = np.kron(np.eye(4), R)
    for project in (False, True):
        H = elastic_hessians(x, *args, project=project)
        Hr = elastic_hessians(xr, *args, project=project)
        np.testing.assert_allclose(Hr, R12 @ H @ R12.T, atol=1e-9 * np.abs(H).max())


def test_small_strain_uniaxial_stretch_recovers_youngs_modulus():
    E, nu = 2.0e6, 0.3
    mu, lam = lame_parameters(E, nu)
    side = 0.02
    X, tets = box_mesh(2, side)
    Dm_inv, volumes = rest_shape_inverse(X, tets)
    V = side**3
    eps = 1e-4

    def energy(lateral):
        F = np.diag([1 + eps, 1 + lateral, 1 + lateral])
        return elastic_energy(deformed(X, F), tets, Dm_inv, volumes, mu, lam)

    res = minimize_scalar(energy, bounds=(-2 * eps, 0.0), method="bounded",
                          options={"xatol": 1e-14})
    assert res.x / eps == pytest.approx(-nu, rel=2e-3)
    assert 2 * res.fun / (V * eps**2) == pytest.approx(E, rel=2e-3)
    # the nodal forces on the face x = side add up to the stress E eps times its area
    g = elastic_gradient(deformed(X, np.diag([1 + eps, 1 + res.x, 1 + res.x])), tets, Dm_inv,
                         volumes, mu, lam)
    face = np.isclose(X[:, 0], side)
    assert g[face, 0].sum() / side**2 == pytest.approx(E * eps, rel=2e-3)
    np.testing.assert_allclose(g.sum(axis=0), 0.0, atol=1e-12 * E * eps * side**2)


def test_min_jacobian_and_inversion():
    X, tets = box_mesh(2, 0.02)
    Dm_inv, _ = rest_shape_inverse(X, tets)
    assert min_jacobian(deformed(X, 0.8 * np.eye(3)), tets, Dm_inv) == pytest.approx(0.512)
    x = X.copy()
    centre = 13  # the middle vertex (1, 1, 1) of the 3x3x3 grid
    x[centre] += [0.015, 0.0, 0.0]  # through the neighbouring vertex at x = 0.02
    assert any_inverted(x, tets, Dm_inv)
    assert min_jacobian(x, tets, Dm_inv) < 0


def test_max_step_linear_collapse():
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    tets = np.array([[0, 1, 2, 3]])
    Dm_inv, _ = rest_shape_inverse(X, tets)
    dx = np.zeros_like(X)
    dx[3] = [0.3, 0.2, -4.0]  # apex reaches the base plane at t = 0.25
    assert max_noninverting_step(X, dx, tets, Dm_inv) == pytest.approx(0.9 * 0.25, rel=1e-12)
    assert max_noninverting_step(X, dx, tets, Dm_inv, safety=1.0) == pytest.approx(0.25, rel=1e-12)
    assert max_noninverting_step(X, 0.1 * dx, tets, Dm_inv) == 1.0
    assert max_noninverting_step(X, np.zeros_like(X), tets, Dm_inv) == 1.0
    with pytest.raises(ValueError, match="inverted"):
        max_noninverting_step(X + 2 * dx, dx, tets, Dm_inv)


def test_max_step_matches_the_roots_of_each_tets_jacobian_cubic():
    """On a jittered mesh under random motions from tiny (every tet far from inverting, where
    the step skips the root search) to large (many tets invert), the step equals safety times the
    first root in (0, 1 / safety] of det(F + t dF) over all tets, found by numpy's polynomial
    roots (coefficients fitted exactly at 4 points)."""
    X, tets = box_mesh(3, 0.03)
    rng = np.random.default_rng(11)
    X = X + rng.uniform(-0.001, 0.001, X.shape)
    Dm_inv, _ = rest_shape_inverse(X, tets)
    safety, t_max = 0.9, 1.0 / 0.9
    ts = np.arange(4.0)
    for scale in (1e-6, 1e-3, 0.003, 0.01, 0.03):
        for _ in range(4):
            dx = rng.normal(scale=scale, size=X.shape)
            first = np.inf
            for tet in tets:
                Dm = (X[tet[1:]] - X[tet[0]]).T
                dets = [np.linalg.det((X[tet[1:]] + t * dx[tet[1:]] - X[tet[0]] - t * dx[tet[0]]).T
                                      @ np.linalg.inv(Dm)) for t in ts]
                roots = np.roots(np.polyfit(ts, dets, 3))
                real = roots[np.abs(roots.imag) < 1e-9].real
                inside = real[(real > 0) & (real <= t_max)]
                if inside.size:
                    first = min(first, inside.min())
            expected = min(1.0, safety * first)
            assert max_noninverting_step(X, dx, tets, Dm_inv, safety) == pytest.approx(expected, rel=1e-8)


def test_max_step_tangent_double_root():
    # F(t) = diag(1 - 2t, 1 - 2t, 1): J = (1 - 2t)^2 touches zero at t = 1/2 without changing sign
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    tets = np.array([[0, 1, 2, 3]])
    Dm_inv, _ = rest_shape_inverse(X, tets)
    dx = deformed(X, np.diag([-2.0, -2.0, 0.0]))
    alpha = max_noninverting_step(X, dx, tets, Dm_inv, safety=1.0)
    # near a double root the cubic rounds to zero within ~sqrt(machine eps); the answer stays below
    assert 0.5 - 1e-7 < alpha <= 0.5
    # a cubic with its two other roots beyond the step: det = (1 - t)(1 - 3t)(1 + t)
    dx = deformed(X, np.diag([-1.0, -3.0, 1.0]))
    assert max_noninverting_step(X, dx, tets, Dm_inv, safety=1.0) == pytest.approx(1 / 3, rel=1e-12)


def test_max_step_against_dense_sampling():
    rng = np.random.default_rng(8)
    X, tets = box_mesh(2, 0.02)
    Dm_inv, _ = rest_shape_inverse(X, tets)
    safety = 0.8
    n_limited = 0
    for _ in range(40):
        x = deformed(X, random_F(rng, 0.2)) + 0.0005 * rng.standard_normal(X.shape)
        dx = rng.uniform(0.002, 0.03) * rng.standard_normal(X.shape)
        alpha = max_noninverting_step(x, dx, tets, Dm_inv, safety=safety)
        assert 0 < alpha <= 1
        ts = np.linspace(0, alpha / safety, 400)[:-1]
        assert all(min_jacobian(x + t * dx, tets, Dm_inv) > 0 for t in ts)
        if alpha < 1:
            n_limited += 1
            # the limiting tet reaches J = 0 exactly at alpha / safety
            assert abs(min_jacobian(x + alpha / safety * dx, tets, Dm_inv)) < 1e-9
    assert n_limited > 10
