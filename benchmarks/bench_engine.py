"""Engine speed on the grasp scene: two Neo-Hookean pads gripping and lifting the 3 cm cube.

Reports, per pad resolution and cube subdivision, the median over repeats of the whole trial's
wall time, time per step and per Newton iteration. Run: .venv/bin/python benchmarks/bench_engine.py
"""

import argparse
import platform
import statistics
import time

import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.gripper import Gripper


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grasp", type=int, default=0)
    parser.add_argument("--resolutions", type=float, nargs="+", default=[3e-3, 2e-3])
    parser.add_argument("--subdivisions", type=int, nargs="+", default=[0, 2])
    args = parser.parse_args()
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    grasps = load_physical_grasps(data, "cube_3cm")
    cube = trimesh.load(mesh_path, force="mesh")
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"{'pad res [mm]':>12} {'pad nodes/tets':>15} {'cube faces':>10} {'trial [s]':>10} {'steps':>6} "
          f"{'ms/step':>8} {'iters':>6} {'ms/iter':>8} {'success':>8}")
    for resolution in args.resolutions:
        pad = Gripper.yumi(pad_resolution=resolution).pad_mesh()
        for subdivisions in args.subdivisions:
            mesh = cube.copy()
            for _ in range(subdivisions):
                mesh = mesh.subdivide()
            obj = GraspObject.from_mesh(mesh, mass, "cube_3cm")
            params = SimParams(noise_translation=0, noise_rotation=0, pad_resolution=resolution)
            simulate_grasp(obj, grasps.object_poses[args.grasp], grasps.grasp_poses[args.grasp], params)  # compile
            runs = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                r = simulate_grasp(obj, grasps.object_poses[args.grasp], grasps.grasp_poses[args.grasp], params)
                runs.append((time.perf_counter() - t0, r))
            wall = statistics.median(t for t, _ in runs)
            r = runs[0][1]
            print(f"{resolution * 1e3:>12.1f} {len(pad.nodes):>7}/{len(pad.tets):<7} {len(mesh.faces):>10} "
                  f"{wall:>10.2f} {r.steps:>6} {1e3 * wall / r.steps:>8.1f} {r.newton_iterations:>6} "
                  f"{1e3 * wall / max(r.newton_iterations, 1):>8.1f} {str(r.success):>8}")


if __name__ == "__main__":
    main()
