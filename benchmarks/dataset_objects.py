"""A labelled dataset on the real-object set (benchmarks/objects.py): `generate` end to end on
every object, then the label counts per object and one picture per outcome.

For each object of the set: the mesh through `repair_mesh`, scaled and weighed by the set's rule,
then `generate_dataset` with `--n` grasps of `--trials` perturbed trials each at the study's
default settings (`SimParams()`, the YuMi with its default pad) into OUT/<object>/. A rerun skips
the records already written, so an interrupted run continues where it stopped. An object the
sampler finds no grasp on is reported with the sampler's rejections.

Then it prints, per object, the label counts (held and every failure mode, with their share of
the trials), the sampler's acceptance, the CPU time per trial, and for every slip whether the
object pivoted about the grasp axis, slid along the pads or rolled over them, with the gravity
torque against the pads' torsional capacity and whether a margin explains it
(`benchmarks/slip_convergence.py` reruns those no margin explains at a refined solver). With
`--pictures DIR` it writes one PNG per object into DIR: a held trial and one trial of each
failure mode side by side (the first such trial in grasp order, simulated again from its seed to
draw it).
Run:
.venv/bin/python benchmarks/dataset_objects.py --out objects_dataset [--objects duck mug] \
    [--n 20] [--trials 5] [--workers 2] [--pictures docs/real_objects]
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from objects import OBJECTS, data_path, grasp_object

from ipcgrasp import GraspObject, SimParams
from ipcgrasp.dataset import RecordError, generate_dataset, read_records
from ipcgrasp.grasp.grip_motion import GRAVITY
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.simulate import run_trial
from ipcgrasp.io import write_bytes_atomic

TILE = (480, 360)
"""Width and height (pixels) of one picture in an object's row."""


def outcome(trial: dict) -> str:
    """'held' or the trial's failure mode."""
    return "held" if trial["success"] else trial["failure_mode"]


def slip_words(trial: dict, record: dict) -> str:
    """How a slip moved and the margins that explain it, in words: the gravity torque against the
    pads' torsional capacity (a pivot), the weight against the pads' friction 2 mu F and the
    contact normals' lean from the grasp axis against the friction cone (a slide or a roll)."""
    def number(value, scale, unit):
        return "?" if value is None else f"{value * scale:.1f} {unit}"

    mu = record["params"]["mu"]
    forces = [f for f in trial["close_forces"] if f is not None]
    friction = 2.0 * mu * float(np.mean(forces)) if forces else float("nan")
    weight = record["object"]["mass"] * GRAVITY
    return (f"{trial['slip_kind'] or 'unclassified'}: slid {trial['grip_slide'] * 1e3:.2f} mm, pivoted "
            f"{math.degrees(trial['grip_pivot']):.1f} deg, rolled {math.degrees(trial['grip_roll']):.1f} deg; "
            f"gravity torque {number(trial['gravity_torque'], 1e3, 'N mm')} vs torsional capacity "
            f"{number(trial['torsional_capacity'], 1e3, 'N mm')}; weight {weight:.2f} N vs 2 mu F {friction:.1f} N; "
            f"contact normals up to {number(trial['contact_tilt'], 180.0 / math.pi, 'deg')} from the grasp axis "
            f"(friction cone {math.degrees(math.atan(mu)):.0f} deg)")


def picture(record: dict, k: int, obj: GraspObject, params: SimParams, gripper: Gripper):
    """The RGB image of trial `k` of `record`: the trial simulated again from its seed (the same
    result: trials are deterministic) and its last frame drawn."""
    from ipcgrasp.viz.render import render_frame, trial_phases

    trial = record["trials"][k]
    caption = f"{obj.name} grasp {record['index']} trial {k}: {outcome(trial)}"
    result = run_trial(obj, np.array(record["object"]["pose"]), np.array(record["gripper"]["pose"]), params,
                       trial["seed"], record="frames", gripper=gripper)
    if outcome(trial) != ("held" if result.success else result.failure_mode):
        print(f"  note: {caption} came out {result.failure_mode or 'held'} when drawn again")
    if not result.frames:
        print(f"  note: {caption} recorded no frame to draw ({result.reason})")
        return None
    return render_frame(result.frames[-1], result.faces, phase=trial_phases(result)[-1], caption=caption,
                        size=TILE)


def explained(trial: dict, record: dict) -> str | None:
    """Which margin at the close explains a slip, or None: the gravity torque about the grasp axis
    above the pads' torsional capacity ("torque"), the pads' contact normals leaning beyond the
    friction cone ("normals"), or the weight above the pads' friction 2 mu F ("weight"). Each is
    asked of every kind of slip: a roll over the pads mostly comes with a pivot, and which of the
    two moved the object farther can change from one time step to another."""
    mu = record["params"]["mu"]
    torque, capacity = trial["gravity_torque"], trial["torsional_capacity"]
    if torque is not None and capacity is not None and torque > capacity:
        return "torque"
    if trial["contact_tilt"] is not None and trial["contact_tilt"] > math.atan(mu):
        return "normals"
    forces = [f for f in trial["close_forces"] if f is not None]
    if forces and record["object"]["mass"] * GRAVITY > 2.0 * mu * float(np.mean(forces)):
        return "weight"
    return None


def object_row(obj: GraspObject, records: dict, params: SimParams, gripper: Gripper, out: Path):
    """Write one PNG of a held trial and one of each failure mode of `records` side by side."""
    from PIL import Image

    chosen = {}
    for i in sorted(records):
        for k, trial in enumerate(records[i]["trials"]):
            chosen.setdefault(outcome(trial), (records[i], k))
    order = (["held"] if "held" in chosen else []) + sorted(m for m in chosen if m != "held")
    drawn = [(label, picture(*chosen[label], obj, params, gripper)) for label in order]
    order = [label for label, tile in drawn if tile is not None]
    tiles = [tile for _, tile in drawn if tile is not None]
    row = Image.new("RGB", (TILE[0] * len(tiles), TILE[1]), "white")
    for j, tile in enumerate(tiles):
        row.paste(Image.fromarray(tile), (j * TILE[0], 0))
    buffer = io.BytesIO()
    row.save(buffer, format="PNG", optimize=True)
    write_bytes_atomic(out / f"{obj.name}.png", buffer.getvalue())
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory holding one dataset directory per object")
    parser.add_argument("--objects", nargs="+", choices=list(OBJECTS), default=list(OBJECTS))
    parser.add_argument("--n", type=int, default=20, help="grasps per object (default: %(default)s)")
    parser.add_argument("--trials", type=int, default=5, help="perturbed trials per grasp (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                        help="processes running trials (default: the cores this process may use)")
    parser.add_argument("--pictures", help="directory for one PNG per object: a held trial and each failure mode")
    args = parser.parse_args()
    if data_path() is None:
        sys.exit("dataset_objects needs pybullet_data: pip install -e '.[bench]'")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    params = SimParams()
    gripper = Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    summary = []
    for name in args.objects:
        obj, repair = grasp_object(name)
        if obj is None:
            print(f"{name}: {repair}", flush=True)
            summary.append((name, 0, repair, None, None, None))
            continue
        print(f"{name}: {len(obj.mesh.vertices)} vertices, {obj.mass * 1e3:.0f} g; {repair.summary()}", flush=True)
        started = time.perf_counter()
        try:
            run = generate_dataset(obj, out / name, args.n, params, n_trials=args.trials, workers=args.workers,
                                   gripper=gripper,
                                   on_trial=lambda i, r: print(f"  grasp {i}: {r.failure_mode or 'held'} "
                                                               f"({r.wall_time:.1f} s)", flush=True))
        except RecordError as exc:
            print(f"  no grasp: {exc}", flush=True)
            summary.append((name, len(obj.mesh.vertices), "no grasp", None, None, None))
            continue
        sampling = run.sampling
        print(f"  sampler: {len(sampling.candidates)} of {sampling.attempts} ({sampling.acceptance:.2%}); "
              f"{len(run.written)} grasps simulated in {time.perf_counter() - started:.0f} s", flush=True)
        summary.append((name, len(obj.mesh.vertices), "labelled", sampling, run.records, obj))
    print("\n| object | surface vertices | sampler: accepted / tried | trials | held | slip (slid / pivoted / "
          "rolled) | other failures | solver | median wall s per trial |\n|---|---|---|---|---|---|---|---|---|")
    for name, vertices, status, sampling, records, obj in summary:
        if records is None:
            print(f"| {name} | {vertices or ''} | {status} | | | | | | |")
            continue
        trials = [t for r in records.values() for t in r["trials"]]
        counts = Counter(outcome(t) for t in trials)
        kinds = Counter(t["slip_kind"] for t in trials if t["failure_mode"] == "slip")
        others = ", ".join(f"{label} {n}" for label, n in counts.most_common()
                           if label not in ("held", "slip", "solver"))
        share = lambda n: f"{n} ({n / len(trials):.0%})"  # noqa: E731
        print(f"| {name} | {vertices} | {len(sampling.candidates)} / {sampling.attempts} ({sampling.acceptance:.2%}) "
              f"| {len(records)} x {len(trials) // max(len(records), 1)} | {share(counts['held'])} "
              f"| {share(counts['slip'])} ({kinds['slid']} / {kinds['pivoted']} / {kinds['rolled']}) | {others or '-'} "
              f"| {counts['solver']} | {np.median([t['wall_time'] for t in trials]):.1f} |")
    for name, _, _, _, records, obj in summary:
        slips = [(r["index"], k, t) for r in (records or {}).values() for k, t in enumerate(r["trials"])
                 if t["failure_mode"] == "slip"]
        if slips:
            print(f"\n{name}: {len(slips)} slips, {dict(Counter(t['slip_kind'] or 'unclassified' for _, _, t in slips))}")
            for i, k, t in slips:
                why = explained(t, records[i])
                print(f"  grasp {i} trial {k}: {slip_words(t, records[i])}; "
                      f"{'explained by the ' + why if why else 'no margin explains it'}")
    if args.pictures:
        directory = Path(args.pictures)
        directory.mkdir(parents=True, exist_ok=True)
        for name, _, _, _, records, obj in summary:
            if records:
                order = object_row(obj, read_records(out / name), params, gripper, directory)
                print(f"{directory / name}.png: {', '.join(order)}", flush=True)


if __name__ == "__main__":
    main()
