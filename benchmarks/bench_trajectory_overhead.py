"""Cost of recording a trajectory: a cube trial (grasp 0, default SimParams, seed 1) with and
without record="trajectory", interleaved, median of N runs each (default 3). Prints wall-clock and
CPU times and their ratios (on / off); the verdicts must be identical.

    .venv/bin/python benchmarks/bench_trajectory_overhead.py [N]
"""

import sys
import time

import numpy as np

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps


def main(repeats: int = 3) -> None:
    data = resolve_data_dir()
    mesh, mass = load_object(data, "cube_3cm")
    obj = GraspObject.from_file(mesh, mass, name="cube_3cm")
    physical = load_physical_grasps(data, "cube_3cm")
    args = (obj, physical.object_poses[0], physical.grasp_poses[0], SimParams())
    simulate_grasp(*args, seed=1, record="trajectory")  # compile and warm up
    wall, cpu, summaries = {"off": [], "on": []}, {"off": [], "on": []}, {}
    for _ in range(repeats):
        for mode, record in (("off", ()), ("on", "trajectory")):
            w, c = time.perf_counter(), time.process_time()
            result = simulate_grasp(*args, seed=1, record=record)
            wall[mode].append(time.perf_counter() - w)
            cpu[mode].append(time.process_time() - c)
            summaries[mode] = {k: v for k, v in result.summary().items() if not k.startswith("wall_time")}
    assert str(summaries["off"]) == str(summaries["on"]), "recording changed the trial"
    for name, times in (("wall", wall), ("cpu", cpu)):
        off, on = np.median(times["off"]), np.median(times["on"])
        print(f"{name}: off {off:.2f} s, on {on:.2f} s (median of {repeats}); ratio on/off {on / off:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
