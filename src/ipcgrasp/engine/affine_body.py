"""Affine bodies: stiff objects with 12 degrees of freedom (Lan, Kaufman, Li, Jiang, Yang 2022,
"Affine Body Dynamics: Fast, Stable & Intersection-free Simulation of Stiff Materials").

A material point X (body frame, m) moves to x = p + A X. The generalised coordinates are

    q = (p_0, p_1, p_2, A_00, A_01, A_02, A_10, A_11, A_12, A_20, A_21, A_22)

(translation first, then A row-major), so x = J(X) q with the 3x12 Jacobian
J(X) = [I_3 | I_3 (x) X^T]: row i holds 1 at column i and X^T at columns 3 + 3i .. 5 + 3i.
Rigidity comes from the orthogonality potential V(A) = kappa * volume * ||A A^T - I||_F^2.

Kernels (`_name`) take float64 arrays; the public wrappers validate and convert.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.barrier import _project_to_psd
from ipcgrasp.engine.neohookean.matrix3 import _det3

__all__ = [
    "affine_jacobian",
    "affine_mass_matrix",
    "affine_positions",
    "nearest_rotation",
    "orthogonality_potential",
    "orthogonality_potential_gradient",
    "orthogonality_potential_hessian",
    "pullback_gradient",
    "pullback_hessian",
    "pullback_hessian_block",
    "pullback_rows",
]


def _as_q(q):
    arr = np.ascontiguousarray(q, dtype=np.float64)
    if arr.shape != (12,):
        raise ValueError(f"q must have shape (12,), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("q contains NaN or infinite values")
    return arr


def _as_points(X, name):
    arr = np.ascontiguousarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), got {arr.shape}")
    return arr


def _as_point(X, name):
    arr = np.ascontiguousarray(X, dtype=np.float64)
    if arr.shape != (3,):
        raise ValueError(f"{name} must have shape (3,), got {arr.shape}")
    return arr


# ----------------------------------------------------------------------------------------------
# Kinematics


def affine_jacobian(X):
    """Jacobian J(X) = dx/dq of x = p + A X: (3,12) for one point X (3,), (n,3,12) for X (n,3)."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[-1:] != (3,) or X.ndim not in (1, 2):
        raise ValueError(f"X must have shape (3,) or (n, 3), got {X.shape}")
    points = X.reshape(-1, 3)
    J = np.zeros((points.shape[0], 3, 12))
    for i in range(3):
        J[:, i, i] = 1.0
        J[:, i, 3 + 3 * i : 6 + 3 * i] = points
    return J[0] if X.ndim == 1 else J


@njit
def _affine_positions(q, X, out):
    """out (n,3) = p + A X for body-frame points X (n,3)."""
    for v in range(X.shape[0]):
        for i in range(3):
            out[v, i] = (
                q[i] + q[3 + 3 * i] * X[v, 0] + q[4 + 3 * i] * X[v, 1] + q[5 + 3 * i] * X[v, 2]
            )


def affine_positions(q, X):
    """World positions (n,3) m of body-frame points X (n,3) m under q (12,): x = p + A X."""
    q = _as_q(q)
    X = _as_points(X, "X")
    out = np.empty_like(X)
    _affine_positions(q, X, out)
    return out


# ----------------------------------------------------------------------------------------------
# Mass matrix


def affine_mass_matrix(mass, center_of_mass, second_moment):
    """Generalised mass matrix M (12,12) with kinetic energy 1/2 qdot^T M qdot.

    From integral rho |pdot + Adot X|^2 dV / 2: M_pp = m I, M_(p_i, A_ij) = m c_j,
    M_(A_ij, A_kl) = delta_ik S_jl, with mass m (kg), centre of mass c (3,) m and second moment
    S (3,3) kg m^2 about the body origin (body frame). Raises ValueError unless S - m c c^T (the
    second moment about the centre of mass) is positive definite, i.e. M is.
    """
    m = float(mass)
    if not np.isfinite(m) or m <= 0.0:
        raise ValueError(f"mass must be positive and finite, got {m!r}")
    c = _as_point(center_of_mass, "center_of_mass")
    S = np.asarray(second_moment, dtype=np.float64)
    if S.shape != (3, 3) or not np.isfinite(S).all():
        raise ValueError(f"second_moment must be a finite (3, 3) matrix, got shape {S.shape}")
    if not np.allclose(S, S.T, rtol=1e-10, atol=0.0):
        raise ValueError("second_moment must be symmetric")
    S = 0.5 * (S + S.T)
    central = S - m * np.outer(c, c)
    if not np.linalg.eigvalsh(central)[0] > 0.0:
        raise ValueError("second moment about the centre of mass is not positive definite")
    M = np.zeros((12, 12))
    M[:3, :3] = m * np.eye(3)
    for i in range(3):
        block = slice(3 + 3 * i, 6 + 3 * i)
        M[i, block] = m * c
        M[block, i] = m * c
        M[block, block] = S
    return M


# ----------------------------------------------------------------------------------------------
# Orthogonality potential


@njit
def _orthogonality_residual(q):
    """A (3,3) from q, G = A A^T - I and A^T A."""
    A = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            A[i, j] = q[3 + 3 * i + j]
    G = np.zeros((3, 3))
    AtA = np.zeros((3, 3))
    for i in range(3):
        for k in range(3):
            for j in range(3):
                G[i, k] += A[i, j] * A[k, j]
                AtA[i, k] += A[j, i] * A[j, k]
        G[i, i] -= 1.0
    return A, G, AtA


@njit
def _orthogonality_potential(q, stiffness, volume):
    _, G, _ = _orthogonality_residual(q)
    total = 0.0
    for i in range(3):
        for k in range(3):
            total += G[i, k] * G[i, k]
    return stiffness * volume * total


@njit
def _orthogonality_potential_gradient(q, stiffness, volume, out):
    """out (12,): zero for p; dV/dA = 4 kappa volume (A A^T - I) A, row-major."""
    A, G, _ = _orthogonality_residual(q)
    scale = 4.0 * stiffness * volume
    out[:3] = 0.0
    for i in range(3):
        for j in range(3):
            out[3 + 3 * i + j] = scale * (G[i, 0] * A[0, j] + G[i, 1] * A[1, j] + G[i, 2] * A[2, j])


@njit
def _orthogonality_potential_hessian(q, stiffness, volume, project, out):
    """out (12,12): only the A block is non-zero,
    d2V/dA_ij dA_kl = 4 kappa volume (delta_ik (A^T A)_lj + A_il A_kj + delta_jl (A A^T - I)_ik)."""
    A, G, AtA = _orthogonality_residual(q)
    scale = 4.0 * stiffness * volume
    H = np.empty((9, 9))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                for l in range(3):
                    h = A[i, l] * A[k, j]
                    if i == k:
                        h += AtA[l, j]
                    if j == l:
                        h += G[i, k]
                    H[3 * i + j, 3 * k + l] = scale * h
    if project:
        H = _project_to_psd(H)
    out[:, :] = 0.0
    for r in range(9):
        for c in range(9):
            out[3 + r, 3 + c] = H[r, c]


def _check_stiffness_volume(stiffness, volume):
    kappa = float(stiffness)
    vol = float(volume)
    if not np.isfinite(kappa) or kappa < 0.0:
        raise ValueError(f"stiffness must be non-negative and finite, got {kappa!r}")
    if not np.isfinite(vol) or vol <= 0.0:
        raise ValueError(f"volume must be positive and finite, got {vol!r}")
    return kappa, vol


def orthogonality_potential(q, stiffness, volume):
    """V(A) = kappa * volume * ||A A^T - I||_F^2 in J (kappa in Pa, volume in m^3); zero iff A is
    orthogonal."""
    kappa, vol = _check_stiffness_volume(stiffness, volume)
    return float(_orthogonality_potential(_as_q(q), kappa, vol))


def orthogonality_potential_gradient(q, stiffness, volume):
    """dV/dq (12,) in J (per unit of q): zero in p, 4 kappa volume (A A^T - I) A in A."""
    kappa, vol = _check_stiffness_volume(stiffness, volume)
    out = np.empty(12)
    _orthogonality_potential_gradient(_as_q(q), kappa, vol, out)
    return out


def orthogonality_potential_hessian(q, stiffness, volume, project=True):
    """d2V/dq2 (12,12); only the 9x9 A block is non-zero. project=True clamps its negative
    eigenvalues at zero (eigendecomposition of the 9x9 block)."""
    kappa, vol = _check_stiffness_volume(stiffness, volume)
    out = np.empty((12, 12))
    _orthogonality_potential_hessian(_as_q(q), kappa, vol, bool(project), out)
    return out


# ----------------------------------------------------------------------------------------------
# Pose reporting


@njit
def _nearest_rotation(A):
    U, _, Vt = np.linalg.svd(A)
    R = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                R[i, j] += U[i, k] * Vt[k, j]
    if _det3(R) < 0.0:  # R is orthogonal: det R is +-1
        for i in range(3):
            for j in range(3):
                R[i, j] -= 2.0 * U[i, 2] * Vt[2, j]
    return R


def nearest_rotation(A):
    """Rotation R (3,3), det R = +1, closest to A in the Frobenius norm (polar decomposition by
    SVD A = U S V^T: R = U diag(1, 1, det(U V^T)) V^T)."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    if A.shape != (3, 3) or not np.isfinite(A).all():
        raise ValueError(f"A must be a finite (3, 3) matrix, got shape {A.shape}")
    return _nearest_rotation(A)


# ----------------------------------------------------------------------------------------------
# Pull-back of vertex-space terms to q-space


@njit
def _pullback_gradient(X, g, out):
    """out (12,) = sum_v J(X_v)^T g_v."""
    out[:] = 0.0
    for v in range(X.shape[0]):
        for i in range(3):
            out[i] += g[v, i]
            for j in range(3):
                out[3 + 3 * i + j] += g[v, i] * X[v, j]


@njit
def _pullback_rows(Xa, M, out):
    """out (12,k) = J(Xa)^T M for M (3,k)."""
    for c in range(M.shape[1]):
        for i in range(3):
            out[i, c] = M[i, c]
            for j in range(3):
                out[3 + 3 * i + j, c] = Xa[j] * M[i, c]


@njit
def _add_pullback_hessian_block(Xa, Xb, H, out):
    """out (12,12) += J(Xa)^T H J(Xb) for a 3x3 block H coupling points Xa and Xb."""
    L = np.empty((12, 3))
    _pullback_rows(Xa, H, L)
    for r in range(12):
        for i in range(3):
            out[r, i] += L[r, i]
            for j in range(3):
                out[r, 3 + 3 * i + j] += L[r, i] * Xb[j]


@njit
def _pullback_hessian(X, H, out):
    """out (12,12) = sum_v J(X_v)^T H_v J(X_v) for per-vertex blocks H (n,3,3)."""
    out[:, :] = 0.0
    for v in range(X.shape[0]):
        _add_pullback_hessian_block(X[v], X[v], H[v], out)


def pullback_gradient(X, g):
    """q-space gradient (12,) of vertex-space gradients g (n,3) at body-frame points X (n,3):
    sum_v J(X_v)^T g_v (the p part is the force sum, the A part sum_v g_v X_v^T)."""
    X = _as_points(X, "X")
    g = _as_points(g, "g")
    if g.shape != X.shape:
        raise ValueError(f"g must have the shape of X {X.shape}, got {g.shape}")
    out = np.empty(12)
    _pullback_gradient(X, g, out)
    return out


def pullback_hessian(X, H):
    """q-space Hessian (12,12) sum_v J(X_v)^T H_v J(X_v) of per-vertex 3x3 blocks H (n,3,3) at
    body-frame points X (n,3). PSD blocks give a PSD result."""
    X = _as_points(X, "X")
    H = np.ascontiguousarray(H, dtype=np.float64)
    if H.shape != (X.shape[0], 3, 3):
        raise ValueError(f"H must have shape ({X.shape[0]}, 3, 3), got {H.shape}")
    out = np.empty((12, 12))
    _pullback_hessian(X, H, out)
    return out


def pullback_hessian_block(Xa, Xb, H):
    """J(Xa)^T H J(Xb) (12,12) for a 3x3 block H = d2E/dx_a dx_b between two points of the same
    body (body-frame Xa, Xb (3,))."""
    Xa = _as_point(Xa, "Xa")
    Xb = _as_point(Xb, "Xb")
    H = np.ascontiguousarray(H, dtype=np.float64)
    if H.shape != (3, 3):
        raise ValueError(f"H must have shape (3, 3), got {H.shape}")
    out = np.zeros((12, 12))
    _add_pullback_hessian_block(Xa, Xb, H, out)
    return out


def pullback_rows(Xa, M):
    """J(Xa)^T M (12,k) for M (3,k): couples a body point Xa (3,) to k other degrees of freedom
    (e.g. a block d2E/dx_a dy between this body and another body's vertex y)."""
    Xa = _as_point(Xa, "Xa")
    M = np.ascontiguousarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != 3:
        raise ValueError(f"M must have shape (3, k), got {M.shape}")
    out = np.empty((12, M.shape[1]))
    _pullback_rows(Xa, M, out)
    return out
