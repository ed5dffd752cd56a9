"""The lagged geometry of one friction contact, per contact kind: its tangent basis T (3x2,
orthonormal), closest-point coordinates and relative displacement matrix Gamma = weights (x) I3.

Scalar divisions raise ZeroDivisionError on degenerate input; the public wrappers turn that and
non-finite results into ValueError.
"""

import math

import numpy as np

from ipcgrasp.engine._numba import njit


@njit
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def _unit(a):
    inv_norm = 1.0 / math.sqrt(_dot(a, a))
    out = np.empty(3)
    for i in range(3):
        out[i] = a[i] * inv_norm
    return out


@njit
def _basis_from_tangent(tangent, normal):
    """Orthonormal [t, n x t] from a tangent direction t orthogonal to the normal n."""
    basis = np.empty((3, 2))
    t0 = _unit(tangent)
    t1 = _unit(_cross(normal, t0))
    for i in range(3):
        basis[i, 0] = t0[i]
        basis[i, 1] = t1[i]
    return basis


@njit
def _point_plane_tangent_basis(normal):
    # Cross the normal with the coordinate axis it is least aligned with (well conditioned).
    axis = np.zeros(3)
    k = 0
    for i in range(1, 3):
        if abs(normal[i]) < abs(normal[k]):
            k = i
    axis[k] = 1.0
    return _basis_from_tangent(_cross(normal, axis), normal)


@njit
def _point_point_tangent_basis(p0, p1):
    return _point_plane_tangent_basis(p1 - p0)


@njit
def _point_edge_tangent_basis(p, e0, e1):
    edge = e1 - e0
    return _basis_from_tangent(edge, _cross(_cross(edge, p - e0), edge))


@njit
def _point_triangle_tangent_basis(p, t0, t1, t2):
    edge = t1 - t0
    return _basis_from_tangent(edge, _cross(edge, t2 - t0))


@njit
def _edge_edge_tangent_basis(ea0, ea1, eb0, eb1):
    edge_a = ea1 - ea0
    return _basis_from_tangent(edge_a, _cross(edge_a, eb1 - eb0))


@njit
def _point_edge_closest_point(p, e0, e1):
    edge = e1 - e0
    return _dot(p - e0, edge) / _dot(edge, edge)


@njit
def _solve_2x2_symmetric(a00, a01, a11, b0, b1):
    out = np.empty(2)
    inv_det = 1.0 / (a00 * a11 - a01 * a01)
    out[0] = (a11 * b0 - a01 * b1) * inv_det
    out[1] = (a00 * b1 - a01 * b0) * inv_det
    return out


@njit
def _point_triangle_closest_point(p, t0, t1, t2):
    e1 = t1 - t0
    e2 = t2 - t0
    r = p - t0
    return _solve_2x2_symmetric(_dot(e1, e1), _dot(e1, e2), _dot(e2, e2), _dot(e1, r), _dot(e2, r))


@njit
def _edge_edge_closest_point(ea0, ea1, eb0, eb1):
    edge_a = ea1 - ea0
    edge_b = eb1 - eb0
    r = eb0 - ea0
    # Normal equations of min |ea0 + alpha edge_a - eb0 - beta edge_b|^2 over (alpha, beta).
    return _solve_2x2_symmetric(
        _dot(edge_a, edge_a),
        -_dot(edge_a, edge_b),
        _dot(edge_b, edge_b),
        _dot(edge_a, r),
        -_dot(edge_b, r),
    )


@njit
def _relative_displacement_matrix(weights):
    n = weights.shape[0]
    gamma = np.zeros((3, 3 * n))
    for j in range(n):
        for i in range(3):
            gamma[i, 3 * j + i] = weights[j]
    return gamma


@njit
def _point_point_relative_displacement_matrix():
    return _relative_displacement_matrix(np.array([1.0, -1.0]))


@njit
def _point_edge_relative_displacement_matrix(alpha):
    return _relative_displacement_matrix(np.array([1.0, alpha - 1.0, -alpha]))


@njit
def _point_triangle_relative_displacement_matrix(coords):
    beta = coords[0]
    gamma = coords[1]
    return _relative_displacement_matrix(np.array([1.0, beta + gamma - 1.0, -beta, -gamma]))


@njit
def _edge_edge_relative_displacement_matrix(coords):
    alpha = coords[0]
    beta = coords[1]
    return _relative_displacement_matrix(np.array([1.0 - alpha, alpha, beta - 1.0, -beta]))


@njit
def _point_plane_relative_displacement_matrix():
    return _relative_displacement_matrix(np.array([1.0]))


def _point(x, name):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite entries: {x}")
    return x


def _coords(coords):
    coords = np.ascontiguousarray(coords, dtype=np.float64)
    if coords.shape != (2,):
        raise ValueError(f"coords must have shape (2,), got {coords.shape}")
    return coords


def _geometric(kernel, name, **points):
    args = [_point(value, key) for key, value in points.items()]
    try:
        result = kernel(*args)
    except ZeroDivisionError:
        result = np.nan
    if not np.isfinite(result).all():
        raise ValueError(
            f"{name}: degenerate configuration (zero-length edge, zero-area triangle, "
            f"parallel edges, or coincident primitives): {points}"
        )
    return result


def point_point_tangent_basis(p0, p1):
    """3x2 orthonormal basis of the plane orthogonal to p1 - p0 (m; basis dimensionless)."""
    return _geometric(_point_point_tangent_basis, "point_point_tangent_basis", p0=p0, p1=p1)


def point_edge_tangent_basis(p, e0, e1):
    """3x2 orthonormal basis [edge direction, edge x normal] orthogonal to the point-line normal."""
    return _geometric(_point_edge_tangent_basis, "point_edge_tangent_basis", p=p, e0=e0, e1=e1)


def point_triangle_tangent_basis(p, t0, t1, t2):
    """3x2 orthonormal basis of the triangle's plane: [(t1 - t0)/|t1 - t0|, n x that]."""
    return _geometric(
        _point_triangle_tangent_basis, "point_triangle_tangent_basis", p=p, t0=t0, t1=t1, t2=t2
    )


def edge_edge_tangent_basis(ea0, ea1, eb0, eb1):
    """3x2 orthonormal basis of the plane spanned by both edge directions (normal ea x eb)."""
    return _geometric(
        _edge_edge_tangent_basis, "edge_edge_tangent_basis", ea0=ea0, ea1=ea1, eb0=eb0, eb1=eb1
    )


def point_plane_tangent_basis(normal):
    """3x2 orthonormal basis of the plane with the given (not necessarily unit) normal."""
    return _geometric(_point_plane_tangent_basis, "point_plane_tangent_basis", normal=normal)


def point_edge_closest_point(p, e0, e1):
    """alpha with e0 + alpha (e1 - e0) the projection of p on the edge's line (unclamped)."""
    return _geometric(_point_edge_closest_point, "point_edge_closest_point", p=p, e0=e0, e1=e1)


def point_triangle_closest_point(p, t0, t1, t2):
    """(beta, gamma) with t0 + beta (t1 - t0) + gamma (t2 - t0) = p projected on the plane."""
    return _geometric(
        _point_triangle_closest_point, "point_triangle_closest_point", p=p, t0=t0, t1=t1, t2=t2
    )


def edge_edge_closest_point(ea0, ea1, eb0, eb1):
    """(alpha, beta): ea0 + alpha (ea1 - ea0), eb0 + beta (eb1 - eb0) closest on the two lines."""
    return _geometric(
        _edge_edge_closest_point, "edge_edge_closest_point", ea0=ea0, ea1=ea1, eb0=eb0, eb1=eb1
    )


def point_point_relative_displacement_matrix():
    """Gamma (3x6): du_p0 - du_p1."""
    return _point_point_relative_displacement_matrix()


def point_edge_relative_displacement_matrix(alpha):
    """Gamma (3x9): du_p - ((1 - alpha) du_e0 + alpha du_e1)."""
    return _point_edge_relative_displacement_matrix(float(alpha))


def point_triangle_relative_displacement_matrix(coords):
    """Gamma (3x12): du_p - ((1 - beta - gamma) du_t0 + beta du_t1 + gamma du_t2)."""
    return _point_triangle_relative_displacement_matrix(_coords(coords))


def edge_edge_relative_displacement_matrix(coords):
    """Gamma (3x12): ((1 - alpha) du_ea0 + alpha du_ea1) - ((1 - beta) du_eb0 + beta du_eb1)."""
    return _edge_edge_relative_displacement_matrix(_coords(coords))


def point_plane_relative_displacement_matrix():
    """Gamma (3x3): du_p (the plane is static)."""
    return _point_plane_relative_displacement_matrix()
