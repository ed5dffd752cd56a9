"""One tet: deformation gradient F, energy density Psi (J/m^3), first Piola-Kirchhoff stress (Pa) and
the element Hessian (N/m) with the analytic eigensystem's PSD projection.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.neohookean.matrix3 import (
    _cholesky3,
    _cofactor_into,
    _det3,
    _rotation_svd_into,
    _symmetric_eigen3,
)


@njit
def _deformation_gradient_into(x, tet, Dm_inv_t, F):
    """F = Ds Dm^-1 for one tet, written into F (3,3); Ds has the deformed edge vectors as
    columns."""
    for a in range(3):
        ds0 = x[tet[1], a] - x[tet[0], a]
        ds1 = x[tet[2], a] - x[tet[0], a]
        ds2 = x[tet[3], a] - x[tet[0], a]
        for b in range(3):
            F[a, b] = ds0 * Dm_inv_t[0, b] + ds1 * Dm_inv_t[1, b] + ds2 * Dm_inv_t[2, b]


@njit
def _shape_derivatives_into(Dm_inv_t, D):
    """D (4,3) with F_ab = sum_m x_ma D_mb: rows of Dm^-1, and minus their sum for vertex 0,
    written into D."""
    for b in range(3):
        D[0, b] = -(Dm_inv_t[0, b] + Dm_inv_t[1, b] + Dm_inv_t[2, b])
        for c in range(3):
            D[c + 1, b] = Dm_inv_t[c, b]


@njit
def _energy_density(F, mu, lam):
    """Psi(F) in J/m^3; +inf when det F <= 0.

    Evaluated through the Green strain G = (F^T F - I) / 2, so that no term is a difference of
    O(1) numbers: with c = det(I + 2 G) - 1 = J^2 - 1 = 2 tr G + 4 I2(G) + 8 det G (I2 the second
    invariant) and ln J = log1p(c) / 2,
    Psi = mu/2 (c - log1p(c) - 4 I2(G) - 8 det G) + lam/2 (ln J)^2.
    The textbook form mu/2 (|F|^2 - 3) - mu ln J rounds each term at about 1e-16 mu whatever
    the strain, while here the rounding scales with the stress: on a stiff pad (E 1e11 Pa,
    strains near 1e-9) turned half a revolution from its rest frame the textbook form's rounding
    is larger than a converging Newton step's energy decrease."""
    if not _det3(F) > 0.0:
        return np.inf
    G = np.empty((3, 3))
    for a in range(3):
        for b in range(3):
            G[a, b] = 0.5 * (F[0, a] * F[0, b] + F[1, a] * F[1, b] + F[2, a] * F[2, b]) - (0.5 if a == b else 0.0)
    second_invariant = (G[0, 0] * G[1, 1] - G[0, 1] * G[1, 0] + G[0, 0] * G[2, 2] - G[0, 2] * G[2, 0]
                        + G[1, 1] * G[2, 2] - G[1, 2] * G[2, 1])
    det_g = _det3(G)
    c = 2.0 * (G[0, 0] + G[1, 1] + G[2, 2]) + 4.0 * second_invariant + 8.0 * det_g
    log_det_c = np.log1p(c)
    lnJ = 0.5 * log_det_c
    return 0.5 * mu * ((c - log_det_c) - 4.0 * second_invariant - 8.0 * det_g) + 0.5 * lam * lnJ * lnJ


@njit
def _first_piola(F, mu, lam):
    """P = dPsi/dF = mu (F - F^-T) + lam ln J F^-T, in Pa (NaN when det F <= 0)."""
    P = np.empty((3, 3))
    _first_piola_into(F, mu, lam, np.empty((3, 3)), P)
    return P


@njit
def _first_piola_into(F, mu, lam, C, P):
    """P of _first_piola written into P (3,3); C (3,3) is scratch for cof(F)."""
    J = _det3(F)
    lnJ = np.log(J) if J > 0.0 else np.nan
    _cofactor_into(F, C)
    for a in range(3):
        for b in range(3):
            F_inv_T = C[a, b] / J
            P[a, b] = mu * (F[a, b] - F_inv_T) + lam * lnJ * F_inv_T


@njit
def _add_mode(out, weight, g):
    """Upper triangle of out (12,12) += weight g g^T."""
    for r in range(12):
        wg = weight * g[r]
        for c in range(r, 12):
            out[r, c] += wg * g[c]


@njit
def _hessian_workspace():
    """Scratch arrays for _tet_hessian: U, sigma, V, D V, a mode vector, A, its factor, weights."""
    return (np.empty((3, 3)), np.empty(3), np.empty((3, 3)), np.empty((4, 3)), np.empty(12),
            np.empty((3, 3)), np.empty((3, 3)), np.empty(3))


@njit
def _tet_hessian(F, D, volume, mu, lam, project, out, workspace, rotation):
    """out (12,12) = volume B^T (d2Psi/dF2) B, eigenvalues clamped at 0 if project.

    With F = U diag(sigma) V^T and G_ij = B^T vec(u_i v_j^T) (entry (m, a) = U[a, i] (D V)[m, j]),
    d2Psi/dF2 (Smith et al. 2019) is the scaling block A on the G_ii,
    A = diag(mu + (mu - lam ln J) / sigma_i^2) + lam s s^T with s = 1/sigma, plus per pair i < j
    the twist and flip modes (G_ij -/+ G_ji) / sqrt 2. A enters by its Cholesky factor when it
    is positive definite (then there is nothing to clamp), else by its eigendecomposition.
    workspace: from _hessian_workspace (reused across tets); rotation (3,3): the SVD's starting
    V on entry (see _rotation_svd_into), its V on return (the identity instead if V is not
    finite or rounding over many warm starts has moved det V off 1).
    Element-wise loops rather than slice assignments keep the compile time down."""
    U, sigma, V, DV, g, A, W, w = workspace
    for a in range(3):
        for b in range(3):
            V[a, b] = rotation[a, b]
    _rotation_svd_into(F, U, sigma, V)
    keep = abs(_det3(V) - 1.0) < 1e-9
    for a in range(3):
        for b in range(3):
            rotation[a, b] = V[a, b] if keep else (1.0 if a == b else 0.0)
    lnJ = np.log(sigma[0] * sigma[1] * sigma[2])
    for m in range(4):
        for j in range(3):
            DV[m, j] = D[m, 0] * V[0, j] + D[m, 1] * V[1, j] + D[m, 2] * V[2, j]
    out[:, :] = 0.0

    for i in range(3):
        for j in range(3):
            A[i, j] = lam / (sigma[i] * sigma[j])
        A[i, i] += mu + (mu - lam * lnJ) / (sigma[i] * sigma[i])
    if _cholesky3(A, W):
        for k in range(3):
            w[k] = 1.0
    else:
        eigenvalues, eigenvectors = _symmetric_eigen3(A)
        for k in range(3):
            w[k] = eigenvalues[k]
            for i in range(3):
                W[i, k] = eigenvectors[i, k]
    for k in range(3):
        if project and w[k] < 0.0:
            continue
        for m in range(4):
            for a in range(3):
                g[3 * m + a] = (W[0, k] * U[a, 0] * DV[m, 0] + W[1, k] * U[a, 1] * DV[m, 1]
                                + W[2, k] * U[a, 2] * DV[m, 2])
        _add_mode(out, volume * w[k], g)

    inv_sqrt2 = 1.0 / np.sqrt(2.0)
    for i in range(3):
        for j in range(i + 1, 3):
            s = 1.0 / (sigma[i] * sigma[j])
            for sign in (-1.0, 1.0):  # twist, then flip
                eigenvalue = mu + sign * (mu - lam * lnJ) * s
                if project and eigenvalue < 0.0:
                    continue
                for m in range(4):
                    for a in range(3):
                        g[3 * m + a] = inv_sqrt2 * (U[a, i] * DV[m, j] + sign * U[a, j] * DV[m, i])
                _add_mode(out, volume * eigenvalue, g)
    for r in range(12):
        for c in range(r):
            out[r, c] = out[c, r]


def energy_density(F, mu, lam):
    """Neo-Hookean energy density Psi(F) (J/m^3) for F (3,3) -> float or (T,3,3) -> (T,).

    Psi = mu/2 (tr(F^T F) - 3) - mu ln J + lam/2 (ln J)^2; +inf where J = det F <= 0.
    """
    F = np.asarray(F, dtype=np.float64)
    if F.shape[-2:] != (3, 3) or F.ndim not in (2, 3):
        raise ValueError(f"F must have shape (3, 3) or (T, 3, 3), got {F.shape}")
    if F.ndim == 2:
        return float(_energy_density(np.ascontiguousarray(F), float(mu), float(lam)))
    return np.array([_energy_density(np.ascontiguousarray(Fi), float(mu), float(lam)) for Fi in F])


def first_piola_kirchhoff(F, mu, lam):
    """First Piola-Kirchhoff stress P = dPsi/dF = mu (F - F^-T) + lam ln J F^-T (Pa), F (3,3)."""
    F = np.ascontiguousarray(F, dtype=np.float64)
    if F.shape != (3, 3):
        raise ValueError(f"F must have shape (3, 3), got {F.shape}")
    if not _det3(F) > 0.0:
        raise ValueError("first_piola_kirchhoff needs det F > 0")
    return _first_piola(F, float(mu), float(lam))
