"""Contacts of the analytic grasp models: ray casting against a Moller-Trumbore reference, the
footprint grid, first contact and jaw travel on boxes against analytic values, the area-contact
patch against shapely overlaps, misses and the shared grasp perturbation."""

import math

import numpy as np
import pytest
import shapely
import trimesh
from scipy.spatial.transform import Rotation

from ipcgrasp.baselines.contacts import (
    EXTRA_OPENING,
    SILICONE_DEPTH,
    cast_rays,
    footprint_grid,
    grasp_contacts,
    pad_footprint,
    perturbed_grasp,
)
from ipcgrasp.geometry.pads import pad_outline
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import perturb_grasp

TOOLTIP_DEPTH = 0.160098  # the YuMi tooltips' offset along the gripper z axis (DATA.md section 3)
OPENING = Gripper.yumi().max_opening + EXTRA_OPENING  # the jaws start this far apart


def top_down_grasp(center, closing_axis=(0.0, 1.0, 0.0)) -> np.ndarray:
    """Gripper pose approaching straight down (gripper z = -world z) with the jaws closing along
    the horizontal `closing_axis` and the tooltip origins' midpoint at `center`."""
    x = np.asarray(closing_axis, dtype=float) / np.linalg.norm(closing_axis)
    z = np.array([0.0, 0.0, -1.0])
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    pose[:3, 3] = np.asarray(center, dtype=float) - pose[:3, :3] @ [0.0, 0.0, TOOLTIP_DEPTH]
    return pose


def box_object(extents, mass=0.1, transform=None) -> GraspObject:
    """A box of `extents` (m) centred at its frame's origin (moved by `transform`)."""
    return GraspObject.from_mesh(trimesh.creation.box(extents=extents, transform=transform), mass, "box")


def no_noise(**kwargs) -> SimParams:
    return SimParams(noise_translation=0.0, noise_rotation=0.0, **kwargs)


def moller_trumbore(origin, direction, triangles):
    """Reference ray-triangle intersection distances (T,) of one ray with every triangle (nan where
    it misses), the textbook algorithm in plain NumPy."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    e1, e2 = b - a, c - a
    h = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, h)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = origin - a
        u = np.einsum("ij,ij->i", s, h) / det
        q = np.cross(s, e1)
        v = q @ direction / det
        t = np.einsum("ij,ij->i", e2, q) / det
    t[(np.abs(det) < 1e-15) | (u < 0.0) | (v < 0.0) | (u + v > 1.0)] = np.nan
    return t


def test_cast_rays_matches_moller_trumbore_reference():
    rng = np.random.default_rng(0)
    mesh = trimesh.creation.icosphere(2, radius=0.02)
    mesh.apply_transform(trimesh.transformations.random_rotation_matrix(rng.random(3)))
    mesh.apply_translation([0.001, -0.002, 0.03])
    soup = rng.uniform(-0.02, 0.02, (40, 3, 3)) + [0.0, 0.0, 0.03]
    triangles = np.vstack([mesh.triangles, soup])
    origins = rng.uniform(-0.025, 0.025, (400, 2))
    distance, face = cast_rays(origins, triangles, 0.045)
    for k, (x, y) in enumerate(origins):
        hits = moller_trumbore(np.array([x, y, 0.0]), np.array([0.0, 0.0, 1.0]), triangles)
        hits[~((hits >= 0.0) & (hits <= 0.045))] = np.nan
        if np.all(np.isnan(hits)):
            assert face[k] == -1 and distance[k] == np.inf
        else:
            assert distance[k] == pytest.approx(np.nanmin(hits), abs=1e-12)
            assert hits[face[k]] == pytest.approx(distance[k], abs=1e-12)
    assert np.isfinite(distance).sum() > 150  # the sphere is hit by many rays


def test_cast_rays_does_not_leak_through_shared_edges_and_vertices():
    # a flat square split along its diagonal, and a fan of triangles around a vertex at the origin
    square = np.array([[[-1, -1, 1], [1, -1, 1], [1, 1, 1]], [[-1, -1, 1], [1, 1, 1], [-1, 1, 1]]], dtype=float)
    t = np.linspace(-1.0, 1.0, 41)
    diagonal = np.column_stack([t, t])
    distance, face = cast_rays(diagonal, square)
    assert np.all(distance == 1.0) and np.all(face >= 0)
    angles = np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)
    rim = np.column_stack([np.cos(angles), np.sin(angles), np.full(8, 2.0)])
    fan = np.array([[[0.0, 0.0, 1.0], rim[i], rim[(i + 1) % 8]] for i in range(8)])
    distance, _ = cast_rays(np.zeros((1, 2)), fan)
    assert distance[0] == 1.0


def test_cast_rays_skips_faces_parallel_to_the_rays_and_behind_the_origin():
    vertical = np.array([[[0.0, -1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]])
    behind = np.array([[[-1.0, -1.0, -0.5], [1.0, -1.0, -0.5], [0.0, 1.0, -0.5]]])
    distance, face = cast_rays(np.zeros((1, 2)), np.vstack([vertical, behind]))
    assert face[0] == -1 and distance[0] == np.inf
    with pytest.raises(ValueError, match="origins"):
        cast_rays(np.zeros((3, 3)), behind)


@pytest.mark.parametrize("kind", ["rounded", "rectangular"])
def test_footprint_grid_tiles_the_pad_outline(kind):
    footprint = pad_footprint(kind)
    polygon = pad_outline(kind)
    assert footprint.area == pytest.approx(polygon.area, rel=1e-12)
    assert np.all(shapely.contains_xy(polygon.buffer(1e-12), footprint.points[:, 0], footprint.points[:, 1]))
    for corner in np.asarray(polygon.exterior.coords)[:-1]:
        assert np.min(np.linalg.norm(footprint.boundary - corner, axis=1)) < 1e-15
    gaps = np.linalg.norm(np.diff(np.vstack([footprint.boundary, footprint.boundary[:1]]), axis=0), axis=1)
    assert gaps.max() <= footprint.spacing + 1e-15
    square = footprint_grid([(0.0, 0.0), (4e-3, 0.0), (4e-3, 3e-3), (0.0, 3e-3)], 1e-3)
    assert len(square.points) == 12 and np.allclose(square.areas, 1e-6)


def test_first_contact_on_a_centred_box_gives_the_analytic_travel_and_full_patch():
    width = 0.03
    obj = box_object([0.05, width, 0.05])
    contacts = grasp_contacts(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    footprint = pad_footprint()
    assert contacts.hit
    for jaw, sign in zip(contacts.jaws, (1.0, -1.0)):
        assert jaw.travel == pytest.approx(0.5 * (OPENING - width), abs=1e-12)
        assert np.allclose(jaw.first_normal, [0.0, -sign, 0.0])
        assert jaw.first_point[1] == pytest.approx(-sign * width / 2, abs=1e-12)
        # the face covers the pad: the patch is the whole footprint at uniform depth
        assert jaw.patch_projected_areas.sum() == pytest.approx(footprint.area, rel=1e-12)
        assert jaw.patch_areas.sum() == pytest.approx(footprint.area, rel=1e-12)
        assert np.allclose(jaw.patch_depths, SILICONE_DEPTH, atol=1e-12)
        assert np.allclose(jaw.patch_points[:, 1], -sign * width / 2, atol=1e-12)
        assert not jaw.start_inside
    assert contacts.width == pytest.approx(width, abs=1e-12)
    assert contacts.center_of_mass == pytest.approx([0.0, 0.0, 0.026])  # resting 1 mm above ground


def test_jaw_travel_follows_an_off_centre_box():
    shift, width = 0.004, 0.02
    obj = box_object([0.05, width, 0.05], transform=trimesh.transformations.translation_matrix([0.0, shift, 0.0]))
    contacts = grasp_contacts(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    # jaw 0 sits at -y and closes along +y, jaw 1 the other way
    travels = [jaw.travel for jaw in contacts.jaws]
    assert travels == pytest.approx([0.5 * (OPENING - width) + shift, 0.5 * (OPENING - width) - shift], abs=1e-12)
    assert contacts.width == pytest.approx(width, abs=1e-12)


@pytest.mark.parametrize("angle", [0.05, 0.3, -0.6])
def test_first_contact_on_a_tilted_face_is_exact_and_the_patch_is_the_depth_band(angle):
    # a box turned about the vertical: its face meets the pad at `angle`, so the pad's depth into
    # it varies linearly across the pad and only a band of the footprint lies within the silicone
    # depth (for the larger angles)
    rotation = trimesh.transformations.rotation_matrix(angle, [0.0, 0.0, 1.0])
    obj = box_object([0.08, 0.03, 0.05], transform=rotation)
    contacts = grasp_contacts(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    jaw = contacts.jaws[0]
    pose = jaw.tooltip_pose
    # the face y = -15 mm of the box, in the tooltip frame: points p with n . p = -0.015
    normal = rotation[:3, :3] @ [0.0, -1.0, 0.0]
    n_local = pose[:3, :3].T @ normal
    offset = 0.015 + normal @ contacts.object_pose[:3, 3] - normal @ pose[:3, 3]

    def face_depth(xy):  # distance along the tooltip z axis from the pad plane to the face
        return (offset - xy @ n_local[:2]) / n_local[2]

    polygon = pad_outline()
    corners = np.asarray(polygon.exterior.coords)[:-1]
    assert jaw.travel == pytest.approx(face_depth(corners).min(), abs=1e-12)
    first_local = pose[:3, :3].T @ (jaw.first_point - pose[:3, 3])
    assert face_depth(first_local[:2]) == pytest.approx(jaw.travel, abs=1e-12)
    assert np.allclose(jaw.first_normal, normal)
    # patch = footprint points whose depth is within the silicone depth of first contact
    slope = -n_local[:2] / n_local[2]
    direction = slope / np.linalg.norm(slope)
    along = np.array([-direction[1], direction[0]])
    limit = (jaw.travel + SILICONE_DEPTH - face_depth(np.zeros(2))) / np.linalg.norm(slope)
    band = shapely.Polygon([*(limit * direction + s * along for s in (-1, 1)),
                            *(-direction + s * along for s in (1, -1))])
    footprint = pad_footprint()
    within = face_depth(footprint.points) <= jaw.travel + SILICONE_DEPTH
    assert jaw.patch_projected_areas.sum() == pytest.approx(footprint.areas[within].sum(), rel=1e-12)
    # the band's edge runs along the grid's columns here: whole cells fall in or out
    assert jaw.patch_projected_areas.sum() == pytest.approx(polygon.intersection(band).area,
                                                             abs=footprint.spacing * 0.022)
    assert np.all((jaw.patch_depths >= 0.0) & (jaw.patch_depths <= SILICONE_DEPTH + 1e-12))
    assert jaw.patch_areas == pytest.approx(jaw.patch_projected_areas / abs(n_local[2]))


def test_patch_of_a_partly_covered_pad_is_the_footprint_overlap():
    # the box's top edge crosses the pad: the patch is the part of the footprint below it
    top = 0.003  # box top, relative to the tooltips' height
    obj = box_object([0.05, 0.03, 0.04], transform=trimesh.transformations.translation_matrix([0, 0, top - 0.02]))
    contacts = grasp_contacts(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    for jaw in contacts.jaws:
        # tooltip x points down: the box covers tooltip x >= -top
        covered = pad_outline().intersection(shapely.box(-top, -1.0, 1.0, 1.0)).area
        assert jaw.patch_projected_areas.sum() == pytest.approx(covered, rel=0.02)
        assert jaw.travel == pytest.approx(0.5 * (OPENING - 0.03), abs=1e-12)


def test_a_box_beside_the_jaws_is_a_miss_and_one_overlapping_a_pad_starts_inside():
    obj = box_object([0.03, 0.03, 0.03])
    beside = grasp_contacts(obj, np.eye(4), top_down_grasp([0.06, 0.0, 0.0]))
    assert not beside.hit and not any(jaw.hit for jaw in beside.jaws) and beside.clear
    assert math.isnan(beside.width) and math.isnan(beside.jaws[0].travel)
    assert beside.jaws[0].patch_points.shape == (0, 3)
    # 55 mm wide: the real gripper (50 mm) starts inside it, the extra opening clears it
    wide = box_object([0.03, 0.055, 0.03])
    real = grasp_contacts(wide, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), extra_opening=0.0)
    assert all(jaw.start_inside for jaw in real.jaws) and not real.clear
    opened = grasp_contacts(wide, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    assert opened.clear and opened.opening == pytest.approx(OPENING)
    assert opened.width == pytest.approx(0.055, abs=1e-12)


def test_a_sliver_between_the_cell_rays_still_gives_a_one_point_patch():
    # a thin plate whose edge pokes 0.1 mm into the pad's side: no cell centre sees it
    half_width = 0.5 * np.ptp(pad_footprint().polygon[:, 1])
    plate = box_object([0.03, 0.03, 0.002], mass=0.01)
    grasp = top_down_grasp([0.0, 0.0, 0.0])
    # move the gripper sideways along its y axis (world x) so the plate's edge meets the pad's rim
    grasp[:3, 3] += [0.015 + half_width - 1e-4, 0.0, 0.0]
    contacts = grasp_contacts(plate, np.eye(4), grasp)
    for jaw in contacts.jaws:
        assert jaw.hit and len(jaw.patch_points) == 1
        assert jaw.patch_points[0] == pytest.approx(jaw.first_point)
        assert 0.0 < jaw.patch_projected_areas[0] <= pad_footprint().spacing ** 2 * (1.0 + 1e-12)


def test_perturbed_grasp_is_the_simulators_perturbation():
    grasp = top_down_grasp([0.01, 0.02, 0.03])
    params = SimParams(noise_translation=2e-3, noise_rotation=0.01)
    expected = perturb_grasp(grasp, np.random.default_rng(7), 2e-3, 0.01)
    assert np.array_equal(perturbed_grasp(grasp, params, 7), expected)
    assert not np.allclose(perturbed_grasp(grasp, params, 8), expected)
    assert np.array_equal(perturbed_grasp(grasp, no_noise(), 7), grasp)


def test_contacts_follow_the_object_pose():
    # turning the object and the grasp together by any rigid motion moves the contacts with them
    obj = box_object([0.04, 0.03, 0.02])
    grasp = top_down_grasp([0.002, 0.001, 0.0])
    motion = np.eye(4)
    motion[:3, :3] = Rotation.from_euler("z", 0.7).as_matrix()
    motion[:3, 3] = [0.1, -0.2, 0.05]
    base = grasp_contacts(obj, np.eye(4), grasp)
    moved = grasp_contacts(obj, motion, motion @ grasp)
    for a, b in zip(base.jaws, moved.jaws):
        assert b.travel == pytest.approx(a.travel, abs=1e-12)
        assert b.patch_projected_areas.sum() == pytest.approx(a.patch_projected_areas.sum(), rel=1e-12)
        shift = moved.object_pose @ np.linalg.inv(base.object_pose)
        assert b.first_point == pytest.approx(trimesh.transform_points(a.first_point[None], shift)[0], abs=1e-12)
