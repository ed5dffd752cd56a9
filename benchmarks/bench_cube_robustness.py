"""All 25 cube grasps x N perturbed trials with the study's seeds, against the physical outcomes.

Trial k of grasp g uses `trial_seed(seed, g, k)`, the seed the study gives it (root seed 0 in
config/config.yaml), so every trial here is a trial of the study's grid cell at this E, mu and close
rule. Prints per grasp and rule: simulated robustness R, physical robustness, each trial's label,
mean closing forces and the median wall time; then per rule the confusion of (R >= 0.5) against
(physical >= 0.5) and the failure-label counts. `--out` writes every trial's verdict, label and
closing forces as JSON; `--compare` lists every trial whose verdict or label differs from an
earlier `--out` file and the largest closing-force difference, to check an engine change:

    .venv/bin/python benchmarks/bench_cube_robustness.py --out before.json
    (change the engine)
    .venv/bin/python benchmarks/bench_cube_robustness.py --out after.json --compare before.json
"""

import argparse
import collections
import json
import os
import platform
import statistics
import time

import numpy as np

from ipcgrasp import GraspObject, SimParams, robustness
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps


def run_rule(obj, physical, grasps, params, args):
    """Rows {grasp, trial, seed, success, label, close_forces, wall_s} of one close rule."""
    rows, modes, walls, confusion = [], collections.Counter(), [], collections.Counter()
    print(f"rule {params.close_rule}: {'grasp':>5} {'R':>5} {'phys':>5} {'F1 [N]':>7} {'F2 [N]':>7} "
          f"{'trial [s]':>9}  labels")
    for g in grasps:
        rob = robustness(obj, physical.object_poses[g], physical.grasp_poses[g], params, args.trials,
                         seed=args.seed, grasp_index=g, workers=args.workers)
        for k, t in enumerate(rob.trials):
            rows.append(dict(rule=params.close_rule, grasp=int(g), trial=k, seed=int(t.seed),
                             success=bool(t.success), label=t.failure_mode or "held",
                             close_forces=[float(f) for f in t.close_forces], wall_s=float(t.wall_time)))
        labels = [t.failure_mode or "held" for t in rob.trials]
        modes.update(m for m in labels if m != "held")
        walls += [t.wall_time for t in rob.trials]
        closed = np.array([t.close_forces for t in rob.trials if np.isfinite(t.close_time)], dtype=float)
        f1, f2 = closed.mean(axis=0) if len(closed) else (np.nan, np.nan)
        phys = physical.robustness[g]
        confusion[(rob.robustness >= 0.5, phys >= 0.5)] += 1
        print(f"{'':>{len(params.close_rule) + 6}}{g:>5} {rob.robustness:>5.2f} {phys:>5.2f} {f1:>7.1f} {f2:>7.1f} "
              f"{statistics.median(t.wall_time for t in rob.trials):>9.2f}  {' '.join(labels)}", flush=True)
    tp, fp = confusion[(True, True)], confusion[(True, False)]
    fn, tn = confusion[(False, True)], confusion[(False, False)]
    print(f"rule {params.close_rule}: R>=0.5 vs physical>=0.5: TP {tp} FP {fp} FN {fn} TN {tn}; "
          f"accuracy {(tp + tn) / max(len(grasps), 1):.2f}; failure labels {dict(modes)}; "
          f"per-trial wall time median {statistics.median(walls):.2f} s")
    return rows


def compare(rows, path):
    """Print every trial whose verdict or label differs from the rows in `path`, and the largest
    closing-force difference over trials that closed in both."""
    with open(path) as f:
        before = {(r["rule"], r["grasp"], r["trial"]): r for r in json.load(f)["trials"]}
    changed, largest = 0, 0.0
    for r in rows:
        old = before.get((r["rule"], r["grasp"], r["trial"]))
        if old is None:
            continue
        if (old["success"], old["label"]) != (r["success"], r["label"]):
            changed += 1
            print(f"changed: rule {r['rule']} grasp {r['grasp']} trial {r['trial']}: {old['label']} -> {r['label']}")
        diff = np.abs(np.array(old["close_forces"], float) - np.array(r["close_forces"], float))
        if np.all(np.isfinite(diff)):
            largest = max(largest, float(diff.max()))
    print(f"{changed} trial verdicts or labels changed against {path}; "
          f"largest closing-force difference {largest:.3g} N")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="the study's root seed (config/config.yaml seed)")
    parser.add_argument("--E", type=float, default=1e8)
    parser.add_argument("--mu", type=float, default=0.4)
    parser.add_argument("--rules", default="force,psi")
    parser.add_argument("--grasps", type=int, nargs="*", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="write every trial's verdict as JSON here")
    parser.add_argument("--compare", help="an earlier --out file: list the trials whose verdict changed")
    args = parser.parse_args()
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    physical = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(mesh_path, mass, "cube_3cm")
    grasps = args.grasps if args.grasps is not None else range(physical.n_grasps)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}; "
          f"E={args.E:g} Pa, mu={args.mu}, rules {args.rules}, {args.trials} trials per grasp, "
          f"root seed {args.seed}, {args.workers} workers")
    started = time.perf_counter()
    rows = []
    for rule in args.rules.split(","):
        rows += run_rule(obj, physical, list(grasps), SimParams(E=args.E, mu=args.mu, close_rule=rule), args)
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"E": args.E, "mu": args.mu, "seed": args.seed, "trials": rows}, f, indent=1)
        os.replace(tmp, args.out)
    if args.compare:
        compare(rows, args.compare)


if __name__ == "__main__":
    main()
