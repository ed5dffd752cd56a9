"""Compliant fingers (SimParams.finger_stiffness): off by default, each jaw on a spring along its
closing direction when on, the spring carrying the pad's load (k u = F), and a clear error
where a model cannot do it."""

import numpy as np
import pytest

from ipcgrasp import SimParams
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.ipc_backend import BACKINGS, OBJECT, PADS, IpcBackend, build_scene
from ipcgrasp.grasp.params import SimParamsError
from ipcgrasp.grasp.scene import place_scene

from .test_procedure import block, top_down_grasp


def scene_inputs():
    gripper, obj = Gripper.yumi(), block(0.01)
    object_pose, grasp_pose = place_scene(obj.mesh, np.eye(4), top_down_grasp())
    return obj, object_pose, gripper.tooltip_poses(grasp_pose, 0.034), gripper


def test_fingers_are_rigid_by_default_and_mounted_along_the_closing_directions_when_compliant():
    obj, object_pose, tooltips, gripper = scene_inputs()
    rigid = build_scene(obj, object_pose, tooltips, gripper, SimParams())
    assert SimParams().finger_stiffness is None and rigid.mounts == []
    soft = build_scene(obj, object_pose, tooltips, gripper, SimParams(finger_stiffness=2000.0))
    assert soft.n_dof == rigid.n_dof + 2
    for i, mount in enumerate(soft.mounts):
        assert mount.bodies == (PADS[i], BACKINGS[i]) and mount.stiffness == 2000.0
        np.testing.assert_allclose(mount.axis, tooltips[i][:3, 2])


@pytest.mark.parametrize("value", [0.0, -5.0, float("inf"), float("nan"), "stiff", True])
def test_finger_stiffness_must_be_positive_and_finite(value):
    with pytest.raises(SimParamsError, match="finger_stiffness") as info:
        SimParams(finger_stiffness=value)
    assert info.value.field == "finger_stiffness"


@pytest.mark.parametrize("stiffness", [1000.0, 4000.0])
def test_a_squeezing_finger_deflects_by_its_load_over_k(stiffness):
    """Close the jaws 1.5 mm past contact on the 30 mm block and hold: each finger's deflection
    along its closing direction is minus the pad's load along it over k (the spring carries what
    the pad carries), the backing moved with it, and the fingers gave way by the amount the pads
    did not compress."""
    obj, object_pose, tooltips, gripper = scene_inputs()
    backend = IpcBackend(obj, object_pose, tooltips, SimParams(finger_stiffness=stiffness), gripper)
    sim = backend.sim
    for k in range(1, 16):
        backend.step(min(k, 10) * 3.5e-4, 0.0)  # 2 mm to contact, then 1.5 mm of squeeze
    u = backend.finger_deflections()
    o = sim.index[OBJECT]
    for i in range(2):
        p = sim.index[PADS[i]]
        load = (backend.stats.contact_force[p, o] + backend.stats.friction_force[p, o]) @ sim.mounts[i].axis
        assert load < -1.0  # the object pushes the pad open with several newtons
        assert u[i] == pytest.approx(load / stiffness, rel=2e-3)
        rest = sim.bodies[sim.index[BACKINGS[i]]].vertices
        pose = backend.tooltip_poses(3.5e-3, 0.0)[i]
        np.testing.assert_allclose(sim.vertices(BACKINGS[i]),
                                   rest @ pose[:3, :3].T + pose[:3, 3] + u[i] * sim.mounts[i].axis, atol=1e-12)


def test_the_mujoco_baseline_rejects_compliant_fingers():
    from ipcgrasp.baselines.mujoco_flex import predict
    obj, object_pose, _, _ = scene_inputs()
    with pytest.raises(ValueError, match="finger_stiffness"):
        predict(obj, object_pose, top_down_grasp(), SimParams(finger_stiffness=1000.0), seed=0)
