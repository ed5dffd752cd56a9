"""The penalty/BLEM dynamic model as a baseline: one grasp of a 3 cm cube through its centre."""

import math

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams
from ipcgrasp.baselines.penalty import penalty_params, predict
from ipcgrasp.grasp.gripper import Gripper

SIDE = 0.03


def centre_grasp() -> np.ndarray:
    """Gripper z down, jaws closing along world x, tooltips at the cube's centre (the cube's frame
    is centred on it)."""
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    depth = Gripper.yumi().tooltip_transforms[:, 2, 3].mean()
    pose[:3, 3] = -pose[:3, :3] @ [0.0, 0.0, depth]
    return pose


def test_penalty_params_switch_the_contact_model_and_widen_the_contact_tolerance():
    p = penalty_params(SimParams(penalty_margin=4e-4, contact_tol=5e-4))
    assert p.contact_model == "penalty" and p.contact_tol == pytest.approx(5e-4 + 8e-4)
    assert p.penalty_margin == 4e-4


def test_cube_grasped_through_its_centre_is_held_across_the_boundary_layers():
    cube = GraspObject.from_mesh(trimesh.creation.box(extents=(SIDE, SIDE, SIDE)), 0.01, "cube")
    params = SimParams(noise_translation=0.0, noise_rotation=0.0, lift_height=0.005, hold_time=0.04)
    prediction = predict(cube, np.eye(4), centre_grasp(), params, seed=0)
    info = prediction.info
    assert prediction.success, info["reason"]
    assert math.isnan(prediction.score) and prediction.runtime > 0
    assert info["failure_mode"] == ""
    assert min(info["close_forces"]) >= params.close_force
    # the artifacts: the pads hold the cube across the margins (force field up to 2 r) and, with
    # a 0.5 mm margin, no vertex gets inside anything
    assert 0.9 * 2 * params.penalty_margin < info["max_force_gap"] <= 2 * params.penalty_margin * (1 + 1e-9)
    assert info["max_penetration"] == 0.0
