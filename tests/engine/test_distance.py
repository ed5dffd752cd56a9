"""Squared distances, their derivatives and the edge-edge mollifier.

Oracles: ipctk 1.6.1 (values, derivatives and closest-feature types on thousands of seeded random
configurations), exact rational arithmetic (segment-segment distance where floating point cannot
decide the closest features), and central finite differences (every gradient and Hessian, at
random and at degenerate configurations: parallel edges, a point on an edge, a point near a
triangle vertex, every closest-feature region). Errors are measured norm-wise,
max|ours - ref| / max|ref|, so a vanishing result can never match a nonzero reference.
"""

from fractions import Fraction

import ipctk
import numba
import numpy as np
import pytest

from ipcgrasp.engine import distance as dist
from ipcgrasp.engine.distance import (
    EdgeEdgeDistanceType,
    PointEdgeDistanceType,
    PointTriangleDistanceType,
)

N_RANDOM = 2000
RTOL_IPCTK = 1e-8
RTOL_FD = 1e-6
EPS = np.finfo(float).eps

# ---------------------------------------------------------------------------------------------
# Random configurations, as (list of 3-vectors, length scale). Each is built around known
# closest-point parameters so that every closest-feature region is well populated, with
# separations from 1e-4 to 1 of the feature size, then scaled by 1e-3..3 (m) and shifted.


def _place(rng, vertices):
    scale = 10.0 ** rng.uniform(-3.0, 0.5)
    shift = rng.uniform(-1.0, 1.0, 3)
    return [scale * v + shift for v in vertices], scale


def _separation(rng):
    return rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-4.0, 0.0)


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_point_point(rng):
    return _place(rng, list(rng.uniform(-1.0, 1.0, (2, 3))))


def random_point_edge(rng):
    e0, e1 = rng.uniform(-1.0, 1.0, (2, 3))
    e = e1 - e0
    off = np.cross(e, _unit(rng))
    p = e0 + rng.uniform(-0.6, 1.6) * e + _separation(rng) * off / np.linalg.norm(off)
    return _place(rng, [p, e0, e1])


def random_point_triangle(rng):
    t0, t1, t2 = rng.uniform(-1.0, 1.0, (3, 3))
    b1, b2 = rng.uniform(-0.7, 1.7, 2)
    n = np.cross(t1 - t0, t2 - t0)
    p = (1.0 - b1 - b2) * t0 + b1 * t1 + b2 * t2 + _separation(rng) * n / np.linalg.norm(n)
    return _place(rng, [p, t0, t1, t2])


def random_point_plane(rng):
    p, origin, normal = rng.uniform(-1.0, 1.0, (3, 3))
    return [p, origin, normal], 1.0


def _edges_around(rng, da, db):
    """Edges with directions da, db whose lines are closest at parameters s, t in (-0.6, 1.6)."""
    s, t = rng.uniform(-0.6, 1.6, 2)
    c = rng.uniform(-1.0, 1.0, 3)
    n = np.cross(da, _unit(rng))
    n /= np.linalg.norm(n)
    if np.linalg.norm(np.cross(da, db)) > 1e-6 * np.linalg.norm(da) * np.linalg.norm(db):
        n = np.cross(da, db) / np.linalg.norm(np.cross(da, db))
    ea0 = c - s * da
    eb0 = c + _separation(rng) * np.linalg.norm(da) * n - t * db
    return _place(rng, [ea0, ea0 + da, eb0, eb0 + db])


def random_edge_edge(rng):
    return _edges_around(rng, rng.uniform(-1.0, 1.0, 3), rng.uniform(-1.0, 1.0, 3))


def random_nearly_parallel_edge_edge(rng, log10_angle=(-10.0, -2.0)):
    """Edge angles 10^U(log10_angle) rad; the default straddles ipctk's parallel threshold."""
    da = rng.uniform(-1.0, 1.0, 3)
    axis = np.cross(da, _unit(rng))
    axis /= np.linalg.norm(axis)
    angle = 10.0 ** rng.uniform(*log10_angle)
    db = rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 2.0) * (
        np.cos(angle) * da + np.sin(angle) * np.cross(axis, da)
    )
    return _edges_around(rng, da, db)


def sin_sqr_angle(ea0, ea1, eb0, eb1):
    u, v = ea1 - ea0, eb1 - eb0
    return np.sum(np.cross(u, v) ** 2) / (u @ u) / (v @ v)


# Just above the parallel threshold, a c - b^2 (the squared sine of the edge angle times the
# squared lengths) is the difference of two numbers that agree in all but their last bits, so
# ipctk's segment-segment classification (built with FMA contraction) is decided by rounding.
ILL_CONDITIONED_SIN_SQR = (dist.EDGE_EDGE_PARALLEL_THRESHOLD, 1e-13)


def is_ill_conditioned_edge_edge(vertices):
    low, high = ILL_CONDITIONED_SIN_SQR
    return low <= sin_sqr_angle(*vertices) < high


def random_well_conditioned_nearly_parallel_edge_edge(rng):
    while True:
        vertices, scale = random_nearly_parallel_edge_edge(rng)
        if not is_ill_conditioned_edge_edge(vertices):
            return vertices, scale


def random_cases(generator, n, seed, **kwargs):
    rng = np.random.default_rng(seed)
    return [generator(rng, **kwargs) for _ in range(n)]


def rel_err(ours, ref):
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    assert ours.shape == ref.shape
    return np.max(np.abs(ours - ref)) / np.max(np.abs(ref))


# ---------------------------------------------------------------------------------------------
# Closest-feature types


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (PointEdgeDistanceType, ipctk.PointEdgeDistanceType),
        (PointTriangleDistanceType, ipctk.PointTriangleDistanceType),
        (EdgeEdgeDistanceType, ipctk.EdgeEdgeDistanceType),
    ],
)
def test_type_enums_have_ipctk_names_and_values(ours, theirs):
    assert {m.name: int(m) for m in ours} == {k: int(v) for k, v in theirs.__members__.items()}


@pytest.mark.parametrize(
    ("ours", "theirs", "generator", "enum"),
    [
        (dist.point_edge_distance_type, ipctk.point_edge_distance_type, random_point_edge,
         PointEdgeDistanceType),
        (dist.point_triangle_distance_type, ipctk.point_triangle_distance_type,
         random_point_triangle, PointTriangleDistanceType),
        (dist.edge_edge_distance_type, ipctk.edge_edge_distance_type, random_edge_edge,
         EdgeEdgeDistanceType),
        (dist.edge_edge_distance_type, ipctk.edge_edge_distance_type,
         random_well_conditioned_nearly_parallel_edge_edge, EdgeEdgeDistanceType),
        (dist.edge_edge_parallel_distance_type, ipctk.edge_edge_parallel_distance_type,
         random_nearly_parallel_edge_edge, EdgeEdgeDistanceType),
    ],
)
def test_distance_types_match_ipctk(ours, theirs, generator, enum):
    seen = set()
    for vertices, _ in random_cases(generator, N_RANDOM, 1):
        expected = int(theirs(*vertices))
        got = ours(*vertices)
        assert isinstance(got, enum)
        assert got == expected, vertices
        seen.add(expected)
    if ours is dist.edge_edge_parallel_distance_type:
        assert len(seen) == 8  # all but EA_EB
    else:
        assert seen == {int(m) for m in enum if m is not enum.AUTO}


def test_nearly_parallel_cases_straddle_the_parallel_threshold():
    cases = random_cases(random_well_conditioned_nearly_parallel_edge_edge, N_RANDOM, 1)
    parallel = sum(sin_sqr_angle(*v) < dist.EDGE_EDGE_PARALLEL_THRESHOLD for v, _ in cases)
    assert 0.2 * N_RANDOM < parallel < 0.8 * N_RANDOM


def exact_segment_segment_distance(ea0, ea1, eb0, eb1):
    """Squared segment-segment distance in exact rational arithmetic (slow reference).

    The minimum of |ea0 + s u - eb0 - t v|^2 over [0, 1]^2 lies at the interior stationary point
    or on a side of the square, where clamping the 1-D minimiser finds it.
    """
    ea0, ea1, eb0, eb1 = ([Fraction(float(c)) for c in x] for x in (ea0, ea1, eb0, eb1))
    u = [q - p for p, q in zip(ea0, ea1)]
    v = [q - p for p, q in zip(eb0, eb1)]
    w = [p - q for p, q in zip(ea0, eb0)]

    def dot(x, y):
        return sum(xi * yi for xi, yi in zip(x, y))

    a, b, c, d, e, ww = dot(u, u), dot(u, v), dot(v, v), dot(u, w), dot(v, w), dot(w, w)

    def f(s, t):
        return a * s * s - 2 * b * s * t + c * t * t + 2 * d * s - 2 * e * t + ww

    def clamp(x):
        return min(max(x, Fraction(0)), Fraction(1))

    candidates = [f(s, clamp((e + b * s) / c)) for s in (Fraction(0), Fraction(1))]
    candidates += [f(clamp((b * t - d) / a), t) for t in (Fraction(0), Fraction(1))]
    det = a * c - b * b
    if det > 0:
        s, t = (b * e - c * d) / det, (a * e - b * d) / det
        if 0 <= s <= 1 and 0 <= t <= 1:
            candidates.append(f(s, t))
    return float(min(candidates))


def test_exact_reference_agrees_with_edge_edge_distance_on_generic_edges():
    for vertices, _ in random_cases(random_edge_edge, 200, 14):
        exact = exact_segment_segment_distance(*vertices)
        assert dist.edge_edge_distance(*vertices) == pytest.approx(exact, rel=1e-9)


def test_ill_conditioned_nearly_parallel_edges_give_the_exact_distance():
    """Where rounding decides ipctk's classification, ours still finds the closest features.

    ipctk is no oracle there (its choice can be off by orders of magnitude in distance); the
    exact rational segment distance is. The remaining error is the line-line formula's own
    conditioning, about eps |w| / (distance sin(angle)) <= 1e-5 here.
    """
    rng = np.random.default_rng(13)
    checked = 0
    while checked < 300:
        vertices, _ = random_nearly_parallel_edge_edge(rng)
        if not is_ill_conditioned_edge_edge(vertices):
            continue
        exact = exact_segment_segment_distance(*vertices)
        assert dist.edge_edge_distance(*vertices) == pytest.approx(exact, rel=1e-4)
        checked += 1


# ---------------------------------------------------------------------------------------------
# Values and derivatives against ipctk


def _generic_rtol(vertices):
    return RTOL_IPCTK


def _cross_rtol(vertices):
    """|u x v|^2 of nearly parallel edges carries a relative rounding error ~ eps / sin(angle)."""
    return max(RTOL_IPCTK, 10.0 * EPS / np.sqrt(sin_sqr_angle(*vertices)))


def _line_line_rtol(vertices):
    """The line-line gradient of nearly parallel edges is conditioned like 1 / sin^2(angle)."""
    return max(RTOL_IPCTK, 10.0 * EPS / sin_sqr_angle(*vertices))


PRIMITIVES = {
    "point_point_distance": (random_point_point, _generic_rtol),
    "point_line_distance": (random_point_edge, _generic_rtol),
    "point_edge_distance": (random_point_edge, _generic_rtol),
    "point_triangle_distance": (random_point_triangle, _generic_rtol),
    "point_plane_distance": (random_point_plane, _generic_rtol),
    "line_line_distance": (random_edge_edge, _generic_rtol),
    "edge_edge_distance": (random_edge_edge, _generic_rtol),
    "edge_edge_distance-nearly-parallel": (
        random_well_conditioned_nearly_parallel_edge_edge, _line_line_rtol
    ),
    "edge_edge_cross_squarednorm": (random_edge_edge, _generic_rtol),
    "edge_edge_cross_squarednorm-nearly-parallel": (random_nearly_parallel_edge_edge, _cross_rtol),
}


@pytest.mark.parametrize("key", sorted(PRIMITIVES))
def test_value_gradient_hessian_match_ipctk(key):
    generator, rtol = PRIMITIVES[key]
    name = key.split("-")[0]
    for vertices, _ in random_cases(generator, N_RANDOM, 2):
        tol = rtol(vertices)
        for suffix in ("", "_gradient", "_hessian"):
            ours = getattr(dist, name + suffix)(*vertices)
            theirs = getattr(ipctk, name + suffix)(*vertices)
            assert rel_err(ours, theirs) <= tol, (suffix, vertices)


def test_nearly_parallel_tolerances_are_tight_where_the_edges_are_not():
    """The conditioned tolerances fall back to 1e-8 once the angle exceeds ~3e-4 rad."""
    cases = random_cases(random_well_conditioned_nearly_parallel_edge_edge, N_RANDOM, 2)
    assert sum(_line_line_rtol(v) == RTOL_IPCTK for v, _ in cases) > 0.1 * N_RANDOM
    parallel = [v for v, _ in cases if sin_sqr_angle(*v) < dist.EDGE_EDGE_PARALLEL_THRESHOLD]
    for vertices in parallel:  # point-point and point-line sub-cases are well conditioned
        for suffix in ("", "_gradient", "_hessian"):
            ours = getattr(dist, "edge_edge_distance" + suffix)(*vertices)
            assert rel_err(ours, getattr(ipctk, "edge_edge_distance" + suffix)(*vertices)) <= 1e-10


@pytest.mark.parametrize(
    ("name", "generator", "enum"),
    [
        ("point_edge", random_point_edge, PointEdgeDistanceType),
        ("point_triangle", random_point_triangle, PointTriangleDistanceType),
        ("edge_edge", random_edge_edge, EdgeEdgeDistanceType),
    ],
)
def test_every_forced_distance_type_matches_ipctk(name, generator, enum):
    """Each sub-case formula, forced with dtype wherever the configuration is, agrees with ipctk."""
    cases = random_cases(generator, 300, 3)
    for dtype in enum:
        ipctk_dtype = getattr(ipctk, enum.__name__).__members__[dtype.name]
        for suffix in ("", "_gradient", "_hessian"):
            ours = getattr(dist, f"{name}_distance{suffix}")
            theirs = getattr(ipctk, f"{name}_distance{suffix}")
            for vertices, _ in cases:
                err = rel_err(ours(*vertices, dtype=dtype), theirs(*vertices, ipctk_dtype))
                assert err <= RTOL_IPCTK, (dtype, suffix, vertices)


def test_mollifier_matches_ipctk():
    rng = np.random.default_rng(4)
    active = 0
    for vertices, _ in random_cases(random_nearly_parallel_edge_edge, N_RANDOM, 4):
        rest = [v + rng.normal(scale=0.01 * np.linalg.norm(vertices[1] - vertices[0]), size=3)
                for v in vertices]
        eps_x = dist.edge_edge_mollifier_threshold(*rest)
        assert eps_x == pytest.approx(ipctk.edge_edge_mollifier_threshold(*rest), rel=1e-14)
        x = dist.edge_edge_cross_squarednorm(*vertices)
        active += x < eps_x
        tol = _cross_rtol(vertices)
        for suffix in ("", "_gradient", "_hessian"):
            ours = getattr(dist, "edge_edge_mollifier" + suffix)(*vertices, eps_x)
            theirs = getattr(ipctk, "edge_edge_mollifier" + suffix)(*vertices, eps_x)
            if suffix == "" or x < eps_x:
                assert rel_err(ours, theirs) <= tol
            else:
                assert not np.any(ours) and not np.any(theirs)
    assert active > 0.5 * N_RANDOM


def test_scalar_mollifier_matches_ipctk():
    rng = np.random.default_rng(5)
    eps_x = 10.0 ** rng.uniform(-16.0, 0.0, N_RANDOM)
    x = eps_x * rng.uniform(0.0, 2.0, N_RANDOM)
    for xi, ei in zip(x, eps_x):
        assert dist.mollifier(xi, ei) == pytest.approx(ipctk.edge_edge_mollifier(xi, ei), rel=1e-14)
        assert dist.mollifier_first_derivative(xi, ei) == pytest.approx(
            ipctk.edge_edge_mollifier_gradient(xi, ei), rel=1e-12, abs=0.0
        )
        assert dist.mollifier_second_derivative(xi, ei) == pytest.approx(
            ipctk.edge_edge_mollifier_hessian(xi, ei), rel=1e-14, abs=0.0
        )


# ---------------------------------------------------------------------------------------------
# Finite differences


def _central_differences(f, x, h):
    """Columns (f(x + h e_i) - f(x - h e_i)) / (the step actually taken, after rounding x +- h)."""
    columns = []
    for i in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus[i] += h
        minus[i] -= h
        columns.append((np.asarray(f(plus)) - np.asarray(f(minus))) / (plus[i] - minus[i]))
    return columns


def fd_gradient(f, x, h):
    return np.array(_central_differences(f, x, h))


def fd_jacobian(g, x, h):
    return np.column_stack(_central_differences(g, x, h))


def check_against_fd(value, gradient, hessian, x, h, length, rtol=RTOL_FD):
    """Assert gradient ~ FD(value) and hessian ~ FD(gradient) at the flat point x.

    Each error is measured against the size of its reference, floored by 1e-3 of the other
    derivative's size over the configuration's length scale: at the zero of a squared distance
    the gradient vanishes (and its finite difference is rounding noise) while the Hessian does
    not. A zero result against a nonzero reference therefore always fails.
    """
    g, g_fd = gradient(x), fd_gradient(value, x, h)
    hess, hess_fd = hessian(x), fd_jacobian(gradient, x, h)
    g_size = max(np.max(np.abs(g_fd)), 1e-3 * length * np.max(np.abs(hess_fd)))
    hess_size = max(np.max(np.abs(hess_fd)), 1e-3 * np.max(np.abs(g_fd)) / length)
    assert g_size > 0.0 and hess_size > 0.0
    assert np.max(np.abs(g - g_fd)) <= rtol * g_size, (g, g_fd)
    assert np.max(np.abs(hess - hess_fd)) <= rtol * hess_size, (hess, hess_fd)


def _flat(name, nvert, **kwargs):
    """value, gradient, hessian of dist.<name> as functions of the flat vertex vector."""
    return tuple(
        (lambda fn: lambda y: fn(*y.reshape(nvert, 3), **kwargs))(getattr(dist, name + suffix))
        for suffix in ("", "_gradient", "_hessian")
    )


def test_fd_checker_rejects_zero_and_wrong_derivatives():
    x = np.array([0.3, -0.2, 0.5, 1.0, 0.1, -0.4])
    value, gradient, hessian = _flat("point_point_distance", 2)
    check_against_fd(value, gradient, hessian, x, 1e-6, 1.0)
    for wrong_gradient, wrong_hessian in (
        (lambda y: np.zeros(6), hessian),
        (gradient, lambda y: np.zeros((6, 6))),
        (lambda y: (1 + 1e-5) * gradient(y), hessian),
        (gradient, lambda y: (1 + 1e-5) * hessian(y)),
    ):
        with pytest.raises(AssertionError):
            check_against_fd(value, wrong_gradient, wrong_hessian, x, 1e-6, 1.0)


def _type_is_stable(type_fn, x, nvert, h):
    """The closest-feature type is the same at every finite-difference stencil point."""
    t = type_fn(*x.reshape(nvert, 3))
    return all(
        type_fn(*(x + s * h * e).reshape(nvert, 3)) == t for e in np.eye(x.size) for s in (-1, 1)
    )


@pytest.mark.parametrize(
    ("name", "generator", "nvert", "type_fn"),
    [
        ("point_point_distance", random_point_point, 2, None),
        ("point_line_distance", random_point_edge, 3, None),
        ("point_edge_distance", random_point_edge, 3, dist.point_edge_distance_type),
        ("point_triangle_distance", random_point_triangle, 4, dist.point_triangle_distance_type),
        ("line_line_distance", random_edge_edge, 4, None),
        ("edge_edge_distance", random_edge_edge, 4, dist.edge_edge_distance_type),
        ("edge_edge_cross_squarednorm", random_edge_edge, 4, None),
    ],
)
def test_derivatives_match_finite_differences_on_random_configurations(
    name, generator, nvert, type_fn
):
    value, gradient, hessian = _flat(name, nvert)
    seen = set()
    for vertices, scale in random_cases(generator, 200, 6):
        x = np.concatenate(vertices)
        h = 1e-7 * scale
        if type_fn is not None:
            # the type must not change inside the stencil, else the FD mixes two sub-cases
            assert _type_is_stable(type_fn, x, nvert, h)
            seen.add(type_fn(*vertices))
        check_against_fd(value, gradient, hessian, x, h, scale)
    if type_fn is not None:
        assert len(seen) == len(type(next(iter(seen)))) - 1  # every region but AUTO


def test_point_plane_derivatives_match_finite_differences():
    for (p, origin, normal), _ in random_cases(random_point_plane, 200, 7):
        check_against_fd(
            lambda y: dist.point_plane_distance(y, origin, normal),
            lambda y: dist.point_plane_distance_gradient(y, origin, normal),
            lambda y: dist.point_plane_distance_hessian(y, origin, normal),
            p,
            1e-7,
            1.0,
        )


@pytest.mark.parametrize(
    ("name", "generator", "nvert", "enum"),
    [
        ("point_edge_distance", random_point_edge, 3, PointEdgeDistanceType),
        ("point_triangle_distance", random_point_triangle, 4, PointTriangleDistanceType),
        ("edge_edge_distance", random_edge_edge, 4, EdgeEdgeDistanceType),
    ],
)
def test_every_forced_distance_type_matches_finite_differences(name, generator, nvert, enum):
    for dtype in enum:
        if dtype is enum.AUTO:
            continue
        derivatives = _flat(name, nvert, dtype=dtype)
        for vertices, scale in random_cases(generator, 30, 8):
            check_against_fd(*derivatives, np.concatenate(vertices), 1e-7 * scale, scale)


def test_mollifier_derivatives_match_finite_differences():
    """Angles 1e-4..3e-2 rad: the mollifier's active range for edges at rest angles >= 0.03 rad.

    Below, x = |u x v|^2 varies on a length scale of sin(angle) |u|, too short for a
    finite-difference step above rounding noise; exactly parallel edges are tested separately.
    """
    rng = np.random.default_rng(9)
    cases = random_cases(random_nearly_parallel_edge_edge, 200, 9, log10_angle=(-4.0, -1.5))
    for vertices, scale in cases:
        eps_x = dist.edge_edge_cross_squarednorm(*vertices) * rng.uniform(1.5, 100.0)
        derivatives = _flat("edge_edge_mollifier", 4, eps_x=eps_x)
        check_against_fd(*derivatives, np.concatenate(vertices), 1e-9 * scale, scale)


def test_scalar_mollifier_derivatives_match_finite_differences():
    eps_x = 0.37
    for x in np.linspace(0.0, 0.99 * eps_x, 17)[1:]:
        h = 1e-6 * eps_x
        fd1 = (dist.mollifier(x + h, eps_x) - dist.mollifier(x - h, eps_x)) / (2 * h)
        fd2 = (
            dist.mollifier_first_derivative(x + h, eps_x)
            - dist.mollifier_first_derivative(x - h, eps_x)
        ) / (2 * h)
        assert dist.mollifier_first_derivative(x, eps_x) == pytest.approx(fd1, rel=1e-7)
        assert dist.mollifier_second_derivative(x, eps_x) == pytest.approx(fd2, rel=1e-7)
    # C1 at the threshold: value 1 and slope 0 from both sides
    assert dist.mollifier(eps_x, eps_x) == 1.0
    assert dist.mollifier(eps_x * (1 - 1e-9), eps_x) == pytest.approx(1.0, abs=1e-15)
    assert dist.mollifier_first_derivative(eps_x * (1 - 1e-9), eps_x) == pytest.approx(
        0.0, abs=1e-8
    )
    assert dist.mollifier_first_derivative(eps_x, eps_x) == 0.0


# ---------------------------------------------------------------------------------------------
# Degenerate configurations

T0, T1, T2 = np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]), np.array([0.2, 0.9, 0.0])
Y, Z = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])


def _near_vertex_points():
    """Points 1e-3 from triangle vertex t0 in each adjacent region, with the expected type."""
    e0 = (T1 - T0) / np.linalg.norm(T1 - T0)
    e2 = (T2 - T0) / np.linalg.norm(T2 - T0)
    outward = -(e0 + e2) / np.linalg.norm(e0 + e2)
    inward = -outward
    return [
        (T0 + 1e-3 * (outward + 0.3 * Z), PointTriangleDistanceType.P_T0),
        (T0 + 1e-3 * (0.5 * e0 - 0.6 * Y + 0.2 * Z), PointTriangleDistanceType.P_E0),
        (T0 + 1e-3 * (0.5 * e2 + 0.6 * np.cross(Z, e2) + 0.2 * Z),
         PointTriangleDistanceType.P_E2),
        (T0 + 1e-3 * (inward + 0.7 * Z), PointTriangleDistanceType.P_T),
        (T0 + 1e-3 * (inward - 0.7 * Z), PointTriangleDistanceType.P_T),
    ]


@pytest.mark.parametrize(("p", "expected"), _near_vertex_points())
def test_point_near_triangle_vertex(p, expected):
    vertices = [p, T0, T1, T2]
    assert dist.point_triangle_distance_type(*vertices) == expected
    assert int(ipctk.point_triangle_distance_type(*vertices)) == expected
    x = np.concatenate(vertices)
    h = 1e-9
    assert _type_is_stable(dist.point_triangle_distance_type, x, 4, h)
    check_against_fd(*_flat("point_triangle_distance", 4), x, h, 1.0)
    for suffix in ("", "_gradient", "_hessian"):
        ours = getattr(dist, "point_triangle_distance" + suffix)(*vertices)
        assert rel_err(ours, getattr(ipctk, "point_triangle_distance" + suffix)(*vertices)) <= 1e-12


ON_FEATURE_CASES = [
    # (name, vertices, forced sub-case): the point lies on the feature, so the squared distance
    # and its gradient vanish and the Hessian carries the finite-difference check.
    ("point_edge_distance", [0.3 * T1 + 0.7 * T2, T1, T2], PointEdgeDistanceType.P_E),
    ("point_edge_distance", [T1.copy(), T1, T2], PointEdgeDistanceType.P_E0),
    ("point_triangle_distance", [0.4 * T0 + 0.6 * T1, T0, T1, T2], PointTriangleDistanceType.P_E0),
    ("point_triangle_distance", [0.5 * T1 + 0.5 * T2, T0, T1, T2], PointTriangleDistanceType.P_E1),
    ("point_triangle_distance", [(T0 + T1 + T2) / 3, T0, T1, T2], PointTriangleDistanceType.P_T),
    ("point_triangle_distance", [T2.copy(), T0, T1, T2], PointTriangleDistanceType.P_T2),
    ("edge_edge_distance", [T0, T1, np.array([0.5, -1, 0]), np.array([0.5, 1, 0])],
     EdgeEdgeDistanceType.EA_EB),
    ("edge_edge_distance", [T0, T1, np.array([0.5, 0, 0]), np.array([0.5, 1, 1])],
     EdgeEdgeDistanceType.EA_EB0),
]


@pytest.mark.parametrize(("name", "vertices", "dtype"), ON_FEATURE_CASES)
def test_point_on_feature(name, vertices, dtype):
    """A point on an edge, a vertex or the face, or crossing edges: d = 0, grad = 0, Hessian != 0.

    The squared distance to a segment or triangle is only C1 on region boundaries, so the
    Hessian is checked for the forced sub-case and the automatic gradient against FD of values.
    """
    nvert = len(vertices)
    x = np.concatenate(vertices)
    derivatives = _flat(name, nvert, dtype=dtype)
    value, gradient, hessian = derivatives
    assert value(x) <= 1e-30
    assert np.max(np.abs(gradient(x))) <= 1e-15
    assert np.max(np.abs(hessian(x))) >= 0.1
    check_against_fd(*derivatives, x, 1e-6, 1.0)
    auto_value, auto_gradient, _ = _flat(name, nvert)
    assert auto_value(x) <= 1e-30
    assert np.max(np.abs(auto_gradient(x))) <= 1e-15
    assert np.max(np.abs(fd_gradient(auto_value, x, 1e-6))) <= 1e-5


def _parallel_edges():
    """Parallel edge pairs (directions +-k u, k a power of 2) in every relative arrangement."""
    u = np.array([1.0, 0.5, -0.25])
    off = np.array([0.0, 0.5, 2.0])  # perpendicular to u
    cases = []
    for shift in (-2.0, -1.25, -0.5, 0.25, 0.75, 1.5):
        for k in (0.5, 1.0, -0.5, -2.0):
            eb0 = shift * u + 1e-3 * off
            cases.append([np.zeros(3), u.copy(), eb0, eb0 + k * u])
    return cases


def test_point_on_the_line_beyond_the_edge():
    """The point-line sub-case vanishes on the whole line; the segment distance does not."""
    vertices = [T1 + 0.5 * (T1 - T2), T1, T2]
    x = np.concatenate(vertices)
    derivatives = _flat("point_edge_distance", 3, dtype=PointEdgeDistanceType.P_E)
    assert derivatives[0](x) <= 1e-30
    assert np.max(np.abs(derivatives[1](x))) <= 1e-15
    check_against_fd(*derivatives, x, 1e-6, 1.0)
    assert dist.point_edge_distance_type(*vertices) == PointEdgeDistanceType.P_E0
    assert dist.point_edge_distance(*vertices) == pytest.approx(0.25 * np.sum((T1 - T2) ** 2))


@pytest.mark.parametrize("vertices", _parallel_edges())
def test_parallel_edges(vertices):
    assert sin_sqr_angle(*vertices) < 1e-30
    dtype = dist.edge_edge_distance_type(*vertices)
    assert dtype == int(ipctk.edge_edge_distance_type(*vertices))
    assert dtype == dist.edge_edge_parallel_distance_type(*vertices)
    assert dtype != EdgeEdgeDistanceType.EA_EB
    assert dist.edge_edge_distance(*vertices) == pytest.approx(
        exact_segment_segment_distance(*vertices), rel=1e-12
    )
    for suffix in ("", "_gradient", "_hessian"):
        ours = getattr(dist, "edge_edge_distance" + suffix)(*vertices)
        assert rel_err(ours, getattr(ipctk, "edge_edge_distance" + suffix)(*vertices)) <= 1e-12
    # The selected sub-case (point-point or point-line) is smooth through parallelism.
    x = np.concatenate(vertices)
    check_against_fd(*_flat("edge_edge_distance", 4, dtype=dtype), x, 1e-7, 1.0)
    # The mollifier is fully active: value 0, gradient 0, Hessian m'(0) hess(x) != 0.
    eps_x = dist.edge_edge_mollifier_threshold(*vertices)
    assert dist.edge_edge_mollifier(*vertices, eps_x) == pytest.approx(0.0, abs=1e-28)
    check_against_fd(*_flat("edge_edge_mollifier", 4, eps_x=eps_x), x, 1e-7, 1.0)
    ours = dist.edge_edge_mollifier_hessian(*vertices, eps_x)
    assert rel_err(ours, ipctk.edge_edge_mollifier_hessian(*vertices, eps_x)) <= 1e-12


def test_nearly_parallel_edges_automatic_type_derivatives():
    """Edges 1e-3..3e-2 rad from parallel, where the mollifier acts, away from region borders."""
    checked = set()
    cases = random_cases(random_nearly_parallel_edge_edge, 200, 10, log10_angle=(-3.0, -1.5))
    for vertices, scale in cases:
        x = np.concatenate(vertices)
        h = 1e-7 * scale
        if _type_is_stable(dist.edge_edge_distance_type, x, 4, h):
            check_against_fd(*_flat("edge_edge_distance", 4), x, h, scale)
            checked.add(dist.edge_edge_distance_type(*vertices))
    assert len(checked) == 9


def exact_line_line_gradient(ea0, ea1, eb0, eb1):
    """Gradient of ((eb0 - ea0) . n)^2 / |n|^2 by central differences in rational arithmetic.

    The function is rational, so a step of 2^-100 leaves a truncation error far below double
    precision: an independent reference where floating-point differences are swamped by noise.
    """
    x = [Fraction(float(c)) for c in np.concatenate([ea0, ea1, eb0, eb1])]

    def value(y):
        a0, a1, b0, b1 = y[0:3], y[3:6], y[6:9], y[9:12]
        u = [q - p for p, q in zip(a0, a1)]
        v = [q - p for p, q in zip(b0, b1)]
        n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
        g = sum((q - p) * ni for p, q, ni in zip(a0, b0, n))
        return g * g / sum(ni * ni for ni in n)

    h = Fraction(1, 2**100)
    grad = []
    for i in range(12):
        plus, minus = list(x), list(x)
        plus[i] += h
        minus[i] -= h
        grad.append(float((value(plus) - value(minus)) / (2 * h)))
    return np.array(grad)


def test_nearly_parallel_line_line_gradient_is_as_accurate_as_its_conditioning():
    """Angles 1e-7..1e-3 rad: relative gradient error <= 10 eps / sin^2(angle), like ipctk's."""
    ours_worst = ipctk_worst = 0.0
    for vertices, _ in random_cases(random_nearly_parallel_edge_edge, 60, 15, log10_angle=(-7, -3)):
        exact = exact_line_line_gradient(*vertices)
        bound = 10.0 * EPS / sin_sqr_angle(*vertices)
        ours_worst = max(
            ours_worst, rel_err(dist.line_line_distance_gradient(*vertices), exact) / bound
        )
        ipctk_worst = max(
            ipctk_worst, rel_err(ipctk.line_line_distance_gradient(*vertices), exact) / bound
        )
    assert ours_worst <= 1.0
    assert ipctk_worst <= 1.0  # the reference toolkit is no better: this is the conditioning


# ---------------------------------------------------------------------------------------------
# Kernels and input validation


def test_kernels_are_callable_from_njit_code():
    @numba.njit
    def stencil(p, t0, t1, t2, ea0, ea1, eb0, eb1, eps_x):
        return (
            dist._point_triangle_distance(p, t0, t1, t2),
            dist._point_triangle_distance_gradient(p, t0, t1, t2),
            dist._point_triangle_distance_hessian(p, t0, t1, t2),
            dist._edge_edge_distance(ea0, ea1, eb0, eb1),
            dist._edge_edge_distance_gradient(ea0, ea1, eb0, eb1),
            dist._edge_edge_distance_hessian(ea0, ea1, eb0, eb1),
            dist._edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x),
            dist._edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x),
            dist._edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x),
            dist._point_edge_distance_hessian(p, t0, t1),
            dist._point_point_distance_gradient(p, t0),
            dist._point_plane_distance_gradient(p, t0, t1),
        )

    rng = np.random.default_rng(11)
    pt, ee = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3))
    eps_x = 2.0 * dist.edge_edge_cross_squarednorm(*ee)
    got = stencil(*pt, *ee, eps_x)
    expected = (
        dist.point_triangle_distance(*pt),
        dist.point_triangle_distance_gradient(*pt),
        dist.point_triangle_distance_hessian(*pt),
        dist.edge_edge_distance(*ee),
        dist.edge_edge_distance_gradient(*ee),
        dist.edge_edge_distance_hessian(*ee),
        dist.edge_edge_mollifier(*ee, eps_x),
        dist.edge_edge_mollifier_gradient(*ee, eps_x),
        dist.edge_edge_mollifier_hessian(*ee, eps_x),
        dist.point_edge_distance_hessian(*pt[:3]),
        dist.point_point_distance_gradient(*pt[:2]),
        dist.point_plane_distance_gradient(*pt[:3]),
    )
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    assert np.any(got[7])  # the mollifier is active here


def test_hessians_are_symmetric():
    for vertices, _ in random_cases(random_point_triangle, 100, 12):
        hess = dist.point_triangle_distance_hessian(*vertices)
        np.testing.assert_allclose(hess, hess.T, rtol=0, atol=1e-14 * np.abs(hess).max())
    for vertices, _ in random_cases(random_edge_edge, 100, 12):
        for name in ("edge_edge_distance_hessian", "line_line_distance_hessian"):
            hess = getattr(dist, name)(*vertices)
            np.testing.assert_allclose(hess, hess.T, rtol=0, atol=1e-14 * np.abs(hess).max())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dist.point_triangle_distance(np.zeros(2), T0, T1, T2), "p must be a 3-vector"),
        (lambda: dist.edge_edge_distance(T0, T1, T2, [np.nan, 0, 0]), "eb1 must be finite"),
        (lambda: dist.point_edge_distance(T0, T1, T2, dtype=7), "not a valid"),
        (lambda: dist.edge_edge_mollifier(T0, T1, T2, Z, 0.0), "eps_x must be positive"),
        (lambda: dist.mollifier(-1.0, 1.0), "x must be non-negative"),
    ],
)
def test_bad_input_raises_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
