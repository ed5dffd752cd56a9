"""Poses a user types or writes in a pose file: a 4x4 or a position + quaternion (both quaternion
orders), checked into rigid transforms; every bad pose names the field and the fix."""

import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcgrasp.geometry.quaternion import quaternion_to_rotation, rotation_to_quaternion
from ipcgrasp.grasp.pose import PoseError
from ipcgrasp.grasp.pose_input import pose_from_numbers, read_pose_file


def test_quaternions_agree_with_scipy_and_round_trip():
    rotations = Rotation.random(200, random_state=3)
    for xyzw, matrix in zip(rotations.as_quat(), rotations.as_matrix()):
        wxyz = np.roll(xyzw, 1)
        assert np.allclose(quaternion_to_rotation(wxyz), matrix, atol=1e-12)
        back = rotation_to_quaternion(matrix)
        assert back[0] >= 0 and np.allclose(back, wxyz if wxyz[0] >= 0 else -wxyz, atol=1e-12)
    # half turns (trace -1), where a trace-only formula divides by zero
    for axis in np.eye(3):
        half = Rotation.from_rotvec(np.pi * axis).as_matrix()
        assert np.allclose(quaternion_to_rotation(rotation_to_quaternion(half)), half, atol=1e-12)
    assert rotation_to_quaternion(np.stack([np.eye(3)] * 2)).shape == (2, 4)


def test_seven_numbers_are_position_then_quaternion_w_first():
    pose = pose_from_numbers([0.1, -0.2, 0.3, 0.0, 1.0, 0.0, 0.0], "--grasp-pose")  # half turn about x
    assert np.allclose(pose[:3, 3], [0.1, -0.2, 0.3]) and np.allclose(pose[:3, :3], np.diag([1.0, -1.0, -1.0]))
    assert np.array_equal(pose_from_numbers(np.eye(4).ravel(), "--grasp-pose"), np.eye(4))
    rounded = pose_from_numbers([0, 0, 0, 0.7071, 0.7071, 0, 0], "--grasp-pose")  # 4 decimals: normalised
    assert np.allclose(rounded[:3, :3].T @ rounded[:3, :3], np.eye(3), atol=1e-12)


def test_the_pose_file_takes_both_quaternion_orders_and_a_matrix(tmp_path):
    turn = Rotation.from_euler("zyx", [30, -20, 70], degrees=True)
    xyzw = turn.as_quat()
    path = tmp_path / "pose.json"
    path.write_text(json.dumps({"grasp_pose": {"position": [0, 0, 0.1], "quaternion_xyzw": list(xyzw)},
                                "object_pose": {"position": [0.2, 0, 0], "quaternion_wxyz": list(np.roll(xyzw, 1))}}))
    poses = read_pose_file(path)
    assert np.allclose(poses.grasp_pose[:3, :3], turn.as_matrix()) and np.allclose(poses.grasp_pose[:3, 3], [0, 0, 0.1])
    assert np.allclose(poses.object_pose[:3, :3], turn.as_matrix())
    path.write_text(json.dumps({"grasp_pose": np.eye(4).tolist()}))
    assert read_pose_file(path).object_pose is None


@pytest.mark.parametrize("values, message", [
    ([0.0] * 6, "--grasp-pose: 6 numbers; fix: give 16 numbers"),
    ([0, 0, 0, 2, 0, 0, 0], "--grasp-pose quaternion [2.0, 0.0, 0.0, 0.0]: norm 2, must be 1"),
    ([0, 0, float("nan"), 1, 0, 0, 0], "--grasp-pose position: [0, 0, nan] is not 3 finite numbers"),
    ([2.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "--grasp-pose: not a rigid transform: rotation part"),
])
def test_bad_command_line_poses_name_the_option_and_the_fix(values, message):
    with pytest.raises(PoseError, match="fix") as error:
        pose_from_numbers(values, "--grasp-pose")
    assert message in str(error.value)


@pytest.mark.parametrize("document, message", [
    ({}, "no 'grasp_pose'; fix:"),
    ({"grasp_pose": np.eye(4).tolist(), "approach": 1}, "unknown key(s) approach; fix:"),
    ({"grasp_pose": {"position": [0, 0, 0]}}, "grasp_pose: no quaternion; fix:"),
    ({"grasp_pose": {"position": [0, 0, 0], "quaternion": [1, 0, 0, 0]}}, "grasp_pose: unknown key(s) quaternion"),
    ({"grasp_pose": {"position": [0, 0], "quaternion_wxyz": [1, 0, 0, 0]}}, "grasp_pose position: [0, 0] is not 3"),
    ({"grasp_pose": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}, "grasp_pose: expected a 4x4 homogeneous transform"),
    ([1, 2], "a JSON object with 'grasp_pose'"),
])
def test_bad_pose_files_name_the_file_the_field_and_the_fix(tmp_path, document, message):
    path = tmp_path / "pose.json"
    path.write_text(json.dumps(document))
    with pytest.raises(PoseError, match="fix") as error:
        read_pose_file(path)
    assert str(error.value).startswith(str(path)) and message in str(error.value)
