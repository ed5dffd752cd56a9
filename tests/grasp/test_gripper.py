"""The YuMi gripper description: tooltip frames, jaw placement, clearance opening, closing speed."""

import numpy as np
import pytest
import shapely.geometry
import trimesh
from scipy.spatial.transform import Rotation

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.geometry import pad_outline
import dataclasses

from ipcgrasp.grasp.gripper import Gripper, GripperFormatError
from ipcgrasp.grasp.scene import mesh_distance, place_scene

MM = 1e-3
# DATA.md section 3, typed from the text
DATA_MD_TOOLTIPS = [
    ([[0, 0, 1], [0, -1, 0], [1, 0, 0]], [-0.025, -0.000011, 0.160098]),
    ([[0, 0, -1], [0, 1, 0], [1, 0, 0]], [0.025, 0.000011, 0.160098]),
]


@pytest.fixture(scope="module")
def data_dir():
    return resolve_data_dir()


@pytest.fixture(scope="module")
def yumi():
    return Gripper.yumi()


@pytest.fixture(scope="module")
def cube_scenes(data_dir):
    """The 25 cube grasps placed as in the original: (cube mesh in the world, grasp pose)."""
    cube = trimesh.load(data_dir / "object_meshes" / "cube_3cm.obj")
    grasps = load_physical_grasps(data_dir, "cube_3cm")
    scenes = []
    for grasp_pose, object_pose in zip(grasps.grasp_poses, grasps.object_poses):
        object_pose, grasp_pose = place_scene(cube, object_pose, grasp_pose)
        scenes.append((cube.copy().apply_transform(object_pose), grasp_pose))
    return scenes


def _random_pose(rng):
    pose = np.eye(4)
    pose[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    pose[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return pose


def test_yaml_and_default_match_data_md(data_dir, yumi):
    from_file = Gripper.read_tooltip_yaml(data_dir / "yumi_meshes" / "yumi_metal_spline.yaml")
    for i, (rotation, translation) in enumerate(DATA_MD_TOOLTIPS):
        expected = np.eye(4)
        expected[:3, :3], expected[:3, 3] = rotation, translation
        assert np.array_equal(from_file[i], expected)
        assert np.array_equal(yumi.tooltip_transforms[i], expected)
    assert yumi.name == "yumi"
    assert yumi.max_opening == pytest.approx(50 * MM, abs=1e-15)
    assert np.array_equal(yumi.closing_directions, [[1, 0, 0], [-1, 0, 0]])
    assert not yumi.tooltip_transforms.flags.writeable


def test_read_tooltip_yaml_reports_malformed_files(tmp_path):
    missing = tmp_path / "missing.yaml"
    missing.write_text("type: ParallelJawGripper\nparams: {name: x}\n")
    with pytest.raises(GripperFormatError, match="tooltip_poses"):
        Gripper.read_tooltip_yaml(missing)
    skewed = tmp_path / "skewed.yaml"
    pose = "{params: {rotation: [[1, 0, 0], [0, 1, 0.5], [0, 0, 1]], translation: [0, 0, 0]}}"
    skewed.write_text(f"params:\n  tooltip_poses: [{pose}, {pose}]\n")
    with pytest.raises(GripperFormatError, match="not a rigid transform"):
        Gripper.read_tooltip_yaml(skewed)


def test_constructor_rejects_jaws_that_do_not_face_each_other(yumi):
    same_direction = np.array(yumi.tooltip_transforms)
    same_direction[1] = same_direction[0]
    same_direction[1, :3, 3] = [0.025, 0.0, 0.16]
    with pytest.raises(ValueError, match="opposite"):
        dataclasses.replace(yumi, tooltip_transforms=same_direction)
    facing_away = np.array(yumi.tooltip_transforms)
    facing_away[:, :3, :3] = facing_away[::-1, :3, :3]
    with pytest.raises(ValueError, match="point at tooltip 1"):
        dataclasses.replace(yumi, tooltip_transforms=facing_away)
    with pytest.raises(ValueError, match="has no pad 'square'.*rounded, rectangular"):
        Gripper.yumi(pad_kind="square")


def test_tooltips_face_each_other_and_open_symmetrically(yumi):
    rng = np.random.default_rng(1)
    for _ in range(20):
        grasp = _random_pose(rng)
        widest = yumi.tooltip_poses(grasp)
        z0, z1 = widest[:, :3, 2]
        gap = widest[1, :3, 3] - widest[0, :3, 3]
        assert z0 @ z1 == pytest.approx(-1.0, abs=1e-12)
        assert gap @ z0 == pytest.approx(50 * MM, abs=1e-12)
        assert np.linalg.norm(gap) == pytest.approx(50 * MM, abs=1e-7)  # 22 um sideways offset
        assert yumi.jaw_opening(widest) == pytest.approx(50 * MM, abs=1e-12)
        assert np.allclose(widest[:, :3, 0], grasp[:3, 2], atol=1e-12)  # tooltip x = approach axis
        for opening in (0.0, 12.3 * MM, 31 * MM, 50 * MM, 53 * MM):
            poses = yumi.tooltip_poses(grasp, opening)
            assert yumi.jaw_opening(poses) == pytest.approx(opening, abs=1e-12)
            assert np.allclose(poses[:, :3, :3], widest[:, :3, :3], atol=0.0)
            moved = poses[:, :3, 3] - widest[:, :3, 3]
            assert np.allclose(moved, 0.5 * (50 * MM - opening) * widest[:, :3, 2], atol=1e-13)
    with pytest.raises(ValueError, match="opening"):
        yumi.tooltip_poses(np.eye(4), -1 * MM)
    with pytest.raises(ValueError, match="grasp_pose"):
        yumi.tooltip_poses(np.eye(3))


def test_place_pads_puts_front_faces_opening_apart_with_backings_behind(yumi):
    grasp = _random_pose(np.random.default_rng(2))
    opening = 37 * MM
    jaws = yumi.place_pads(grasp, opening)
    poses = yumi.tooltip_poses(grasp, opening)
    pad = yumi.pad_mesh()
    assert pad is jaws[0].pad and pad.kind == "rounded"
    front = pad.nodes[:, 2] == 0.0
    for jaw, pose in zip(jaws, poses):
        assert np.array_equal(jaw.pose, pose)
        assert np.allclose(jaw.pad_nodes(), trimesh.transform_points(pad.nodes, pose), atol=0.0)
        assert np.allclose(jaw.closing_direction, pose[:3, 2])
        local_backing = trimesh.transform_points(jaw.backing_vertices(), np.linalg.inv(pose))
        assert local_backing[:, 2].max() == pytest.approx(-pad.dimensions[2], abs=1e-12)
    # every front-face node of pad 1 lies opening in front of pad 0's front face
    heights = (jaws[1].pad_nodes()[front] - jaws[0].pad_nodes()[front][0]) @ jaws[0].closing_direction
    assert np.allclose(heights, opening, atol=1e-12)
    assert Gripper.yumi(pad_kind="rectangular").place_pads(grasp)[0].pad.kind == "rectangular"


def test_closing_speed_follows_data_md(yumi):
    assert yumi.closing_speed(50 * MM, 2.0) == pytest.approx(12.5 * MM)
    assert yumi.closing_speed(40 * MM, 2.0) == pytest.approx(10 * MM)
    assert yumi.closing_speed(30 * MM, 2.0) == 10 * MM
    assert yumi.closing_speed(80 * MM, 1.0) == pytest.approx(40 * MM)  # no cap: the original rule
    franka = Gripper.from_description("franka_hand")
    assert franka.closing_speed(80 * MM, 0.1) == 50 * MM  # its fastest, 50 mm/s per finger
    assert franka.closing_speed(10 * MM, 2.0) == 10 * MM
    with pytest.raises(ValueError):
        yumi.closing_speed(-1.0, 2.0)


def test_jaw_distances_include_the_backing_plate(yumi):
    # a block in front of the backing's far end, beside the pad (pad x in [-14, 8] mm)
    block = trimesh.creation.box(bounds=[[-30 * MM, -5 * MM, -1.9 * MM], [-20 * MM, 5 * MM, 10 * MM]])
    grasp = _random_pose(np.random.default_rng(3))
    pose = yumi.tooltip_poses(grasp)[0]
    world = block.copy().apply_transform(pose)
    d0, d1 = yumi.jaw_distances(grasp, world.vertices, world.faces)
    assert d0 == pytest.approx(0.5 * MM, rel=1e-9)  # backing front face at z = -2.4 mm
    assert d1 > 20 * MM


def test_jaw_box_gap_is_zero_between_the_jaws_and_a_lower_bound_of_their_distance(yumi):
    grasp = _random_pose(np.random.default_rng(4))
    assert yumi.jaw_box_gap(grasp, _box_between_jaws(grasp, 20 * MM).vertices) == 0.0
    for shift in ([0.1, 0.0, 0.0], [0.0, 0.2, 0.05], [300.0, -2.0, 150.0]):
        far = _box_between_jaws(grasp, 20 * MM).apply_translation(shift)
        gap = yumi.jaw_box_gap(grasp, far.vertices)
        assert 0.0 < gap <= min(yumi.jaw_distances(grasp, far.vertices, far.faces))
        assert gap >= np.linalg.norm(shift) - 0.2  # the boxes span less than 0.2 m


def _box_between_jaws(grasp, width):
    """A box `width` (m) long along the closing axis and 10 mm across, centred between the jaws of
    the grasp pose (world coordinates)."""
    box = trimesh.creation.box([width, 10 * MM, 10 * MM]).apply_translation([0.0, 0.0, 0.16])
    return box.apply_transform(grasp)


def test_box_wider_than_the_gripper_collides_unless_opened_further(yumi):
    grasp = _random_pose(np.random.default_rng(4))
    # 59.5 mm along the closing axis, centred between the jaws
    world = _box_between_jaws(grasp, 59.5 * MM)
    stuck = yumi.clearance_opening(grasp, world)
    assert not stuck.clear and stuck.opening == pytest.approx(50 * MM) and stuck.distances == (0.0, 0.0)
    opened = yumi.clearance_opening(grasp, world, max_extra=20 * MM)
    assert opened.clear and opened.opening == pytest.approx(62 * MM, abs=1e-12)
    assert opened.distances == pytest.approx((1.25 * MM, 1.25 * MM), rel=1e-9)
    assert not yumi.clearance_opening(grasp, world, max_extra=11.9 * MM).clear
    assert yumi.narrowest_opening(grasp, world, opened.opening).opening == opened.opening
    assert not yumi.narrowest_opening(grasp, world, 55 * MM).clear


def test_scans_measure_exact_distances_only_when_asked(yumi, monkeypatch):
    """The scans decide `clear` with capped distance queries; the uncapped ones behind
    `distances` run on first access, once."""
    grasp = _random_pose(np.random.default_rng(5))
    world = _box_between_jaws(grasp, 29.6 * MM)
    cutoffs = []
    measured = type(yumi).jaw_distances

    def recorded(self, *args, cutoff=np.inf, **kwargs):
        cutoffs.append(cutoff)
        return measured(self, *args, cutoff=cutoff, **kwargs)

    monkeypatch.setattr(type(yumi), "jaw_distances", recorded)
    opened = yumi.clearance_opening(grasp, world)
    narrowest = yumi.narrowest_opening(grasp, world, opened.opening)
    assert cutoffs and np.isfinite(cutoffs).all()
    assert narrowest.distances == pytest.approx((1.2 * MM, 1.2 * MM), rel=1e-9)
    assert narrowest.distances is narrowest.distances and cutoffs[-1] == np.inf
    assert sum(c == np.inf for c in cutoffs) == 1


def test_narrowest_opening_stops_one_step_before_the_clearance_is_lost(yumi):
    grasp = _random_pose(np.random.default_rng(5))
    world = _box_between_jaws(grasp, 29.6 * MM)
    result = yumi.narrowest_opening(grasp, world, yumi.max_opening)
    assert result.clear and result.opening == pytest.approx(32 * MM, abs=1e-12)
    assert result.distances == pytest.approx((1.2 * MM, 1.2 * MM), rel=1e-9)
    # nothing between the jaws: they may close down to the clearance itself
    far = world.copy().apply_translation(grasp[:3, 2] * 0.1)
    assert yumi.narrowest_opening(grasp, far, yumi.max_opening).opening == pytest.approx(1 * MM, abs=1e-12)
    with pytest.raises(ValueError, match="step"):
        yumi.narrowest_opening(grasp, world, yumi.max_opening, clearance=1 * MM, step=2 * MM)


def test_cube_grasps_clear_the_cube_by_1mm_after_opening(yumi, cube_scenes):
    jaw_surface = yumi.pad_mesh().surface_mesh(), yumi.backing_mesh()
    for cube, grasp in cube_scenes:
        real = yumi.clearance_opening(grasp, cube)
        at_widest = yumi.jaw_distances(grasp, cube.vertices, cube.faces)
        assert real.opening == yumi.max_opening and real.clear == (min(at_widest) >= 1 * MM)
        original = yumi.clearance_opening(grasp, cube, max_extra=10 * MM)
        assert original.clear and min(original.distances) >= 1 * MM
        if original.opening > yumi.max_opening:
            narrower = yumi.jaw_distances(grasp, cube.vertices, cube.faces, original.opening - 1 * MM)
            assert min(narrower) < 1 * MM
        tight = yumi.narrowest_opening(grasp, cube, original.opening)
        assert tight.clear and tight.opening <= original.opening
        assert min(yumi.jaw_distances(grasp, cube.vertices, cube.faces, tight.opening - 1 * MM)) < 1 * MM
        for result in (original, tight):
            for jaw in yumi.place_pads(grasp, result.opening):
                for part in jaw_surface:
                    placed = part.copy().apply_transform(jaw.pose)
                    assert mesh_distance(placed.vertices, placed.faces, cube.vertices, cube.faces) >= 1 * MM


def test_cube_grasps_have_the_cube_between_the_pads(yumi, cube_scenes):
    """Seen along the closing axis the cube overlaps both pads' outlines and it lies between
    their front faces: closing the jaws would touch it (no recorded grasp is a plain miss)."""
    outline = pad_outline("rounded")
    for cube, grasp in cube_scenes:
        for pose in yumi.tooltip_poses(grasp):
            local = trimesh.transform_points(cube.vertices, np.linalg.inv(pose))
            footprint = shapely.geometry.MultiPoint(local[:, :2]).convex_hull
            assert footprint.intersection(outline).area > 1e-6 * outline.area
            assert local[:, 2].max() > 0.0 and local[:, 2].min() < yumi.max_opening


def test_cube_grasp_jaws_stay_above_the_ground(yumi, cube_scenes):
    for cube, grasp in cube_scenes:
        opening = yumi.clearance_opening(grasp, cube, max_extra=10 * MM).opening
        for jaw in yumi.place_pads(grasp, opening):
            assert jaw.pad_nodes()[:, 2].min() > 0.0 and jaw.backing_vertices()[:, 2].min() > 0.0


def _scanned_opening(yumi, grasp, world, start, clearance=1 * MM, step=1 * MM):
    """The narrowest opening by the plain scan start - k step, k = 1, 2, ... (the reference)."""
    vertices, faces = world.vertices, world.faces

    def clear(opening):
        return min(yumi.jaw_distances(grasp, vertices, faces, opening, cutoff=clearance)) >= clearance

    if not clear(start):
        return start
    k = 1
    while start - k * step >= clearance and clear(start - k * step):
        k += 1
    return start - (k - 1) * step


def test_narrowest_opening_skipping_proved_clear_openings_equals_the_plain_scan(yumi, cube_scenes):
    rng = np.random.default_rng(6)
    scenes = list(cube_scenes)
    # an L of two boxes 0.5 mm apart (non-convex) and a thin box at random poses and offsets
    for _ in range(4):
        grasp = _random_pose(rng)
        ell = trimesh.util.concatenate([trimesh.creation.box([24 * MM, 8 * MM, 8 * MM]),
                                        trimesh.creation.box([8 * MM, 8 * MM, 20 * MM]).apply_translation(
                                            [8 * MM, 0.0, 14.5 * MM])])
        offset = rng.uniform(-8 * MM, 8 * MM, 3)
        for part in (ell, trimesh.creation.box([3 * MM, 12 * MM, 12 * MM])):
            scenes.append((part.copy().apply_translation([0.0, 0.0, 0.16] + offset).apply_transform(grasp), grasp))
    for world, grasp in scenes:
        for start, step in ((yumi.max_opening, 1 * MM), (yumi.max_opening + 7 * MM, 1.5 * MM)):
            expected = _scanned_opening(yumi, grasp, world, start, step=step)
            assert yumi.narrowest_opening(grasp, world, start, step=step).opening == expected
