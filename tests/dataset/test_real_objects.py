"""The sampler on real meshes (benchmarks/objects.py, from pybullet_data): every grasp it emits
starts with both jaws, opened to the widest, clear of the object and above the ground, checked
by an independent query (dense jaw surface samples against the object's triangles, the exact
point-triangle distance of every pair that can be nearer than the clearance)."""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.dataset.antipodal import SamplerSettings, sample_antipodal_grasps
from ipcgrasp.geometry import backing_plate, pad_surface
from ipcgrasp.geometry.repair import point_triangle_distance
from ipcgrasp.grasp.gripper import Gripper

_spec = importlib.util.spec_from_file_location("objects", Path(__file__).parents[2] / "benchmarks" / "objects.py")
objects = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("objects", objects)  # its dataclass looks its module up there
_spec.loader.exec_module(objects)


def nearest_distance(points: np.ndarray, mesh: trimesh.Trimesh, reach: float) -> float:
    """min(reach, the distance (m) from the nearest of `points` (n, 3) to the triangles of `mesh`):
    the exact distance of every point-triangle pair that can be nearer than `reach`. A triangle
    lies within its bounding sphere (centre: its centroid), so a point farther than reach + the
    sphere's radius from the centroid is farther than `reach` from the triangle."""
    from scipy.spatial import cKDTree

    triangles = np.asarray(mesh.triangles)
    centres = triangles.mean(axis=1)
    radii = np.linalg.norm(triangles - centres[:, None], axis=2).max(axis=1)
    near = cKDTree(points).query_ball_point(centres, reach + radii + 1e-9)
    triangle = np.repeat(np.arange(len(triangles)), [len(candidates) for candidates in near])
    point = np.fromiter((p for candidates in near for p in candidates), dtype=np.int64, count=len(triangle))
    nearest = reach
    for chunk in range(0, len(point), 100_000):
        p, t = point[chunk:chunk + 100_000], triangle[chunk:chunk + 100_000]
        nearest = min(nearest, point_triangle_distance(points[p], triangles[t]).min())
    return nearest


def test_nearest_distance_is_the_distance_to_the_nearest_triangle_within_reach():
    box = trimesh.creation.box(extents=[0.02, 0.02, 0.02])
    points = np.array([[0.0, 0.0, 0.0105], [0.013, 0.0, 0.0], [0.0, -0.02, 0.02]])  # 0.5, 3 and 14.1 mm away
    assert nearest_distance(points, box, 1e-3) == pytest.approx(5e-4)
    assert nearest_distance(points[1:], box, 5e-3) == pytest.approx(3e-3)
    assert nearest_distance(points[2:], box, 5e-3) == 5e-3  # nothing within reach


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mug", "teddy", "duck", "bunny"])
def test_sampled_grasps_start_clear_of_object_and_ground(name):
    objects.skip_without_pybullet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = GraspObject.from_mesh(objects.load(name).mesh, 0.05, name, repair=True)
    settings = SamplerSettings(mu=0.4)
    sampling = sample_antipodal_grasps(obj, 12, settings, seed=1)
    assert len(sampling.candidates) == 12
    world = obj.mesh.copy().apply_transform(sampling.object_pose)
    rng = np.random.default_rng(0)
    pad, backing = pad_surface("rounded"), backing_plate()
    local = np.vstack([pad.vertices, backing.vertices, trimesh.sample.sample_surface(pad, 3000, seed=rng)[0],
                       trimesh.sample.sample_surface(backing, 3000, seed=rng)[0]])
    gripper = Gripper.yumi()
    for candidate in sampling.candidates:
        for pose in gripper.tooltip_poses(candidate.grasp_pose, gripper.max_opening):
            points = trimesh.transform_points(local, pose)
            assert points[:, 2].min() >= settings.ground_clearance - 1e-9
            assert not world.contains(points).any()
            clear = settings.clearance + settings.noise_margin - 1e-6
            assert nearest_distance(points, world, clear) >= clear


@pytest.mark.slow
def test_the_bunny_gives_100_grasps_each_axis_inside_both_friction_cones():
    """The Stanford bunny rests 28 mm high and most of its antipodal pairs squeeze it vertically
    (the lower jaw underground): the sampler still gives 100 grasps within its default attempts,
    and every axis lies inside the friction cone at both contacts, the normals recomputed with
    trimesh (the face of the placed mesh nearest each contact), the ray leaving the solid at q."""
    objects.skip_without_pybullet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = GraspObject.from_mesh(objects.load("bunny").mesh, 0.05, "bunny", repair=True)
    settings = SamplerSettings()
    sampling = sample_antipodal_grasps(obj, 100, settings, seed=0)
    assert len(sampling.candidates) == 100
    assert len(sampling.candidates) + sum(sampling.rejections.values()) == sampling.attempts
    world = obj.mesh.copy().apply_transform(sampling.object_pose)
    contacts = np.vstack([c.contacts for c in sampling.candidates])
    triangles = np.asarray(world.triangles)
    nearest = trimesh.triangles.closest_point(np.tile(triangles, (len(contacts), 1, 1)),
                                              np.repeat(contacts, len(triangles), axis=0))
    distance = np.linalg.norm(nearest - np.repeat(contacts, len(triangles), axis=0), axis=1).reshape(len(contacts), -1)
    assert distance.min(axis=1).max() < 1e-9  # on the surface
    normals = world.face_normals[distance.argmin(axis=1)].reshape(-1, 2, 3)
    axes = np.array([c.axis for c in sampling.candidates])
    cone = np.arctan(settings.mu)
    assert np.all(np.einsum("ij,ij->i", axes, -normals[:, 0]) >= np.cos(cone) - 1e-9)  # at p, inward
    assert np.all(np.einsum("ij,ij->i", axes, normals[:, 1]) >= np.cos(cone) - 1e-9)  # at q, outward
    midpoints = contacts.reshape(-1, 2, 3).mean(axis=1)
    assert world.contains(midpoints).all()
