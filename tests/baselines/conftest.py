"""Grasp scenes shared by the analytic-model tests (REACH, 6DFC)."""

import numpy as np
import pytest

from ipcgrasp.baselines.contacts import grasp_contacts
from ipcgrasp.grasp.gripper import Gripper

from .test_contacts import box_object, top_down_grasp


@pytest.fixture
def centred_box():
    """A 4 x 3 x 3 cm box of 0.2 kg at the world origin and the top-down grasp through its centre
    of mass: (object, object_pose, grasp_pose)."""
    return box_object([0.04, 0.03, 0.03], 0.2), np.eye(4), top_down_grasp([0.0, 0.0, 0.0])


@pytest.fixture
def full_pad_contacts():
    """full_pad_contacts(jaw="rounded"): the YuMi's contacts with jaw pads `jaw` on a 5 x 3 x 5 cm
    box wider than the pads, grasped top-down through its centre, so every footprint cell touches."""
    return lambda jaw="rounded": grasp_contacts(box_object([0.05, 0.03, 0.05]), np.eye(4),
                                                top_down_grasp([0.0, 0.0, 0.0]), Gripper.yumi(jaw))
