"""Barrier, adaptive stiffness and PSD projection: finite differences and ipctk as the oracle."""

import ipctk
import numba
import numpy as np
import pytest

from ipcgrasp.engine.barrier import (
    _barrier,
    _barrier_first_derivative,
    _barrier_second_derivative,
    _project_to_psd,
    _project_to_psd_on_range,
    _symmetric_eigen,
    barrier,
    barrier_first_derivative,
    barrier_second_derivative,
    barrier_stiffness_bounds,
    initial_barrier_stiffness,
    project_to_psd,
    update_barrier_stiffness,
)


def _random_d_dhat(rng, n):
    """Squared activation distances over many scales and squared distances inside (0, dhat)."""
    dhat = 10.0 ** rng.uniform(-12.0, 0.0, n)
    d = dhat * 10.0 ** rng.uniform(-10.0, 0.0, n)
    return d, dhat


def test_barrier_and_derivatives_match_ipctk_on_random_inputs():
    rng = np.random.default_rng(0)
    d, dhat = _random_d_dhat(rng, 3000)
    for di, dh in zip(d, dhat):
        assert barrier(di, dh) == pytest.approx(ipctk.barrier(di, dh), rel=1e-13, abs=0.0)
        assert barrier_first_derivative(di, dh) == pytest.approx(
            ipctk.barrier_first_derivative(di, dh), rel=1e-13, abs=0.0
        )
        assert barrier_second_derivative(di, dh) == pytest.approx(
            ipctk.barrier_second_derivative(di, dh), rel=1e-13, abs=0.0
        )


@pytest.mark.parametrize(
    "d", [-1.0, -1e-30, 0.0, 1e-300, 1e-6, 1e-6 * (1 - 1e-12), 1e-6 * 1.5, 5.0]
)
def test_barrier_edge_cases_match_ipctk(d):
    dhat = 1e-6
    # Within 1e-12 of dhat the formulas cancel to O(1e-12) of their terms (sizes 1, dhat, dhat^2
    # for b'', b', b up to the (dhat - d) factors), so compare with absolute tolerances there.
    gap = abs(dhat - d)
    for ours, theirs, atol in (
        (barrier, ipctk.barrier, 1e-15 * gap * gap),
        (barrier_first_derivative, ipctk.barrier_first_derivative, 1e-15 * gap),
        (barrier_second_derivative, ipctk.barrier_second_derivative, 1e-15),
    ):
        expected = theirs(d, dhat)
        got = ours(d, dhat)
        if np.isfinite(expected):
            assert got == pytest.approx(expected, rel=1e-13, abs=atol)
        else:
            assert got == expected


def test_barrier_support_and_signs():
    dhat = 4e-6
    assert barrier(0.0, dhat) == np.inf
    assert barrier_first_derivative(0.0, dhat) == 0.0
    for d in (dhat, 2 * dhat):
        assert barrier(d, dhat) == 0.0
        assert barrier_first_derivative(d, dhat) == 0.0
        assert barrier_second_derivative(d, dhat) == 0.0
    # C2 at dhat: all three tend to 0 from inside the support.
    d = dhat * (1 - 1e-7)
    assert 0.0 < barrier(d, dhat) < 1e-24
    assert -1e-17 < barrier_first_derivative(d, dhat) < 0.0
    assert 0.0 < barrier_second_derivative(d, dhat) < 1e-5
    d = np.linspace(1e-3, 0.999, 50) * dhat
    values = np.array([barrier(x, dhat) for x in d])
    assert np.all(np.diff(values) < 0.0)  # decreasing: pushes contacts apart
    assert all(barrier_second_derivative(x, dhat) > 0.0 for x in d)  # convex


def test_barrier_derivatives_match_central_differences():
    rng = np.random.default_rng(1)
    d, dhat = _random_d_dhat(rng, 2000)
    d = np.concatenate([d, [1e-16, 1e-6 * 0.999999, 1e-6 * 1e-9]])
    dhat = np.concatenate([dhat, [1e-6, 1e-6, 1e-6]])
    for di, dh in zip(d, dhat):
        h = 1e-5 * min(di, dh - di)
        fd1 = (_barrier(di + h, dh) - _barrier(di - h, dh)) / (2 * h)
        fd2 = (_barrier_first_derivative(di + h, dh) - _barrier_first_derivative(di - h, dh)) / (
            2 * h
        )
        g = _barrier_first_derivative(di, dh)
        H = _barrier_second_derivative(di, dh)
        assert g < 0.0 < H
        # Rounding in the FD numerator: b and b' are evaluated to a relative accuracy of about
        # 1e-16 / (1 - d/dhat) (cancellation near dhat); divide by h for the FD error.
        rounding = 1e-15 * (1.0 + dh / (dh - di)) / h
        assert abs(fd1 - g) <= 1e-7 * abs(g) + rounding * abs(_barrier(di, dh))
        assert abs(fd2 - H) <= 1e-7 * abs(H) + rounding * abs(g)


@pytest.mark.parametrize("dhat", [0.0, -1.0, np.nan, np.inf])
def test_barrier_rejects_invalid_dhat(dhat):
    for fn in (barrier, barrier_first_derivative, barrier_second_derivative):
        with pytest.raises(ValueError, match="dhat"):
            fn(1e-8, dhat)


def test_barrier_kernels_callable_from_njit():
    @numba.njit
    def total(d, dhat):
        s = 0.0
        for x in d:
            s += (
                _barrier(x, dhat)
                + _barrier_first_derivative(x, dhat)
                + _barrier_second_derivative(x, dhat)
            )
        return s

    d = np.array([1e-8, 5e-7, 2e-6])
    expected = sum(
        ipctk.barrier(x, 1e-6)
        + ipctk.barrier_first_derivative(x, 1e-6)
        + ipctk.barrier_second_derivative(x, 1e-6)
        for x in d
    )
    assert total(d, 1e-6) == pytest.approx(expected, rel=1e-13)


# -- Adaptive stiffness ---------------------------------------------------------------------------


def test_initial_barrier_stiffness_matches_ipctk():
    rng = np.random.default_rng(2)
    log_barrier = ipctk.ClampedLogBarrier()
    clamped = {"min": 0, "max": 0, "inside": 0}
    for _ in range(600):
        bbox = 10.0 ** rng.uniform(-3, 1)
        dhat = bbox * 10.0 ** rng.uniform(-4, -1)
        mass = 10.0 ** rng.uniform(-4, 1)
        n = int(rng.integers(3, 40))
        grad_energy = rng.normal(size=n) * 10.0 ** rng.uniform(-8, 4)
        grad_barrier = rng.normal(size=n) * 10.0 ** rng.uniform(-12, -6)
        scale = 10.0 ** rng.uniform(9, 12)
        kappa, max_kappa = initial_barrier_stiffness(
            bbox, dhat, mass, grad_energy, grad_barrier, scale
        )
        ref_kappa, ref_max = ipctk.initial_barrier_stiffness(
            bbox, log_barrier, dhat, mass, grad_energy, grad_barrier, scale
        )
        assert kappa == pytest.approx(ref_kappa, rel=1e-12)
        assert max_kappa == pytest.approx(ref_max, rel=1e-12)
        bounds = barrier_stiffness_bounds(bbox, dhat, mass, scale)
        assert bounds[1] == max_kappa and bounds[0] <= kappa <= bounds[1]
        min_kappa = max_kappa / 100.0
        if kappa == pytest.approx(min_kappa, rel=1e-12):
            clamped["min"] += 1
        elif kappa == pytest.approx(max_kappa, rel=1e-12):
            clamped["max"] += 1
        else:
            clamped["inside"] += 1
    assert min(clamped.values()) > 20, clamped  # all three branches exercised


def test_initial_barrier_stiffness_special_cases_match_ipctk():
    log_barrier = ipctk.ClampedLogBarrier()
    g = np.array([1.0, -2.0, 0.5])
    cases = [
        (1.0, 1e-3, 0.1, g, np.zeros(3)),  # no barrier gradient: kappa = 1 then clamped
        (1.0, 1e-9, 0.1, g, np.array([1e-9, 0.0, 0.0])),  # 1e-8 bbox >= dhat: d0 = dhat^2 / 2
        (2.0, 1e-3, 1e-3, g, -1e-6 * g),  # kappa negative: clamped to the minimum
    ]
    for bbox, dhat, mass, ge, gb in cases:
        ours = initial_barrier_stiffness(bbox, dhat, mass, ge, gb)
        ref = ipctk.initial_barrier_stiffness(bbox, log_barrier, dhat, mass, ge, gb)
        np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_initial_barrier_stiffness_balances_gradients_when_unclamped():
    # kappa minimises |grad_E + kappa grad_B|: with grad_E = -c grad_B + (orthogonal part),
    # kappa = c when c lies in [kappa_min, kappa_max] = [1250, 125000] for these inputs.
    rng = np.random.default_rng(3)
    grad_barrier = rng.normal(size=12) * 1e-9
    orthogonal = rng.normal(size=12)
    orthogonal -= (orthogonal @ grad_barrier) / (grad_barrier @ grad_barrier) * grad_barrier
    c = 1.0e4
    grad_energy = -c * grad_barrier + 1e-5 * orthogonal
    kappa, max_kappa = initial_barrier_stiffness(
        1.0, 1e-3, 0.05, grad_energy, grad_barrier, min_barrier_stiffness_scale=1e9
    )
    assert max_kappa == pytest.approx(1.25e5, rel=1e-6)
    assert kappa == pytest.approx(c, rel=1e-10)


def test_initial_barrier_stiffness_rejects_bad_input():
    with pytest.raises(ValueError, match="average_mass"):
        initial_barrier_stiffness(1.0, 1e-3, 0.0, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="bbox_diagonal"):
        initial_barrier_stiffness(0.0, 1e-3, 1.0, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="differ"):
        initial_barrier_stiffness(1.0, 1e-3, 1.0, np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        initial_barrier_stiffness(1.0, 1e-3, 1.0, np.ones(3), np.array([1.0, np.nan, 0.0]))


def test_update_barrier_stiffness_matches_ipctk():
    rng = np.random.default_rng(4)
    doubled = 0
    for _ in range(3000):
        bbox = 10.0 ** rng.uniform(-2, 1)
        eps_sq = (1e-9 * bbox) ** 2
        prev, cur = eps_sq * 10.0 ** rng.uniform(-2, 0.5, 2)
        kappa = 10.0 ** rng.uniform(2, 8)
        max_kappa = kappa * 10.0 ** rng.uniform(-0.5, 2)
        ours = update_barrier_stiffness(prev, cur, max_kappa, kappa, bbox)
        ref = ipctk.update_barrier_stiffness(prev, cur, max_kappa, kappa, bbox)
        assert ours == ref
        doubled += ours != kappa
    assert 300 < doubled < 2700


def test_update_barrier_stiffness_uses_squared_distances():
    bbox, kappa, max_kappa = 1.0, 1e5, 1e9
    d_eps = 1e-9 * bbox  # unsquared threshold: a squared distance of d_eps^2 is the switch
    assert update_barrier_stiffness(0.9 * d_eps**2, 0.5 * d_eps**2, max_kappa, kappa, bbox) == 2e5
    # Unsquared distances below d_eps are far above d_eps^2: no update.
    assert update_barrier_stiffness(0.9 * d_eps, 0.5 * d_eps, max_kappa, kappa, bbox) == kappa
    # Opening contacts never raise kappa, and the maximum caps it.
    assert update_barrier_stiffness(0.5 * d_eps**2, 0.9 * d_eps**2, max_kappa, kappa, bbox) == kappa
    assert update_barrier_stiffness(0.9 * d_eps**2, 0.5 * d_eps**2, 1.5e5, kappa, bbox) == 1.5e5


# -- PSD projection -------------------------------------------------------------------------------


def _random_symmetric(rng, n):
    A = rng.normal(size=(n, n))
    return (A + A.T) * 10.0 ** rng.uniform(-6, 6)


@pytest.mark.parametrize("n", [2, 3, 6, 9, 12])
def test_project_to_psd_matches_ipctk_clamp(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(200):
        H = _random_symmetric(rng, n)
        ours = project_to_psd(H)
        ref = ipctk.project_to_psd(H, ipctk.PSDProjectionMethod.CLAMP)
        scale = np.abs(H).max()
        np.testing.assert_allclose(ours, ref, rtol=0.0, atol=1e-12 * scale)
        np.testing.assert_allclose(ours, ours.T, rtol=0.0, atol=1e-13 * scale)
        assert np.linalg.eigvalsh(ours).min() >= -1e-12 * scale
        # Projection is idempotent and only removes the negative part of the spectrum.
        np.testing.assert_allclose(project_to_psd(ours), ours, rtol=0.0, atol=1e-12 * scale)
        w, V = np.linalg.eigh(H)
        np.testing.assert_allclose(
            ours - H, -(V * np.minimum(w, 0.0)) @ V.T, rtol=0.0, atol=1e-12 * scale
        )


@pytest.mark.parametrize("points", [1, 2, 3, 4])
def test_range_projection_matches_ipctk_clamp(points):
    """The projection on the column space equals ipctk's full clamp for contact-like Hessians:
    translation-free ones of every rank (the rank-5 ones with 2 negative eigenvalues that
    face-vertex and edge-edge contacts have, rank 1 of vertex-plane), full-rank ones, and ones
    with a spectrum over many decades."""
    rng = np.random.default_rng(200 + points)
    n = 3 * points
    translations = np.kron(np.ones((points, 1)), np.eye(3)) / np.sqrt(points)
    free = np.eye(n) - translations @ translations.T if points > 1 else np.eye(n)
    for rank in sorted({n, max(n - 3, 1), min(5, n), 1}):
        for trial in range(100):
            B = (free if rank < n else np.eye(n)) @ rng.normal(size=(n, rank))
            w = rng.normal(size=rank) * 10.0 ** rng.uniform(-6, 6)
            if trial % 4 == 0:
                w *= 10.0 ** rng.uniform(-8, 0, size=rank)  # eigenvalues spread over decades
            H = (B * w) @ B.T
            H = 0.5 * (H + H.T)
            ours = _project_to_psd_on_range(H)
            ref = ipctk.project_to_psd(H, ipctk.PSDProjectionMethod.CLAMP)
            scale = np.abs(H).max()
            np.testing.assert_allclose(ours, ref, rtol=0.0, atol=1e-12 * scale)
            np.testing.assert_allclose(ours, _project_to_psd(H), rtol=0.0, atol=1e-12 * scale)
    np.testing.assert_array_equal(_project_to_psd_on_range(np.zeros((12, 12))), np.zeros((12, 12)))
    spd = np.diag([3.0, 1e-9, 2.0])
    np.testing.assert_array_equal(_project_to_psd_on_range(spd), spd)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
def test_symmetric_eigen_matches_lapack(n):
    """Eigenvalues and the spectral reconstruction of _symmetric_eigen equal numpy's LAPACK
    eigh to round-off, including repeated and zero eigenvalues."""
    rng = np.random.default_rng(300 + n)
    for trial in range(50):
        A = rng.normal(size=(n, n))
        M = (A + A.T) * 10.0 ** rng.uniform(-6, 6)
        if trial % 5 == 0:  # repeated eigenvalues and a zero one
            Q, _ = np.linalg.qr(A)
            w = np.repeat(rng.normal(size=(n + 1) // 2), 2)[:n]
            w[0] = 0.0
            M = (Q * w) @ Q.T
            M = 0.5 * (M + M.T)
        values, vectors = _symmetric_eigen(M.copy())
        scale = np.abs(M).max()
        np.testing.assert_allclose(np.sort(values), np.linalg.eigvalsh(M), rtol=0.0, atol=1e-13 * scale)
        np.testing.assert_allclose(vectors.T @ vectors, np.eye(n), rtol=0.0, atol=1e-13)
        np.testing.assert_allclose((vectors * values) @ vectors.T, M, rtol=0.0, atol=1e-13 * scale)


def test_project_to_psd_special_matrices():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(12, 12))
    spd = A @ A.T + 1e-3 * np.eye(12)
    np.testing.assert_array_equal(project_to_psd(spd), spd)
    low_rank = A[:, :5] @ A[:, :5].T  # PSD up to round-off eigenvalues ~ +-1e-15
    scale = np.abs(low_rank).max()
    np.testing.assert_allclose(project_to_psd(low_rank), low_rank, atol=1e-13 * scale)
    np.testing.assert_allclose(project_to_psd(-low_rank), 0.0, atol=1e-13 * scale)
    np.testing.assert_array_equal(project_to_psd(np.zeros((3, 3))), np.zeros((3, 3)))
    np.testing.assert_allclose(project_to_psd([[1.0, 2.0], [2.0, 1.0]]), [[1.5, 1.5], [1.5, 1.5]])
    np.testing.assert_allclose(_project_to_psd(np.diag([3.0, -1.0, 2.0])), np.diag([3.0, 0.0, 2.0]))


def test_project_to_psd_rejects_bad_input():
    with pytest.raises(ValueError, match="square"):
        project_to_psd(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        project_to_psd(np.array([[1.0, np.nan], [np.nan, 1.0]]))
