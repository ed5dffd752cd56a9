"""Per-grasp runtime of the analytic baselines (soft point, REACH, 6DFC) on the 3 cm cube's 25
recorded grasps, side by side with the paper's (Kim et al., IPC-GraspSim, Table 4.2: soft point
0.02 s, REACH 0.44 s, 6DFC 0.07 s per grasp, one core of a 2.2 GHz Xeon E5-2698 v4).

Each model predicts every grasp for `--trials` perturbed trials (the study's trial seeds); the
time is `Prediction.runtime`: perturbation, scene placement, contacts, wrench resistance. The
contact computation alone is timed too. The first call of each model (numba cache load) is left
out. Run: .venv/bin/python benchmarks/bench_analytic_baselines.py [--trials 5] [--mu 0.3]
"""

import argparse
import time

import numpy as np

from ipcgrasp.baselines import MODELS
from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps, object_mesh_path
from ipcgrasp.data.registry import load_registry, object_info
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import trial_seed

PAPER_SECONDS = {"soft_point": 0.02, "reach": 0.44, "6dfc": 0.07}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5, help="perturbed trials per grasp")
    parser.add_argument("--mu", type=float, default=0.3, help="pad-object friction")
    parser.add_argument("--root-seed", type=int, default=0)
    args = parser.parse_args()

    data_dir = resolve_data_dir()
    grasps = load_physical_grasps(data_dir, "cube_3cm")
    mass = object_info(load_registry(), "cube_3cm").mass
    obj = GraspObject.from_file(object_mesh_path(data_dir, "cube_3cm"), mass)
    params = SimParams(mu=args.mu)
    cases = [(g, grasps.object_poses[g], grasps.grasp_poses[g], trial_seed(args.root_seed, g, t))
             for g in range(grasps.n_grasps) for t in range(args.trials)]
    print(f"cube_3cm: {grasps.n_grasps} grasps x {args.trials} trials, mu = {args.mu}, "
          f"closing force {params.close_force} N")

    gripper = Gripper.yumi(params.jaw)
    grasp_contacts(obj, cases[0][1], cases[0][2], gripper)
    contact_times = []
    for _, object_pose, grasp_pose, seed in cases:
        start = time.perf_counter()
        grasp_contacts(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), gripper)
        contact_times.append(time.perf_counter() - start)
    print(f"contacts alone: median {1e3 * np.median(contact_times):.2f} ms per grasp")

    print(f"{'model':<11} {'median ms':>10} {'mean ms':>8} {'p90 ms':>7} {'paper ms':>9} {'iterations':>10} "
          f"{'R mean':>7} {'R per grasp vs physical':>24}")
    for name, predict in MODELS.items():
        predict(obj, cases[0][1], cases[0][2], params, cases[0][3])
        predictions = [predict(obj, object_pose, grasp_pose, params, seed)
                       for _, object_pose, grasp_pose, seed in cases]
        times = 1e3 * np.array([p.runtime for p in predictions])
        iterations = np.mean([p.info.get("iterations", 0) for p in predictions])
        robustness = np.array([p.success for p in predictions], dtype=float).reshape(grasps.n_grasps, args.trials)
        agreement = np.mean(np.abs(robustness.mean(axis=1) - grasps.robustness))
        print(f"{name:<11} {np.median(times):>10.2f} {times.mean():>8.2f} {np.percentile(times, 90):>7.2f} "
              f"{1e3 * PAPER_SECONDS[name]:>9.0f} {iterations:>10.1f} {robustness.mean():>7.2f} "
              f"{'MAE ' + format(agreement, '.2f'):>24}")


if __name__ == "__main__":
    main()
