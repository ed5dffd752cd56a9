"""Additive CCD against ipctk's Tight Inclusion CCD, ipctk's own Additive CCD and dense sampling.

Oracle facts used below:
- ipctk's TightInclusionCCD with conservative_rescaling=1.0 returns a time of impact that is
  at most its tolerance before the true one (ipctk rescales by 0.8 by default, and measures
  the minimum separation in the infinity norm: with ms = xi / sqrt(3) a reported hit implies a
  Euclidean distance <= xi, with ms = xi + gap every Euclidean approach within xi + gap is
  reported).
- ipctk.AdditiveCCD implements the same algorithm (Li et al. 2021, Alg. 1): same hits, same
  times of impact.
- A trajectory built to touch at a chosen time (a "planted" contact) touches no later.
"""

import numpy as np
import ipctk
import pytest
import trimesh

from ipcgrasp.engine import ccd
from ipcgrasp.engine.broadphase import candidates

ipctk.set_logger_level(ipctk.LoggerLevel.error)

ETA = ccd.DEFAULT_CONSERVATIVE_RESCALING
# Tight Inclusion reports a hit when a pair is within its tolerance; the default (1e-6 m)
# cannot resolve the ~1e-7 gaps our already-close starts keep, so the oracle uses 1e-9.
TIGHT = ipctk.TightInclusionCCD(tolerance=1e-9, conservative_rescaling=1.0)

KINDS = {
    "point_triangle": (ccd.point_triangle_ccd, ipctk.point_triangle_distance, 4),
    "edge_edge": (ccd.edge_edge_ccd, ipctk.edge_edge_distance, 4),
    "point_edge": (ccd.point_edge_ccd, ipctk.point_edge_distance, 3),
    "point_point": (ccd.point_point_ccd, ipctk.point_point_distance, 2),
}


def distance(kind, x):
    return np.sqrt(KINDS[kind][1](*x))


def tight_inclusion(kind, x0, x1, ms, tmax=1.0):
    return getattr(TIGHT, f"{kind}_ccd")(*x0, *x1, min_distance=ms, tmax=tmax)


# --- trajectory generators: lists of (x_t0, x_t1, planted contact time or inf), rows as in
# ccd.py ---------------------------------------------------------------------------------------


def contact_configuration(kind, rng):
    """Random unit-size configuration in contact, and a unit contact normal (or None)."""
    if kind == "point_triangle":
        tri = rng.uniform(-1, 1, (3, 3))
        w = rng.dirichlet(np.ones(3))
        if rng.random() < 0.2:  # on an edge or at a vertex
            w[rng.integers(3)] = 0.0
            w /= w.sum()
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        return np.vstack([w @ tri, tri]), normal / np.linalg.norm(normal)
    if kind == "edge_edge":
        c = rng.uniform(-1, 1, 3)
        ua, ub = rng.normal(size=(2, 3))
        s, t = rng.uniform(0, 1, 2)
        if rng.random() < 0.2:
            s = float(rng.integers(2))
        x = np.vstack([c - s * ua, c + (1 - s) * ua, c - t * ub, c + (1 - t) * ub])
        normal = np.cross(ua, ub)
        return x, normal / np.linalg.norm(normal)
    if kind == "point_edge":
        e = rng.uniform(-1, 1, (2, 3))
        s = rng.uniform(0, 1)
        return np.vstack([e[0] + s * (e[1] - e[0]), e]), None
    p = rng.uniform(-1, 1, 3)
    return np.vstack([p, p]), None


def random_trajectories(kind, rng, n):
    nv = KINDS[kind][2]
    cases = []
    for _ in range(n):
        x0 = rng.uniform(-1, 1, (nv, 3))
        cases.append((x0, x0 + rng.normal(0, 1, (nv, 3)), np.inf))
    return cases


def planted_trajectories(kind, rng, n, t_contact=(0.02, 1.2)):
    """Pairs that touch at a chosen time t_c (they may touch earlier)."""
    cases = []
    for _ in range(n):
        xc, _ = contact_configuration(kind, rng)
        v = rng.normal(0, 1, xc.shape)
        tc = rng.uniform(*t_contact)
        x0 = xc - tc * v
        cases.append((x0, x0 + v, tc))
    return cases


def close_start_trajectories(kind, rng, n):
    """Already-close starts: distance 1e-6..1e-4 (of a unit size), moving in any direction."""
    cases = []
    while len(cases) < n:
        xc, _ = contact_configuration(kind, rng)
        x0 = xc + rng.normal(0, 1e-5, xc.shape)
        if 1e-6 <= distance(kind, x0) <= 1e-4:
            cases.append((x0, x0 + rng.normal(0, 1, xc.shape), np.inf))
    return cases


def grazing_trajectories(kind, rng, n):
    """Relative motion tangent to the contact: in the triangle plane, in the plane of both
    edges, along the edge line; and near misses passing 1e-4 or 1e-6 beside a contact."""
    cases = []
    i = 0
    while len(cases) < n:
        i += 1
        xc, normal = contact_configuration(kind, rng)
        v = rng.normal(0, 1, xc.shape)
        if kind == "point_edge":
            axis = xc[2] - xc[1]
            v = np.outer(v @ axis, axis) / (axis @ axis)
        elif normal is not None:
            v -= np.outer(v @ normal, normal)
        tc = rng.uniform(0.1, 0.9)
        if i % 2 and normal is not None:
            xc = xc.copy()
            xc[0] += (1e-4 if i % 4 == 1 else -1e-6) * normal
            tc_planted = np.inf
        else:
            tc_planted = tc
        x0 = xc - tc * v
        if distance(kind, x0) > 1e-3:  # not already touching (coplanar crossing edges)
            cases.append((x0, x0 + v, tc_planted))
    return cases


def parallel_trajectories(kind, rng, n):
    """Parallel edges approaching head on (touching when the approach factor f >= 1) while
    sliding; points sliding parallel to a triangle or an edge at small heights; common
    translation (zero relative motion)."""
    cases = []
    nv = KINDS[kind][2]
    for i in range(n):
        common = rng.normal(0, 1, 3)
        if i % 3 == 0 or kind == "point_point":
            x0 = rng.uniform(-1, 1, (nv, 3))
            cases.append((x0, x0 + common, np.inf))
        elif kind == "edge_edge":
            a = rng.uniform(-1, 1, (2, 3))
            offset = rng.normal(0, 1, 3)
            offset -= (offset @ (a[1] - a[0])) / np.sum((a[1] - a[0]) ** 2) * (a[1] - a[0])
            offset *= 10.0 ** rng.uniform(-3, 0) / np.linalg.norm(offset)
            slide = rng.uniform(-0.5, 0.5) * (a[1] - a[0])
            f = rng.uniform(0.5, 2)
            x0 = np.vstack([a, a + offset + slide])
            v = np.zeros((4, 3))
            v[2:] = -f * offset - 2 * slide
            cases.append((x0, x0 + v + common, 1 / f if f >= 1 else np.inf))
        elif kind == "point_triangle":
            xc, normal = contact_configuration(kind, rng)
            x0 = xc.copy()
            x0[0] += 10.0 ** rng.uniform(-3, -1) * normal * rng.choice([-1, 1])
            v = np.zeros((4, 3))
            v[0] = rng.normal(0, 1, 3)
            v[0] -= (v[0] @ normal) * normal
            cases.append((x0, x0 + v + common, np.inf))
        else:
            xc, _ = contact_configuration(kind, rng)
            axis = xc[2] - xc[1]
            side = np.cross(axis, rng.normal(0, 1, 3))
            x0 = xc.copy()
            x0[0] += 10.0 ** rng.uniform(-3, -1) * side / np.linalg.norm(side)
            v = np.zeros((3, 3))
            v[0] = rng.uniform(-1, 1) * axis
            cases.append((x0, x0 + v + common, np.inf))
    return cases


def zero_motion_trajectories(kind, rng, n):
    nv = KINDS[kind][2]
    cases = []
    for _ in range(n):
        x0 = rng.uniform(-1, 1, (nv, 3))
        cases.append((x0, x0.copy(), np.inf))
    return cases


# name: (generator, count, oracle). Tight Inclusion is exact but can exhaust memory on
# degenerate queries (coplanar or parallel motion that keeps touching over an interval), so
# those scenarios use the first contact seen on 1000 samples of the trajectory instead.
# Generators also return a planted contact time (inf if none): the first contact is no later.
SCENARIOS = {
    "random": (random_trajectories, 500, "tight_inclusion"),
    "planted": (planted_trajectories, 400, "tight_inclusion"),
    "close_start": (close_start_trajectories, 150, "tight_inclusion"),
    "grazing": (grazing_trajectories, 100, "sampling"),
    "parallel": (parallel_trajectories, 100, "sampling"),
    "zero_motion": (zero_motion_trajectories, 30, "tight_inclusion"),
}


def check_case(kind, x0, x1, t_planted, xi, oracle, tmax=1.0):
    """Assert every guarantee for one trajectory; return (our toi, first contact time) when
    a contact with xi = 0 after t = 0 is known, else None."""
    ours = KINDS[kind][0]
    hit, toi = ours(*x0, *x1, min_distance=xi, tmax=tmax)
    assert isinstance(hit, bool) and 0.0 <= toi <= tmax
    d0 = distance(kind, x0)
    if d0 <= xi:
        assert hit and toi == 0.0
        return None
    gap = (1 - ETA) * (d0 - xi)
    if not hit:
        assert toi == tmax

    # No tunnelling: dense samples up to toi stay beyond xi, and toi keeps the ACCD gap
    # (the whole last step is covered by the Lipschitz bound when there is no hit).
    ts = np.linspace(0.0, toi, 65)
    d = np.array([distance(kind, x0 + t * (x1 - x0)) for t in ts])
    assert np.all(d > xi), (d.min(), xi)
    if hit and toi > 0:
        assert d[-1] - xi >= gap * (1 - 1e-6)
    elif not hit:
        assert d[-1] - xi >= (1 - ETA) * gap * (1 - 1e-6)

    if oracle == "tight_inclusion":
        # Every true contact is found, no later than Tight Inclusion's time of impact ...
        found, t_contact = tight_inclusion(kind, x0, x1, xi / np.sqrt(3), tmax)
        if not found:
            t_contact = np.inf
        # ... Tight Inclusion finds no contact before our toi ...
        if xi == 0.0 and hit and toi > 0.0:
            assert not tight_inclusion(kind, x0, x1, 0.0, toi)[0]
        # ... and a hit is never spurious: the pair really comes within xi + gap, at the
        # latest one ACCD step after toi (which may end after tmax: look up to 2 tmax).
        if hit:
            x2 = x0 + 2 * tmax * (x1 - x0)
            assert tight_inclusion(kind, x0, x2, (xi + gap) * (1 + 1e-9), 1.0)[0]
    else:
        # Touching up to rounding counts (a point moving inside a triangle's plane is at
        # ~1e-17, not 0); these trajectories start >= 1e-3 away, so the ACCD gap is far wider.
        ts = np.linspace(0.0, tmax, 1001)
        touching = np.array([distance(kind, x0 + t * (x1 - x0)) for t in ts]) <= xi + 1e-9
        t_contact = ts[np.argmax(touching)] if np.any(touching) else np.inf
    t_contact = min(t_contact, t_planted)
    if t_contact <= tmax:
        assert hit, "missed a contact"
        assert toi <= t_contact, (toi, t_contact)
        if xi == 0.0 and t_contact > 0:
            return toi, t_contact
    return None


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KINDS))
def test_ccd_never_misses_and_never_tunnels(kind):
    rng = np.random.default_rng(list(KINDS).index(kind))
    ratios = {}
    n_cases = 0
    for scenario, (generate, n, oracle) in SCENARIOS.items():
        for i, (x0, x1, t_planted) in enumerate(generate(kind, rng, n)):
            xi = (0.0, 0.0, 1e-3, 0.05)[i % 4]
            found = check_case(kind, x0, x1, t_planted, xi, oracle)
            n_cases += 1
            if found is not None:
                ratios.setdefault(scenario, []).append(found[0] / found[1])
    summary = []
    for scenario, r in ratios.items():
        r = np.asarray(r)
        summary.append(
            f"{scenario}: n={r.size} median={np.median(r):.3f} p5={np.percentile(r, 5):.3f} "
            f"min={r.min():.3g}"
        )
    print(f"\n{kind} ({n_cases} trajectories) toi / first contact  " + "; ".join(summary))
    everything = np.concatenate([np.asarray(r) for r in ratios.values()])
    assert everything.size > 100
    # Conservative but not useless: toi / first contact has median > 0.8, 95 % above 0.3.
    assert np.median(everything) > 0.8
    assert np.percentile(everything, 5) > 0.3


@pytest.mark.parametrize("kind", list(KINDS))
def test_same_toi_as_ipctk_additive_ccd(kind):
    """Same algorithm, same numbers: hit and time of impact agree with ipctk.AdditiveCCD to
    rounding."""
    rng = np.random.default_rng(10 + list(KINDS).index(kind))
    reference = getattr(ipctk.AdditiveCCD(), f"{kind}_ccd")
    ours = KINDS[kind][0]
    cases = random_trajectories(kind, rng, 500) + planted_trajectories(kind, rng, 500)
    for i, (x0, x1, _) in enumerate(cases):
        xi = (0.0, 1e-2)[i % 2]
        hit, toi = ours(*x0, *x1, min_distance=xi)
        ref_hit, ref_toi = reference(*x0, *x1, min_distance=xi)
        assert hit == ref_hit
        if hit:
            assert toi == pytest.approx(ref_toi, rel=1e-9, abs=1e-12)


def test_head_on_point_triangle_values():
    """A point falling straight onto a triangle at relative speed 2: ACCD's first step covers
    eta of the distance, the second crosses the gap, so toi = eta * t_contact."""
    tri = [np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])]
    p0, p1 = np.array([0.2, 0.2, 1.0]), np.array([0.2, 0.2, -1.0])
    assert ccd.point_triangle_ccd(p0, *tri, p1, *tri) == (True, pytest.approx(ETA * 0.5))
    assert ccd.point_triangle_ccd(p0, *tri, p1, *tri, min_distance=0.1) == (
        True, pytest.approx(ETA * 0.45))
    assert ccd.point_triangle_ccd(p0, *tri, p1, *tri, tmax=0.3) == (False, 0.3)
    # passes beside the triangle: never within the gap, so no hit over the whole step
    q0, q1 = p0 + [2.0, 0, 0], p1 + [2.0, 0, 0]
    assert ccd.point_triangle_ccd(q0, *tri, q1, *tri) == (False, 1.0)


def test_initial_contact_and_zero_motion():
    a, b = np.array([0.0, 0, 0]), np.array([1e-4, 0, 0])
    assert ccd.point_point_ccd(a, b, a, b, min_distance=1e-3) == (True, 0.0)
    assert ccd.point_point_ccd(a, b, a, b) == (False, 1.0)
    assert ccd.point_point_ccd(a, b, a + 1, b + 1, tmax=0.5) == (False, 0.5)


def test_max_iterations_returns_a_safe_hit():
    """Sliding 1e-6 above a triangle needs ~1e6 ACCD steps; capped, the result is a hit at a
    safe time of impact."""
    tri = [np.array([-1.0, -1, 0]), np.array([1.0, -1, 0]), np.array([0, 1.0, 0])]
    p0, p1 = np.array([-0.5, -0.5, 1e-6]), np.array([0.5, 0.0, 1e-6])
    hit, toi = ccd.point_triangle_ccd(p0, *tri, p1, *tri, max_iterations=1000)
    assert hit and 0.0 < toi < 1e-2
    hit_short, toi_short = ccd.point_triangle_ccd(p0, *tri, p1, *tri, max_iterations=10)
    assert hit_short and toi_short < toi


def test_point_plane_ccd_is_exact():
    rng = np.random.default_rng(3)
    for i in range(2000):
        p0, p1 = rng.uniform(-1, 1, (2, 3))
        origin = rng.uniform(-0.5, 0.5, 3)
        normal = rng.normal(0, 1, 3) * rng.uniform(0.1, 10)
        ref_hit, ref_toi = ipctk.point_static_plane_ccd(p0, p1, origin, normal, 1.0)
        hit, toi = ccd.point_plane_ccd(p0, p1, origin, normal)
        assert hit == ref_hit
        if hit:
            assert toi == pytest.approx(ref_toi, rel=1e-12, abs=1e-14)
        else:
            assert toi == 1.0
        # with a minimum distance: analytic first time |s(t)| = xi
        xi = 0.1
        unit = normal / np.linalg.norm(normal)
        s0, s1 = (p0 - origin) @ unit, (p1 - origin) @ unit
        hit, toi = ccd.point_plane_ccd(p0, p1, origin, normal, min_distance=xi, tmax=0.7)
        if abs(s0) <= xi:
            assert (hit, toi) == (True, 0.0)
            continue
        target = np.sign(s0) * xi
        t_star = (s0 - target) / (s0 - s1) if s0 != s1 else np.inf
        expected = 0.0 <= t_star <= 0.7
        assert hit == expected
        if hit:
            assert toi == pytest.approx(t_star, rel=1e-12)
            assert abs((p0 + toi * (p1 - p0) - origin) @ unit) == pytest.approx(xi, abs=1e-12)
        else:
            assert toi == 0.7


def test_invalid_arguments():
    z = np.zeros(3)
    with pytest.raises(ValueError, match="3-vector"):
        ccd.point_point_ccd(z, z[:2], z, z)
    with pytest.raises(ValueError, match="non-finite"):
        ccd.point_point_ccd(z, z + np.nan, z, z)
    with pytest.raises(ValueError, match="conservative_rescaling"):
        ccd.point_point_ccd(z, z + 1, z, z, conservative_rescaling=1.0)
    with pytest.raises(ValueError, match="min_distance"):
        ccd.point_point_ccd(z, z + 1, z, z, min_distance=-1.0)
    with pytest.raises(ValueError, match="non-zero"):
        ccd.point_plane_ccd(z, z, z, z)


# --- collision_free_stepsize ----------------------------------------------------------------


def two_cubes(gap, subdivisions=1):
    """Two unit cubes side by side along x, `gap` apart, as one mesh (vertices, edges, faces)
    with the body of each vertex."""
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    for _ in range(subdivisions):
        box = box.subdivide()
    n = len(box.vertices)
    vertices = np.vstack([box.vertices, box.vertices + [1.0 + gap, 0.1, 0.2]])
    faces = np.vstack([box.faces, box.faces + n])
    edges = np.vstack([box.edges_unique, box.edges_unique + n])
    body = np.repeat([0, 1], n)
    return vertices, edges, faces, body


def all_pairs_between_bodies(edges, faces, body):
    vf = np.array([(v, f) for v in range(len(body)) for f in range(len(faces))
                   if body[v] != body[faces[f, 0]]])
    ee = np.array([(a, b) for a in range(len(edges)) for b in range(a + 1, len(edges))
                   if body[edges[a, 0]] != body[edges[b, 0]]])
    return vf, ee


def min_pair_distance(x, vf, ee, edges, faces):
    d = [ipctk.point_triangle_distance(x[v], *x[faces[f]]) for v, f in vf]
    d += [ipctk.edge_edge_distance(*x[edges[a]], *x[edges[b]]) for a, b in ee]
    return np.sqrt(min(d))


@pytest.mark.parametrize("xi", [0.0, 0.02])
def test_collision_free_stepsize_two_cubes(xi):
    rng = np.random.default_rng(4)
    x0, edges, faces, body = two_cubes(gap=0.1, subdivisions=0)
    # One ipctk mesh for both cubes: its pairs within a cube never come close under these
    # nearly rigid motions. (A Python can_collide callback would deadlock ipctk's threads.)
    mesh = ipctk.CollisionMesh(x0, edges.astype(np.int32), faces.astype(np.int32))
    vf, ee = all_pairs_between_bodies(edges, faces, body)
    ratios = []
    for trial in range(6):
        x1 = x0.copy()
        push = np.array([1.0, 0, 0]) * rng.uniform(0.1, 0.6)
        x1[body == 0] += push + rng.normal(0, 0.05, (np.sum(body == 0), 3))
        x1[body == 1] -= push + rng.normal(0, 0.05, (np.sum(body == 1), 3))
        step = ccd.collision_free_stepsize(x0, x1, vf, ee, [], edges, faces, min_distance=xi)
        # the minimum over pairs of the pairwise time of impact, in any order
        per_pair = min(
            [ccd.point_triangle_ccd(x0[v], *x0[faces[f]], x1[v], *x1[faces[f]],
                                    min_distance=xi)[1] for v, f in vf]
            + [ccd.edge_edge_ccd(*x0[edges[a]], *x0[edges[b]], *x1[edges[a]],
                                 *x1[edges[b]], min_distance=xi)[1] for a, b in ee])
        assert step == per_pair
        assert step == ccd.collision_free_stepsize(
            x0, x1, rng.permutation(vf), rng.permutation(ee), [], edges, faces, min_distance=xi)
        # Tight Inclusion on the same mesh, unscaled, with the infinity-norm separation
        # shrunk to imply a Euclidean one (default tolerance: these gaps are ~1e-2).
        ipc_step = ipctk.compute_collision_free_stepsize(
            mesh, x0, x1, min_distance=xi / np.sqrt(3),
            narrow_phase_ccd=ipctk.TightInclusionCCD(conservative_rescaling=1.0))
        assert step <= ipc_step
        if ipc_step < 1.0:
            ratios.append(step / ipc_step)
        # the step lands intersection-free with every pair beyond xi
        x_step = x0 + step * (x1 - x0)
        assert ipctk.is_step_collision_free(mesh, x0, x_step)
        assert min_pair_distance(x_step, vf, ee, edges, faces) > xi
    assert len(ratios) >= 4
    assert min(ratios) > 0.5
    print(f"\ntwo cubes xi={xi}: stepsize / TightInclusion stepsize: {np.round(ratios, 3)}")


def test_collision_free_stepsize_uses_candidates_from_broad_phase():
    rng = np.random.default_rng(5)
    x0, edges, faces, body = two_cubes(gap=0.05, subdivisions=2)
    vf_all, ee_all = all_pairs_between_bodies(edges, faces, body)
    for _ in range(3):
        x1 = x0 + rng.normal(0, 0.05, x0.shape)
        x1[body == 0] += [0.3, 0, 0]
        vf, ee, _ = candidates(x0, x1, edges, faces, body, inflation_radius=0.0)
        assert len(vf) < len(vf_all) and len(ee) < len(ee_all)
        assert ccd.collision_free_stepsize(x0, x1, vf, ee, [], edges, faces) == (
            ccd.collision_free_stepsize(x0, x1, vf_all, ee_all, [], edges, faces))


def test_collision_free_stepsize_plane_and_limits():
    x0, edges, faces, body = two_cubes(gap=0.1, subdivisions=0)
    vf, ee = all_pairs_between_bodies(edges, faces, body)
    x0 = x0 + [0, 0, 1.0]  # lowest vertices at z = 0.5
    down = x0 - [0, 0, 1.0]
    vertices = np.arange(len(x0))
    origin, normal = np.zeros(3), np.array([0, 0, 2.0])
    # falling onto the ground: exact impact at t = 0.5, scaled by eta
    step = ccd.collision_free_stepsize(x0, down, [], [], vertices, edges, faces, origin, normal)
    assert step == pytest.approx(ETA * 0.5)
    assert step == pytest.approx(ETA * min(
        ipctk.point_static_plane_ccd(x0[v], down[v], origin, normal, 1.0)[1]
        for v in vertices if ipctk.point_static_plane_ccd(x0[v], down[v], origin, normal, 1.0)[0]))
    # with a minimum distance of 0.1 the impact is at 0.4
    assert ccd.collision_free_stepsize(
        x0, down, [], [], vertices, edges, faces, origin, normal, min_distance=0.1
    ) == pytest.approx(ETA * 0.4)
    # moving apart: the full step
    apart = x0.copy()
    apart[body == 1] += [1.0, 0, 0]
    assert ccd.collision_free_stepsize(x0, apart, vf, ee, vertices, edges, faces, origin,
                                       normal) == 1.0
    # starting closer than min_distance: no step at all
    assert ccd.collision_free_stepsize(x0, apart, vf, ee, [], edges, faces,
                                       min_distance=0.2) == 0.0
    with pytest.raises(ValueError, match="plane"):
        ccd.collision_free_stepsize(x0, down, [], [], vertices, edges, faces)
    with pytest.raises(ValueError, match="vf_pairs"):
        ccd.collision_free_stepsize(x0, down, [[0, len(faces)]], [], [], edges, faces)
