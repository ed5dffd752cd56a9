"""Compliant fingers on the 3 cm cube: the verdict of each of its 25 physical grasps, without pose
noise, at several finger stiffnesses (docs/compliant_fingers.md), scored against the physical
outcomes (a grasp is robust when at least half of its physical trials held): MCC and F1 per
stiffness and close rule. One light (3 g) object cannot decide a finger stiffness: read the
table as a sensitivity check, not a calibration.

    .venv/bin/python examples/finger_stiffness_cube.py [--stiffness rigid,500,1000,2000,5000]
        [--rules force,psi] [--E 1e8] [--mu 0.4] [--grasps 25] [--workers 1] [--out rows.json]
"""

import argparse
import json
import math
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.pose import PoseRoundingWarning

OBJECT = "cube_3cm"
warnings.simplefilter("ignore", PoseRoundingWarning)  # the data's rounded rotations, repaired on load


def trial(job):
    """One grasp at one (stiffness, rule): verdict, failure label, closing forces, wall time."""
    grasp, stiffness, rule, E, mu = job
    data = resolve_data_dir()
    obj = GraspObject.from_file(*load_object(data, OBJECT), name=OBJECT)
    grasps = load_physical_grasps(data, OBJECT)
    params = SimParams(E=E, mu=mu, close_rule=rule, noise_translation=0.0, noise_rotation=0.0,
                       finger_stiffness=stiffness)
    started = time.perf_counter()
    result = simulate_grasp(obj, grasps.object_poses[grasp], grasps.grasp_poses[grasp], params, seed=0)
    return {"grasp": grasp, "stiffness": stiffness, "rule": rule, "success": bool(result.success),
            "label": result.failure_mode or "held", "reason": str(result.reason),
            "close_forces": [float(f) for f in result.close_forces], "close_opening": float(result.close_opening),
            "wall_s": time.perf_counter() - started}


def scores(predicted: np.ndarray, robust: np.ndarray) -> tuple[float, float]:
    """(MCC, F1) of predicted successes against the physically robust grasps (0 where undefined)."""
    tp, tn = np.sum(predicted & robust), np.sum(~predicted & ~robust)
    fp, fn = np.sum(predicted & ~robust), np.sum(~predicted & robust)
    d = math.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    mcc = float(tp * tn - fp * fn) / d if d else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return mcc, float(f1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stiffness", default="rigid,500,1000,2000,5000", help="N/m per finger; rigid: none")
    ap.add_argument("--rules", default="force")
    ap.add_argument("--E", type=float, default=1e8)
    ap.add_argument("--mu", type=float, default=0.4)
    ap.add_argument("--grasps", type=int, default=25, help="the first N grasps")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", help="write every row as JSON here")
    a = ap.parse_args()
    stiffnesses = [None if s.strip() == "rigid" else float(s) for s in a.stiffness.split(",")]
    rules = a.rules.split(",")
    robust = load_physical_grasps(resolve_data_dir(), OBJECT).robustness[:a.grasps] >= 0.5
    jobs = [(g, k, rule, a.E, a.mu) for rule in rules for k in stiffnesses for g in range(a.grasps)]
    rows = []
    with ProcessPoolExecutor(a.workers) as pool:
        for row in pool.map(trial, jobs):
            rows.append(row)
            print(f"{row['rule']} k={row['stiffness']} grasp {row['grasp']}: {row['label']} ({row['reason'][:50]}), "
                  f"{row['wall_s']:.1f} s", flush=True)
    rigid = {(r["rule"], r["grasp"]): r["success"] for r in rows if r["stiffness"] is None}
    print(f"{OBJECT}, {a.grasps} grasps ({int(robust.sum())} physically robust), no pose noise, E = {a.E:g} Pa, "
          f"mu = {a.mu:g}")
    print("| rule | finger stiffness (N/m) | held | MCC | F1 | verdicts changed vs rigid | failure labels |")
    print("|---|---|---|---|---|---|---|")
    for rule in rules:
        for k in stiffnesses:
            sel = [r for r in rows if r["rule"] == rule and r["stiffness"] == k]
            predicted = np.array([r["success"] for r in sel])
            mcc, f1 = scores(predicted, robust)
            changed = (sum(r["success"] != rigid[(rule, r["grasp"])] for r in sel)
                       if all((rule, r["grasp"]) in rigid for r in sel) else "-")
            labels = {}
            for r in sel:
                labels[r["label"]] = labels.get(r["label"], 0) + 1
            text = ", ".join(f"{n} {label}" for label, n in sorted(labels.items()))
            print(f"| {rule} | {'rigid' if k is None else f'{k:g}'} | {int(predicted.sum())}/{len(sel)} | "
                  f"{mcc:.2f} | {f1:.2f} | {changed} | {text} |")
    if a.out:
        with open(a.out, "w") as stream:
            json.dump({"E": a.E, "mu": a.mu, "robust": robust.tolist(), "rows": rows}, stream, indent=1)


if __name__ == "__main__":
    main()
