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
    "barrier_stiffness_bounds",
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


def barrier_stiffness_bounds(bbox_diagonal, dhat, average_mass, min_barrier_stiffness_scale=1e11):
    """(kappa_min, kappa_max) of `initial_barrier_stiffness`, which clamps IPC's heuristic to
    them: kappa_min = scale * average_mass / (4 d0 b''(d0, dhat^2)), d0 = (1e-8 *
    bbox_diagonal)^2 (or dhat^2 / 2 if that is not below dhat^2), kappa_max = 100 kappa_min.
    Lengths in m, mass in kg; arguments as checked there."""
    dhat_squared = dhat * dhat
    d0 = (1e-8 * bbox_diagonal) ** 2
    if d0 >= dhat_squared:
        d0 = 0.5 * dhat_squared
    min_kappa = (
        min_barrier_stiffness_scale
        * average_mass
        / (4.0 * d0 * _barrier_second_derivative(d0, dhat_squared))
    )
    return min_kappa, 100.0 * min_kappa


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
    if not (np.isfinite(grad_energy).all() and np.isfinite(grad_barrier).all()):
        raise ValueError("grad_energy and grad_barrier must be finite")

    min_kappa, max_kappa = barrier_stiffness_bounds(bbox_diagonal, dhat, average_mass, min_barrier_stiffness_scale)
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
def _symmetric_eigen(M):
    """Eigenvalues (unsorted) and eigenvectors (columns) of a small symmetric M: Householder
    reduction to tridiagonal form, then implicit QL iterations with Wilkinson shifts (Golub &
    Van Loan, Matrix Computations, sec. 8.3; Press et al., Numerical Recipes, tred2 and tqli).
    M is overwritten. For the r <= 12 matrices of contact Hessians this costs less than LAPACK's
    call overhead; eigenvalues are accurate to round-off of |M|."""
    n = M.shape[0]
    Q = np.eye(n)
    v = np.empty(n)
    p = np.empty(n)
    for k in range(n - 2):  # Householder reflection zeroing M[k + 2:, k]
        tail = 0.0
        for i in range(k + 2, n):
            tail += M[i, k] * M[i, k]
        if tail == 0.0:
            continue
        norm = math.sqrt(tail + M[k + 1, k] * M[k + 1, k])
        alpha = -norm if M[k + 1, k] >= 0.0 else norm
        for i in range(k + 1, n):
            v[i] = M[i, k]
        v[k + 1] -= alpha
        beta = 2.0 / (tail + v[k + 1] * v[k + 1])
        # M22 <- (I - beta v v^T) M22 (I - beta v v^T) = M22 - v q^T - q v^T
        vp = 0.0
        for i in range(k + 1, n):
            total = 0.0
            for j in range(k + 1, n):
                total += M[i, j] * v[j]
            p[i] = beta * total
            vp += v[i] * p[i]
        half = 0.5 * beta * vp
        for i in range(k + 1, n):
            p[i] -= half * v[i]
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                M[i, j] -= v[i] * p[j] + p[i] * v[j]
        M[k + 1, k] = alpha
        M[k, k + 1] = alpha
        for i in range(k + 2, n):
            M[i, k] = 0.0
            M[k, i] = 0.0
        for i in range(n):  # Q <- Q (I - beta v v^T)
            total = 0.0
            for j in range(k + 1, n):
                total += Q[i, j] * v[j]
            total *= beta
            for j in range(k + 1, n):
                Q[i, j] -= total * v[j]
    d = np.empty(n)
    e = np.zeros(n)  # e[i] couples i and i + 1
    for i in range(n):
        d[i] = M[i, i]
    for i in range(n - 1):
        e[i] = M[i + 1, i]
    for l in range(n):
        for _ in range(60):
            m = l
            while m < n - 1:
                dd = abs(d[m]) + abs(d[m + 1])
                if abs(e[m]) + dd == dd:
                    break
                m += 1
            if m == l:
                break
            g = (d[l + 1] - d[l]) / (2.0 * e[l])
            r = math.hypot(g, 1.0)
            g = d[m] - d[l] + e[l] / (g + (r if g >= 0.0 else -r))
            s = 1.0
            c = 1.0
            shift = 0.0
            i = m - 1
            deflated = False
            while i >= l:
                f = s * e[i]
                b = c * e[i]
                r = math.hypot(f, g)
                e[i + 1] = r
                if r == 0.0:
                    d[i + 1] -= shift
                    e[m] = 0.0
                    deflated = True
                    break
                s = f / r
                c = g / r
                g = d[i + 1] - shift
                r = (d[i] - g) * s + 2.0 * c * b
                shift = s * r
                d[i + 1] = g + shift
                g = c * r - b
                for k in range(n):
                    f = Q[k, i + 1]
                    Q[k, i + 1] = s * Q[k, i] + c * f
                    Q[k, i] = c * Q[k, i] - s * f
                i -= 1
            if deflated:
                continue
            d[l] -= shift
            e[l] = g
            e[m] = 0.0
    return d, Q


# Relative size (to the Frobenius norm of H) below which a column of H left over after removing
# its components along the range found so far counts as round-off (_project_to_psd_on_range).
RANGE_TOLERANCE = 1e-13


@njit
def _project_to_psd_on_range(H):
    """_project_to_psd for a small symmetric H of low rank (a contact's barrier Hessian: rank 5 of
    12 for face-vertex and edge-edge contacts, 1 for vertex-plane): an orthonormal basis B of H's
    column space is found by Gram-Schmidt with column pivoting (each new column the one with the
    largest part outside span(B), orthogonalised twice, until every remaining part is below
    RANGE_TOLERANCE |H|_F), so that H = B (B^T H B) B^T up to that tolerance; the eigenvalues l
    and vectors y of the r x r matrix B^T H B are those of H, and l (B y)(B y)^T is subtracted
    for each negative l. One r x r eigenproblem (r = 5 for most contacts) instead of 12 x 12, solved
    by tridiagonal QL (_symmetric_eigen). Equal to _project_to_psd up to rounding."""
    size = H.shape[0]
    # Row c of Rt is column c of H's part outside span(B); row r of Bt is basis vector r: both
    # stored as rows so that the loops over their entries run along contiguous memory.
    Rt = np.empty((size, size))
    for i in range(size):
        for c in range(size):
            Rt[c, i] = H[i, c]
    Bt = np.empty((size, size))
    chosen = np.zeros(size, dtype=np.bool_)  # columns already in span(B): their parts are round-off
    frobenius = 0.0
    for i in range(size):
        for j in range(size):
            frobenius += H[i, j] * H[i, j]
    floor = RANGE_TOLERANCE * RANGE_TOLERANCE * frobenius
    r = 0
    while r < size:
        best = -1
        best_norm = floor
        for c in range(size):
            if chosen[c]:
                continue
            total = 0.0
            for i in range(size):
                total += Rt[c, i] * Rt[c, i]
            if total > best_norm:
                best_norm = total
                best = c
        if best < 0:
            break
        chosen[best] = True
        scale = 1.0 / math.sqrt(best_norm)
        for i in range(size):
            Bt[r, i] = Rt[best, i] * scale
        for q in range(r):  # second Gram-Schmidt pass against the earlier basis vectors
            dot = 0.0
            for i in range(size):
                dot += Bt[q, i] * Bt[r, i]
            for i in range(size):
                Bt[r, i] -= dot * Bt[q, i]
        total = 0.0
        for i in range(size):
            total += Bt[r, i] * Bt[r, i]
        scale = 1.0 / math.sqrt(total)
        for i in range(size):
            Bt[r, i] *= scale
        for c in range(size):
            if chosen[c]:
                continue
            dot = 0.0
            for i in range(size):
                dot += Bt[r, i] * Rt[c, i]
            for i in range(size):
                Rt[c, i] -= dot * Bt[r, i]
        r += 1
    out = H.copy()
    if r == 0:
        return out
    HB = np.empty(size)
    M = np.empty((r, r))  # B^T H B
    for q in range(r):
        for i in range(size):
            total = 0.0
            for j in range(size):
                total += H[i, j] * Bt[q, j]
            HB[i] = total
        for p in range(q + 1):
            total = 0.0
            for i in range(size):
                total += Bt[p, i] * HB[i]
            M[p, q] = total
            M[q, p] = total
    eigenvalues, eigenvectors = _symmetric_eigen(M)
    u = np.empty(size)
    for k in range(r):
        if not eigenvalues[k] < 0.0:
            continue
        for i in range(size):
            total = 0.0
            for q in range(r):
                total += Bt[q, i] * eigenvectors[q, k]
            u[i] = total
        for i in range(size):
            lu = eigenvalues[k] * u[i]
            for j in range(size):
                out[i, j] -= lu * u[j]
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
    if not np.isfinite(H).all():
        raise ValueError("H contains NaN or infinite entries")
    return _project_to_psd(H)
