"""Who carries the contact compliance, the pad or the barrier layer? The cube grasps at several dhat.

Runs the 25 physical cube grasps without pose noise under each close rule at the study's
setting (config/config.yaml `sim`, E_ref 1e8 Pa, mu 0.4, the calibration's jaw) once per
activation distance of `--dhat` (m; "auto" is SimParams.dhat None: 1e-3 x the trial's scene
diagonal). At the close (the last step before the lift) it measures per pad the pad's
compression (m: the largest displacement of a pad node against the jaw's closing direction,
relative to the rest shape carried by the jaw) and the barrier gap (m: the smallest pad-object
distance), and their ratio, which is above 1 where the pad's own deformation, not the layer
the barrier keeps between the surfaces, carries most of the contact's give.

Prints per dhat and rule: the verdicts (how many held, and the labels that differ from the next
smaller dhat's), the closing force (median and range, N), the compression and gap (medians, um),
the ratio (median and range), the barrier stiffness kappa at the close, Newton iterations and
wall time per trial (medians).

    .venv/bin/python benchmarks/bench_contact_layer.py --dhat auto 2e-5 1e-5 5e-6 2e-6 1e-6 --out layer.json
"""

import argparse
import dataclasses
import json
import os
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import yaml

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.ipc_backend import OBJECT as OBJECT_BODY, PADS, IpcBackend
from ipcgrasp.grasp.pose import PoseRoundingWarning

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
OBJECT = "cube_3cm"
E_REF, MU_REF = 1e8, 0.4

_CUBE = {}  # per worker process: "object" (GraspObject) and "physical" (its physical grasps)


class LayerProbe(IpcBackend):
    """The IPC backend, measuring after every step with the jaws not yet lifted the pads'
    compression and barrier gap (m, per pad) and the barrier stiffness: at the end of a trial
    `close` holds those of the last such step, the close."""

    def __init__(self, obj, object_pose, tooltip_poses, params, gripper):
        super().__init__(obj, object_pose, tooltip_poses, params, gripper)
        self.rest = gripper.pad_mesh().nodes  # (N, 3) m in the tooltip frame, z the closing direction
        self.close = None
        self.weight = obj.mass * np.asarray(self.sim.settings.gravity)  # N
        self.imbalance = 0.0  # N, the largest net force on the object in a step taken after the close

    def step(self, closed, lifted, *args, **kwargs):
        report = super().step(closed, lifted, *args, **kwargs)
        if report is not None and lifted > 0.0:
            o = self.sim.index[OBJECT_BODY]
            net = self.stats.contact_force[o].sum(axis=0) + self.stats.friction_force[o].sum(axis=0) + self.weight
            self.imbalance = max(self.imbalance, float(np.linalg.norm(net)))
        if report is not None and lifted == 0.0:
            poses = self.tooltip_poses(closed, lifted)
            compression = []
            for i in range(2):
                local = (self.sim.vertices(PADS[i]) - poses[i, :3, 3]) @ poses[i, :3, :3]
                compression.append(float(np.max(self.rest[:, 2] - local[:, 2])))
            self.close = dict(compression=compression, gap=[self.pad_object_distance(i, 1.0) for i in range(2)],
                              kappa=float(self.sim.barrier_stiffness), dhat_used=float(self.sim.dhat))
        return report


def load_cube(data_dir: str) -> None:
    """Load the cube and its physical grasps into this process (a pool worker's initializer)."""
    warnings.simplefilter("ignore", PoseRoundingWarning)
    mesh_path, mass = load_object(data_dir, OBJECT)
    _CUBE["object"] = GraspObject.from_file(mesh_path, mass, OBJECT)
    _CUBE["physical"] = load_physical_grasps(data_dir, OBJECT)


def run_trial(job) -> dict:
    """One noise-free trial as a row: dhat (m as asked, None: SimParams' default), rule, grasp,
    label, close_forces (N), compression and gap (m per pad, at the close), kappa, dhat_used (m),
    newton_iterations, wall_s."""
    params, dhat, rule, grasp = job
    physical = _CUBE["physical"]
    probe = {}

    def backend(*args):
        probe["backend"] = LayerProbe(*args)
        return probe["backend"]

    started = time.perf_counter()
    result = simulate_grasp(_CUBE["object"], physical.object_poses[grasp], physical.grasp_poses[grasp],
                            SimParams(**params, close_rule=rule, dhat=dhat), 0, backend=backend)
    close = probe["backend"].close or dict(compression=[np.nan] * 2, gap=[np.nan] * 2, kappa=np.nan,
                                           dhat_used=probe["backend"].sim.dhat)
    return dict(dhat=dhat, rule=rule, grasp=grasp, label=result.failure_mode or "held",
                close_forces=[float(f) for f in result.close_forces], **close,
                imbalance=probe["backend"].imbalance,
                newton_iterations=int(result.newton_iterations), wall_s=time.perf_counter() - started)


def summary(rows: list, finer: list | None) -> str:
    """One line for the rows of one dhat and rule (`finer`: the next smaller dhat's rows)."""
    held = sum(r["label"] == "held" for r in rows)
    changed = [] if finer is None else [f"g{a['grasp']} {a['label']}->{b['label']}" for a, b in zip(rows, finer)
                                        if a["label"] != b["label"]]
    closed = [r for r in rows if np.isfinite(r["close_forces"][0])]
    force = [max(r["close_forces"]) for r in closed]
    comp = [np.mean(r["compression"]) * 1e6 for r in closed]
    gap = [np.mean(r["gap"]) * 1e6 for r in closed]
    ratio = [c / g for c, g in zip(comp, gap) if g > 0]

    def med(values, fmt):
        return format(statistics.median(values), fmt) if values else "-"

    return (f"held {held:2d}/{len(rows)}, F close {med(force, '.2f')} N [{min(force, default=np.nan):.2f}, "
            f"{max(force, default=np.nan):.2f}], compression {med(comp, '.2f')} um, gap {med(gap, '.3f')} um, "
            f"ratio {med(ratio, '.3g')} [{min(ratio, default=np.nan):.3g}, {max(ratio, default=np.nan):.3g}], "
            f"kappa {med([r['kappa'] for r in closed], '.3g')}, net force on the object in lift and hold "
            f"{med([r['imbalance'] for r in closed], '.2g')} N [max {max((r['imbalance'] for r in closed), default=0):.2g}], "
            f"iterations "
            f"{med([r['newton_iterations'] for r in rows], '.0f')}, wall {med([r['wall_s'] for r in rows], '.2f')} s"
            + (f"; labels unlike the next smaller dhat: {', '.join(changed)}" if changed else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dhat", nargs="+", default=["auto", "2e-5", "1e-5", "5e-6", "2e-6", "1e-6"],
                        help="activation distances (m), 'auto' for SimParams' default")
    parser.add_argument("--rules", default="force,psi")
    parser.add_argument("--grasps", type=int, nargs="*", default=list(range(25)))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tolerance-per-dhat", type=float,
                        help="1/s: newton_tolerance = this x dhat for every numeric dhat (default: the study's)")
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args()
    config = yaml.safe_load(CONFIG.read_text())
    params = SimParams(**{**config["sim"], "noise_translation": 0.0, "noise_rotation": 0.0}, E=E_REF, mu=MU_REF,
                       jaw=config["calibration"]["jaw"]).to_dict()
    for key in ("close_rule", "dhat"):
        params.pop(key)
    dhats = [None if d == "auto" else float(d) for d in args.dhat]
    def with_tolerance(d):
        if d is None or args.tolerance_per_dhat is None:
            return params
        return {**params, "newton_tolerance": args.tolerance_per_dhat * d}

    jobs = [(with_tolerance(d), d, rule, g) for d in dhats for rule in args.rules.split(",") for g in args.grasps]
    with ProcessPoolExecutor(args.workers, initializer=load_cube, initargs=(str(resolve_data_dir()),)) as pool:
        rows = list(pool.map(run_trial, jobs))
    for rule in args.rules.split(","):
        by_dhat = [[r for r in rows if r["dhat"] == d and r["rule"] == rule] for d in dhats]
        for k, d in enumerate(dhats):
            used = statistics.median(r["dhat_used"] for r in by_dhat[k])
            label = "auto" if d is None else f"{d * 1e6:g} um"
            finer = by_dhat[k + 1] if k + 1 < len(dhats) else None
            print(f"{rule:5s} dhat {label:>7s} ({used * 1e6:.3g} um): {summary(by_dhat[k], finer)}")
    if args.out:
        Path(args.out).write_text(json.dumps(dict(dhat=args.dhat, rows=rows), indent=1, default=float))


if __name__ == "__main__":
    main()
