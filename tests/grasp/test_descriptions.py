"""Gripper description files: the schema's errors (file, key, fix), the shipped YuMi against the
original-study pad code, every shipped gripper's placement around a cube and one short cube
grasp each, and a user's own closed pad mesh."""

import dataclasses
import time

import numpy as np
import pytest
import trimesh
import yaml

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.geometry import backing_plate
from ipcgrasp.geometry.pads import PadShape
from ipcgrasp.grasp.description import GripperDescriptionError, load_description, shipped_grippers
from ipcgrasp.grasp.gripper import Gripper

CUBE = 0.03  # m
# unperturbed trials with a short lift and hold: a few seconds each
FAST = dict(noise_translation=0.0, noise_rotation=0.0, lift_height=0.005, hold_time=0.04)
SHIPPED = ("franka_hand", "robotiq_2f85", "yumi")


def write(tmp_path, data, name="mine.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def franka():
    """The shipped Franka description as plain data, to break in a test."""
    return yaml.safe_load(load_description("franka_hand").path.read_text())


def test_the_shipped_grippers_are_listed_by_name():
    assert tuple(shipped_grippers()) == SHIPPED
    for name, description in shipped_grippers().items():
        assert description.name == name and {"rounded", "rectangular"} <= set(description.pad_names)
        fields = description.summary().split("\t")
        assert fields[0] == name and fields[1].startswith("stroke") and fields[4].startswith("source: ")


@pytest.mark.parametrize("kind", ["rounded", "rectangular"])
def test_the_yumi_description_is_the_original_study_gripper_number_for_number(kind):
    """The description's pad, plate and tooltips are bit for bit what the code made before
    descriptions existed (geometry.pads' original-study constants, DATA.md's tooltip frames)."""
    yumi = Gripper.yumi(kind)
    assert yumi.pad == PadShape(kind)  # the YuMi defaults of geometry.pads, exactly
    assert yumi.pad_mesh() is Gripper.yumi(kind).pad_mesh()
    legacy_backing = backing_plate()
    assert np.array_equal(yumi.backing_mesh().vertices, legacy_backing.vertices)
    assert np.array_equal(yumi.backing_mesh().faces, legacy_backing.faces)
    expected = np.array([[[0, 0, 1, -0.025], [0, -1, 0, -0.000011], [1, 0, 0, 0.160098], [0, 0, 0, 1]],
                         [[0, 0, -1, 0.025], [0, 1, 0, 0.000011], [1, 0, 0, 0.160098], [0, 0, 0, 1]]], dtype=float)
    assert np.array_equal(yumi.tooltip_transforms, expected)
    assert yumi.max_opening == 0.05 and yumi.finger is None
    assert (yumi.force_limit, yumi.closing_speeds, yumi.lift_speed) == (100.0, (0.01, 1.0), 0.025)
    pad = yumi.pad_mesh()
    assert pad.dimensions == pytest.approx((0.022, 0.016, 0.0024), abs=1e-15)


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("kind", ["rounded", "rectangular"])
def test_at_full_opening_the_pads_clear_a_centred_cube(name, kind):
    gripper = Gripper.from_description(name, kind)
    cube = trimesh.creation.box(extents=(CUBE, CUBE, CUBE))
    grasp = _top_down(gripper)
    distances = gripper.jaw_distances(grasp, cube.vertices, cube.faces)
    # the pads' front faces are the jaws' nearest points: (stroke - cube) / 2 from the cube each
    assert distances == pytest.approx([(gripper.max_opening - CUBE) / 2] * 2, abs=1e-9)
    assert gripper.max_opening == load_description(name).data["stroke"]
    rigid = gripper.backing_mesh()
    assert rigid.bounds[1, 2] == pytest.approx(-gripper.pad_mesh().dimensions[2], abs=1e-12)  # behind the pad


@pytest.mark.parametrize("name", SHIPPED)
def test_one_cube_grasp_per_gripper_lifts_the_cube(name):
    gripper = Gripper.from_description(name)
    cube = GraspObject.from_mesh(trimesh.creation.box(extents=(CUBE, CUBE, CUBE)), mass=0.05, name="cube")
    params = SimParams(jaw=gripper.pad_kind, close_rule="force", **FAST)
    result = simulate_grasp(cube, np.eye(4), _top_down(gripper), params, gripper=gripper)
    assert result.success, result.reason
    assert result.close_forces[0] == pytest.approx(result.close_forces[1], rel=0.5)
    assert min(result.close_forces) >= params.close_force
    # the pads met the cube after closing from the widest opening (start clear of the cube)
    assert CUBE < result.start_opening <= gripper.max_opening


def _top_down(gripper: Gripper) -> np.ndarray:
    """Gripper z down, closing along world x, the tooltips at the cube centre's height, raised
    just enough that the jaws' lowest point stays 2 mm above the ground under a cube resting 1 mm
    above it."""
    tip = float(max(gripper.pad_mesh().nodes[:, 0].max(), gripper.backing_mesh().vertices[:, 0].max()))
    height = max(0.0, tip - (CUBE / 2 + 1e-3 - 2e-3))
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = [0.0, 0.0, gripper.tooltip_transforms[:, 2, 3].mean() + height]
    return pose


def test_simulate_refuses_a_gripper_without_the_pad_params_name():
    with pytest.raises(ValueError, match="SimParams.jaw = 'rounded' but the gripper 'robotiq_2f85' carries"):
        simulate_grasp(GraspObject.from_mesh(trimesh.creation.box(extents=(CUBE,) * 3), 0.05), np.eye(4), np.eye(4),
                       SimParams(**FAST), gripper=Gripper.from_description("robotiq_2f85", "rectangular"))


def test_an_unknown_name_lists_the_shipped_grippers():
    with pytest.raises(GripperDescriptionError, match=r"unknown gripper 'panda'; fix: use one of the shipped grippers "
                                                      r"\(franka_hand, robotiq_2f85, yumi\)"):
        Gripper.from_description("panda")
    with pytest.raises(GripperDescriptionError, match="no such gripper description file"):
        load_description("/nowhere/gripper.yaml")


def test_a_missing_key_is_named_with_its_meaning(tmp_path, franka):
    del franka["stroke"]
    path = write(tmp_path, franka)
    with pytest.raises(GripperDescriptionError, match=rf"{path}: stroke is missing; fix: add it: Widest jaw opening"):
        load_description(path)


@pytest.mark.parametrize("key, value, message", [
    (("stroke",), 2.0, r"stroke: 2\.0 is greater than the maximum of 0\.5; fix: Widest jaw opening"),
    (("force_limit",), -5, r"force_limit: -5 is less than or equal to the minimum of 0; fix: Closing force limit"),
    (("pads", "rounded", "width"), "wide", r"pads\.rounded\.width: 'wide' is not of type 'number'; fix: Pad width"),
    (("pads", "rounded", "outline"), "oval", r"pads\.rounded\.outline: 'oval' is not one of"),
    (("backing", "colour"), "red", r"backing: Additional properties are not allowed \('colour' was unexpected\); "
                                   r"fix: remove or rename the key"),
    (("closing_speed", "min"), 0.5, r"closing_speed: min 0\.5 m/s is above max 0\.05 m/s; fix: make min <= max"),
    (("pads", "rounded", "x_max"), -0.02, r"pads\.rounded\.x_max: x_max = -0\.02 m is not above x_min"),
    (("default_pad",), "oval", r"default_pad: 'oval' is not a pad variant; fix: use one of rectangular, rounded"),
    (("tooltips", 0, "translation"), [0.0, 0.0, 0.2], None),  # still closed: moving along x of the tooltip is fine
    (("tooltips", 1, "translation"), [0.01, 0.0, 0.1029],
     r"tooltips: the pads' front faces are 10 mm apart .*fix: give the tooltip frames with the jaws closed"),
    (("tooltips", 0, "rotation"), [[1, 0, 0], [0, 1, 0], [0, 0.5, 1]], r"tooltips\[0\]\.rotation: is not a rotation"),
])
def test_a_bad_value_is_named_with_the_fix(tmp_path, franka, key, value, message):
    node = franka
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    path = write(tmp_path, franka)
    if message is None:
        load_description(path)
        return
    with pytest.raises(GripperDescriptionError, match=rf"{path}: {message}"):
        load_description(path)


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("key, meaning", [
    (("backing", "gap"), "Gap between the pad's back face and the plate"),
    (("backing", "width"), "Plate width"),
    (("backing", "thickness"), "Plate thickness"),
    (("bending_length",), "Length"),
    (("stroke",), "Widest jaw opening"),
    (("force_limit",), "Closing force limit"),
    (("closing_speed", "min"), "Slowest closing speed"),
    (("closing_speed", "max"), "Fastest closing speed"),
    (("lift_speed",), "Speed"),
])
def test_nan_or_infinity_where_a_number_is_meant_is_refused(tmp_path, franka, key, meaning, value):
    node = franka
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    path = write(tmp_path, franka)  # YAML's .nan / .inf
    dotted = r"\.".join(key)
    with pytest.raises(GripperDescriptionError, match=rf"^{path}: {dotted}: {value} is not a finite number; fix: give a "
                                                      rf"number: {meaning}"):
        load_description(path)


def test_a_key_given_twice_is_refused(tmp_path, franka):
    path = write(tmp_path, franka)
    path.write_text(path.read_text() + "stroke: 0.05\n")
    with pytest.raises(GripperDescriptionError, match=rf"^{path}: stroke: the key is given twice in one mapping "
                                                      r"\(again at line \d+\); fix: keep one of them"):
        load_description(path)


def test_an_alias_bomb_in_a_free_text_field_fails_fast(tmp_path, franka):
    """Nested aliases in `description` (any value would do) would expand to 10**9 strings."""
    path = write(tmp_path, franka)
    laughs = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else "lol"] * 10) + "]\n" for i in range(9))
    path.write_text(laughs + path.read_text().replace("description:", "description: *l8\nnotes:"))
    started = time.perf_counter()
    with pytest.raises(GripperDescriptionError, match=rf"^{path}: l3\[\d\]: the aliases \(\*name\) repeat more than"):
        load_description(path)
    assert time.perf_counter() - started < 0.1


def test_a_missing_mesh_file_is_named(tmp_path, franka):
    franka["pads"]["mine"] = {"outline": "mesh", "mesh": "pads/mine.stl"}
    path = write(tmp_path, franka)
    with pytest.raises(GripperDescriptionError, match=rf"pads\.mine\.mesh: mesh file {tmp_path}/pads/mine\.stl does "
                                                      "not exist; fix: give a path relative to the description"):
        load_description(path)


def test_a_pad_mesh_off_the_front_face_is_refused(tmp_path, franka):
    trimesh.creation.box(bounds=[[-0.008, -0.008, -0.002], [0.008, 0.008, 0.001]]).export(tmp_path / "pad.stl")
    franka["pads"]["mine"] = {"outline": "mesh", "mesh": "pad.stl"}
    with pytest.raises(GripperDescriptionError, match=r"pads\.mine\.mesh: the pad's front face is at z = 1 mm, not 0"):
        load_description(write(tmp_path, franka))
    open_box = trimesh.creation.box(bounds=[[-0.008, -0.008, -0.002], [0.008, 0.008, 0.0]])
    open_box.faces = open_box.faces[:-1]
    open_box.export(tmp_path / "pad.stl")
    with pytest.raises(GripperDescriptionError, match="is not a closed, outward-oriented surface"):
        load_description(write(tmp_path, franka))


def test_a_users_own_pad_mesh_is_tetrahedralised_and_glued_at_its_back(tmp_path, franka):
    # a pad in millimetres: a 16 mm disc, 3 mm thick, front face z = 0
    disc = trimesh.creation.cylinder(radius=8.0, height=3.0, sections=24)
    disc.apply_translation([0.0, 0.0, -1.5])
    disc.export(tmp_path / "disc.stl")
    franka["pads"]["disc"] = {"outline": "mesh", "mesh": "disc.stl", "scale": 0.001}
    gripper = Gripper.from_description(write(tmp_path, franka), "disc")
    pad = gripper.pad_mesh()
    assert pad.kind == "mesh" and pad.dimensions == pytest.approx((0.016, 0.016, 0.003), rel=1e-3)
    assert pad.volume == pytest.approx(disc.volume * 1e-9, rel=1e-9)
    assert np.allclose(pad.nodes[pad.back_nodes, 2], -0.003) and len(pad.back_nodes) >= 24
    assert gripper.backing_mesh().bounds[1, 2] == pytest.approx(-0.003)  # the plate starts at the pad's back
    assert gripper.pad_width == pytest.approx(0.016, rel=1e-3)
    assert dataclasses.replace(gripper).pad_mesh().volume == pytest.approx(pad.volume)


def test_a_finger_mesh_must_lie_behind_the_plate(tmp_path, franka):
    del franka["finger"]["box"]
    franka["finger"]["mesh"] = "finger.stl"
    # the plate's back face is 2 mm (pad) + 8 mm (plate) behind the front face: z = -10 mm
    trimesh.creation.box(bounds=[[-0.04, -0.01, -0.02], [0.008, 0.01, -0.005]]).export(tmp_path / "finger.stl")
    with pytest.raises(GripperDescriptionError, match=r"finger\.mesh: the finger reaches z = -5 mm, in front of the "
                                                      r"backing plate's back face z = -10 mm"):
        load_description(write(tmp_path, franka))
    trimesh.creation.box(bounds=[[-0.04, -0.01, -0.02], [0.008, 0.01, -0.010]]).export(tmp_path / "finger.stl")
    gripper = Gripper.from_description(write(tmp_path, franka))
    assert gripper.backing_mesh().bounds[0, 2] == pytest.approx(-0.02)  # plate and finger, one rigid jaw
