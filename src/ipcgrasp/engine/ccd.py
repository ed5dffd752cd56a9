"""Continuous collision detection (CCD) over linear trajectories.

Every vertex moves on a straight line, x(t) = x_t0 + t (x_t1 - x_t0), t in [0, tmax]. A query
returns ``(hit, toi)``: ``toi`` is a time of impact that is never later than the true first
time the distance (metres) falls to ``min_distance``; with no hit, ``toi = tmax``.

Mesh primitives use Additive CCD (ACCD; Li, Kaufman, Jiang, "Codimensional Incremental
Potential Contact", ACM TOG 2021, sec. 5 / Alg. 1). With the mean displacement removed (a
common translation changes no distance) the distance d(t) is Lipschitz in t with constant

    l_p = |dp| + max_i |dt_i|               (point-triangle, point-edge, point-point)
    l_p = max_i |dea_i| + max_j |deb_j|     (edge-edge),

so advancing t by  eta (d(t) - xi) / l_p  keeps d >= xi + (1 - eta)(d(t) - xi) > xi, where
xi = ``min_distance`` and eta = ``conservative_rescaling``. The walk stops and reports the
current t once the next step's distance falls below the gap (1 - eta)(d(0) - xi): the
reported time of impact keeps at least that gap. ``hit`` is therefore conservative: True when
toi <= tmax and the step after toi (which may end past tmax) comes within xi + gap, and also
when ``max_iterations`` is exhausted (then ``toi`` is the safe time reached so far). The
walk does not depend on tmax, so a set of pairs has a well-defined smallest time of impact
(and the values equal ipctk's AdditiveCCD).

Point-plane CCD is exact (the distance to a plane is linear in t).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance import (
    _edge_edge_distance,
    _point_edge_distance,
    _point_point_distance,
    _point_triangle_distance,
)

DEFAULT_CONSERVATIVE_RESCALING = 0.9
DEFAULT_MAX_ITERATIONS = 1_000_000

# Primitive-pair kinds understood by `_additive_ccd`: the rows of its (4, 3) position array
# are [p, q] (point-point), [p, e0, e1] (point-edge), [p, t0, t1, t2] (point-triangle) or
# [ea0, ea1, eb0, eb1] (edge-edge). np.int64, not Python literals: _collision_free_stepsize passes
# them to _additive_ccd, which would otherwise compile once per literal (engine/_numba.py).
POINT_POINT, POINT_EDGE, POINT_TRIANGLE, EDGE_EDGE = (np.int64(kind) for kind in range(4))


@njit
def _pair_distance_sq(x, kind):
    """Squared distance (m^2) of the primitive pair of `kind` stored in the rows of x."""
    if kind == POINT_TRIANGLE:
        return _point_triangle_distance(x[0], x[1], x[2], x[3])
    if kind == EDGE_EDGE:
        return _edge_edge_distance(x[0], x[1], x[2], x[3])
    if kind == POINT_EDGE:
        return _point_edge_distance(x[0], x[1], x[2])
    return _point_point_distance(x[0], x[1])


# ---------------------------------------------------------------------------------------------
# Additive CCD


@njit
def _additive_ccd(
    x_t0, x_t1, kind, min_distance, tmax, max_iterations, conservative_rescaling, scratch
):
    """ACCD for one primitive pair (Li et al. 2021, Alg. 1); returns (hit, toi).

    x_t0, x_t1: (4, 3) vertex positions (m) at t = 0 and t = 1, rows as documented for `kind`
    (unused rows ignored). scratch: (2, 4, 3) work space, so the kernel allocates nothing.
    See the module docstring for the guarantee.
    """
    n = 2
    if kind == POINT_EDGE:
        n = 3
    elif kind == POINT_TRIANGLE or kind == EDGE_EDGE:
        n = 4
    dx = scratch[0]
    x = scratch[1]

    for k in range(3):
        mean = 0.0
        for i in range(n):
            dx[i, k] = x_t1[i, k] - x_t0[i, k]
            mean += dx[i, k]
        mean /= n
        for i in range(n):
            dx[i, k] -= mean
    l_a = 0.0  # largest displacement on side a (p, or edge a)
    l_b = 0.0  # ... and on side b (the edge, triangle, or edge b)
    for i in range(n):
        norm = np.sqrt(dx[i, 0] * dx[i, 0] + dx[i, 1] * dx[i, 1] + dx[i, 2] * dx[i, 2])
        if i == 0 or (i == 1 and kind == EDGE_EDGE):
            l_a = max(l_a, norm)
        else:
            l_b = max(l_b, norm)
    l_p = l_a + l_b

    xi = min_distance
    # A lower bound on d(0), the gap between the boxes of the two sides, settles most
    # candidates of a short step without the exact distance: ACCD's first step is at least
    # eta (bound - xi) / l_p long, and past tmax nothing can happen.
    split = 2 if kind == EDGE_EDGE else 1
    box_gap_sq = 0.0
    for k in range(3):
        lo_a = x_t0[0, k]
        hi_a = x_t0[0, k]
        for i in range(1, split):
            lo_a = min(lo_a, x_t0[i, k])
            hi_a = max(hi_a, x_t0[i, k])
        lo_b = x_t0[split, k]
        hi_b = x_t0[split, k]
        for i in range(split + 1, n):
            lo_b = min(lo_b, x_t0[i, k])
            hi_b = max(hi_b, x_t0[i, k])
        g = max(lo_a - hi_b, lo_b - hi_a, 0.0)
        box_gap_sq += g * g
    box_gap = np.sqrt(box_gap_sq)
    if box_gap > xi and conservative_rescaling * (box_gap - xi) > tmax * l_p:
        return False, tmax
    d = np.sqrt(_pair_distance_sq(x_t0, kind))
    if d <= xi:
        return True, 0.0
    if l_p == 0.0:
        return False, tmax
    gap = (1.0 - conservative_rescaling) * (d - xi)

    t = 0.0
    for _ in range(max_iterations):
        t_next = t + conservative_rescaling * (d - xi) / l_p
        # From t = 0 the first step is accepted unchecked, so a first step past tmax ends the
        # query without evaluating its distance.
        if t == 0.0 and t_next > tmax:
            return False, tmax
        for i in range(n):
            for k in range(3):
                x[i, k] = x_t0[i, k] + t_next * dx[i, k]
        d_sq = _pair_distance_sq(x, kind)
        d = np.sqrt(d_sq)
        # d - xi < gap, written as d^2 - xi^2 < gap (d + xi) to avoid cancellation when
        # xi ~ d; d <= xi after a step can only come from rounding, and stops the walk too.
        if d <= xi or (t > 0.0 and d_sq - xi * xi < gap * (d + xi)):
            return True, t
        t = t_next
        if t > tmax:
            return False, tmax
    return True, t


def _point(a, name):
    a = np.asarray(a, dtype=np.float64)
    if a.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} has non-finite entries: {a}")
    return a


def _check_interval(min_distance, tmax):
    if not (min_distance >= 0.0 and np.isfinite(min_distance)):
        raise ValueError(f"min_distance must be finite and >= 0, got {min_distance}")
    if not (tmax >= 0.0 and np.isfinite(tmax)):
        raise ValueError(f"tmax must be finite and >= 0, got {tmax}")


def _check_accd(max_iterations, conservative_rescaling):
    if not (0.0 < conservative_rescaling < 1.0):
        raise ValueError(f"conservative_rescaling must be in (0, 1), got {conservative_rescaling}")
    if int(max_iterations) < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")


def _pair_ccd(kind, names, points, min_distance, tmax, max_iterations, conservative_rescaling):
    _check_interval(min_distance, tmax)
    _check_accd(max_iterations, conservative_rescaling)
    n = len(points) // 2
    x_t0 = np.zeros((4, 3))
    x_t1 = np.zeros((4, 3))
    for i in range(n):
        x_t0[i] = _point(points[i], names[i])
        x_t1[i] = _point(points[n + i], names[n + i])
    hit, toi = _additive_ccd(
        x_t0, x_t1, kind, float(min_distance), float(tmax), int(max_iterations),
        float(conservative_rescaling), np.empty((2, 4, 3)),
    )
    return bool(hit), float(toi)


def point_triangle_ccd(
    p_t0, t0_t0, t1_t0, t2_t0, p_t1, t0_t1, t1_t1, t2_t1,
    min_distance=0.0, tmax=1.0, max_iterations=DEFAULT_MAX_ITERATIONS,
    conservative_rescaling=DEFAULT_CONSERVATIVE_RESCALING,
):
    """Additive CCD of a point against a triangle; returns (hit, toi in [0, tmax]).

    Positions in metres at t = 0 (`_t0`) and t = 1 (`_t1`); `min_distance` (m) is the
    separation that counts as contact. See the module docstring for the guarantee.
    """
    return _pair_ccd(
        POINT_TRIANGLE,
        ("p_t0", "t0_t0", "t1_t0", "t2_t0", "p_t1", "t0_t1", "t1_t1", "t2_t1"),
        (p_t0, t0_t0, t1_t0, t2_t0, p_t1, t0_t1, t1_t1, t2_t1),
        min_distance, tmax, max_iterations, conservative_rescaling,
    )


def edge_edge_ccd(
    ea0_t0, ea1_t0, eb0_t0, eb1_t0, ea0_t1, ea1_t1, eb0_t1, eb1_t1,
    min_distance=0.0, tmax=1.0, max_iterations=DEFAULT_MAX_ITERATIONS,
    conservative_rescaling=DEFAULT_CONSERVATIVE_RESCALING,
):
    """Additive CCD of edge (ea0, ea1) against edge (eb0, eb1); returns (hit, toi).

    Segment-segment distance (m); arguments as in `point_triangle_ccd`.
    """
    return _pair_ccd(
        EDGE_EDGE,
        ("ea0_t0", "ea1_t0", "eb0_t0", "eb1_t0", "ea0_t1", "ea1_t1", "eb0_t1", "eb1_t1"),
        (ea0_t0, ea1_t0, eb0_t0, eb1_t0, ea0_t1, ea1_t1, eb0_t1, eb1_t1),
        min_distance, tmax, max_iterations, conservative_rescaling,
    )


def point_edge_ccd(
    p_t0, e0_t0, e1_t0, p_t1, e0_t1, e1_t1,
    min_distance=0.0, tmax=1.0, max_iterations=DEFAULT_MAX_ITERATIONS,
    conservative_rescaling=DEFAULT_CONSERVATIVE_RESCALING,
):
    """Additive CCD of a point against edge (e0, e1); returns (hit, toi).

    Point-segment distance (m); arguments as in `point_triangle_ccd`.
    """
    return _pair_ccd(
        POINT_EDGE,
        ("p_t0", "e0_t0", "e1_t0", "p_t1", "e0_t1", "e1_t1"),
        (p_t0, e0_t0, e1_t0, p_t1, e0_t1, e1_t1),
        min_distance, tmax, max_iterations, conservative_rescaling,
    )


def point_point_ccd(
    p0_t0, p1_t0, p0_t1, p1_t1,
    min_distance=0.0, tmax=1.0, max_iterations=DEFAULT_MAX_ITERATIONS,
    conservative_rescaling=DEFAULT_CONSERVATIVE_RESCALING,
):
    """Additive CCD of two points; returns (hit, toi). Arguments as in `point_triangle_ccd`."""
    return _pair_ccd(
        POINT_POINT,
        ("p0_t0", "p1_t0", "p0_t1", "p1_t1"),
        (p0_t0, p1_t0, p0_t1, p1_t1),
        min_distance, tmax, max_iterations, conservative_rescaling,
    )


# ---------------------------------------------------------------------------------------------
# Point-plane


@njit
def _point_plane_ccd(p_t0, p_t1, origin, normal, min_distance, tmax):
    """Exact CCD of a moving point against a fixed plane; returns (hit, toi).

    With unit normal n, the signed distance s(t) = (p(t) - origin) . n is linear in t; contact
    is the first t with |s(t)| = min_distance (the plane is two-sided, like the squared
    point-plane distance of ipctk).
    """
    nn = np.sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2])
    s0 = 0.0
    s1 = 0.0
    for k in range(3):
        s0 += (p_t0[k] - origin[k]) * normal[k]
        s1 += (p_t1[k] - origin[k]) * normal[k]
    s0 /= nn
    s1 /= nn
    if abs(s0) <= min_distance:
        return True, 0.0
    side = 1.0 if s0 > 0.0 else -1.0
    approach = side * (s0 - s1)
    if approach <= 0.0:
        return False, tmax
    toi = (side * s0 - min_distance) / approach
    if toi > tmax:
        return False, tmax
    return True, toi


def point_plane_ccd(p_t0, p_t1, origin, normal, min_distance=0.0, tmax=1.0):
    """Exact CCD of a point moving from p_t0 to p_t1 (m) against the plane through `origin`
    with normal `normal` (any length); returns (hit, toi in [0, tmax]), toi the first time the
    point is `min_distance` (m) from the plane.
    """
    _check_interval(min_distance, tmax)
    normal = _point(normal, "normal")
    if not np.any(normal):
        raise ValueError("normal must be non-zero")
    hit, toi = _point_plane_ccd(
        _point(p_t0, "p_t0"), _point(p_t1, "p_t1"), _point(origin, "origin"), normal,
        float(min_distance), float(tmax),
    )
    return bool(hit), float(toi)


# ---------------------------------------------------------------------------------------------
# Whole candidate set


@njit
def _collision_free_stepsize(
    x0, x1, vf_pairs, ee_pairs, vp_pairs, edges, faces, plane_origin, plane_normal,
    min_distance, max_iterations, conservative_rescaling,
):
    """Largest safe step in [0, 1] over all candidates (see `collision_free_stepsize`).

    Each pair is queried with tmax = the smallest time of impact found so far, so pairs that
    cannot lower it stop after one or a few distance evaluations; the result is the minimum
    over pairs whatever their order.
    """
    step = 1.0
    y0 = np.zeros((4, 3))
    y1 = np.zeros((4, 3))
    scratch = np.empty((2, 4, 3))
    for c in range(vp_pairs.shape[0]):
        v = vp_pairs[c]
        hit, toi = _point_plane_ccd(x0[v], x1[v], plane_origin, plane_normal, min_distance, 1.0)
        if hit:
            step = min(step, conservative_rescaling * toi)
    for c in range(vf_pairs.shape[0]):
        v = vf_pairs[c, 0]
        f = vf_pairs[c, 1]
        for k in range(3):
            y0[0, k] = x0[v, k]
            y1[0, k] = x1[v, k]
            for j in range(3):
                y0[j + 1, k] = x0[faces[f, j], k]
                y1[j + 1, k] = x1[faces[f, j], k]
        hit, toi = _additive_ccd(
            y0, y1, POINT_TRIANGLE, min_distance, step, max_iterations, conservative_rescaling,
            scratch,
        )
        if hit:
            step = toi
    for c in range(ee_pairs.shape[0]):
        ea = ee_pairs[c, 0]
        eb = ee_pairs[c, 1]
        for k in range(3):
            for j in range(2):
                y0[j, k] = x0[edges[ea, j], k]
                y1[j, k] = x1[edges[ea, j], k]
                y0[j + 2, k] = x0[edges[eb, j], k]
                y1[j + 2, k] = x1[edges[eb, j], k]
        hit, toi = _additive_ccd(
            y0, y1, EDGE_EDGE, min_distance, step, max_iterations, conservative_rescaling,
            scratch,
        )
        if hit:
            step = toi
    return step


def _index_array(a, name, bounds):
    """int64 copy of an index array with one column per entry of `bounds` (1-D if `bounds`
    is an int), each column checked to lie in [0, bound)."""
    tail = () if np.isscalar(bounds) else (len(bounds),)
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros((0,) + tail, dtype=np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {a.dtype}")
    if a.shape[1:] != tail:
        raise ValueError(f"{name} must have shape (n,{' ' + str(tail[0]) if tail else ''}), got {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    columns = a.reshape(a.shape[0], -1)
    for j, bound in enumerate(np.atleast_1d(bounds)):
        if columns[:, j].min() < 0 or columns[:, j].max() >= bound:
            raise ValueError(f"{name} has indices outside [0, {bound}) in column {j}")
    return a


def collision_free_stepsize(
    x0, x1, vf_pairs, ee_pairs, vp_pairs, edges, faces, plane_origin=None, plane_normal=None,
    min_distance=0.0, max_iterations=DEFAULT_MAX_ITERATIONS,
    conservative_rescaling=DEFAULT_CONSERVATIVE_RESCALING,
):
    """Safe step fraction t in [0, 1]: moving every vertex from x0 towards x1 (m, (n, 3)) by
    any fraction up to t keeps each candidate pair farther apart than `min_distance` (m). It is
    the smallest conservative time of impact over the pairs (1.0 when no pair hits).

    vf_pairs (k, 2) [vertex, face index into `faces`]; ee_pairs (m, 2) [edge, edge index into
    `edges`]; vp_pairs (q,) vertices tested against the plane (plane_origin, plane_normal),
    which may be omitted when vp_pairs is empty. Mesh pairs use Additive CCD (module
    docstring); plane pairs use the exact time of impact scaled by `conservative_rescaling`,
    which leaves the same gap (1 - eta)(d(0) - min_distance). Equals 0.0 when some pair
    starts within `min_distance`.
    """
    _check_interval(min_distance, 1.0)
    _check_accd(max_iterations, conservative_rescaling)
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    x1 = np.ascontiguousarray(x1, dtype=np.float64)
    if x0.ndim != 2 or x0.shape[1] != 3 or x1.shape != x0.shape:
        raise ValueError(f"x0 and x1 must both have shape (n, 3), got {x0.shape} and {x1.shape}")
    if not (np.isfinite(x0).all() and np.isfinite(x1).all()):
        raise ValueError("x0 or x1 has non-finite entries")
    n = x0.shape[0]
    edges = _index_array(edges, "edges", (n, n))
    faces = _index_array(faces, "faces", (n, n, n))
    vf_pairs = _index_array(vf_pairs, "vf_pairs", (n, faces.shape[0]))
    ee_pairs = _index_array(ee_pairs, "ee_pairs", (edges.shape[0], edges.shape[0]))
    vp_pairs = _index_array(vp_pairs, "vp_pairs", n)
    if vp_pairs.shape[0]:
        if plane_origin is None or plane_normal is None:
            raise ValueError("vp_pairs given without plane_origin and plane_normal")
        plane_origin = _point(plane_origin, "plane_origin")
        plane_normal = _point(plane_normal, "plane_normal")
        if not np.any(plane_normal):
            raise ValueError("plane_normal must be non-zero")
    else:
        plane_origin = np.zeros(3)
        plane_normal = np.array([0.0, 0.0, 1.0])
    return float(
        _collision_free_stepsize(
            x0, x1, vf_pairs, ee_pairs, vp_pairs, edges, faces, plane_origin, plane_normal,
            float(min_distance), int(max_iterations), float(conservative_rescaling),
        )
    )


__all__ = [
    "DEFAULT_CONSERVATIVE_RESCALING",
    "DEFAULT_MAX_ITERATIONS",
    "collision_free_stepsize",
    "edge_edge_ccd",
    "point_edge_ccd",
    "point_plane_ccd",
    "point_point_ccd",
    "point_triangle_ccd",
]
