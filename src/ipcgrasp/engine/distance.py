"""Squared distances between contact primitives, with gradients and Hessians.

Every distance here is a *squared* Euclidean distance (m^2), as in Incremental Potential
Contact (Li et al. 2020, "Incremental Potential Contact: Intersection- and Inversion-free,
Large-Deformation Dynamics", ACM TOG 39(4)) and the IPC Toolkit, whose names, argument
orders and closest-feature rules this module follows one to one (checked against ipctk 1.6.1).
Gradients are flat vectors over the vertices in argument order, x, y, z per vertex (m);
Hessians are the matching square matrices (dimensionless).

Point-edge, point-triangle and edge-edge distances first classify which features are closest
(the ``*_distance_type`` functions) and then evaluate the smooth formula of that sub-case:
point-point |a - b|^2, point-line |(p - e0) x (e1 - e0)|^2 / |e1 - e0|^2, and the
"normal" distance g^2 / h with g = w . (u x v), h = |u x v|^2 (point-plane: u, v two triangle
edges and w = p - t0; line-line: u, v the edge directions and w = eb0 - ea0). Derivatives are
derived analytically in the difference vectors (u, v, w) and scattered to the vertices.

Kernels ``_name`` take 3-vectors as separate float64 arrays and are callable from other
``@njit`` code; the public ``name`` wrappers validate and convert their inputs.
"""

import enum

import numpy as np

from ipcgrasp.engine._numba import njit


class PointEdgeDistanceType(enum.IntEnum):
    """Closest features of a point and an edge (same values as ipctk)."""

    P_E0 = 0
    P_E1 = 1
    P_E = 2
    AUTO = 3


class PointTriangleDistanceType(enum.IntEnum):
    """Closest features of a point and a triangle; edge k joins vertex k and k+1 (ipctk)."""

    P_T0 = 0
    P_T1 = 1
    P_T2 = 2
    P_E0 = 3
    P_E1 = 4
    P_E2 = 5
    P_T = 6
    AUTO = 7


class EdgeEdgeDistanceType(enum.IntEnum):
    """Closest features of two edges A and B; EA means the interior of A (ipctk)."""

    EA0_EB0 = 0
    EA0_EB1 = 1
    EA1_EB0 = 2
    EA1_EB1 = 3
    EA_EB0 = 4
    EA_EB1 = 5
    EA0_EB = 6
    EA1_EB = 7
    EA_EB = 8
    AUTO = 9


# Constants the kernels pass to other kernels are np.int64, not Python ints or enum members:
# numba compiles a separate specialisation of the callee for every distinct literal argument
# (and for every enum member), which only lengthens a cold start (engine._numba's rules).
# _V0.._V3: a vertex's slot in a distance's stencil (gradient rows 3 slot..).
_V0, _V1, _V2, _V3 = (np.int64(slot) for slot in range(4))
_PE_P_E0 = np.int64(PointEdgeDistanceType.P_E0)
_PE_P_E1 = np.int64(PointEdgeDistanceType.P_E1)
_PE_P_E = np.int64(PointEdgeDistanceType.P_E)
_PE_AUTO = np.int64(PointEdgeDistanceType.AUTO)

_PT_P_T0 = np.int64(PointTriangleDistanceType.P_T0)
_PT_P_T1 = np.int64(PointTriangleDistanceType.P_T1)
_PT_P_T2 = np.int64(PointTriangleDistanceType.P_T2)
_PT_P_E0 = np.int64(PointTriangleDistanceType.P_E0)
_PT_P_E1 = np.int64(PointTriangleDistanceType.P_E1)
_PT_P_E2 = np.int64(PointTriangleDistanceType.P_E2)
_PT_P_T = np.int64(PointTriangleDistanceType.P_T)
_PT_AUTO = np.int64(PointTriangleDistanceType.AUTO)

_EE_EA0_EB0 = np.int64(EdgeEdgeDistanceType.EA0_EB0)
_EE_EA0_EB1 = np.int64(EdgeEdgeDistanceType.EA0_EB1)
_EE_EA1_EB0 = np.int64(EdgeEdgeDistanceType.EA1_EB0)
_EE_EA1_EB1 = np.int64(EdgeEdgeDistanceType.EA1_EB1)
_EE_EA_EB0 = np.int64(EdgeEdgeDistanceType.EA_EB0)
_EE_EA_EB1 = np.int64(EdgeEdgeDistanceType.EA_EB1)
_EE_EA0_EB = np.int64(EdgeEdgeDistanceType.EA0_EB)
_EE_EA1_EB = np.int64(EdgeEdgeDistanceType.EA1_EB)
_EE_EA_EB = np.int64(EdgeEdgeDistanceType.EA_EB)
_EE_AUTO = np.int64(EdgeEdgeDistanceType.AUTO)

# Edges count as parallel when |u x v|^2 < threshold * |u|^2 |v|^2, i.e. sin^2 of their
# angle is below it (ipctk 1.6.1's value).
EDGE_EDGE_PARALLEL_THRESHOLD = 2.5e-16

# Mollifier threshold factor: eps_x = 1e-3 |ea0 - ea1|^2 |eb0 - eb1|^2 at rest (IPC).
EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE = 1e-3


# ---------------------------------------------------------------------------------------------
# Small vector helpers (scalars and tuples, no allocation)


@njit
def _sub(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def _skew(a, i, j):
    """Entry (i, j) of the cross-product matrix [a]_x, with [a]_x b = a x b."""
    if i == j:
        return 0.0
    k = 3 - i - j
    return a[k] if (j - i) % 3 == 2 else -a[k]


# ---------------------------------------------------------------------------------------------
# Closest-feature classification


@njit
def _point_edge_distance_type(p, e0, e1):
    e = _sub(e1, e0)
    e_length_sqr = _dot(e, e)
    if e_length_sqr == 0.0:
        return _PE_P_E0  # degenerate edge: either end point will do
    ratio = _dot(e, _sub(p, e0)) / e_length_sqr
    if ratio < 0.0:
        return _PE_P_E0
    if ratio > 1.0:
        return _PE_P_E1
    return _PE_P_E


@njit
def _edge_side_coordinates(p, a, b, normal):
    """Coordinates (s, h) of p - a in the basis (e, e x normal), e = b - a, of the plane.

    s in (0, 1) lies beside the edge, h >= 0 outside the triangle. The basis vectors are
    orthogonal, so this is ipctk's 2x2 normal-equation solve.
    """
    e = _sub(b, a)
    m = _cross(e, normal)
    q = _sub(p, a)
    return _dot(e, q) / _dot(e, e), _dot(m, q) / _dot(m, m)


@njit
def _point_triangle_distance_type(p, t0, t1, t2):
    normal = _cross(_sub(t1, t0), _sub(t2, t0))
    s0, h0 = _edge_side_coordinates(p, t0, t1, normal)
    if 0.0 < s0 < 1.0 and h0 >= 0.0:
        return _PT_P_E0
    s1, h1 = _edge_side_coordinates(p, t1, t2, normal)
    if 0.0 < s1 < 1.0 and h1 >= 0.0:
        return _PT_P_E1
    s2, h2 = _edge_side_coordinates(p, t2, t0, normal)
    if 0.0 < s2 < 1.0 and h2 >= 0.0:
        return _PT_P_E2
    if s0 <= 0.0 and s2 >= 1.0:
        return _PT_P_T0
    if s1 <= 0.0 and s0 >= 1.0:
        return _PT_P_T1
    if s2 <= 0.0 and s1 >= 1.0:
        return _PT_P_T2
    return _PT_P_T


@njit
def _edge_edge_parallel_distance_type(ea0, ea1, eb0, eb1):
    ea = _sub(ea1, ea0)
    ea_length_sqr = _dot(ea, ea)
    alpha = _dot(_sub(eb0, ea0), ea) / ea_length_sqr
    beta = _dot(_sub(eb1, ea0), ea) / ea_length_sqr
    # closest feature on A and on B: 0 = first vertex, 1 = second vertex, 2 = interior
    if alpha < 0.0:
        on_a = 2 if 0.0 <= beta <= 1.0 else 0
        on_b = 0 if beta <= alpha else (1 if beta <= 1.0 else 2)
    elif alpha > 1.0:
        on_a = 2 if 0.0 <= beta <= 1.0 else 1
        on_b = 0 if beta >= alpha else (1 if beta >= 0.0 else 2)
    else:
        on_a = 2
        on_b = 0
    if on_b < 2:
        return 2 * on_a + on_b  # EA0_EB0, EA0_EB1, EA1_EB0, EA1_EB1, EA_EB0, EA_EB1
    return _EE_EA0_EB + on_a  # EA0_EB, EA1_EB


@njit
def _edge_edge_distance_type(ea0, ea1, eb0, eb1):
    u = _sub(ea1, ea0)
    v = _sub(eb1, eb0)
    w = _sub(ea0, eb0)
    a = _dot(u, u)
    b = _dot(u, v)
    c = _dot(v, v)
    d = _dot(u, w)
    e = _dot(v, w)

    if a == 0.0 and c == 0.0:
        return _EE_EA0_EB0
    if a == 0.0:
        return _EE_EA0_EB
    if c == 0.0:
        return _EE_EA_EB0

    n = _cross(u, v)
    D = _dot(n, n)
    if D < EDGE_EDGE_PARALLEL_THRESHOLD * a * c:
        return _edge_edge_parallel_distance_type(ea0, ea1, eb0, eb1)

    # Closest points of the lines at s = sN / D on A and t = tN / tD on B, clamped to the
    # segments (geomalgorithms' segment-segment distance, ipctk's rule). D = a c - b^2,
    # sN = b e - c d and tN = a e - b d are evaluated as n.n, n.(v x w) and n.(u x w)
    # (Lagrange's identity): the expanded forms cancel catastrophically for nearly parallel
    # edges, where they can pick a feature whose distance is off by orders of magnitude.
    default_case = _EE_EA_EB
    sN = _dot(n, _cross(v, w))
    if sN <= 0.0:
        tN = e
        tD = c
        default_case = _EE_EA0_EB
    elif sN >= D:
        tN = e + b
        tD = c
        default_case = _EE_EA1_EB
    else:
        tN = _dot(n, _cross(u, w))
        tD = D

    if tN <= 0.0:
        if -d <= 0.0:
            return _EE_EA0_EB0
        if -d >= a:
            return _EE_EA1_EB0
        return _EE_EA_EB0
    if tN >= tD:
        if -d + b <= 0.0:
            return _EE_EA0_EB1
        if -d + b >= a:
            return _EE_EA1_EB1
        return _EE_EA_EB1
    return default_case


# ---------------------------------------------------------------------------------------------
# Sub-case formulas. The ``_add_*`` helpers accumulate into a gradient or Hessian over
# vertex slots (slot k occupies entries 3k..3k+2), so a sub-case can sit inside a larger stencil.


@njit
def _point_point_distance(p0, p1):
    r = _sub(p1, p0)
    return _dot(r, r)


@njit
def _add_point_point_gradient(p0, p1, i0, i1, grad):
    for k in range(3):
        r2 = 2.0 * (p0[k] - p1[k])
        grad[3 * i0 + k] += r2
        grad[3 * i1 + k] -= r2


@njit
def _add_point_point_hessian(i0, i1, hess):
    for k in range(3):
        hess[3 * i0 + k, 3 * i0 + k] += 2.0
        hess[3 * i1 + k, 3 * i1 + k] += 2.0
        hess[3 * i0 + k, 3 * i1 + k] -= 2.0
        hess[3 * i1 + k, 3 * i0 + k] -= 2.0


@njit
def _point_line_distance(p, e0, e1):
    u = _sub(e1, e0)
    c = _cross(u, _sub(p, e0))
    return _dot(c, c) / _dot(u, u)


@njit
def _add_point_line_gradient(p, e0, e1, ip, i0, i1, grad):
    # d = |r|^2 with r = p - (e0 + alpha u) the offset from the closest point on the line
    u = _sub(e1, e0)
    w = _sub(p, e0)
    alpha = _dot(u, w) / _dot(u, u)
    for k in range(3):
        r2 = 2.0 * (w[k] - alpha * u[k])
        grad[3 * ip + k] += r2
        grad[3 * i0 + k] -= (1.0 - alpha) * r2
        grad[3 * i1 + k] -= alpha * r2


@njit
def _add_point_line_hessian(p, e0, e1, ip, i0, i1, hess):
    # In w = p - e0 and u = e1 - e0, with alpha = u.w / |u|^2, r = w - alpha u, s = r - alpha u:
    #   d_ww = 2 (I - u u^T / |u|^2),  d_wu = -2 (alpha I + u s^T / |u|^2),
    #   d_uu = 2 alpha^2 I - 2 s s^T / |u|^2;  vertices: p = +w, e0 = -w - u, e1 = +u.
    u = _sub(e1, e0)
    w = _sub(p, e0)
    uu = _dot(u, u)
    alpha = _dot(u, w) / uu
    s = (
        w[0] - 2.0 * alpha * u[0],
        w[1] - 2.0 * alpha * u[1],
        w[2] - 2.0 * alpha * u[2],
    )
    slots = (ip, i0, i1)
    cw = (1.0, -1.0, 0.0)
    cu = (0.0, -1.0, 1.0)
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            d_ww = 2.0 * (delta - u[i] * u[j] / uu)
            d_wu = -2.0 * (alpha * delta + u[i] * s[j] / uu)
            d_uw = -2.0 * (alpha * delta + u[j] * s[i] / uu)
            d_uu = 2.0 * (alpha * alpha * delta - s[i] * s[j] / uu)
            for a in range(3):
                for b in range(3):
                    hess[3 * slots[a] + i, 3 * slots[b] + j] += (
                        cw[a] * cw[b] * d_ww
                        + cw[a] * cu[b] * d_wu
                        + cu[a] * cw[b] * d_uw
                        + cu[a] * cu[b] * d_uu
                    )


@njit
def _normal_distance(u, v, w):
    """(w . (u x v))^2 / |u x v|^2: squared distance along the common normal of u and v."""
    n = _cross(u, v)
    g = _dot(w, n)
    return g * g / _dot(n, n)


@njit
def _add_normal_distance_gradient(u, v, w, plus, minus, grad):
    # d = g^2 / h, g = w.(u x v), h = |n|^2, n = u x v; with beta = g / h,
    # grad d = beta (2 grad g - beta grad h), grad g = (v x w, w x u, n),
    # grad h = 2 (v x n, n x u, 0). Reduced vector k (u, v, w) is x[plus[k]] - x[minus[k]].
    n = _cross(u, v)
    beta = _dot(w, n) / _dot(n, n)
    g_u = _cross(v, w)
    g_v = _cross(w, u)
    h_u = _cross(v, n)
    h_v = _cross(n, u)
    for k in range(3):
        d_u = 2.0 * beta * (g_u[k] - beta * h_u[k])
        d_v = 2.0 * beta * (g_v[k] - beta * h_v[k])
        d_w = 2.0 * beta * n[k]
        grad[3 * plus[0] + k] += d_u
        grad[3 * minus[0] + k] -= d_u
        grad[3 * plus[1] + k] += d_v
        grad[3 * minus[1] + k] -= d_v
        grad[3 * plus[2] + k] += d_w
        grad[3 * minus[2] + k] -= d_w


@njit
def _add_normal_distance_hessian(u, v, w, plus, minus, hess):
    # hess d = (2/h) q q^T + 2 beta hess g - beta^2 hess h, q = grad g - beta grad h, over
    # the reduced 9-vector (u, v, w). hess g has the off-diagonal blocks
    # (u,v) = -[w]x, (u,w) = [v]x, (v,w) = -[u]x; hess h has (u,u) = 2(|v|^2 I - v v^T),
    # (v,v) = 2(|u|^2 I - u u^T), (u,v) = 4 u v^T - 2 v u^T - 2 (u.v) I.
    n = _cross(u, v)
    h = _dot(n, n)
    beta = _dot(w, n) / h
    g_u = _cross(v, w)
    g_v = _cross(w, u)
    h_u = _cross(v, n)
    h_v = _cross(n, u)
    q = np.empty(9)
    for k in range(3):
        q[k] = g_u[k] - 2.0 * beta * h_u[k]
        q[3 + k] = g_v[k] - 2.0 * beta * h_v[k]
        q[6 + k] = n[k]
    reduced = np.empty((9, 9))
    two_over_h = 2.0 / h
    for i in range(9):
        for j in range(9):
            reduced[i, j] = two_over_h * q[i] * q[j]
    uu = _dot(u, u)
    vv = _dot(v, v)
    uv = _dot(u, v)
    two_beta = 2.0 * beta
    beta_sqr = beta * beta
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            reduced[i, j] -= beta_sqr * 2.0 * (vv * delta - v[i] * v[j])
            reduced[3 + i, 3 + j] -= beta_sqr * 2.0 * (uu * delta - u[i] * u[j])
            uv_block = beta_sqr * (4.0 * u[i] * v[j] - 2.0 * v[i] * u[j] - 2.0 * uv * delta)
            reduced[i, 3 + j] -= uv_block
            reduced[3 + j, i] -= uv_block
            g_uv = -two_beta * _skew(w, i, j)
            g_uw = two_beta * _skew(v, i, j)
            g_vw = -two_beta * _skew(u, i, j)
            reduced[i, 3 + j] += g_uv
            reduced[3 + j, i] += g_uv
            reduced[i, 6 + j] += g_uw
            reduced[6 + j, i] += g_uw
            reduced[3 + i, 6 + j] += g_vw
            reduced[6 + j, 3 + i] += g_vw
    for r in range(3):
        for c in range(3):
            for i in range(3):
                for j in range(3):
                    value = reduced[3 * r + i, 3 * c + j]
                    hess[3 * plus[r] + i, 3 * plus[c] + j] += value
                    hess[3 * plus[r] + i, 3 * minus[c] + j] -= value
                    hess[3 * minus[r] + i, 3 * plus[c] + j] -= value
                    hess[3 * minus[r] + i, 3 * minus[c] + j] += value


# Reduced vectors of the two normal distances as (plus slot, minus slot) pairs for u, v, w:
# point-plane (p, t0, t1, t2): u = t1 - t0, v = t2 - t0, w = p - t0;
# line-line (ea0, ea1, eb0, eb1): u = ea1 - ea0, v = eb1 - eb0, w = eb0 - ea0.
_PLANE_PLUS = (_V2, _V3, _V0)
_PLANE_MINUS = (_V1, _V1, _V1)
_LINE_PLUS = (_V1, _V3, _V2)
_LINE_MINUS = (_V0, _V2, _V0)


# ---------------------------------------------------------------------------------------------
# Point-point


@njit
def _point_point_distance_gradient(p0, p1):
    grad = np.zeros(6)
    _add_point_point_gradient(p0, p1, _V0, _V1, grad)
    return grad


@njit
def _point_point_distance_hessian(p0, p1):
    hess = np.zeros((6, 6))
    _add_point_point_hessian(_V0, _V1, hess)
    return hess


# ---------------------------------------------------------------------------------------------
# Point-line (infinite line through e0, e1)


@njit
def _point_line_distance_gradient(p, e0, e1):
    grad = np.zeros(9)
    _add_point_line_gradient(p, e0, e1, _V0, _V1, _V2, grad)
    return grad


@njit
def _point_line_distance_hessian(p, e0, e1):
    hess = np.zeros((9, 9))
    _add_point_line_hessian(p, e0, e1, _V0, _V1, _V2, hess)
    return hess


# ---------------------------------------------------------------------------------------------
# Point-edge


@njit
def _point_edge_distance_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    if dtype == _PE_P_E0:
        return _point_point_distance(p, e0)
    if dtype == _PE_P_E1:
        return _point_point_distance(p, e1)
    return _point_line_distance(p, e0, e1)


@njit
def _point_edge_distance_gradient_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    grad = np.zeros(9)
    if dtype == _PE_P_E0:
        _add_point_point_gradient(p, e0, _V0, _V1, grad)
    elif dtype == _PE_P_E1:
        _add_point_point_gradient(p, e1, _V0, _V2, grad)
    else:
        _add_point_line_gradient(p, e0, e1, _V0, _V1, _V2, grad)
    return grad


@njit
def _point_edge_distance_hessian_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    hess = np.zeros((9, 9))
    if dtype == _PE_P_E0:
        _add_point_point_hessian(_V0, _V1, hess)
    elif dtype == _PE_P_E1:
        _add_point_point_hessian(_V0, _V2, hess)
    else:
        _add_point_line_hessian(p, e0, e1, _V0, _V1, _V2, hess)
    return hess


@njit
def _point_edge_distance(p, e0, e1):
    return _point_edge_distance_of_type(p, e0, e1, _PE_AUTO)


@njit
def _point_edge_distance_gradient(p, e0, e1):
    return _point_edge_distance_gradient_of_type(p, e0, e1, _PE_AUTO)


@njit
def _point_edge_distance_hessian(p, e0, e1):
    return _point_edge_distance_hessian_of_type(p, e0, e1, _PE_AUTO)


# ---------------------------------------------------------------------------------------------
# Point-triangle


@njit
def _point_triangle_distance_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    if dtype == _PT_P_T0:
        return _point_point_distance(p, t0)
    if dtype == _PT_P_T1:
        return _point_point_distance(p, t1)
    if dtype == _PT_P_T2:
        return _point_point_distance(p, t2)
    if dtype == _PT_P_E0:
        return _point_line_distance(p, t0, t1)
    if dtype == _PT_P_E1:
        return _point_line_distance(p, t1, t2)
    if dtype == _PT_P_E2:
        return _point_line_distance(p, t2, t0)
    return _normal_distance(_sub(t1, t0), _sub(t2, t0), _sub(p, t0))


@njit
def _point_triangle_distance_gradient_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    grad = np.zeros(12)
    if dtype == _PT_P_T0:
        _add_point_point_gradient(p, t0, _V0, _V1, grad)
    elif dtype == _PT_P_T1:
        _add_point_point_gradient(p, t1, _V0, _V2, grad)
    elif dtype == _PT_P_T2:
        _add_point_point_gradient(p, t2, _V0, _V3, grad)
    elif dtype == _PT_P_E0:
        _add_point_line_gradient(p, t0, t1, _V0, _V1, _V2, grad)
    elif dtype == _PT_P_E1:
        _add_point_line_gradient(p, t1, t2, _V0, _V2, _V3, grad)
    elif dtype == _PT_P_E2:
        _add_point_line_gradient(p, t2, t0, _V0, _V3, _V1, grad)
    else:
        _add_normal_distance_gradient(
            _sub(t1, t0), _sub(t2, t0), _sub(p, t0), _PLANE_PLUS, _PLANE_MINUS, grad
        )
    return grad


@njit
def _point_triangle_distance_hessian_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    hess = np.zeros((12, 12))
    if dtype == _PT_P_T0:
        _add_point_point_hessian(_V0, _V1, hess)
    elif dtype == _PT_P_T1:
        _add_point_point_hessian(_V0, _V2, hess)
    elif dtype == _PT_P_T2:
        _add_point_point_hessian(_V0, _V3, hess)
    elif dtype == _PT_P_E0:
        _add_point_line_hessian(p, t0, t1, _V0, _V1, _V2, hess)
    elif dtype == _PT_P_E1:
        _add_point_line_hessian(p, t1, t2, _V0, _V2, _V3, hess)
    elif dtype == _PT_P_E2:
        _add_point_line_hessian(p, t2, t0, _V0, _V3, _V1, hess)
    else:
        _add_normal_distance_hessian(
            _sub(t1, t0), _sub(t2, t0), _sub(p, t0), _PLANE_PLUS, _PLANE_MINUS, hess
        )
    return hess


@njit
def _point_triangle_distance(p, t0, t1, t2):
    return _point_triangle_distance_of_type(p, t0, t1, t2, _PT_AUTO)


@njit
def _point_triangle_distance_gradient(p, t0, t1, t2):
    return _point_triangle_distance_gradient_of_type(p, t0, t1, t2, _PT_AUTO)


@njit
def _point_triangle_distance_hessian(p, t0, t1, t2):
    return _point_triangle_distance_hessian_of_type(p, t0, t1, t2, _PT_AUTO)


# ---------------------------------------------------------------------------------------------
# Line-line (infinite lines) and edge-edge


@njit
def _line_line_distance(ea0, ea1, eb0, eb1):
    return _normal_distance(_sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0))


@njit
def _line_line_distance_gradient(ea0, ea1, eb0, eb1):
    grad = np.zeros(12)
    _add_normal_distance_gradient(
        _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, grad
    )
    return grad


@njit
def _line_line_distance_hessian(ea0, ea1, eb0, eb1):
    hess = np.zeros((12, 12))
    _add_normal_distance_hessian(
        _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, hess
    )
    return hess


@njit
def _edge_edge_distance_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    if dtype == _EE_EA0_EB0:
        return _point_point_distance(ea0, eb0)
    if dtype == _EE_EA0_EB1:
        return _point_point_distance(ea0, eb1)
    if dtype == _EE_EA1_EB0:
        return _point_point_distance(ea1, eb0)
    if dtype == _EE_EA1_EB1:
        return _point_point_distance(ea1, eb1)
    if dtype == _EE_EA_EB0:
        return _point_line_distance(eb0, ea0, ea1)
    if dtype == _EE_EA_EB1:
        return _point_line_distance(eb1, ea0, ea1)
    if dtype == _EE_EA0_EB:
        return _point_line_distance(ea0, eb0, eb1)
    if dtype == _EE_EA1_EB:
        return _point_line_distance(ea1, eb0, eb1)
    return _line_line_distance(ea0, ea1, eb0, eb1)


@njit
def _edge_edge_distance_gradient_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    grad = np.zeros(12)
    if dtype == _EE_EA0_EB0:
        _add_point_point_gradient(ea0, eb0, _V0, _V2, grad)
    elif dtype == _EE_EA0_EB1:
        _add_point_point_gradient(ea0, eb1, _V0, _V3, grad)
    elif dtype == _EE_EA1_EB0:
        _add_point_point_gradient(ea1, eb0, _V1, _V2, grad)
    elif dtype == _EE_EA1_EB1:
        _add_point_point_gradient(ea1, eb1, _V1, _V3, grad)
    elif dtype == _EE_EA_EB0:
        _add_point_line_gradient(eb0, ea0, ea1, _V2, _V0, _V1, grad)
    elif dtype == _EE_EA_EB1:
        _add_point_line_gradient(eb1, ea0, ea1, _V3, _V0, _V1, grad)
    elif dtype == _EE_EA0_EB:
        _add_point_line_gradient(ea0, eb0, eb1, _V0, _V2, _V3, grad)
    elif dtype == _EE_EA1_EB:
        _add_point_line_gradient(ea1, eb0, eb1, _V1, _V2, _V3, grad)
    else:
        _add_normal_distance_gradient(
            _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, grad
        )
    return grad


@njit
def _edge_edge_distance_hessian_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    hess = np.zeros((12, 12))
    if dtype == _EE_EA0_EB0:
        _add_point_point_hessian(_V0, _V2, hess)
    elif dtype == _EE_EA0_EB1:
        _add_point_point_hessian(_V0, _V3, hess)
    elif dtype == _EE_EA1_EB0:
        _add_point_point_hessian(_V1, _V2, hess)
    elif dtype == _EE_EA1_EB1:
        _add_point_point_hessian(_V1, _V3, hess)
    elif dtype == _EE_EA_EB0:
        _add_point_line_hessian(eb0, ea0, ea1, _V2, _V0, _V1, hess)
    elif dtype == _EE_EA_EB1:
        _add_point_line_hessian(eb1, ea0, ea1, _V3, _V0, _V1, hess)
    elif dtype == _EE_EA0_EB:
        _add_point_line_hessian(ea0, eb0, eb1, _V0, _V2, _V3, hess)
    elif dtype == _EE_EA1_EB:
        _add_point_line_hessian(ea1, eb0, eb1, _V1, _V2, _V3, hess)
    else:
        _add_normal_distance_hessian(
            _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, hess
        )
    return hess


@njit
def _edge_edge_distance(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


@njit
def _edge_edge_distance_gradient(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_gradient_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


@njit
def _edge_edge_distance_hessian(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_hessian_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


# ---------------------------------------------------------------------------------------------
# Point-plane (plane through origin with normal, not necessarily unit)


@njit
def _point_plane_distance(p, origin, normal):
    g = _dot(_sub(p, origin), normal)
    return g * g / _dot(normal, normal)


@njit
def _point_plane_distance_gradient(p, origin, normal):
    scale = 2.0 * _dot(_sub(p, origin), normal) / _dot(normal, normal)
    grad = np.empty(3)
    for k in range(3):
        grad[k] = scale * normal[k]
    return grad


@njit
def _point_plane_distance_hessian(p, origin, normal):
    scale = 2.0 / _dot(normal, normal)
    hess = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            hess[i, j] = scale * normal[i] * normal[j]
    return hess


# ---------------------------------------------------------------------------------------------
# Edge-edge mollifier for nearly parallel edges


@njit
def _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1):
    n = _cross(_sub(ea1, ea0), _sub(eb1, eb0))
    return _dot(n, n)


@njit
def _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, scale, grad):
    # x = |u x v|^2: dx/du = 2 v x n, dx/dv = 2 n x u with u = ea1 - ea0, v = eb1 - eb0
    u = _sub(ea1, ea0)
    v = _sub(eb1, eb0)
    n = _cross(u, v)
    x_u = _cross(v, n)
    x_v = _cross(n, u)
    for k in range(3):
        d_u = 2.0 * scale * x_u[k]
        d_v = 2.0 * scale * x_v[k]
        grad[k] -= d_u
        grad[3 + k] += d_u
        grad[6 + k] -= d_v
        grad[9 + k] += d_v


@njit
def _add_cross_squarednorm_hessian(ea0, ea1, eb0, eb1, scale, hess):
    # (u,u) = 2(|v|^2 I - v v^T), (v,v) = 2(|u|^2 I - u u^T), (u,v) = 4 u v^T - 2 v u^T - 2 u.v I
    u = _sub(ea1, ea0)
    v = _sub(eb1, eb0)
    uu = _dot(u, u)
    vv = _dot(v, v)
    uv = _dot(u, v)
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            x_uu = scale * 2.0 * (vv * delta - v[i] * v[j])
            x_vv = scale * 2.0 * (uu * delta - u[i] * u[j])
            x_uv = scale * (4.0 * u[i] * v[j] - 2.0 * v[i] * u[j] - 2.0 * uv * delta)
            # u = ea1 - ea0 (slots 1, 0), v = eb1 - eb0 (slots 3, 2)
            hess[i, j] += x_uu
            hess[3 + i, 3 + j] += x_uu
            hess[i, 3 + j] -= x_uu
            hess[3 + i, j] -= x_uu
            hess[6 + i, 6 + j] += x_vv
            hess[9 + i, 9 + j] += x_vv
            hess[6 + i, 9 + j] -= x_vv
            hess[9 + i, 6 + j] -= x_vv
            for a, sa in ((0, -1.0), (3, 1.0)):
                for b, sb in ((6, -1.0), (9, 1.0)):
                    hess[a + i, b + j] += sa * sb * x_uv
                    hess[b + j, a + i] += sa * sb * x_uv


@njit
def _edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1):
    grad = np.zeros(12)
    _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, 1.0, grad)
    return grad


@njit
def _edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1):
    hess = np.zeros((12, 12))
    _add_cross_squarednorm_hessian(ea0, ea1, eb0, eb1, 1.0, hess)
    return hess


@njit
def _mollifier(x, eps_x):
    if x < eps_x:
        x_div_eps_x = x / eps_x
        return (2.0 - x_div_eps_x) * x_div_eps_x
    return 1.0


@njit
def _mollifier_first_derivative(x, eps_x):
    if x < eps_x:
        return 2.0 / eps_x * (1.0 - x / eps_x)
    return 0.0


@njit
def _mollifier_second_derivative(x, eps_x):
    if x < eps_x:
        return -2.0 / (eps_x * eps_x)
    return 0.0


@njit
def _edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x):
    return _mollifier(_edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1), eps_x)


@njit
def _edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x):
    grad = np.zeros(12)
    x = _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1)
    if x < eps_x:
        _add_cross_squarednorm_gradient(
            ea0, ea1, eb0, eb1, _mollifier_first_derivative(x, eps_x), grad
        )
    return grad


@njit
def _edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x):
    hess = np.zeros((12, 12))
    x = _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1)
    if x < eps_x:
        _add_cross_squarednorm_hessian(
            ea0, ea1, eb0, eb1, _mollifier_first_derivative(x, eps_x), hess
        )
        grad = np.zeros(12)
        _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, 1.0, grad)
        m_xx = _mollifier_second_derivative(x, eps_x)
        for i in range(12):
            for j in range(12):
                hess[i, j] += m_xx * grad[i] * grad[j]
    return hess


@njit
def _edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
    a = _sub(ea1_rest, ea0_rest)
    b = _sub(eb1_rest, eb0_rest)
    return EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE * _dot(a, a) * _dot(b, b)


# ---------------------------------------------------------------------------------------------
# Public API


def _vec3(x, name):
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def _points(names, values):
    return [_vec3(v, n) for n, v in zip(names, values)]


def _positive(x, name):
    x = float(x)
    if not x > 0.0 or not np.isfinite(x):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def _nonnegative(x, name):
    x = float(x)
    if not x >= 0.0 or not np.isfinite(x):
        raise ValueError(f"{name} must be non-negative and finite, got {x}")
    return x


_PE_NAMES = ("p", "e0", "e1")
_PT_NAMES = ("p", "t0", "t1", "t2")
_EE_NAMES = ("ea0", "ea1", "eb0", "eb1")
_EE_REST_NAMES = ("ea0_rest", "ea1_rest", "eb0_rest", "eb1_rest")


def point_point_distance(p0, p1):
    """Squared distance |p0 - p1|^2 (m^2)."""
    return _point_point_distance(*_points(("p0", "p1"), (p0, p1)))


def point_point_distance_gradient(p0, p1):
    """Gradient (6,) of |p0 - p1|^2 wrt p0, p1: (2 (p0 - p1), 2 (p1 - p0)) (m)."""
    return _point_point_distance_gradient(*_points(("p0", "p1"), (p0, p1)))


def point_point_distance_hessian(p0, p1):
    """Hessian (6, 6) of |p0 - p1|^2 wrt p0, p1: 2 [[I, -I], [-I, I]]."""
    return _point_point_distance_hessian(*_points(("p0", "p1"), (p0, p1)))


def point_line_distance(p, e0, e1):
    """Squared distance from p to the infinite line through e0, e1 (m^2).

    d = |(p - e0) x (e1 - e0)|^2 / |e1 - e0|^2; the edge must not be degenerate.
    """
    return _point_line_distance(*_points(_PE_NAMES, (p, e0, e1)))


def point_line_distance_gradient(p, e0, e1):
    """Gradient (9,) of point_line_distance wrt p, e0, e1 (m)."""
    return _point_line_distance_gradient(*_points(_PE_NAMES, (p, e0, e1)))


def point_line_distance_hessian(p, e0, e1):
    """Hessian (9, 9) of point_line_distance wrt p, e0, e1."""
    return _point_line_distance_hessian(*_points(_PE_NAMES, (p, e0, e1)))


def point_edge_distance_type(p, e0, e1):
    """Closest feature of edge (e0, e1) to p: P_E0, P_E1 or P_E (interior)."""
    return PointEdgeDistanceType(_point_edge_distance_type(*_points(_PE_NAMES, (p, e0, e1))))


def point_edge_distance(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Squared distance from p to the segment (e0, e1) (m^2).

    dtype selects the sub-case (point-point to e0 or e1, or point-line); AUTO classifies it
    with point_edge_distance_type.
    """
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))


def point_edge_distance_gradient(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Gradient (9,) of point_edge_distance wrt p, e0, e1 (m)."""
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_gradient_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))


def point_edge_distance_hessian(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Hessian (9, 9) of point_edge_distance wrt p, e0, e1."""
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_hessian_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))


def point_triangle_distance_type(p, t0, t1, t2):
    """Closest feature of triangle (t0, t1, t2) to p (vertex, edge or interior), as ipctk."""
    return PointTriangleDistanceType(
        _point_triangle_distance_type(*_points(_PT_NAMES, (p, t0, t1, t2)))
    )


def point_triangle_distance(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Squared distance from p to the triangle (t0, t1, t2) (m^2).

    Per sub-case: |p - tk|^2 (P_Tk), point-line distance to edge k (P_Ek), or the squared
    distance to the plane ((p - t0) . n)^2 / |n|^2, n = (t1 - t0) x (t2 - t0) (P_T).
    AUTO classifies with point_triangle_distance_type.
    """
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_of_type(*_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype))


def point_triangle_distance_gradient(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Gradient (12,) of point_triangle_distance wrt p, t0, t1, t2 (m)."""
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_gradient_of_type(
        *_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype)
    )


def point_triangle_distance_hessian(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Hessian (12, 12) of point_triangle_distance wrt p, t0, t1, t2."""
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_hessian_of_type(
        *_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype)
    )


def line_line_distance(ea0, ea1, eb0, eb1):
    """Squared distance between the infinite lines through (ea0, ea1) and (eb0, eb1) (m^2).

    d = ((eb0 - ea0) . n)^2 / |n|^2 with n = (ea1 - ea0) x (eb1 - eb0); parallel lines raise
    ZeroDivisionError.
    """
    return _line_line_distance(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def line_line_distance_gradient(ea0, ea1, eb0, eb1):
    """Gradient (12,) of line_line_distance wrt ea0, ea1, eb0, eb1 (m)."""
    return _line_line_distance_gradient(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def line_line_distance_hessian(ea0, ea1, eb0, eb1):
    """Hessian (12, 12) of line_line_distance wrt ea0, ea1, eb0, eb1."""
    return _line_line_distance_hessian(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_parallel_distance_type(ea0, ea1, eb0, eb1):
    """Closest features of two parallel edges (never EA_EB), as ipctk."""
    return EdgeEdgeDistanceType(
        _edge_edge_parallel_distance_type(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))
    )


def edge_edge_distance_type(ea0, ea1, eb0, eb1):
    """Closest features of edges (ea0, ea1) and (eb0, eb1), by ipctk's rule.

    Edges with sin^2 of their angle below EDGE_EDGE_PARALLEL_THRESHOLD are classified by
    edge_edge_parallel_distance_type. Just above it (sin^2 < ~1e-13) ipctk's expanded
    a c - b^2 is rounding noise; this evaluation through cross products is not, so the two may
    differ there, ours giving the closest features of exact arithmetic.
    """
    return EdgeEdgeDistanceType(_edge_edge_distance_type(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1))))


def edge_edge_distance(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Squared distance between the segments (ea0, ea1) and (eb0, eb1) (m^2).

    Per sub-case: point-point, point-line (a vertex and the other edge's line) or
    line_line_distance (EA_EB). AUTO classifies with edge_edge_distance_type.
    """
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_of_type(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype))


def edge_edge_distance_gradient(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Gradient (12,) of edge_edge_distance wrt ea0, ea1, eb0, eb1 (m)."""
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_gradient_of_type(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype)
    )


def edge_edge_distance_hessian(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Hessian (12, 12) of edge_edge_distance wrt ea0, ea1, eb0, eb1."""
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_hessian_of_type(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype)
    )


def point_plane_distance(p, origin, normal):
    """Squared distance from p to the plane through origin with normal n (m^2).

    d = ((p - origin) . n)^2 / |n|^2; n need not be unit length.
    """
    return _point_plane_distance(*_points(("p", "origin", "normal"), (p, origin, normal)))


def point_plane_distance_gradient(p, origin, normal):
    """Gradient (3,) of point_plane_distance wrt p only (m), as ipctk."""
    return _point_plane_distance_gradient(
        *_points(("p", "origin", "normal"), (p, origin, normal))
    )


def point_plane_distance_hessian(p, origin, normal):
    """Hessian (3, 3) of point_plane_distance wrt p: 2 n n^T / |n|^2."""
    return _point_plane_distance_hessian(
        *_points(("p", "origin", "normal"), (p, origin, normal))
    )


def edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1):
    """x = |(ea1 - ea0) x (eb1 - eb0)|^2 (m^4), the mollifier's parallelism measure."""
    return _edge_edge_cross_squarednorm(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1):
    """Gradient (12,) of edge_edge_cross_squarednorm wrt ea0, ea1, eb0, eb1 (m^3)."""
    return _edge_edge_cross_squarednorm_gradient(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1):
    """Hessian (12, 12) of edge_edge_cross_squarednorm wrt ea0, ea1, eb0, eb1 (m^2)."""
    return _edge_edge_cross_squarednorm_hessian(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def mollifier(x, eps_x):
    """IPC's edge-edge mollifier m(x) = (2 - x/eps_x) x/eps_x for x < eps_x, else 1.

    x is edge_edge_cross_squarednorm and eps_x the threshold (both m^4); ipctk's scalar
    edge_edge_mollifier(x, eps_x).
    """
    return _mollifier(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def mollifier_first_derivative(x, eps_x):
    """dm/dx = 2/eps_x (1 - x/eps_x) for x < eps_x, else 0 (1/m^4)."""
    return _mollifier_first_derivative(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def mollifier_second_derivative(x, eps_x):
    """d^2m/dx^2 = -2/eps_x^2 for x < eps_x, else 0 (1/m^8)."""
    return _mollifier_second_derivative(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x):
    """Mollifier m(|(ea1 - ea0) x (eb1 - eb0)|^2, eps_x) in [0, 1] (dimensionless).

    Multiplies the edge-edge barrier so that it vanishes smoothly as the edges become
    parallel, which keeps the potential C1 there (Li et al. 2020, edge-edge mollification).
    """
    return _edge_edge_mollifier(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x):
    """Gradient (12,) of edge_edge_mollifier wrt ea0, ea1, eb0, eb1 (1/m)."""
    return _edge_edge_mollifier_gradient(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x):
    """Hessian (12, 12) of edge_edge_mollifier wrt ea0, ea1, eb0, eb1 (1/m^2)."""
    return _edge_edge_mollifier_hessian(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
    """eps_x = 1e-3 |ea0 - ea1|^2 |eb0 - eb1|^2 at rest positions (m^4), as IPC."""
    return _edge_edge_mollifier_threshold(
        *_points(_EE_REST_NAMES, (ea0_rest, ea1_rest, eb0_rest, eb1_rest))
    )


__all__ = [
    "EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE",
    "EDGE_EDGE_PARALLEL_THRESHOLD",
    "EdgeEdgeDistanceType",
    "PointEdgeDistanceType",
    "PointTriangleDistanceType",
    "edge_edge_cross_squarednorm",
    "edge_edge_cross_squarednorm_gradient",
    "edge_edge_cross_squarednorm_hessian",
    "edge_edge_distance",
    "edge_edge_distance_gradient",
    "edge_edge_distance_hessian",
    "edge_edge_distance_type",
    "edge_edge_mollifier",
    "edge_edge_mollifier_gradient",
    "edge_edge_mollifier_hessian",
    "edge_edge_mollifier_threshold",
    "edge_edge_parallel_distance_type",
    "line_line_distance",
    "line_line_distance_gradient",
    "line_line_distance_hessian",
    "mollifier",
    "mollifier_first_derivative",
    "mollifier_second_derivative",
    "point_edge_distance",
    "point_edge_distance_gradient",
    "point_edge_distance_hessian",
    "point_edge_distance_type",
    "point_line_distance",
    "point_line_distance_gradient",
    "point_line_distance_hessian",
    "point_plane_distance",
    "point_plane_distance_gradient",
    "point_plane_distance_hessian",
    "point_point_distance",
    "point_point_distance_gradient",
    "point_point_distance_hessian",
    "point_triangle_distance",
    "point_triangle_distance_gradient",
    "point_triangle_distance_hessian",
    "point_triangle_distance_type",
]
