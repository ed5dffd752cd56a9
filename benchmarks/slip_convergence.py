"""Are a labelled dataset's slips physics or discretisation? Every slip that no margin explains,
rerun at a refined solver.

Reads the records `dataset_objects.py` wrote under OUT (one directory per object of the
real-object set) and picks each slip that no margin at the close explains
(`dataset_objects.explained`: the gravity torque within the pads' torsional capacity, the weight
within the pads' friction 2 mu F, the contact normals inside the friction cone; with --all, every
slip). Each is simulated again from its record (object and grasp pose, seed,
the study's SimParams) at dt / 2 and at the convergence benchmark's reference (dt / 4,
newton_tolerance / 10, dhat / 2: bench_convergence.py), and printed with both labels and a
verdict:
- "converged slip": a slip at dt / 2 and at the reference: the model's physics, whatever the
  margins at the close say;
- "discretisation": held at the reference: the study's time step or tolerance decides the label;
- "unsettled": any other pair of labels (another failure mode at the reference, or a slip at
  the reference that dt / 2 holds).
Run:
.venv/bin/python benchmarks/slip_convergence.py --out objects_dataset [--objects duck bunny] [--all] [--workers 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from bench_convergence import DHAT_SCALE, DT_SCALE, TOLERANCE_SCALE, ScaledDhat
from dataset_objects import explained
from objects import OBJECTS, grasp_object

from ipcgrasp import SimParams
from ipcgrasp.dataset import read_records
from ipcgrasp.grasp.grip_motion import GRAVITY
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.simulate import run_trial

REFINEMENTS = {"dt / 2": (0.5, 1.0, 1.0), "reference": (DT_SCALE, TOLERANCE_SCALE, DHAT_SCALE)}
"""Each refined setting's factors on the study's dt, newton_tolerance and dhat."""

_OBJECTS = {}  # per worker process: name -> GraspObject


def refined(params: SimParams, dt_scale: float, tolerance_scale: float) -> SimParams:
    """params with dt and newton_tolerance scaled, and the Newton budget per step kept."""
    return dataclasses.replace(params, dt=params.dt * dt_scale, newton_tolerance=params.newton_tolerance * tolerance_scale,
                               newton_budget=round(params.newton_budget / dt_scale))


def rerun(job) -> tuple:
    """One slip at one refined setting: (job key, label, reason, CPU s)."""
    name, record, k, setting = job
    if name not in _OBJECTS:
        _OBJECTS[name] = grasp_object(name)[0]
    dt_scale, tolerance_scale, dhat_scale = REFINEMENTS[setting]
    params = refined(SimParams(**record["params"]), dt_scale, tolerance_scale)
    gripper = Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
    started = time.process_time()
    result = run_trial(_OBJECTS[name], np.array(record["object"]["pose"]), np.array(record["gripper"]["pose"]), params,
                       record["trials"][k]["seed"], gripper=gripper, backend=ScaledDhat(dhat_scale))
    return (name, record["index"], k, setting), result.failure_mode or "held", result.reason or "", \
        time.process_time() - started


def verdict(at_half: str, at_reference: str) -> str:
    """The module docstring's verdict from the labels at dt / 2 and at the reference."""
    if at_half == "slip" and at_reference == "slip":
        return "converged slip"
    if at_reference == "held":
        return "discretisation"
    return "unsettled"


def margins(trial: dict, record: dict) -> str:
    """The slip's margins at the close, briefly: torque vs capacity (N mm), 2 mu F / m g, tilt."""
    def number(value, scale):
        return "?" if value is None else f"{value * scale:.1f}"

    forces = [f for f in trial["close_forces"] if f is not None]
    ratio = 2.0 * record["params"]["mu"] * float(np.mean(forces)) / (record["object"]["mass"] * GRAVITY) if forces else math.nan
    return (f"torque {number(trial['gravity_torque'], 1e3)} / capacity {number(trial['torsional_capacity'], 1e3)} N mm, "
            f"2 mu F = {ratio:.0f} m g, tilt {number(trial['contact_tilt'], 180 / math.pi)} deg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the directory dataset_objects.py wrote (one folder per object)")
    parser.add_argument("--objects", nargs="+", choices=list(OBJECTS), default=list(OBJECTS))
    parser.add_argument("--all", action="store_true", help="rerun every slip, also those a margin explains")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                        help="processes running trials (default: the cores this process may use)")
    args = parser.parse_args()
    slips = []
    for name in args.objects:
        folder = Path(args.out) / name
        if not folder.is_dir():
            continue
        for record in read_records(folder).values():
            for k, trial in enumerate(record["trials"]):
                if trial["failure_mode"] == "slip" and (args.all or explained(trial, record) is None):
                    slips.append((name, record, k))
    if not slips:
        print(f"no {'slip' if args.all else 'unexplained slip'} under {args.out}")
        return
    jobs = [(name, record, k, setting) for name, record, k in slips for setting in REFINEMENTS]
    print(f"{len(slips)} slips, {len(jobs)} reruns on {args.workers} processes; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    labels, started = {}, time.perf_counter()
    with Pool(args.workers) as pool:
        for done, (key, label, reason, cpu) in enumerate(pool.imap_unordered(rerun, jobs), 1):
            labels[key] = (label, reason, cpu)
            elapsed = time.perf_counter() - started
            print(f"  [{done}/{len(jobs)}, ETA {elapsed / done * (len(jobs) - done):.0f} s] {key[0]} grasp {key[1]} "
                  f"trial {key[2]} at {key[3]}: {label} ({cpu:.1f} s CPU)", flush=True)
    print("\n| object | grasp / trial | slip | margins at the close | dt / 2 | reference | verdict |\n"
          "|---|---|---|---|---|---|---|")
    verdicts = Counter()
    for name, record, k in slips:
        trial = record["trials"][k]
        half, reference = (labels[(name, record["index"], k, s)][0] for s in REFINEMENTS)
        verdicts[verdict(half, reference)] += 1
        why = explained(trial, record)
        print(f"| {name} | {record['index']} / {k} | {trial['slip_kind'] or 'unclassified'}"
              f"{'' if why is None else ' (' + why + ')'} | {margins(trial, record)} | {half} | {reference} "
              f"| {verdict(half, reference)} |")
    print("\n" + ", ".join(f"{v}: {n}" for v, n in verdicts.most_common()))
    for name, record, k in slips:
        for s in REFINEMENTS:
            label, reason, _ = labels[(name, record["index"], k, s)]
            if label != "held":
                print(f"{name} grasp {record['index']} trial {k} at {s}: {label}: {reason}")


if __name__ == "__main__":
    main()
