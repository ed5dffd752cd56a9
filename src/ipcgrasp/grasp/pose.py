"""Rigid poses (4x4 homogeneous transforms, metres) checked where they enter ipcgrasp.

`rigid_pose` is the one home of the rule: a pose is a finite 4x4 matrix whose rotation block is
orthonormal with determinant +1 and whose bottom row is 0 0 0 1. Rounding of the rotation as in
the REACH files (object rotations stored to 0.01: max |R^T R - I| = 0.0100 in cube_3cm.json;
the grasp poses there are exact to 4e-16) is replaced by the nearest rotation with a
`PoseRoundingWarning`; anything further from a rotation raises `PoseError`.
"""

from __future__ import annotations

import warnings

import numpy as np

EXACT_TOLERANCE = 1e-9
"""max |R^T R - I| (and bottom-row error) of a pose used as given: float64 round-off."""
ROUNDING_TOLERANCE = 0.02
"""max |R^T R - I| up to which a rotation is taken as rounded and re-orthonormalised: twice the
0.0100 measured in the REACH object poses."""


class PoseError(ValueError):
    """A pose is not a rigid transform; the message names the pose, the problem and the fix."""


class PoseRoundingWarning(UserWarning):
    """Rounded pose rotations were replaced by the nearest rotations: `where` names the pose (or
    the file of `count` poses), `error` is the largest max |R^T R - I|."""

    def __init__(self, where: str, error: float, count: int = 1):
        what = "rotation rounded" if count == 1 else f"{count} pose rotations rounded"
        super().__init__(f"{where}: {what} (max |R^T R - I| = {error:.3g}, within the tolerance "
                         f"{ROUNDING_TOLERANCE}); re-orthonormalised to the nearest rotation")
        self.where, self.error, self.count = where, error, count


def nearest_rotation(matrix) -> np.ndarray:
    """The rotation closest in Frobenius norm to a 3x3 matrix: U diag(1, 1, det(U V^T)) V^T
    from its SVD M = U S V^T."""
    u, _, vt = np.linalg.svd(np.asarray(matrix, dtype=np.float64))
    d = np.sign(np.linalg.det(u @ vt))
    return u @ np.diag([1.0, 1.0, d]) @ vt


def orthonormality_error(rotation: np.ndarray) -> float:
    """max |R^T R - I| of a 3x3 matrix (0 for a rotation or reflection)."""
    return float(np.abs(rotation.T @ rotation - np.eye(3)).max())


def rigid_pose(pose, name: str) -> np.ndarray:
    """`pose` as a float64 4x4 rigid transform (m), checked; `name` says which pose it is in messages.

    Exact to EXACT_TOLERANCE: returned as given (a copy). Rotation off by at most
    ROUNDING_TOLERANCE: rotation replaced by the nearest one, with a PoseRoundingWarning.
    Anything else (wrong shape, NaN or infinity, bottom row not 0 0 0 1, a reflection or a
    matrix further from a rotation) raises PoseError.
    """
    matrix = _matrix(pose, name)
    bottom = np.abs(matrix[3] - [0.0, 0.0, 0.0, 1.0]).max()
    if bottom > EXACT_TOLERANCE:
        raise PoseError(f"{name}: not a rigid transform: last row is {matrix[3].tolist()}, expected [0, 0, 0, 1]; "
                        "fix: pass a 4x4 homogeneous transform [[R, t], [0, 0, 0, 1]]")
    rotation = matrix[:3, :3]
    error, det = orthonormality_error(rotation), float(np.linalg.det(rotation))
    if error > ROUNDING_TOLERANCE or det <= 0.0:
        raise PoseError(f"{name}: not a rigid transform: rotation part has max |R^T R - I| = {error:.3g}, tolerance "
                        f"{ROUNDING_TOLERANCE}, and det {det:.3g}, must be +1; fix: give an orthonormal right-handed "
                        "rotation (no scaling, shear or mirroring) and the translation in metres")
    matrix[3] = [0.0, 0.0, 0.0, 1.0]
    if error > EXACT_TOLERANCE:
        matrix[:3, :3] = nearest_rotation(rotation)
        warnings.warn(PoseRoundingWarning(name, error), stacklevel=2)
    return matrix


def _matrix(pose, name: str) -> np.ndarray:
    """`pose` as a finite float64 (4, 4) array (a copy); PoseError otherwise."""
    try:
        matrix = np.array(pose, dtype=np.float64)
    except (TypeError, ValueError):
        raise PoseError(f"{name}: not a numeric 4x4 matrix (ragged rows or non-numbers, got "
                        f"{type(pose).__name__}); fix: pass 4 rows of 4 numbers") from None
    if matrix.shape != (4, 4):
        raise PoseError(f"{name}: expected a 4x4 homogeneous transform, got shape {matrix.shape}; fix: pass "
                        "[[R, t], [0, 0, 0, 1]] with R 3x3 and t in metres")
    if not np.all(np.isfinite(matrix)):
        raise PoseError(f"{name}: non-finite entries (NaN or infinity); fix: pass finite numbers")
    return matrix
