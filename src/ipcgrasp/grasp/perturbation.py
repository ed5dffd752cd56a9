"""Seeded grasp-pose noise (docs/data.md, "Conventions the simulation follows"; Kim et al., IPC-GraspSim, "Grasp Simulation
Procedure"), and per-trial seeds shared by every model of the study.

A trial's noise depends only on (root seed, grasp index, trial index), so each model simulated
in the study sees the same perturbed grasp for the same trial.
"""

from __future__ import annotations

import operator

import numpy as np
from scipy.spatial.transform import Rotation

TRANSLATION_STD = 1e-3
"""Standard deviation of the grasp translation noise per axis (m)."""
ROTATION_STD = 3e-3
"""Standard deviation of the grasp rotation noise per axis of the rotation vector (rad)."""


def perturb_grasp(grasp_pose, rng: np.random.Generator, translation_std: float = TRANSLATION_STD,
                  rotation_std: float = ROTATION_STD) -> np.ndarray:
    """grasp_pose @ N: the grasp pose (4x4, m) perturbed in the gripper frame.

    N has translation t ~ N(0, translation_std^2 I) (m) and rotation exp([xi]) with
    xi ~ N(0, rotation_std^2 I) (rad), [xi] the skew matrix of xi. Draws six standard normals from
    `rng`, t's three then xi's, whatever the stds, so the stream stays aligned across settings;
    stds 0 return the pose unchanged.
    """
    grasp_pose = np.asarray(grasp_pose, dtype=np.float64)
    if grasp_pose.shape != (4, 4) or not np.all(np.isfinite(grasp_pose)):
        raise ValueError(f"grasp_pose must be a finite 4x4 matrix, got shape {grasp_pose.shape}")
    if not (translation_std >= 0.0 and rotation_std >= 0.0):
        raise ValueError(f"noise standard deviations must be non-negative, got {translation_std} m "
                         f"and {rotation_std} rad")
    translation = translation_std * rng.standard_normal(3)
    rotation_vector = rotation_std * rng.standard_normal(3)
    noise = np.eye(4)
    noise[:3, :3] = Rotation.from_rotvec(rotation_vector).as_matrix()
    noise[:3, 3] = translation
    return grasp_pose @ noise


def trial_seed(root_seed: int, grasp_index: int, trial_index: int) -> int:
    """Seed (0 <= seed < 2^63, fits int64 columns) of one trial: the first 64-bit word of
    numpy's SeedSequence(root_seed, spawn_key=(grasp_index, trial_index)) with the top bit
    cleared. Depends on nothing else (not on call order or the process)."""
    key = [operator.index(x) for x in (root_seed, grasp_index, trial_index)]
    if min(key) < 0:
        raise ValueError(f"root seed, grasp and trial indices must be non-negative integers, got {key}")
    state = np.random.SeedSequence(key[0], spawn_key=tuple(key[1:])).generate_state(1, np.uint64)[0]
    return int(state) & (2**63 - 1)

