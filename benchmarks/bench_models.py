"""Per-grasp runtime of every grasp model on the 3 cm cube, side by side in one run:
ipcgrasp and each registered baseline (soft point, REACH, 6DFC, the image-space quality, the
penalty model, MuJoCo flex pads), next to the paper's figures (Kim et al., IPC-GraspSim,
Table 4.2, one core of a 2.2 GHz Xeon E5-2698 v4; Isaac Gym on a GPU).

Every model sees the same perturbed grasps (the study's trial seeds). The time per prediction
is `Prediction.runtime` for the baselines (perturbation, placement, contacts, the model) and
`GraspResult.wall_time` for ipcgrasp; each model's first call (numba cache load, MuJoCo model
compile) is made once beforehand and left out. The contact look-up of the analytic models is
timed alone too. Run:
    .venv/bin/python benchmarks/bench_models.py [--grasps 0 3 5] [--trials 1] [--models reach 6dfc]
"""

import argparse
import platform
import time

import numpy as np

from ipcgrasp.baselines import MODELS
from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.study.runs import load_study_object, run_trial

SIMULATOR = "ipcgrasp"
PAPER_SECONDS = {"soft_point": 0.02, "reach": 0.44, "6dfc": 0.07, "mujoco_flex": 421.0, SIMULATOR: 605.0}
"""Table 4.2 per-grasp runtimes; mujoco_flex stands where the paper had Isaac Gym with FleX."""


def _timed(model, obj, case, params):
    """(seconds, success) of one prediction."""
    _, object_pose, grasp_pose, seed = case
    if model == SIMULATOR:
        result = run_trial(obj, object_pose, grasp_pose, params, seed)
        return result.wall_time, result.success
    prediction = MODELS[model](obj, object_pose, grasp_pose, params, seed)
    return prediction.runtime, prediction.success


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=[SIMULATOR, *MODELS],
                        help=f"models to time (default: all: {SIMULATOR} {' '.join(MODELS)})")
    parser.add_argument("--grasps", type=int, nargs="+", help="grasp indices (default: all 25)")
    parser.add_argument("--trials", type=int, default=1, help="perturbed trials per grasp")
    parser.add_argument("--E", type=float, default=1e8, help="pad Young's modulus (Pa)")
    parser.add_argument("--mu", type=float, default=0.4, help="pad-object friction")
    parser.add_argument("--root-seed", type=int, default=0)
    args = parser.parse_args()
    unknown = sorted(set(args.models) - {SIMULATOR, *MODELS})
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {SIMULATOR} {' '.join(MODELS)}")

    obj, physical = load_study_object(resolve_data_dir(), "cube_3cm", load_registry())
    grasps = args.grasps if args.grasps is not None else list(range(physical.n_grasps))
    params = SimParams(E=args.E, mu=args.mu)
    cases = [(g, physical.object_poses[g], physical.grasp_poses[g], trial_seed(args.root_seed, g, t))
             for g in grasps for t in range(args.trials)]
    print(f"{platform.machine()} {platform.processor()}, python {platform.python_version()}; cube_3cm: "
          f"{len(grasps)} grasps x {args.trials} trials, E {args.E:g} Pa, mu {args.mu}, force rule "
          f"{params.close_force} N")

    gripper = Gripper.yumi(params.jaw)
    grasp_contacts(obj, cases[0][1], cases[0][2], gripper)
    contact_times = []
    for _, object_pose, grasp_pose, seed in cases:
        start = time.perf_counter()
        grasp_contacts(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), gripper)
        contact_times.append(time.perf_counter() - start)
    print(f"analytic models' contacts alone: median {1e3 * np.median(contact_times):.2f} ms per grasp")

    print(f"{'model':<14} {'median s':>9} {'mean s':>9} {'p90 s':>9} {'paper s':>8} {'R mean':>7} {'MAE vs physical':>16}")
    for model in args.models:
        _timed(model, obj, cases[0], params)
        runs = [_timed(model, obj, case, params) for case in cases]
        seconds = np.array([t for t, _ in runs])
        robustness = np.array([s for _, s in runs], dtype=float).reshape(len(grasps), args.trials).mean(axis=1)
        mae = np.mean(np.abs(robustness - physical.robustness[grasps]))
        paper = f"{PAPER_SECONDS[model]:g}" if model in PAPER_SECONDS else "-"
        print(f"{model:<14} {np.median(seconds):>9.4f} {seconds.mean():>9.4f} {np.percentile(seconds, 90):>9.4f} "
              f"{paper:>8} {robustness.mean():>7.2f} {mae:>16.2f}", flush=True)


if __name__ == "__main__":
    main()
