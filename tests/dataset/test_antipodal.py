"""Antipodal grasp sampling, checked against closed-form geometry: a box (every antipodal pair
joins opposite faces), a wedge (two faces at a known angle: antipodal iff the cones overlap) and
a sphere (every axis inside a contact's cone is antipodal)."""

import numpy as np
import pytest
import shapely.affinity
import shapely.geometry
import trimesh

from ipcgrasp.dataset.antipodal import SamplerSettings, approach_frame, sample_antipodal_grasps
from ipcgrasp.geometry import backing_plate, pad_surface
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject

MM = 1e-3
BOX = np.array([30.0, 40.0, 24.0]) * MM  # lies on its largest face (30 x 40 mm)
SURFACE_SPACING = 0.3 * MM  # about the spacing of the jaw surface samples below


@pytest.fixture(scope="module")
def box():
    return GraspObject.from_mesh(trimesh.creation.box(BOX), 0.05, "box")


@pytest.fixture(scope="module")
def box_grasps(box):
    return sample_antipodal_grasps(box, 40, SamplerSettings(mu=0.4), seed=3)


def _in_object_frame(sampling, points):
    """World points -> the object's own frame."""
    return trimesh.transform_points(np.atleast_2d(points), np.linalg.inv(sampling.object_pose))


def _distance_to_boxes(points, boxes):
    """Closed-form Euclidean distance of points to a union of axis-aligned solid boxes (lo, hi)."""
    return np.min([np.linalg.norm(np.maximum(np.maximum(lo - points, points - hi), 0.0), axis=1)
                   for lo, hi in boxes], axis=0)


def _jaw_surface_points(grasp_pose, opening, rng):
    """Dense samples and corners of both jaws' surfaces (pad slab and backing plate) in the world,
    built from the geometry module, not from the sampler's or the gripper's distance code."""
    pad, backing = pad_surface("rounded"), backing_plate()
    local = np.vstack([pad.vertices, backing.vertices,
                       trimesh.sample.sample_surface(pad, 20000, seed=rng)[0],
                       trimesh.sample.sample_surface(backing, 20000, seed=rng)[0]])
    poses = Gripper.yumi().tooltip_poses(grasp_pose, opening)
    return np.vstack([trimesh.transform_points(local, pose) for pose in poses])


def test_box_grasps_join_opposite_faces_inside_both_cones(box_grasps):
    assert len(box_grasps.candidates) == 40
    cone = np.arctan(0.4)
    for c in box_grasps.candidates:
        p, q = _in_object_frame(box_grasps, c.contacts)
        axis = np.linalg.inv(box_grasps.object_pose)[:3, :3] @ c.axis
        k = int(np.argmax(np.abs(axis)))
        # from the face through p to the opposite one, the axis within the cone of both (parallel) faces
        assert p[k] == pytest.approx(-np.sign(axis[k]) * BOX[k] / 2, abs=1e-9)
        assert q[k] == pytest.approx(np.sign(axis[k]) * BOX[k] / 2, abs=1e-9)
        assert np.allclose(q, p + c.width * axis, atol=1e-9)
        assert np.all(np.abs([p, q]) <= BOX / 2 + 1e-9)
        assert c.width == pytest.approx(BOX[k] / abs(axis[k]), abs=1e-9)
        angle = np.arccos(abs(axis[k]))
        assert angle <= cone + 1e-9
        assert c.friction_angles == pytest.approx([angle, angle], abs=1e-6)
    # the axes fill the cone, not only the normal (the one-ray rule of old)
    assert max(c.friction_angles[0] for c in box_grasps.candidates) > 0.5 * cone


PAD_REACH = pad_surface("rounded").vertices[:, 0].max()  # how far the pad reaches past its tooltip origin


def _setback(candidate):
    """How far (m) the candidate's contacts lie along its approach from the tooltip origins closed
    to its width, after checking that they lie on the lines through them along the approach."""
    tips = Gripper.yumi().tooltip_poses(candidate.grasp_pose, candidate.width)
    offset = candidate.contacts - tips[:, :3, 3]
    along = offset @ candidate.approach
    assert np.allclose(offset - along[:, None] * candidate.approach, 0.0, atol=1e-4)  # the tooltips' 11 micron y offset
    assert along[0] == pytest.approx(along[1], abs=1e-9)
    return along[0]


def test_box_grasp_frames_follow_the_simulator_convention(box_grasps):
    gripper = Gripper.yumi()
    for c in box_grasps.candidates:
        rotation = c.grasp_pose[:3, :3]
        assert np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-12) and np.linalg.det(rotation) > 0
        assert c.axis @ c.approach == pytest.approx(0.0, abs=1e-12)
        assert c.approach[2] <= 1e-12  # the wrist above the grasp
        # jaw 0's pad faces p, jaw 1's faces q: closing the jaws to the width puts both front faces on them,
        # the contacts between the tooltip origins and the pads' tips
        tips = gripper.tooltip_poses(c.grasp_pose, c.width)
        assert -1e-12 <= _setback(c) <= PAD_REACH - SamplerSettings().tip_margin + 1e-12
        setback = _setback(c)
        if setback > 1e-12:  # moved back toward the noise margin above the ground clearance, or as far as it may go
            settings = SamplerSettings()
            lowest = _lowest_jaw_point(c.grasp_pose, c.width, np.random.default_rng(0))
            assert (lowest == pytest.approx(settings.ground_clearance + settings.noise_margin, abs=1e-9)
                    or setback == pytest.approx(PAD_REACH - settings.tip_margin, abs=1e-12))
        assert np.allclose(tips[0, :3, 2], c.axis) and np.allclose(tips[1, :3, 2], -c.axis)


def _lowest_jaw_point(grasp_pose, width, rng):
    """Lowest world z (m) of both jaws' surfaces from the widest opening to the pads squeezed at
    the contacts (`_jaw_surface_points` at both ends: heights are linear in the opening)."""
    pad_depth = 0.8 * 3e-3  # DATA.md section 3: the pad is 2.4 mm thick after the 0.8 scale
    return min(_jaw_surface_points(grasp_pose, opening, rng)[:, 2].min()
               for opening in (Gripper.yumi().max_opening, width - 2 * pad_depth))


def test_a_flat_box_is_gripped_near_the_fingertips_clear_of_the_ground():
    """A 50 x 25 x 8 mm box lying flat: with the contacts at the tooltip origins the pads' tips
    (8 mm past them) would go 3-5 mm under the ground, so every grasp is moved back along its
    approach toward the noise margin above the ground clearance, as far as the contacts may go
    along the pads (the tip margin from their tips): its lowest jaw point ends at that height or
    the contacts at that limit, and never below the clearance. With a tip margin that leaves no
    room the ground rejects every attempt."""
    flat = GraspObject.from_mesh(trimesh.creation.box([0.05, 0.025, 0.008]), 0.02, "flat box")
    settings = SamplerSettings()
    wanted = settings.ground_clearance + settings.noise_margin
    farthest = PAD_REACH - settings.tip_margin
    sampling = sample_antipodal_grasps(flat, 12, settings, seed=0)
    assert len(sampling.candidates) == 12
    rng = np.random.default_rng(0)
    at_limit = 0
    for c in sampling.candidates:
        setback = _setback(c)
        assert 0.0 < setback <= farthest + 1e-12
        lowest = _lowest_jaw_point(c.grasp_pose, c.width, rng)
        assert lowest >= settings.ground_clearance - 1e-12
        at_limit += setback == pytest.approx(farthest, abs=1e-12)
        if setback < farthest - 1e-12:
            assert lowest == pytest.approx(wanted, abs=1e-9)
        unmoved = c.grasp_pose.copy()
        unmoved[:3, 3] += setback * c.approach
        assert _lowest_jaw_point(unmoved, c.width, rng) < settings.ground_clearance
    assert at_limit > 0  # some contacts lie as far along the pads as they may
    _assert_jaws_start_clear(sampling, [(np.array([-0.025, -0.0125, -0.004]), np.array([0.025, 0.0125, 0.004]))], rng)
    none = sample_antipodal_grasps(flat, 1, SamplerSettings(tip_margin=PAD_REACH, max_attempts=2000), seed=0)
    assert none.candidates == [] and none.rejections["ground"] > 0


def _assert_jaws_start_clear(sampling, boxes, rng):
    """Every candidate's jaws (pads and backings) are at least the clearance from the object (a
    union of boxes in its own frame) at the widest opening, and above the ground from there
    until the pads are fully squeezed."""
    settings = SamplerSettings()
    pad_depth = 0.8 * 3e-3  # DATA.md section 3: the pad is 2.4 mm thick after the 0.8 scale
    for c in sampling.candidates:
        points = _jaw_surface_points(c.grasp_pose, Gripper.yumi().max_opening, rng)
        # solids overlap only if the jaw surface enters the object: its samples are then within the spacing
        assert _distance_to_boxes(_in_object_frame(sampling, points), boxes).min() >= settings.clearance - SURFACE_SPACING
        assert points[:, 2].min() >= settings.ground_clearance - 1e-12
        squeezed = _jaw_surface_points(c.grasp_pose, c.width - 2 * pad_depth, rng)
        assert squeezed[:, 2].min() >= settings.ground_clearance - 1e-12


def test_box_grasps_start_clear_of_the_box_and_the_ground(box_grasps):
    _assert_jaws_start_clear(box_grasps, [(-BOX / 2, BOX / 2)], np.random.default_rng(0))


def test_l_shape_grasps_whose_jaws_would_hit_the_other_leg_are_rejected():
    """An L-shaped block (two 12 mm thick legs, 40 mm long, 20 mm deep) standing on its long leg:
    a grasp across one leg near the corner puts a jaw into the other leg."""
    section = shapely.geometry.Polygon([(0, 0), (40, 0), (40, 12), (12, 12), (12, 40), (0, 40)])
    block = trimesh.creation.extrude_polygon(shapely.affinity.scale(section, MM, MM, origin=(0, 0)), 20 * MM)
    block.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))  # section in x-z
    boxes = [(np.array([0, -20, 0]) * MM, np.array([40, 0, 12]) * MM),
             (np.array([0, -20, 0]) * MM, np.array([12, 0, 40]) * MM)]
    assert np.allclose(block.bounds, [[0, -0.02, 0], [0.04, 0, 0.04]])
    sampling = sample_antipodal_grasps(GraspObject.from_mesh(block, 0.03, "L"), 25, seed=2, object_pose=np.eye(4))
    assert len(sampling.candidates) == 25
    _assert_jaws_start_clear(sampling, boxes, np.random.default_rng(1))
    assert sampling.rejections["collision"] > 0


def test_box_rests_on_its_largest_face_and_is_never_grasped_through_the_ground(box_grasps):
    lowest = trimesh.transform_points(trimesh.creation.box(BOX).vertices, box_grasps.object_pose)[:, 2]
    assert lowest.min() == pytest.approx(1 * MM)  # placed 1 mm up, as the simulator places it
    assert lowest.max() - lowest.min() == pytest.approx(BOX.min())
    # a grasp across the top and bottom faces would put the bottom jaw underground: only side pairs,
    # their axes within the cone of a vertical face
    bottom = lowest.min()
    assert all(c.contacts[:, 2].min() > bottom + 1e-9 for c in box_grasps.candidates)
    assert all(abs(c.axis[2]) <= np.sin(np.arctan(0.4)) + 1e-9 for c in box_grasps.candidates)
    assert box_grasps.rejections["ground"] > 0
    assert len(box_grasps.candidates) + sum(box_grasps.rejections.values()) == box_grasps.attempts


def test_box_wider_than_the_gripper_is_grasped_only_across_its_narrow_sides():
    wide = GraspObject.from_mesh(trimesh.creation.box([0.06, 0.03, 0.02]), 0.05, "wide box")
    sampling = sample_antipodal_grasps(wide, 15, seed=1)
    assert sampling.rejections["width"] > 0
    for c in sampling.candidates:  # across the 30 mm sides (the 20 mm ones are top and bottom)
        assert abs(c.axis[1]) >= np.cos(np.arctan(0.4)) - 1e-9
        assert c.width == pytest.approx(0.03 / abs(c.axis[1]), abs=1e-9)


def test_sampling_is_seeded_and_the_first_grasps_do_not_depend_on_n(box):
    few = sample_antipodal_grasps(box, 4, seed=11)
    more = sample_antipodal_grasps(box, 9, seed=11)
    other = sample_antipodal_grasps(box, 4, seed=12)
    for a, b in zip(few.candidates, more.candidates):
        assert np.array_equal(a.grasp_pose, b.grasp_pose) and a.attempt == b.attempt
    assert not np.array_equal(few.candidates[0].grasp_pose, other.candidates[0].grasp_pose)


def _wedge(apex_degrees, height=40 * MM, length=30 * MM):
    """A prism with an isosceles triangle section (apex angle at the top), resting on its base:
    (mesh, the two slanted faces' outward unit normals and a point on each)."""
    half = np.radians(apex_degrees) / 2
    base = height * np.tan(half)
    triangle = shapely.geometry.Polygon([(-base, 0.0), (base, 0.0), (0.0, height)])
    prism = trimesh.creation.extrude_polygon(triangle, length)
    prism.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))  # section in x-z
    normals = np.array([[-np.cos(half), 0.0, np.sin(half)], [np.cos(half), 0.0, np.sin(half)]])
    return prism, normals, np.array([[-base, 0.0, 0.0], [base, 0.0, 0.0]])


@pytest.mark.parametrize("mu, slanted_pairs", [(0.2, False), (0.4, True), (0.8, True)])
def test_wedge_faces_at_30_degrees_are_antipodal_only_when_the_cones_overlap(mu, slanted_pairs):
    """The inward normal of one slanted face and the outward normal of the other are the apex angle
    (30 deg) apart, so an axis inside both friction cones exists iff 2 atan(mu) >= 30 deg: not for
    mu = 0.2 (11.3 deg), for mu = 0.4 (21.8 deg) and 0.8 (38.7 deg). A ray along the inward
    normal alone (the sampler's rule before) finds such pairs only from atan(mu) >= 30 deg."""
    prism, slanted_normals, slanted_points = _wedge(30.0)
    wedge = GraspObject.from_mesh(prism, 0.03, "wedge")
    sampling = sample_antipodal_grasps(wedge, 25, SamplerSettings(mu=mu), seed=5, object_pose=np.eye(4))
    shift = sampling.object_pose[:3, 3]  # placed 1 mm above the ground, not rotated
    assert np.allclose(sampling.object_pose[:3, :3], np.eye(3))
    found = False
    for c in sampling.candidates:
        contacts = c.contacts - shift
        on_slanted = [np.abs((contacts - point) @ normal) < 1e-9
                      for normal, point in zip(slanted_normals, slanted_points)]
        # the sampler's normals and friction angles against the closed-form face normals
        for j, contact in enumerate(contacts):
            faces = [f for f in range(2) if on_slanted[f][j]]
            if faces:
                normal = slanted_normals[faces[0]]
                assert np.allclose(c.normals[j], normal, atol=1e-9)
                inward_angle = np.arccos(np.clip((c.axis if j == 0 else -c.axis) @ -normal, -1, 1))
                assert inward_angle <= np.arctan(mu) + 1e-9
        found |= bool(on_slanted[0].any() and on_slanted[1].any())
    assert found == slanted_pairs
    assert sampling.rejections["friction"] > 0


def test_on_a_sphere_every_axis_inside_the_cone_is_antipodal():
    """On a sphere of radius R the chord from p at angle alpha to the inward normal leaves at q at
    the same angle alpha to q's outward normal and is 2 R cos(alpha) long: every axis drawn inside
    p's cone passes the friction test (up to the mesh's facets: their normals are up to 2.8 deg
    from the sphere's, their centres up to 17 microns inside it), and the grasps fill the cone.
    The one-ray rule of old gave alpha = 0 only."""
    radius = 15 * MM
    ball = trimesh.creation.icosphere(subdivisions=4, radius=radius)
    settings = SamplerSettings(mu=0.4)
    sampling = sample_antipodal_grasps(GraspObject.from_mesh(ball, 0.02, "ball"), 30, settings, seed=0,
                                       object_pose=np.eye(4))
    assert len(sampling.candidates) == 30
    cone = np.arctan(settings.mu)
    reached = sampling.attempts - sampling.rejections["width"] - sampling.rejections["no_exit"]
    assert sampling.rejections["friction"] <= 0.1 * reached  # only draws within a facet's tilt of the cone's edge
    centre = sampling.object_pose[:3, 3]
    alphas = []
    for c in sampling.candidates:
        p, q = c.contacts
        alpha = np.arccos(np.clip(c.axis @ (centre - p) / np.linalg.norm(centre - p), -1, 1))
        assert c.width == pytest.approx(2 * radius * np.cos(alpha), abs=4e-5)  # two facets' sag
        assert np.linalg.norm(q - centre) == pytest.approx(radius, abs=2e-5)
        assert alpha <= cone + np.radians(2.8)
        alphas.append(alpha)
    assert max(alphas) > 0.7 * cone


def test_the_ray_caster_without_embree_finds_the_same_grasps(box, monkeypatch):
    """The sampler casts its rays through Embree when it is installed, else through
    `baselines.contacts.cast_rays`: the same grasps either way."""
    from ipcgrasp.dataset import antipodal

    first = sample_antipodal_grasps(box, 5, seed=7)
    monkeypatch.setattr(antipodal, "_embree_available", lambda: False)
    second = sample_antipodal_grasps(box, 5, seed=7)
    assert first.attempts == second.attempts and first.rejections == second.rejections
    for a, b in zip(first.candidates, second.candidates, strict=True):
        assert a.attempt == b.attempt
        assert np.allclose(a.grasp_pose, b.grasp_pose, atol=1e-9) and np.allclose(a.contacts, b.contacts, atol=1e-9)


def test_approach_frame_is_a_rotation_with_the_axis_first_and_the_approach_downward():
    rng = np.random.default_rng(0)
    for axis in [*rng.normal(size=(20, 3)), [0, 0, 1.0], [0, 0, -1.0]]:
        axis = np.asarray(axis) / np.linalg.norm(axis)
        frame = approach_frame(axis, rng.uniform(0, 2 * np.pi))
        assert np.allclose(frame.T @ frame, np.eye(3), atol=1e-12) and np.linalg.det(frame) > 0
        assert np.allclose(frame[:, 0], axis) and frame[2, 2] <= 1e-12


def test_an_object_without_antipodal_pairs_yields_no_grasp_within_the_attempts():
    """A regular tetrahedron: the ray along a face's inward normal leaves through another face
    whose normal is arccos(1/3) = 70.5 deg from it, outside the 31 deg cone of mu = 0.6."""
    tetra = trimesh.convex.convex_hull(0.02 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1.0]]))
    sampling = sample_antipodal_grasps(GraspObject.from_mesh(tetra, 0.01, "tetra"), 3,
                                       SamplerSettings(mu=0.6, max_attempts=300), seed=0)
    assert sampling.candidates == [] and sampling.attempts == 300
    assert sampling.rejections["friction"] + sampling.rejections["width"] == 300


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="SamplerSettings.mu"):
        SamplerSettings(mu=-0.1)
    with pytest.raises(ValueError, match="SamplerSettings.tip_margin"):
        SamplerSettings(tip_margin=-1e-3)
    with pytest.raises(ValueError, match="max_attempts"):
        SamplerSettings(max_attempts=0)
