"""Scene placement and the exact distance between closed surfaces, against an ipctk brute force."""

import ipctk
import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.geometry import make_pad
from ipcgrasp.grasp.scene import SolidDistance, _segments_cross_triangles, mesh_distance, place_scene, solid_distance

MM = 1e-3


def _edges(faces):
    return np.unique(np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1), axis=0)


def _inside_convex(points, mesh):
    normals, origins = mesh.face_normals, mesh.triangles[:, 0]
    return np.all(np.einsum("pfk,fk->pf", points[:, None] - origins[None], normals) < 0.0, axis=1)


def brute_force(a: trimesh.Trimesh, b: trimesh.Trimesh):
    """(min distance over all vertex-triangle and edge-edge pairs of the two meshes (ipctk),
    whether an edge of one crosses a triangle of the other (ipctk))."""
    best = np.inf
    crossing = False
    for m, n in ((a, b), (b, a)):
        for p in m.vertices:
            for t in n.vertices[n.faces]:
                best = min(best, ipctk.point_triangle_distance(p, t[0], t[1], t[2]))
        for e in m.vertices[_edges(m.faces)]:
            for t in n.vertices[n.faces]:
                crossing |= ipctk.is_edge_intersecting_triangle(e[0], e[1], t[0], t[1], t[2])
    for ea in a.vertices[_edges(a.faces)]:
        for eb in b.vertices[_edges(b.faces)]:
            best = min(best, ipctk.edge_edge_distance(ea[0], ea[1], eb[0], eb[1]))
    return np.sqrt(best), crossing


def _posed(mesh, rng, spread):
    pose = np.eye(4)
    pose[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return mesh.copy().apply_transform(pose)


def test_distance_matches_ipctk_brute_force_for_random_convex_pairs():
    rng = np.random.default_rng(0)
    box = trimesh.creation.box([20 * MM, 30 * MM, 10 * MM])
    sphere = trimesh.creation.icosphere(1, 10 * MM)
    n_separated = n_overlapping = 0
    for _ in range(30):
        a, b = _posed(box, rng, 0.0), _posed(sphere, rng, 30 * MM)
        expected, crossing = brute_force(a, b)
        overlapping = crossing or _inside_convex(a.vertices, b).any() or _inside_convex(b.vertices, a).any()
        d = mesh_distance(a.vertices, a.faces, b.vertices, b.faces)
        if overlapping:
            n_overlapping += 1
            assert d == 0.0
        else:
            n_separated += 1
            assert d == pytest.approx(expected, rel=1e-9, abs=1e-15)
            assert mesh_distance(b.vertices, b.faces, a.vertices, a.faces) == pytest.approx(d, rel=1e-12)
            assert mesh_distance(a.vertices, a.faces, b.vertices, b.faces, cutoff=0.5 * d) == 0.5 * d
            assert mesh_distance(a.vertices, a.faces, b.vertices, b.faces, cutoff=2.0 * d) == pytest.approx(d)
    assert n_separated >= 10 and n_overlapping >= 3


def test_distance_at_degenerate_contacts_is_exact():
    box = trimesh.creation.box([10 * MM] * 3)
    # face to face, parallel, offset sideways: every closest pair is degenerate (parallel edges)
    other = box.copy().apply_translation([11.5 * MM, 3 * MM, 0.0])
    assert mesh_distance(box.vertices, box.faces, other.vertices, other.faces) == pytest.approx(1.5 * MM, rel=1e-12)
    # crossed edges: the top edge of one (along y) under the bottom edge of the other (along x)
    lower = box.copy().apply_transform(trimesh.transformations.rotation_matrix(np.pi / 4, [0, 1, 0]))
    upper = box.copy().apply_transform(trimesh.transformations.rotation_matrix(np.pi / 4, [1, 0, 0]))
    gap = 2 * MM
    upper.apply_translation([0.0, 0.0, lower.vertices[:, 2].max() + gap - upper.vertices[:, 2].min()])
    assert mesh_distance(lower.vertices, lower.faces, upper.vertices, upper.faces) == pytest.approx(gap, rel=1e-12)
    # an edge parallel to a face above it
    upper.apply_translation([0.0, 0.0, 5 * MM - lower.vertices[:, 2].max()])
    assert mesh_distance(box.vertices, box.faces, upper.vertices, upper.faces) == pytest.approx(gap, rel=1e-12)
    # touching faces
    touching = box.copy().apply_translation([10 * MM, 0.0, 0.0])
    assert mesh_distance(box.vertices, box.faces, touching.vertices, touching.faces) == pytest.approx(0.0, abs=1e-15)


def test_overlap_without_a_vertex_inside_is_caught_by_edge_crossings():
    cube = trimesh.creation.box([10 * MM] * 3)
    fin = trimesh.creation.box([30 * MM, 2 * MM, 2 * MM])  # pierces the cube, ends outside
    assert not _inside_convex(fin.vertices, cube).any() and not _inside_convex(cube.vertices, fin).any()
    assert mesh_distance(cube.vertices, cube.faces, fin.vertices, fin.faces) == 0.0
    assert mesh_distance(fin.vertices, fin.faces, cube.vertices, cube.faces, cutoff=1 * MM) == 0.0


def test_containment_gives_zero_in_both_argument_orders():
    big = trimesh.creation.box([30 * MM] * 3)
    small = trimesh.creation.icosphere(1, 5 * MM).apply_translation([3 * MM, -2 * MM, 4 * MM])
    for cutoff in (np.inf, 1 * MM):
        assert mesh_distance(big.vertices, big.faces, small.vertices, small.faces, cutoff) == 0.0
        assert mesh_distance(small.vertices, small.faces, big.vertices, big.faces, cutoff) == 0.0
        # an inside-out container (winding number -1 inside) contains it all the same
        assert mesh_distance(small.vertices, small.faces, big.vertices, big.faces[:, ::-1], cutoff) == 0.0


def test_non_convex_hole_and_multiple_components():
    ring = trimesh.creation.annulus(10 * MM, 20 * MM, 10 * MM, sections=16)
    inner = trimesh.creation.box([6 * MM] * 3)  # inside the hole, not inside the solid
    expected, crossing = brute_force(ring, inner)
    assert not crossing
    assert mesh_distance(ring.vertices, ring.faces, inner.vertices, inner.faces) == pytest.approx(expected, rel=1e-12)
    # a second component buried in the ring's solid makes the union overlap
    buried = trimesh.creation.box([2 * MM] * 3).apply_translation([15 * MM, 0.0, 0.0])
    union = trimesh.util.concatenate([inner, buried])
    assert mesh_distance(ring.vertices, ring.faces, union.vertices, union.faces) == 0.0


def test_vertices_outside_the_surface_are_ignored():
    pad = make_pad("rounded")
    box = trimesh.creation.box([10 * MM] * 3).apply_translation([0.0, 0.0, 8 * MM])
    surface = pad.surface_mesh()
    compact = trimesh.Trimesh(surface.vertices, surface.faces)  # drops the interior tet nodes
    assert len(compact.vertices) < len(pad.nodes)
    d = mesh_distance(pad.nodes, pad.surface_faces, box.vertices, box.faces)
    assert d == pytest.approx(3 * MM, rel=1e-12)
    assert d == mesh_distance(compact.vertices, compact.faces, box.vertices, box.faces)


def test_one_solid_distance_answers_many_placements_as_a_fresh_one_would():
    """The connectivity work is done once; each placement's answer is the same to the last bit."""
    rng = np.random.default_rng(1)
    box = trimesh.creation.box([20 * MM, 30 * MM, 10 * MM])
    sphere = trimesh.creation.icosphere(1, 10 * MM)
    kept = SolidDistance(box.faces, len(box.vertices), sphere.faces, len(sphere.vertices))
    answers = set()
    for _ in range(20):
        a, b = _posed(box, rng, 0.0), _posed(sphere, rng, 30 * MM)
        fresh = SolidDistance(box.faces, len(box.vertices), sphere.faces, len(sphere.vertices))
        for cutoff in (np.inf, 2 * MM):
            d = kept.distance(a.vertices, b.vertices, cutoff)
            assert d == fresh.distance(a.vertices, b.vertices, cutoff)
            answers.add(d)
    assert len(answers) > 10  # placements that differ give different distances


def test_solid_distance_is_kept_per_connectivity():
    box = trimesh.creation.box([1.0] * 3)
    sphere = trimesh.creation.icosphere(1, 1.0)
    kept = solid_distance(box.faces, 8, sphere.faces, len(sphere.vertices))
    assert solid_distance(box.faces.copy(), 8, sphere.faces.copy(), len(sphere.vertices)) is kept
    flipped = solid_distance(box.faces[:, ::-1], 8, sphere.faces, len(sphere.vertices))
    assert flipped is not kept
    with pytest.raises(ValueError, match=r"vertices_b must be a finite \(42, 3\) array"):
        kept.distance(box.vertices, sphere.vertices[:-1])


def test_mesh_distance_rejects_bad_input():
    box = trimesh.creation.box([1.0] * 3)
    with pytest.raises(ValueError, match="cutoff"):
        mesh_distance(box.vertices, box.faces, box.vertices, box.faces, cutoff=0.0)
    with pytest.raises(ValueError, match="faces_b"):
        mesh_distance(box.vertices, box.faces, box.vertices, box.faces + 100)
    with pytest.raises(ValueError, match="vertices_a"):
        mesh_distance(box.vertices[:, :2], box.faces, box.vertices, box.faces)
    with pytest.raises(ValueError, match=r"faces_b\[12\] repeats a vertex"):
        mesh_distance(box.vertices, box.faces, box.vertices + 2.0, np.vstack([box.faces, [[0, 0, 1]]]))


def test_place_scene_rests_the_cube_1mm_above_ground_and_keeps_the_relative_grasp():
    data_dir = resolve_data_dir()
    cube = trimesh.load(data_dir / "object_meshes" / "cube_3cm.obj")
    grasps = load_physical_grasps(data_dir, "cube_3cm")
    for grasp_pose, object_pose in zip(grasps.grasp_poses, grasps.object_poses):
        new_object, new_grasp = place_scene(cube, object_pose, grasp_pose)
        assert trimesh.transform_points(cube.vertices, new_object)[:, 2].min() == pytest.approx(1 * MM, abs=1e-15)
        shift = new_object @ np.linalg.inv(object_pose)
        assert np.allclose(shift[:3, :3], np.eye(3), atol=1e-15) and np.allclose(shift[:2, 3], 0.0, atol=1e-15)
        expected_change = np.zeros((4, 4))
        expected_change[2, 3] = shift[2, 3]
        assert np.allclose(new_grasp - grasp_pose, expected_change, atol=1e-15)
        assert np.allclose(np.linalg.solve(new_grasp, new_object), np.linalg.solve(grasp_pose, object_pose), atol=1e-14)
    _, grasp = place_scene(cube.vertices, np.eye(4), np.eye(4), ground_gap=0.0)
    assert grasp[2, 3] == pytest.approx(15 * MM)
    with pytest.raises(ValueError, match="ground_gap"):
        place_scene(cube, np.eye(4), np.eye(4), ground_gap=-1.0)
    with pytest.raises(ValueError, match="object_pose"):
        place_scene(cube, np.eye(3), np.eye(4))


def test_segment_triangle_crossings_match_ipctk():
    rng = np.random.default_rng(11)
    p, q, a, b, c = rng.normal(size=(5, 3000, 3))
    parallel = np.arange(3000) % 4 == 1  # segments parallel to an edge, some collinear with it
    q[parallel] = p[parallel] + rng.normal(size=(parallel.sum(), 1)) * (b - a)[parallel]
    collinear = np.arange(3000) % 8 == 1
    p[collinear] = a[collinear] + 0.3 * (b - a)[collinear]
    q[collinear] = a[collinear] + rng.normal(size=(collinear.sum(), 1)) * (b - a)[collinear]
    crosses = _segments_cross_triangles(p, q, a, b, c)
    expected = np.array([ipctk.is_edge_intersecting_triangle(*row) for row in zip(p, q, a, b, c)])
    # a segment parallel to the triangle's plane only touches it (distance 0); ipctk counts it
    np.testing.assert_array_equal(crosses[~parallel], expected[~parallel])
    assert not np.any(crosses & ~expected)
    assert crosses.sum() > 100
