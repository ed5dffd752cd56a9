"""grasp.warmup (`ipcgrasp compile`): its synthetic trials call the kernels of a real trial with
the same argument types, so a real trial after it compiles (or loads) nothing more."""

import json
import subprocess
import sys
import textwrap

import numpy as np

from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.warmup import box_grasp

# In a fresh process: warm up, list every ipcgrasp kernel's compiled signatures, run a real cube
# trial per contact model and list what that trial added. numba registers a signature loaded
# from its disk cache as it does a compiled one, so this holds with a warm cache too.
CHILD = textwrap.dedent("""
    import gc, json, sys, warnings
    import numba
    from ipcgrasp import GraspObject, SimParams, simulate_grasp
    from ipcgrasp.data.location import resolve_data_dir
    from ipcgrasp.data.reach import load_physical_grasps
    from ipcgrasp.grasp.warmup import warm_up

    def signatures():
        return {f"{d.py_func.__module__}.{d.py_func.__name__}{s}" for d in gc.get_objects()
                if isinstance(d, numba.core.registry.CPUDispatcher) and d.py_func.__module__.startswith("ipcgrasp")
                for s in d.signatures}

    outcomes = [outcome for _, _, outcome in warm_up(log=lambda line: None)]
    before = signatures()
    data = resolve_data_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grasps = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003)
    for model in ("ipc", "penalty"):
        simulate_grasp(obj, grasps.object_poses[0], grasps.grasp_poses[0], SimParams(contact_model=model), seed=0)
    json.dump({"outcomes": outcomes, "kernels": len(before), "added": sorted(signatures() - before)}, sys.stdout)
""")


def test_a_real_trial_after_the_warm_up_needs_no_kernel_it_did_not_compile():
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert found["outcomes"][0] == "held"  # the IPC trial lifts the box
    assert found["kernels"] > 40
    assert found["added"] == []


def test_the_warm_up_box_sits_on_the_ground_between_the_open_jaws():
    gripper = Gripper.yumi()
    obj, object_pose, grasp_pose = box_grasp(gripper)
    vertices = obj.mesh.vertices @ object_pose[:3, :3].T + object_pose[:3, 3]
    assert np.isclose(vertices[:, 2].min(), 1e-3)  # place_scene: 1 mm above the ground
    tips = gripper.tooltip_poses(grasp_pose)[:, :3, 3]
    np.testing.assert_allclose(tips.mean(axis=0), vertices.mean(axis=0), atol=1e-9)  # centred on the box
    closing = tips[1] - tips[0]
    assert abs(closing[2]) < 1e-9 and np.linalg.norm(closing) > 0.03  # horizontal, wider than the box
