"""Unit quaternions, scalar first (w, x, y, z) as MuJoCo and trimesh write them, and the 3x3
rotations they stand for (Hamilton convention: a vector v turns to q v q*)."""

from __future__ import annotations

import numpy as np


def quaternion_to_rotation(wxyz) -> np.ndarray:
    """The rotation matrix (3x3) of the unit quaternion `wxyz` (w, x, y, z)."""
    w, x, y, z = np.asarray(wxyz, dtype=np.float64)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def rotation_to_quaternion(rotation) -> np.ndarray:
    """The unit quaternion (w, x, y, z), w >= 0, of the rotation matrix `rotation` (3x3, or a
    stack (..., 3, 3)); Shepperd's method: each from its largest component, so no division by a
    small number."""
    matrix = np.asarray(rotation, dtype=np.float64)
    flat = matrix.reshape(-1, 3, 3)
    out = np.empty((len(flat), 4))
    for k, r in enumerate(flat):
        trace = r[0, 0] + r[1, 1] + r[2, 2]
        diagonal = np.array([trace, r[0, 0], r[1, 1], r[2, 2]])
        largest = int(np.argmax(diagonal))
        if largest == 0:
            s = 2.0 * np.sqrt(1.0 + trace)
            q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
        elif largest == 1:
            s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
            q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
        elif largest == 2:
            s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
            q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
        else:
            s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
            q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
        q = np.asarray(q) / np.linalg.norm(q)
        out[k] = -q if q[0] < 0 else q
    return out.reshape(matrix.shape[:-2] + (4,))
