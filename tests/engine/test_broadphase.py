"""Broad phase against brute force: the exact set of overlapping inflated swept boxes, and a
superset of every pair that comes within the inflation radius (ipctk's exact distances)."""

import numpy as np
import ipctk
import pytest
import trimesh

from ipcgrasp.engine.broadphase import candidates

SPHERE = trimesh.creation.icosphere(subdivisions=1, radius=0.3)


def scene(rng, n_bodies=3, n_interior=20):
    """Randomly placed, overlapping icospheres (42 vertices, 80 faces, 120 edges each), each
    moved by its own translation plus per-vertex noise; plus unreferenced 'interior' vertices
    scattered through the scene."""
    x0, x1, faces, edges, body = [], [], [], [], []
    offset = 0
    for b in range(n_bodies):
        v = SPHERE.vertices * rng.uniform(0.7, 1.3) + rng.uniform(-0.35, 0.35, 3)
        x0.append(v)
        x1.append(v + rng.normal(0, 0.1, 3) + rng.normal(0, 0.02, v.shape))
        faces.append(SPHERE.faces + offset)
        edges.append(SPHERE.edges_unique + offset)
        body.append(np.full(len(v), b))
        offset += len(v)
    interior = rng.uniform(-0.6, 0.6, (n_interior, 3))
    x0.append(interior)
    x1.append(interior)
    body.append(rng.integers(0, n_bodies, n_interior))
    return (np.vstack(x0), np.vstack(x1), np.vstack(edges), np.vstack(faces),
            np.concatenate(body), offset)


def swept_boxes(x0, x1, elements, radius):
    both = np.concatenate([x0[elements], x1[elements]], axis=1)
    return both.min(axis=1) - radius / 2, both.max(axis=1) + radius / 2


def brute_force_pairs(x0, x1, edges, faces, body, radius, can_collide):
    """Sets of admissible vertex-face and edge-edge pairs with overlapping inflated boxes."""
    vertices = np.unique(np.concatenate([edges.ravel(), faces.ravel()]))
    lo_v, hi_v = swept_boxes(x0, x1, vertices[:, None], radius)
    lo_f, hi_f = swept_boxes(x0, x1, faces, radius)
    lo_e, hi_e = swept_boxes(x0, x1, edges, radius)

    def overlap(lo_a, hi_a, lo_b, hi_b):
        return np.all((lo_a[:, None] <= hi_b[None]) & (lo_b[None] <= hi_a[:, None]), axis=-1)

    vf = set()
    for i, j in zip(*np.nonzero(overlap(lo_v, hi_v, lo_f, hi_f))):
        v, f = vertices[i], j
        if can_collide[body[v], body[faces[f, 0]]] and v not in faces[f]:
            vf.add((int(v), int(f)))
    ee = set()
    for a, b in zip(*np.nonzero(overlap(lo_e, hi_e, lo_e, hi_e))):
        if a < b and can_collide[body[edges[a, 0]], body[edges[b, 0]]] and not (
            set(edges[a]) & set(edges[b])
        ):
            ee.add((int(a), int(b)))
    return vf, ee


def as_set(pairs):
    s = {tuple(int(i) for i in p) for p in pairs}
    assert len(s) == len(pairs), "duplicate pairs"
    return s


def close_pairs(x0, x1, edges, faces, body, radius, can_collide, n_surface):
    """Pairs whose exact distance (ipctk) is <= radius at t = 0, 1/2 or 1."""
    vf, ee = set(), set()
    for t in (0.0, 0.5, 1.0):
        x = x0 + t * (x1 - x0)
        for v in range(n_surface):
            for f in range(len(faces)):
                if can_collide[body[v], body[faces[f, 0]]] and v not in faces[f]:
                    if ipctk.point_triangle_distance(x[v], *x[faces[f]]) <= radius**2:
                        vf.add((v, f))
        for a in range(len(edges)):
            for b in range(a + 1, len(edges)):
                if can_collide[body[edges[a, 0]], body[edges[b, 0]]] and not (
                    set(edges[a]) & set(edges[b])
                ):
                    if ipctk.edge_edge_distance(*x[edges[a]], *x[edges[b]]) <= radius**2:
                        ee.add((a, b))
    return vf, ee


@pytest.mark.parametrize("seed", [0, 1])
def test_candidates_equal_brute_force_and_contain_every_close_pair(seed):
    rng = np.random.default_rng(seed)
    x0, x1, edges, faces, body, n_surface = scene(rng)
    radius = 0.04
    can_collide = ~np.eye(3, dtype=bool)
    vf, ee, vp = candidates(x0, x1, edges, faces, body, radius)
    assert vf.dtype == np.int64 and ee.dtype == np.int64 and vp.shape == (0,)
    assert np.all(ee[:, 0] < ee[:, 1])
    vf_set, ee_set = as_set(vf), as_set(ee)
    ref_vf, ref_ee = brute_force_pairs(x0, x1, edges, faces, body, radius, can_collide)
    assert vf_set == ref_vf
    assert ee_set == ref_ee
    assert np.all(vf[:, 0] < n_surface), "an interior vertex became a candidate"
    close_vf, close_ee = close_pairs(x0, x1, edges, faces, body, radius, can_collide, n_surface)
    assert len(close_vf) > 20 and len(close_ee) > 20  # the check is not vacuous
    assert close_vf <= vf_set
    assert close_ee <= ee_set
    # far fewer candidates than all pairs of different bodies
    assert len(vf_set) < 0.2 * n_surface * len(faces) * 2 / 3


def test_static_positions_and_zero_radius():
    rng = np.random.default_rng(2)
    x0, _, edges, faces, body, _ = scene(rng)
    can_collide = ~np.eye(3, dtype=bool)
    for radius in (0.0, 0.02):
        vf, ee, _ = candidates(x0, x0, edges, faces, body, radius)
        ref_vf, ref_ee = brute_force_pairs(x0, x0, edges, faces, body, radius, can_collide)
        assert as_set(vf) == ref_vf and as_set(ee) == ref_ee


def test_can_collide_matrix_and_self_contact():
    rng = np.random.default_rng(3)
    x0, x1, edges, faces, body, _ = scene(rng)
    can_collide = np.array([[True, True, False], [True, False, True], [False, True, False]])
    vf, ee, _ = candidates(x0, x1, edges, faces, body, 0.05, can_collide=can_collide)
    ref_vf, ref_ee = brute_force_pairs(x0, x1, edges, faces, body, 0.05, can_collide)
    assert as_set(vf) == ref_vf and as_set(ee) == ref_ee
    vf_bodies = np.stack([body[vf[:, 0]], body[faces[vf[:, 1], 0]]], axis=1)
    assert np.any(np.all(vf_bodies == 0, axis=1)), "body 0 self-contact pairs expected"
    assert not np.any(np.all(vf_bodies == 1, axis=1))
    assert not np.any((vf_bodies == [0, 2]).all(axis=1) | (vf_bodies == [2, 0]).all(axis=1))
    for v, f in vf:
        assert v not in faces[f]
    for a, b in ee:
        assert not set(edges[a]) & set(edges[b])


def test_plane_candidates_brute_force():
    rng = np.random.default_rng(4)
    x0, x1, edges, faces, body, n_surface = scene(rng)
    for _ in range(5):
        origin = rng.uniform(-0.3, 0.3, 3)
        normal = rng.normal(0, 1, 3) * rng.uniform(0.1, 5)
        radius = rng.uniform(0.0, 0.1)
        subset = rng.choice(n_surface, 60, replace=False)
        for plane_vertices, pool in ((None, np.arange(n_surface)), (subset, subset)):
            _, _, vp = candidates(x0, x1, edges, faces, body, radius, plane_origin=origin,
                                  plane_normal=normal, plane_vertices=plane_vertices)
            unit = normal / np.linalg.norm(normal)
            expected = []
            for v in pool:
                # distance of the straight path to the plane, by dense sampling + end points
                s = (x0[v] + np.linspace(0, 1, 2001)[:, None] * (x1[v] - x0[v]) - origin) @ unit
                if np.abs(s).min() <= radius or s[0] * s[-1] <= 0:
                    expected.append(v)
            assert set(vp.tolist()) == set(np.asarray(expected).tolist())
            assert vp.dtype == np.int64


def test_invalid_input():
    rng = np.random.default_rng(5)
    x0, x1, edges, faces, body, _ = scene(rng)
    bad_faces = faces.copy()
    bad_faces[3, 0] = np.flatnonzero(body != body[faces[3, 1]])[0]
    with pytest.raises(ValueError, match=r"faces\[3\]"):
        candidates(x0, x1, edges, bad_faces, body, 0.01)
    with pytest.raises(ValueError, match="symmetric"):
        candidates(x0, x1, edges, faces, body, 0.01, can_collide=np.triu(np.ones((3, 3), bool)))
    with pytest.raises(ValueError, match="covering"):
        candidates(x0, x1, edges, faces, body, 0.01, can_collide=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="plane"):
        candidates(x0, x1, edges, faces, body, 0.01, plane_origin=np.zeros(3))
    with pytest.raises(ValueError, match="inflation_radius"):
        candidates(x0, x1, edges, faces, body, -1.0)
    with pytest.raises(ValueError, match="x1"):
        candidates(x0, x1[:-1], edges, faces, body, 0.01)
