"""All 25 cube grasps x N perturbed trials against the physical outcomes (issue 5's check).

Prints per grasp: simulated robustness R, physical robustness, failure modes, closing forces and
the median per-trial wall time; then the confusion of (R >= 0.5) against (physical >= 0.5), and
the failure-mode counts. Run: .venv/bin/python benchmarks/bench_cube_robustness.py [--E 1e8 ...]
"""

import argparse
import collections
import platform
import statistics
import time

import numpy as np

from ipcgrasp import GraspObject, SimParams, robustness
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--E", type=float, default=1e8)
    parser.add_argument("--mu", type=float, default=0.4)
    parser.add_argument("--eps-v", type=float, default=SimParams.eps_v)
    parser.add_argument("--close-rule", default="force", choices=["force", "psi"])
    parser.add_argument("--grasps", type=int, nargs="*", default=None)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    physical = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(mesh_path, mass, "cube_3cm")
    params = SimParams(E=args.E, mu=args.mu, close_rule=args.close_rule, eps_v=args.eps_v)
    grasps = args.grasps if args.grasps is not None else range(physical.n_grasps)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}; "
          f"E={args.E:g} Pa, mu={args.mu}, eps_v={args.eps_v:g} m/s, rule={args.close_rule}, {args.trials} trials, {args.workers} workers")
    print(f"{'grasp':>5} {'R':>5} {'phys':>5} {'F1 [N]':>7} {'F2 [N]':>7} {'trial [s]':>9}  failure modes")
    rows, modes, walls = [], collections.Counter(), []
    started = time.perf_counter()
    for g in grasps:
        rob = robustness(obj, physical.object_poses[g], physical.grasp_poses[g], params, args.trials, seed=g,
                         workers=args.workers)
        trial_modes = [t.failure_mode or "-" for t in rob.trials]
        modes.update(m for m in trial_modes if m != "-")
        walls += [t.wall_time for t in rob.trials]
        closed = np.array([t.close_forces for t in rob.trials if np.isfinite(t.close_time)], dtype=float)
        f1, f2 = closed.mean(axis=0) if len(closed) else (np.nan, np.nan)
        rows.append((rob.robustness, physical.robustness[g]))
        print(f"{g:>5} {rob.robustness:>5.2f} {physical.robustness[g]:>5.2f} {f1:>7.1f} {f2:>7.1f} "
              f"{statistics.median(t.wall_time for t in rob.trials):>9.2f}  {' '.join(trial_modes)}", flush=True)
    sim, phys = np.array(rows).T
    tp = int(np.sum((sim >= 0.5) & (phys >= 0.5)))
    fp = int(np.sum((sim >= 0.5) & (phys < 0.5)))
    fn = int(np.sum((sim < 0.5) & (phys >= 0.5)))
    tn = int(np.sum((sim < 0.5) & (phys < 0.5)))
    print(f"\nR>=0.5 vs physical>=0.5: TP {tp} FP {fp} FN {fn} TN {tn}; "
          f"accuracy {(tp + tn) / len(sim):.2f}; mean |R - phys| {np.mean(np.abs(sim - phys)):.2f}")
    print(f"failure modes: {dict(modes)}")
    print(f"per-trial wall time: median {statistics.median(walls):.2f} s, "
          f"quartiles {np.percentile(walls, 25):.2f}-{np.percentile(walls, 75):.2f} s; "
          f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
