"""IPC log barrier, its adaptive stiffness, and PSD projection of small Hessians.

The barrier (Li et al. 2020, "Incremental Potential Contact", eq. 6) is applied to *squared*
distances: with d a squared distance (m^2) and dhat the squared activation distance (m^2),

    b(d, dhat) = -(d - dhat)^2 ln(d / dhat)   for 0 < d < dhat,   0 for d >= dhat,

and b = +inf for d <= 0. Values and derivatives follow ipctk 1.6.1 (`ipctk.barrier`,
`barrier_first_derivative`, `barrier_second_derivative`) exactly, including the derivatives
being 0 (not undefined) for d <= 0.
"""

import math

import numpy as np

from ipcgrasp.engine._numba import njit

__all__ = [
    "barrier",
    "barrier_first_derivative",
    "barrier_second_derivative",
    "initial_barrier_stiffness",
    "update_barrier_stiffness",
    "project_to_psd",
]


@njit
def _barrier(d, dhat):
    if d <= 0.0:
        return np.inf
    if d >= dhat:
        return 0.0
    d_minus_dhat = d - dhat
    return -d_minus_dhat * d_minus_dhat * math.log(d / dhat)


@njit
def _barrier_first_derivative(d, dhat):
    if d <= 0.0 or d >= dhat:
        return 0.0
    return (dhat - d) * (2.0 * math.log(d / dhat) - dhat / d + 1.0)


@njit
def _barrier_second_derivative(d, dhat):
    if d <= 0.0 or d >= dhat:
        return 0.0
    dhat_d = dhat / d
    return (dhat_d + 2.0) * dhat_d - 2.0 * math.log(d / dhat) - 3.0


def _check_dhat(dhat):
    dhat = float(dhat)
    if not (math.isfinite(dhat) and dhat > 0.0):
        raise ValueError(f"dhat must be a positive finite number, got {dhat!r}")
    return dhat


def barrier(d, dhat):
    """IPC log barrier b(d) = -(d - dhat)^2 ln(d / dhat) on (0, dhat), 0 beyond, +inf at d <= 0.

    d: squared distance (m^2); dhat: squared activation distance (m^2). Returns m^4.
    Li et al. 2020, "Incremental Potential Contact", eq. 6.
    """
    return _barrier(float(d), _check_dhat(dhat))


def barrier_first_derivative(d, dhat):
    """b'(d) = (dhat - d)(2 ln(d / dhat) - dhat / d + 1) on (0, dhat), 0 elsewhere.

    d, dhat: squared distances (m^2). Returns m^2.
    """
    return _barrier_first_derivative(float(d), _check_dhat(dhat))


def barrier_second_derivative(d, dhat):
    """b''(d) = (dhat/d + 2) dhat/d - 2 ln(d / dhat) - 3 on (0, dhat), 0 elsewhere.

    d, dhat: squared distances (m^2). Dimensionless.
    """
    return _barrier_second_derivative(float(d), _check_dhat(dhat))


def initial_barrier_stiffness(
    bbox_diagonal,
    dhat,
    average_mass,
    grad_energy,
    grad_barrier,
    min_barrier_stiffness_scale=1e11,
):
    """IPC's initial barrier stiffness kappa and its upper bound (Li et al. 2020, supplement).

    kappa = -(grad_B . grad_E) / |grad_B|^2 (1 if grad_B = 0), clamped to
    [kappa_min, 100 kappa_min] with kappa_min = scale * average_mass / (4 d0 b''(d0, dhat^2)),
    d0 = (1e-8 * bbox_diagonal)^2 (or dhat^2 / 2 if that is not below dhat^2).

    bbox_diagonal, dhat: unsquared lengths (m); average_mass (kg); grad_energy: gradient of the
    incremental potential without contact; grad_barrier: gradient of sum_k b(d_k) (kappa = 1).
    Returns (kappa, max_kappa), same as ipctk.initial_barrier_stiffness with a
    ClampedLogBarrier and dmin = 0.
    """
    bbox_diagonal = float(bbox_diagonal)
    dhat = _check_dhat(dhat)
    average_mass = float(average_mass)
    if not bbox_diagonal > 0.0:
        raise ValueError(f"bbox_diagonal must be positive, got {bbox_diagonal!r}")
    if not average_mass > 0.0:
        raise ValueError(f"average_mass must be positive, got {average_mass!r}")
    if not min_barrier_stiffness_scale > 0.0:
        raise ValueError(
            f"min_barrier_stiffness_scale must be positive, got {min_barrier_stiffness_scale!r}"
        )
    grad_energy = np.asarray(grad_energy, dtype=np.float64).ravel()
    grad_barrier = np.asarray(grad_barrier, dtype=np.float64).ravel()
    if grad_energy.shape != grad_barrier.shape:
        raise ValueError(
            f"grad_energy {grad_energy.shape} and grad_barrier {grad_barrier.shape} differ in size"
        )
    if not (np.all(np.isfinite(grad_energy)) and np.all(np.isfinite(grad_barrier))):
        raise ValueError("grad_energy and grad_barrier must be finite")

    dhat_squared = dhat * dhat
    d0 = (1e-8 * bbox_diagonal) ** 2
    if d0 >= dhat_squared:
        d0 = 0.5 * dhat_squared
    min_kappa = (
        min_barrier_stiffness_scale
        * average_mass
        / (4.0 * d0 * _barrier_second_derivative(d0, dhat_squared))
    )
    max_kappa = 100.0 * min_kappa

    kappa = 1.0
    grad_barrier_squared_norm = float(grad_barrier @ grad_barrier)
    if grad_barrier_squared_norm > 0.0:
        kappa = -float(grad_barrier @ grad_energy) / grad_barrier_squared_norm
    return min(max(kappa, min_kappa), max_kappa), max_kappa


def update_barrier_stiffness(
    prev_min_distance,
    min_distance,
    max_barrier_stiffness,
    barrier_stiffness,
    bbox_diagonal,
    dhat_epsilon_scale=1e-9,
):
    """IPC's adaptive stiffness: double kappa (up to the maximum) while contacts keep closing.

    prev_min_distance, min_distance: minimum *squared* contact distances (m^2) of the previous
    and current iterate; bbox_diagonal (m). Doubles barrier_stiffness when both are below
    (dhat_epsilon_scale * bbox_diagonal)^2 and the distance decreased; else returns it unchanged.
    Same as ipctk.update_barrier_stiffness with dmin = 0.
    """
    dhat_epsilon = (dhat_epsilon_scale * float(bbox_diagonal)) ** 2
    if (
        prev_min_distance < dhat_epsilon
        and min_distance < dhat_epsilon
        and min_distance < prev_min_distance
    ):
        return min(float(max_barrier_stiffness), 2.0 * float(barrier_stiffness))
    return float(barrier_stiffness)


@njit
def _project_to_psd(H):
    eigenvalues, eigenvectors = np.linalg.eigh(H)
    if eigenvalues[0] >= 0.0:
        return H.copy()
    for i in range(eigenvalues.shape[0]):
        if eigenvalues[i] < 0.0:
            eigenvalues[i] = 0.0
    scaled = eigenvectors * eigenvalues
    return scaled @ eigenvectors.T


@njit
def _project_to_psd_shift_invariant(H):
    """_project_to_psd for the Hessian H (3n, 3n), n >= 2 points, of a function that does not
    change when all points move together (a distance, a barrier of one): such an H is zero on the
    3 translations, so its eigenvectors of nonzero eigenvalue lie in their orthogonal complement.
    With Q (3n, 3(n-1)) an orthonormal basis of it (Helmert contrasts per axis), the clamp is
    H - sum over negative eigenvalues l of Q^T H Q of l (Q v)(Q v)^T: one eigendecomposition of
    size 3(n-1) instead of 3n and only the negative modes subtracted (a contact's barrier Hessian
    has 2 of 12). Equal to _project_to_psd up to rounding."""
    size = H.shape[0]
    n = size // 3
    m = size - 3
    Q = np.zeros((size, m))
    for k in range(1, n):  # Helmert contrast k: points 0..k-1 weigh 1, point k weighs -k
        scale = 1.0 / math.sqrt(k * (k + 1.0))
        for a in range(3):
            for i in range(k):
                Q[3 * i + a, 3 * (k - 1) + a] = scale
            Q[3 * k + a, 3 * (k - 1) + a] = -k * scale
    HQ = np.zeros((size, m))
    for r in range(size):
        for c in range(m):
            total = 0.0
            for i in range(size):
                total += H[r, i] * Q[i, c]
            HQ[r, c] = total
    R = np.empty((m, m))
    for r in range(m):
        for c in range(r, m):
            total = 0.0
            for i in range(size):
                total += Q[i, r] * HQ[i, c]
            R[r, c] = total
            R[c, r] = total
    eigenvalues, eigenvectors = np.linalg.eigh(R)
    out = H.copy()
    u = np.empty(size)
    for k in range(m):
        if not eigenvalues[k] < 0.0:
            break  # ascending
        for i in range(size):
            total = 0.0
            for c in range(m):
                total += Q[i, c] * eigenvectors[c, k]
            u[i] = total
        for r in range(size):
            for c in range(size):
                out[r, c] -= eigenvalues[k] * u[r] * u[c]
    return out


def project_to_psd(H):
    """Nearest PSD matrix (Frobenius) to a small dense symmetric H: eigenvalues clamped at 0.

    H = V diag(l) V^T  ->  V diag(max(l, 0)) V^T. Returns H unchanged (a copy) if already PSD.
    Same as ipctk.project_to_psd(H, PSDProjectionMethod.CLAMP). Used for the projected Newton
    element Hessians (Teran et al. 2005; IPC sec. 5).
    """
    H = np.ascontiguousarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[0] != H.shape[1]:
        raise ValueError(f"H must be a square matrix, got shape {H.shape}")
    if not np.all(np.isfinite(H)):
        raise ValueError("H contains NaN or infinite entries")
    return _project_to_psd(H)
