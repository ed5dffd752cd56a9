"""3x3 linear algebra written out for numba (several times faster than LAPACK calls at this size):
determinant, cofactor, Frobenius product, rotation SVD (one-sided Jacobi), symmetric
eigensystem (cyclic Jacobi) and Cholesky factor.
"""

import numpy as np

from ipcgrasp.engine._numba import njit


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
