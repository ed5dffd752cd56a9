"""Simulate one physical grasp of the 3 cm cube, read its outcome, save its trajectory, a force
plot and a picture (the README's first grasp, recorded and drawn, with a short lift so it runs
in seconds).

    .venv/bin/python examples/simulate_one_grasp.py [OUT_DIR]
"""

import sys
from pathlib import Path

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.trajectory import read_trajectory, write_trajectory
from ipcgrasp.viz import render_stills
from ipcgrasp.viz.trajectory_plot import plot_trajectory

out = Path(sys.argv[1] if len(sys.argv) > 1 else "example_output")
data = resolve_data_dir()
obj = GraspObject.from_file(*load_object(data, "cube_3cm"), name="cube_3cm")
grasps = load_physical_grasps(data, "cube_3cm")
params = SimParams(E=1e8, mu=0.4, close_rule="force", lift_height=0.005, hold_time=0.04)
result = simulate_grasp(obj, grasps.object_poses[3], grasps.grasp_poses[3], params, seed=0,
                        record=("frames", "trajectory"))
print(result)
print("success:", result.success, "| failure mode:", result.failure_mode, "| closing forces [N]:", result.close_forces)
write_trajectory(result, out / "grasp3.nc", params, object="cube_3cm", grasp=3)
plot_trajectory(read_trajectory(out / "grasp3.nc"), out / "grasp3_forces.png")
render_stills(result, out / "grasp3.png", caption="cube_3cm grasp 3")
print(f"wrote {out / 'grasp3.nc'}, {out / 'grasp3_forces.png'}, {out / 'grasp3.png'}")
