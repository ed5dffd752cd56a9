"""Closest-feature classification of point-edge, point-triangle and edge-edge pairs (ipctk's
distance types), and the np.int64 constants the distance kernels pass each other.
"""

import enum

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.inputs import _EE_NAMES, _PE_NAMES, _PT_NAMES, _points
from ipcgrasp.engine.distance.vector import _cross, _dot, _sub


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


def point_edge_distance_type(p, e0, e1):
    """Closest feature of edge (e0, e1) to p: P_E0, P_E1 or P_E (interior)."""
    return PointEdgeDistanceType(_point_edge_distance_type(*_points(_PE_NAMES, (p, e0, e1))))


def point_triangle_distance_type(p, t0, t1, t2):
    """Closest feature of triangle (t0, t1, t2) to p (vertex, edge or interior), as ipctk."""
    return PointTriangleDistanceType(
        _point_triangle_distance_type(*_points(_PT_NAMES, (p, t0, t1, t2)))
    )


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
