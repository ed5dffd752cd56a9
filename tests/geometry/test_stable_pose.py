"""The most probable resting pose: trimesh's own result on small convex hulls (the poses every
dataset so far was made with), the same poses and probabilities from the vectorised rules on
any hull, and a large hull resting on one of its faces."""

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.geometry.stable_pose import TRIMESH_HULL_FACES, most_stable_pose, pose_probabilities


def trimesh_pose(mesh):
    transforms, probabilities = trimesh.poses.compute_stable_poses(mesh, n_samples=1)
    return transforms[int(np.argmax(probabilities))]


def bumpy_ellipsoid(subdivisions, seed=0):
    """An ellipsoid (30 x 21 x 12 mm semi-axes) with its vertices moved radially by up to 2 %:
    a hull of about as many faces as the mesh, and one most probable pose."""
    sphere = trimesh.creation.icosphere(subdivisions)
    radial = 1.0 + 0.02 * np.random.default_rng(seed).uniform(-1.0, 1.0, len(sphere.vertices))
    return trimesh.Trimesh(sphere.vertices * radial[:, None] * [0.03, 0.021, 0.012], sphere.faces)


@pytest.mark.parametrize("name, mesh, tied", [
    ("bundled cube", None, 6),
    ("box on its largest face", trimesh.creation.box((0.03, 0.04, 0.024)), 2),
    ("own-data box", trimesh.creation.box((0.03, 0.03, 0.03)), 6),
    ("cylinder", trimesh.creation.cylinder(0.015, 0.06, sections=64), 2),
])
def test_small_hulls_rest_as_trimesh_puts_them_turned_least_among_ties(name, mesh, tied):
    """The pose is one of trimesh's most probable ones (to the bit); among the poses tied for the
    most probable (a cube's six faces, a box's two largest, a cylinder's two ends; in an order
    that changes with trimesh's, scipy's and numpy's versions) the one with the smallest rotation
    from the mesh as given: a mesh already resting on such a face is not turned."""
    if mesh is None:
        mesh = GraspObject.from_file(resolve_data_dir() / "object_meshes" / "cube_3cm.obj", 0.003).mesh
    assert len(mesh.convex_hull.faces) <= TRIMESH_HULL_FACES
    transforms, probabilities = trimesh.poses.compute_stable_poses(mesh, n_samples=1)
    best = [t for t, p in zip(transforms, probabilities) if p >= max(probabilities) - 1e-9]
    assert len(best) == tied
    pose = GraspObject.from_mesh(mesh, 0.01, density_range=(0, np.inf)).stable_pose()
    assert any(np.array_equal(pose, t) for t in best)
    assert np.trace(pose[:3, :3]) == max(np.trace(t[:3, :3]) for t in best)


@pytest.mark.parametrize("mesh", [
    trimesh.creation.box((0.03, 0.04, 0.024)),
    trimesh.creation.cylinder(0.015, 0.06, sections=64),
    trimesh.creation.capsule(0.05, 0.01),
    trimesh.creation.icosphere(2, 0.03),
    bumpy_ellipsoid(3),
], ids=["box", "cylinder", "capsule", "sphere", "bumpy ellipsoid"])
def test_the_vectorised_rules_give_trimeshs_poses_and_probabilities(mesh):
    transforms, expected = trimesh.poses.compute_stable_poses(mesh, n_samples=1)
    normals, probabilities = pose_probabilities(mesh.convex_hull, mesh.center_mass)

    def by_normal(normals, values):
        return {tuple(np.round(n, 3) + 0.0): v for n, v in zip(normals, values)}

    ours, theirs = by_normal(normals, probabilities), by_normal(-transforms[:, 2, :3], expected)
    assert ours.keys() == theirs.keys()
    assert max(abs(ours[k] - theirs[k]) for k in ours) < 1e-12
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-9)


def test_a_large_hull_takes_trimeshs_most_probable_pose():
    mesh = bumpy_ellipsoid(3)
    assert len(mesh.convex_hull.faces) > TRIMESH_HULL_FACES
    np.testing.assert_allclose(most_stable_pose(mesh), trimesh_pose(mesh), atol=1e-12)


def test_a_fine_sphere_rests_on_one_of_its_faces():
    """A 20,480-face sphere, each face of which is a stable pose: the chosen pose is a rotation
    that puts one face flat on the ground z = 0 and the rest above it."""
    sphere = trimesh.creation.icosphere(5, 0.03)
    pose = GraspObject.from_mesh(sphere, 0.05, "sphere").stable_pose()
    np.testing.assert_allclose(pose[:3, :3] @ pose[:3, :3].T, np.eye(3), atol=1e-12)
    assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)
    heights = trimesh.transform_points(sphere.vertices, pose)[:, 2]
    assert heights.min() == pytest.approx(0.0, abs=1e-12)
    on_ground = np.flatnonzero(np.abs(heights) < 1e-9)
    faces_on_ground = np.all(np.isin(sphere.faces, on_ground), axis=1)
    assert faces_on_ground.sum() == 1
