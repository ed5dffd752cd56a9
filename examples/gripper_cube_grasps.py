"""A 3 cm cube grasped top-down by each shipped gripper (`ipcgrasp grippers`): the final frame of
each trial, held after a short lift, side by side in one PNG (docs/grippers.png).

    .venv/bin/python examples/gripper_cube_grasps.py [OUT.png]
"""

import io
import sys

import numpy as np
import trimesh
from PIL import Image

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.grasp.description import shipped_grippers
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.viz.render import render_frame, trial_phases

CUBE = 0.03  # m, resting 1 mm above the ground
out = sys.argv[1] if len(sys.argv) > 1 else "grippers.png"
cube = GraspObject.from_mesh(trimesh.creation.box(extents=(CUBE, CUBE, CUBE)), mass=0.05, name="cube")


def top_down(gripper: Gripper) -> np.ndarray:
    """Gripper z down, closing along world x, tooltips at the cube's centre, raised so that the
    jaws' lowest point stays 2 mm above the ground."""
    tip = max(gripper.pad_mesh().nodes[:, 0].max(), gripper.backing_mesh().vertices[:, 0].max())
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[2, 3] = gripper.tooltip_transforms[:, 2, 3].mean() + max(0.0, tip - (CUBE / 2 - 1e-3))
    return pose


images = []
for name in shipped_grippers():
    gripper = Gripper.from_description(name)
    params = SimParams(jaw=gripper.pad_kind, close_rule="force", noise_translation=0.0, noise_rotation=0.0,
                       lift_height=0.01, hold_time=0.04)
    result = simulate_grasp(cube, np.eye(4), top_down(gripper), params, gripper=gripper, record="frames")
    print(f"{name}: {'held' if result.success else result.failure_mode} ({result.reason}); closing forces "
          f"{result.close_forces[0]:.1f} N, {result.close_forces[1]:.1f} N; pads started {result.start_opening * 1e3:.0f} "
          "mm apart")
    images.append(render_frame(result.frames[-1], result.faces, phase=trial_phases(result)[-1],
                               caption=name, azimuth=60.0, size=(440, 320)))
png = io.BytesIO()
Image.fromarray(np.concatenate(images, axis=1)).save(png, format="PNG", optimize=True)
write_bytes_atomic(out, png.getvalue())
print(f"wrote {out}")
