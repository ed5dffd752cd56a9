"""rigid_pose: exact poses pass unchanged, rounded rotations are re-orthonormalised with a
warning, anything else is refused naming the pose."""

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcgrasp.grasp.pose import ROUNDING_TOLERANCE, PoseError, PoseRoundingWarning, orthonormality_error, rigid_pose


def pose(rotvec=(0.3, -0.2, 1.1), translation=(0.1, 0.0, 0.05)) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    matrix[:3, 3] = translation
    return matrix


def test_an_exact_pose_is_returned_unchanged_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checked = rigid_pose(pose().tolist(), "grasp_pose")
    np.testing.assert_array_equal(checked, pose())
    assert checked.dtype == np.float64


def test_a_rounded_rotation_is_re_orthonormalised_with_a_warning_naming_the_pose():
    rounded = np.round(pose(), 2)
    assert 1e-3 < orthonormality_error(rounded[:3, :3]) < ROUNDING_TOLERANCE
    with pytest.warns(PoseRoundingWarning, match="object_pose: rotation rounded.*re-orthonormalised"):
        checked = rigid_pose(rounded, "object_pose")
    assert orthonormality_error(checked[:3, :3]) < 1e-12
    np.testing.assert_allclose(checked[:3, :3], pose()[:3, :3], atol=0.01)
    np.testing.assert_array_equal(checked[:3, 3], rounded[:3, 3])


@pytest.mark.parametrize("bad, problem", [
    (np.eye(3), r"shape \(3, 3\)"),
    ("identity", "not a numeric 4x4 matrix"),
    (np.diag([1.0, 1.0, -1.0, 1.0]), "det -1"),
    (np.diag([1.1, 1.0, 1.0, 1.0]), "not a rigid transform: rotation part"),
    (np.vstack([np.eye(4)[:3], [0.0, 0.0, 0.1, 1.0]]), "last row"),
    (np.where(np.eye(4) > 0, np.nan, 0.0), "non-finite"),
])
def test_non_rigid_poses_are_refused_naming_the_pose_and_the_fix(bad, problem):
    with pytest.raises(PoseError, match=problem) as info:
        rigid_pose(bad, "grasp_pose")
    assert str(info.value).startswith("grasp_pose: ") and "fix:" in str(info.value)
