"""Compile the simulator's numba kernels ahead of the first trial (`ipcgrasp compile`).

numba compiles a kernel on its first call and keeps the machine code in its on-disk cache
(`__pycache__` beside the sources, or NUMBA_CACHE_DIR); a fresh install's first trial therefore
spends about 50-65 s of CPU compiling and every later process loads the cache in a few seconds.
`warm_up` pays that once, up front: it simulates one grasp of a synthetic 3 cm box (no data
needed, no pose noise) with each contact model the study uses, which calls every kernel of a
trial with the argument types a real trial passes. `./run.sh` runs it after installing.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import trimesh

from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import CONTACT_MODELS, SimParams
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.simulate import simulate_grasp

BOX_SIDE = 0.03  # m, the bundled cube's size
BOX_MASS = 0.003  # kg


def box_grasp(gripper: Gripper) -> tuple[GraspObject, np.ndarray, np.ndarray]:
    """A 3 cm box resting on the ground and a top-down grasp across it at mid-height:
    (object, object_pose, grasp_pose), poses 4x4 in m."""
    obj = GraspObject.from_mesh(trimesh.creation.box(extents=(BOX_SIDE,) * 3), BOX_MASS, "warm-up box")
    object_pose, grasp_pose = place_scene(obj.mesh, np.eye(4), gripper.top_down_grasp())
    return obj, object_pose, grasp_pose


def warm_up(log: Callable[[str], None] = print) -> list[tuple[str, float, str]]:
    """Simulate the box grasp once per contact model (SimParams defaults otherwise) and measure
    the jaws closed into the box once, compiling what is not in numba's cache yet. Returns
    (contact model, CPU s, outcome: "held" or the failure label and reason) per model; the
    outcome is for information (the penalty model with its default stiffness lets the box slip),
    the kernels are compiled either way."""
    gripper = Gripper.yumi()
    obj, object_pose, grasp_pose = box_grasp(gripper)
    done = []
    for model in CONTACT_MODELS:
        log(f"compiling the kernels of a trial with {model} contact ...")
        started = time.process_time()
        params = SimParams(contact_model=model, noise_translation=0.0, noise_rotation=0.0)
        result = simulate_grasp(obj, object_pose, grasp_pose, params, gripper=gripper)
        seconds = time.process_time() - started
        outcome = "held" if result.success else f"{result.failure_mode}: {result.reason}"
        log(f"  {model}: {seconds:.1f} s CPU ({outcome})")
        done.append((model, seconds, outcome))
    # Opening the jaws around this box meets no placement whose bounding box touches the box's; a
    # real object's may, and those run the solids' overlap tests: the jaws closed into the box do.
    world = obj.mesh.vertices @ object_pose[:3, :3].T + object_pose[:3, 3]
    gripper.jaw_distances(grasp_pose, world, obj.mesh.faces, opening=0.5 * BOX_SIDE)
    return done
