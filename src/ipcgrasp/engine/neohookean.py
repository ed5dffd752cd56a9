"""Compressible Neo-Hookean elasticity on linear tetrahedra (docs/physics.md, "Strain energy of a pad").

Energy density (J/m^3) of the deformation gradient F = Ds Dm^-1, J = det F > 0:

    Psi(F) = mu/2 (tr(F^T F) - 3) - mu ln J + lam/2 (ln J)^2

with the Lame parameters mu = E / (2 (1 + nu)), lam = E nu / ((1 + nu)(1 - 2 nu)) (Pa). A tet's
energy is its rest volume times Psi (J). Ds = [x1 - x0, x2 - x0, x3 - x0] holds the deformed edge
vectors as columns, Dm the rest ones.

Element Hessians are projected to positive semi-definite in F-space with the analytic
eigensystem of isotropic energies (Smith, De Goes, Kim 2019, "Analytic Eigensystems for
Isotropic Distortion Energies"): with F = U diag(sigma) V^T (U, V rotations), the 9x9 Hessian
d2Psi/dF2 has three twist modes U (e_i e_j^T - e_j e_i^T) V^T / sqrt 2, three flip modes
U (e_i e_j^T + e_j e_i^T) V^T / sqrt 2 and three scaling modes U diag(w) V^T, w an eigenvector
of the 3x3 Hessian of Psi in the singular values. For this energy the twist and flip
eigenvalues have closed forms without the sigma_i = sigma_j singularity:

    twist_ij = mu + (lam ln J - mu) / (sigma_i sigma_j)
    flip_ij  = mu + (mu - lam ln J) / (sigma_i sigma_j)

Clamping the nine eigenvalues at zero gives the PSD projection of d2Psi/dF2; the element
Hessian is vol * B^T (d2Psi/dF2) B with B = dvec(F)/dx (12 -> 9, onto), so it is PSD exactly when
the F-space Hessian is, and the projection leaves an already-PSD Hessian unchanged.
The 3x3 SVD (one-sided Jacobi) and symmetric eigensolve (cyclic Jacobi) are written out here:
for 3x3 matrices they are several times faster than LAPACK calls from numba. The scaling block
is nearly always positive definite and then enters through its Cholesky factor (nothing to
clamp); the SVD can start from the rotation of a nearby F (a simulation's previous iterate),
which saves most Jacobi rotations. Mesh loops reuse per-call scratch (the `_into` kernels).

Kernels (`_name`) take float64 arrays and int64 tets; the public wrappers validate and convert.
"""

import numpy as np

from ipcgrasp.engine._numba import njit

__all__ = [
    "any_inverted",
    "elastic_energy",
    "elastic_gradient",
    "elastic_hessians",
    "energy_density",
    "first_piola_kirchhoff",
    "lame_parameters",
    "lumped_masses",
    "max_noninverting_step",
    "min_jacobian",
    "rest_shape_inverse",
    "tet_energies",
]


def lame_parameters(youngs_modulus, poisson_ratio):
    """Lame parameters (mu, lam) in Pa from Young's modulus E (Pa) and Poisson's ratio nu.

    mu = E / (2 (1 + nu)),  lam = E nu / ((1 + nu)(1 - 2 nu)); requires E > 0, -1 < nu < 0.5.
    """
    E = float(youngs_modulus)
    nu = float(poisson_ratio)
    if not np.isfinite(E) or E <= 0.0:
        raise ValueError(f"Young's modulus must be positive and finite, got {E!r}")
    if not -1.0 < nu < 0.5:
        raise ValueError(f"Poisson's ratio must lie in (-1, 0.5), got {nu!r}")
    mu = E / (2.0 * (1.0 + nu))
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    return mu, lam


# ----------------------------------------------------------------------------------------------
# Validation helpers


def _as_positions(x, name):
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_tets(tets, n_vertices):
    arr = np.asarray(tets)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"tets must have shape (T, 4), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"tets must hold integer vertex indices, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_vertices):
        raise ValueError(f"tets index vertices outside [0, {n_vertices})")
    return arr


def _as_dm_inv(Dm_inv, n_tets):
    arr = np.ascontiguousarray(Dm_inv, dtype=np.float64)
    if arr.shape != (n_tets, 3, 3):
        raise ValueError(f"Dm_inv must have shape ({n_tets}, 3, 3), got {arr.shape}")
    return arr


def _as_volumes(volumes, n_tets):
    arr = np.ascontiguousarray(volumes, dtype=np.float64)
    if arr.shape != (n_tets,):
        raise ValueError(f"volumes must have shape ({n_tets},), got {arr.shape}")
    return arr


def _validated(x, tets, Dm_inv, volumes=None):
    x = _as_positions(x, "x")
    tets = _as_tets(tets, x.shape[0])
    Dm_inv = _as_dm_inv(Dm_inv, tets.shape[0])
    if volumes is None:
        return x, tets, Dm_inv
    return x, tets, Dm_inv, _as_volumes(volumes, tets.shape[0])


# ----------------------------------------------------------------------------------------------
# 3x3 helpers, rest shape and masses


@njit
def _det3(F):
    """det F of a 3x3 matrix (cofactor expansion)."""
    return (
        F[0, 0] * (F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1])
        - F[0, 1] * (F[1, 0] * F[2, 2] - F[1, 2] * F[2, 0])
        + F[0, 2] * (F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0])
    )


@njit
def _cofactor(F):
    """Cofactor matrix cof(F) = det(F) F^-T (defined for singular F too)."""
    C = np.empty((3, 3))
    _cofactor_into(F, C)
    return C


@njit
def _cofactor_into(F, C):
    """cof(F) written into C (3,3)."""
    C[0, 0] = F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1]
    C[0, 1] = F[1, 2] * F[2, 0] - F[1, 0] * F[2, 2]
    C[0, 2] = F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0]
    C[1, 0] = F[0, 2] * F[2, 1] - F[0, 1] * F[2, 2]
    C[1, 1] = F[0, 0] * F[2, 2] - F[0, 2] * F[2, 0]
    C[1, 2] = F[0, 1] * F[2, 0] - F[0, 0] * F[2, 1]
    C[2, 0] = F[0, 1] * F[1, 2] - F[0, 2] * F[1, 1]
    C[2, 1] = F[0, 2] * F[1, 0] - F[0, 0] * F[1, 2]
    C[2, 2] = F[0, 0] * F[1, 1] - F[0, 1] * F[1, 0]


@njit
def _frobenius_dot(A, B):
    """A : B = sum_ab A_ab B_ab for 3x3 matrices."""
    total = 0.0
    for a in range(3):
        for b in range(3):
            total += A[a, b] * B[a, b]
    return total


@njit
def _rest_shape_inverse(X, tets, Dm_inv, volumes):
    """Fill Dm_inv (T,3,3) and signed rest volumes (T,); return the first tet index whose
    volume is not positive, or -1."""
    Dm = np.empty((3, 3))
    for t in range(tets.shape[0]):
        for c in range(3):
            for a in range(3):
                Dm[a, c] = X[tets[t, c + 1], a] - X[tets[t, 0], a]
        det = _det3(Dm)
        volumes[t] = det / 6.0
        if not det > 0.0:
            return t
        C = _cofactor(Dm)
        for a in range(3):
            for b in range(3):
                Dm_inv[t, a, b] = C[b, a] / det
    return -1


def rest_shape_inverse(X, tets):
    """Inverse rest edge matrices Dm^-1 (T,3,3) (1/m) and rest volumes (T,) (m^3).

    Dm = [X1 - X0, X2 - X0, X3 - X0] per tet (columns); volume = det(Dm) / 6. Raises ValueError
    naming the first tet whose rest volume is not positive (degenerate or inverted ordering).
    """
    X = _as_positions(X, "X")
    tets = _as_tets(tets, X.shape[0])
    Dm_inv = np.zeros((tets.shape[0], 3, 3))
    volumes = np.zeros(tets.shape[0])
    bad = _rest_shape_inverse(X, tets, Dm_inv, volumes)
    if bad >= 0:
        raise ValueError(
            f"tet {bad} (vertices {tets[bad].tolist()}) has non-positive rest volume "
            f"{volumes[bad]:.3e} m^3"
        )
    return Dm_inv, volumes


def lumped_masses(X, tets, density):
    """Lumped vertex masses (n,) in kg: each tet gives density * rest volume / 4 to its vertices.

    density in kg/m^3. Vertices in no tet get zero mass.
    """
    rho = float(density)
    if not np.isfinite(rho) or rho <= 0.0:
        raise ValueError(f"density must be positive and finite, got {rho!r}")
    X = _as_positions(X, "X")
    _, volumes = rest_shape_inverse(X, tets)
    tets = _as_tets(tets, X.shape[0])
    masses = np.zeros(X.shape[0])
    np.add.at(masses, tets.ravel(), np.repeat(rho * volumes / 4.0, 4))
    return masses


# ----------------------------------------------------------------------------------------------
# Per-tet kernels


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
    """Psi(F) in J/m^3; +inf when det F <= 0."""
    J = _det3(F)
    if not J > 0.0:
        return np.inf
    lnJ = np.log(J)
    return 0.5 * mu * (_frobenius_dot(F, F) - 3.0) - mu * lnJ + 0.5 * lam * lnJ * lnJ


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
def _jacobi_tangent(zeta):
    """t = tan of the Jacobi rotation angle solving t^2 + 2 zeta t - 1 = 0 (smaller root)."""
    if abs(zeta) > 1e150:
        return 0.5 / zeta
    sign = 1.0 if zeta >= 0.0 else -1.0
    return sign / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))


@njit
def _symmetric_eigen3(A):
    """Eigenvalues w (3,) and orthonormal eigenvectors W (3,3, columns) of a symmetric 3x3 A by
    cyclic Jacobi rotations (accurate to rounding; a few sweeps)."""
    S = A.copy()
    W = np.eye(3)
    for _ in range(30):
        off = S[0, 1] * S[0, 1] + S[0, 2] * S[0, 2] + S[1, 2] * S[1, 2]
        diag = S[0, 0] * S[0, 0] + S[1, 1] * S[1, 1] + S[2, 2] * S[2, 2]
        if off <= 1e-36 * diag or off == 0.0:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if S[p, q] == 0.0:
                continue
            t = _jacobi_tangent((S[q, q] - S[p, p]) / (2.0 * S[p, q]))
            c = 1.0 / np.sqrt(1.0 + t * t)
            s = t * c
            for k in range(3):
                skp = S[k, p]
                skq = S[k, q]
                S[k, p] = c * skp - s * skq
                S[k, q] = s * skp + c * skq
            for k in range(3):
                spk = S[p, k]
                sqk = S[q, k]
                S[p, k] = c * spk - s * sqk
                S[q, k] = s * spk + c * sqk
            for k in range(3):
                wkp = W[k, p]
                wkq = W[k, q]
                W[k, p] = c * wkp - s * wkq
                W[k, q] = s * wkp + c * wkq
    w = np.empty(3)
    for k in range(3):
        w[k] = S[k, k]
    return w, W


@njit
def _rotation_svd(F):
    """F = U diag(sigma) V^T with U, V proper rotations, |sigma_1| >= |sigma_2| >= |sigma_3| and
    sigma_3 carrying the sign of det F (see _rotation_svd_into)."""
    U = np.empty((3, 3))
    sigma = np.empty(3)
    V = np.eye(3)
    _rotation_svd_into(F, U, sigma, V)
    return U, sigma, V


@njit
def _rotation_svd_into(F, U, sigma, V):
    """The rotation SVD of F written into U (3,3), sigma (3,) and V (3,3); on entry V holds a
    starting rotation (the identity, or the V of a nearby F: then few Jacobi rotations remain).

    One-sided Jacobi (Hestenes): plane rotations V make the columns of B = F V orthogonal, which
    keeps the small singular values accurate (unlike an eigensolve of F^T F); U's third column is
    u_1 x u_2 so U stays a rotation however small sigma_3 is. B is kept in U and the squared
    column norms in sigma until the end."""
    B = U
    for a in range(3):
        for b in range(3):
            B[a, b] = F[a, 0] * V[0, b] + F[a, 1] * V[1, b] + F[a, 2] * V[2, b]
    for _ in range(30):
        rotated = False
        for p, q in ((0, 1), (0, 2), (1, 2)):
            alpha = B[0, p] * B[0, p] + B[1, p] * B[1, p] + B[2, p] * B[2, p]
            beta = B[0, q] * B[0, q] + B[1, q] * B[1, q] + B[2, q] * B[2, q]
            gamma = B[0, p] * B[0, q] + B[1, p] * B[1, q] + B[2, p] * B[2, q]
            if abs(gamma) <= 1e-16 * np.sqrt(alpha * beta):
                continue
            rotated = True
            t = _jacobi_tangent((beta - alpha) / (2.0 * gamma))
            c = 1.0 / np.sqrt(1.0 + t * t)
            s = t * c
            for k in range(3):
                bkp = B[k, p]
                bkq = B[k, q]
                B[k, p] = c * bkp - s * bkq
                B[k, q] = s * bkp + c * bkq
                vkp = V[k, p]
                vkq = V[k, q]
                V[k, p] = c * vkp - s * vkq
                V[k, q] = s * vkp + c * vkq
        if not rotated:
            break

    # Sort the columns by decreasing norm.
    norms = sigma
    for p in range(3):
        norms[p] = B[0, p] * B[0, p] + B[1, p] * B[1, p] + B[2, p] * B[2, p]
    for p, q in ((0, 1), (0, 2), (1, 2)):
        if norms[q] > norms[p]:
            norms[p], norms[q] = norms[q], norms[p]
            for k in range(3):
                B[k, p], B[k, q] = B[k, q], B[k, p]
                V[k, p], V[k, q] = V[k, q], V[k, p]
    if _det3(V) < 0.0:
        for k in range(3):
            V[k, 2] = -V[k, 2]
            B[k, 2] = -B[k, 2]

    sigma[0] = np.sqrt(norms[0])
    for k in range(3):
        U[k, 0] = B[k, 0] / sigma[0]
    # Gram-Schmidt once more against rounding in the Jacobi orthogonality.
    proj = U[0, 0] * B[0, 1] + U[1, 0] * B[1, 1] + U[2, 0] * B[2, 1]
    for k in range(3):
        U[k, 1] = B[k, 1] - proj * U[k, 0]
    sigma[1] = np.sqrt(U[0, 1] * U[0, 1] + U[1, 1] * U[1, 1] + U[2, 1] * U[2, 1])
    for k in range(3):
        U[k, 1] /= sigma[1]
    u0 = U[1, 0] * U[2, 1] - U[2, 0] * U[1, 1]
    u1 = U[2, 0] * U[0, 1] - U[0, 0] * U[2, 1]
    u2 = U[0, 0] * U[1, 1] - U[1, 0] * U[0, 1]
    sigma[2] = u0 * B[0, 2] + u1 * B[1, 2] + u2 * B[2, 2]
    U[0, 2] = u0
    U[1, 2] = u1
    U[2, 2] = u2


@njit
def _cholesky3(A, L):
    """Lower Cholesky factor L of a symmetric 3x3 A (written into L); False when A is not
    positive definite (a pivot <= 0)."""
    d0 = A[0, 0]
    if not d0 > 0.0:
        return False
    L[0, 0] = np.sqrt(d0)
    L[1, 0] = A[1, 0] / L[0, 0]
    L[2, 0] = A[2, 0] / L[0, 0]
    d1 = A[1, 1] - L[1, 0] * L[1, 0]
    if not d1 > 0.0:
        return False
    L[1, 1] = np.sqrt(d1)
    L[2, 1] = (A[2, 1] - L[2, 0] * L[1, 0]) / L[1, 1]
    d2 = A[2, 2] - L[2, 0] * L[2, 0] - L[2, 1] * L[2, 1]
    if not d2 > 0.0:
        return False
    L[2, 2] = np.sqrt(d2)
    L[0, 1] = 0.0
    L[0, 2] = 0.0
    L[1, 2] = 0.0
    return True


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


# ----------------------------------------------------------------------------------------------
# Mesh kernels


@njit
def _tet_energies(x, tets, Dm_inv, volumes, mu, lam, out):
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        out[t] = volumes[t] * _energy_density(F, mu, lam)


@njit
def _elastic_energy(x, tets, Dm_inv, volumes, mu, lam):
    total = 0.0
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        total += volumes[t] * _energy_density(F, mu, lam)
    return total


@njit
def _elastic_gradient(x, tets, Dm_inv, volumes, mu, lam, out):
    """out (n,3) = dE/dx (N); overwritten."""
    out[:, :] = 0.0
    F = np.empty((3, 3))
    C = np.empty((3, 3))
    P = np.empty((3, 3))
    D = np.empty((4, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _first_piola_into(F, mu, lam, C, P)
        _shape_derivatives_into(Dm_inv[t], D)
        for m in range(4):
            for a in range(3):
                out[tets[t, m], a] += volumes[t] * (
                    P[a, 0] * D[m, 0] + P[a, 1] * D[m, 1] + P[a, 2] * D[m, 2]
                )


@njit
def _elastic_hessians(x, tets, Dm_inv, volumes, mu, lam, project, out):
    """out (T,12,12): per-tet Hessians, vertex-major (3 m + a) ordering."""
    F = np.empty((3, 3))
    D = np.empty((4, 3))
    workspace = _hessian_workspace()
    rotation = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _shape_derivatives_into(Dm_inv[t], D)
        for a in range(3):
            for b in range(3):
                rotation[a, b] = 1.0 if a == b else 0.0
        _tet_hessian(F, D, volumes[t], mu, lam, project, out[t], workspace, rotation)


@njit
def _min_jacobian(x, tets, Dm_inv):
    J_min = np.inf
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        J = _det3(F)
        if J < J_min:
            J_min = J
    return J_min


@njit
def _cubic(c0, c1, c2, c3, t):
    return c0 + t * (c1 + t * (c2 + t * c3))


@njit
def _first_cubic_root(c0, c1, c2, c3, t_max):
    """Smallest t in (0, t_max] with p(t) = c0 + c1 t + c2 t^2 + c3 t^3 <= 0, given c0 > 0;
    returned as the last bisection point with p > 0 (so p(t) > 0 on [0, t]); +inf if none.

    [0, t_max] is cut at the critical points of p (stable quadratic formula) into monotone
    pieces, so a sign change, including a tangent (double) root, shows at a piece end."""
    breaks = np.empty(3)
    n_breaks = 0
    a = 3.0 * c3
    b = 2.0 * c2
    c = c1
    if a == 0.0:
        if b != 0.0:
            breaks[0] = -c / b
            n_breaks = 1
    else:
        disc = b * b - 4.0 * a * c
        if disc >= 0.0:
            q = -0.5 * (b + np.copysign(np.sqrt(disc), b))
            breaks[0] = q / a
            n_breaks = 1
            if q != 0.0:
                breaks[1] = c / q
                n_breaks = 2
    pieces = np.empty(3)
    n_pieces = 0
    for k in range(n_breaks):
        if 0.0 < breaks[k] < t_max:
            pieces[n_pieces] = breaks[k]
            n_pieces += 1
    if n_pieces == 2 and pieces[1] < pieces[0]:
        pieces[0], pieces[1] = pieces[1], pieces[0]
    pieces[n_pieces] = t_max
    n_pieces += 1

    lo = 0.0
    for k in range(n_pieces):
        hi = pieces[k]
        if _cubic(c0, c1, c2, c3, hi) <= 0.0:
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if _cubic(c0, c1, c2, c3, mid) > 0.0:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return np.inf


@njit
def _max_noninverting_step(x, dx, tets, Dm_inv, safety):
    """Largest alpha in [0, 1] with J > 0 on all of [0, alpha] along x + alpha dx, scaled back
    by `safety`: alpha = min(1, safety * t*), t* the first per-tet root of the cubic
    det(F + t dF) = det F + t cof(F):dF + t^2 F:cof(dF) + t^3 det dF searched in [0, 1/safety].
    Returns -1 if a tet is already inverted (J <= 0)."""
    t_max = 1.0 / safety
    t_first = t_max
    F = np.empty((3, 3))
    dF = np.empty((3, 3))
    C = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _deformation_gradient_into(dx, tets[t], Dm_inv[t], dF)
        c0 = _det3(F)
        if not c0 > 0.0:
            return -1.0
        _cofactor_into(F, C)
        c1 = _frobenius_dot(C, dF)
        _cofactor_into(dF, C)
        c2 = _frobenius_dot(C, F)
        c3 = _det3(dF)
        if t_first * (abs(c1) + t_first * (abs(c2) + t_first * abs(c3))) <= 0.5 * c0:
            continue  # J >= c0 / 2 on [0, t_first]: far beyond rounding from a root, none to find
        root = _first_cubic_root(c0, c1, c2, c3, t_first)
        if root < t_first:
            t_first = root
    return min(1.0, safety * t_first)


# ----------------------------------------------------------------------------------------------
# Public wrappers


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


def tet_energies(x, tets, Dm_inv, volumes, mu, lam):
    """Elastic energy of each tet (T,) in J: rest volume * Psi(F); +inf for an inverted tet."""
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    out = np.empty(tets.shape[0])
    _tet_energies(x, tets, Dm_inv, volumes, float(mu), float(lam), out)
    return out


def elastic_energy(x, tets, Dm_inv, volumes, mu, lam):
    """Total Neo-Hookean energy (J) of the mesh at positions x (n,3) m; +inf if a tet is inverted.

    mu, lam in Pa; Dm_inv and volumes from rest_shape_inverse.
    """
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    return float(_elastic_energy(x, tets, Dm_inv, volumes, float(mu), float(lam)))


def elastic_gradient(x, tets, Dm_inv, volumes, mu, lam):
    """Gradient of elastic_energy with respect to x, (n,3) in N (minus the elastic forces)."""
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    out = np.empty_like(x)
    _elastic_gradient(x, tets, Dm_inv, volumes, float(mu), float(lam), out)
    return out


def elastic_hessians(x, tets, Dm_inv, volumes, mu, lam, project=True):
    """Per-tet Hessians (T,12,12) in N/m of the tet energies, rows/cols ordered 3*m + axis for the
    tet's vertices m = 0..3 (tets[t, m]).

    project=True clamps the negative eigenvalues of d2Psi/dF2 at zero (analytic eigensystem of
    Smith et al. 2019), which makes every block PSD; project=False gives the exact Hessian.
    """
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    if _min_jacobian(x, tets, Dm_inv) <= 0.0:
        raise ValueError("elastic_hessians needs every tet to have det F > 0")
    out = np.empty((tets.shape[0], 12, 12))
    _elastic_hessians(x, tets, Dm_inv, volumes, float(mu), float(lam), bool(project), out)
    return out


def min_jacobian(x, tets, Dm_inv):
    """Smallest J = det F over all tets (dimensionless; +inf for no tets)."""
    x, tets, Dm_inv = _validated(x, tets, Dm_inv)
    return float(_min_jacobian(x, tets, Dm_inv))


def any_inverted(x, tets, Dm_inv):
    """True if some tet has J = det F <= 0 (inverted or flat)."""
    return min_jacobian(x, tets, Dm_inv) <= 0.0


def max_noninverting_step(x, dx, tets, Dm_inv, safety=0.9):
    """Step fraction alpha in (0, 1] keeping every tet's J > 0 along x + t dx for t in [0, alpha].

    Exact per-tet test: det(F + t dF) is a cubic in t; its first positive root t* is isolated
    between the cubic's critical points and bisected to machine precision. Returns
    min(1, safety * min_tets t*) (safety in (0, 1] leaves room for rounding and for the energy
    barrier -mu ln J). Raises ValueError if x already has an inverted tet.
    """
    x, tets, Dm_inv = _validated(x, tets, Dm_inv)
    dx = _as_positions(dx, "dx")
    if dx.shape != x.shape:
        raise ValueError(f"dx must have the shape of x {x.shape}, got {dx.shape}")
    s = float(safety)
    if not 0.0 < s <= 1.0:
        raise ValueError(f"safety must lie in (0, 1], got {s!r}")
    alpha = float(_max_noninverting_step(x, dx, tets, Dm_inv, s))
    if alpha < 0.0:
        raise ValueError("x already has an inverted tet (J <= 0)")
    return alpha
