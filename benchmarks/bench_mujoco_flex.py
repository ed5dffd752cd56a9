"""Per-grasp runtime of the MuJoCo flex-pad baseline (`baselines.mujoco_flex`) on a few of the
3 cm cube's recorded grasps, beside the paper's Isaac Gym/FleX (Kim et al., IPC-GraspSim,
Table 4.2: 421 s per grasp, 0.28 s per frame, on an i7-6850K with a Titan X GPU).

Each grasp is run `--repeats` times with the same trial seed (the study's `trial_seed`); the
time is `Prediction.runtime`: perturbation, opening, model compilation and the whole simulated
trial. Also printed per grasp: the outcome, simulated steps and the contact artifacts (largest
pad-object and object-ground interpenetration, force-field gap). MuJoCo runs on one core.
Run: .venv/bin/python benchmarks/bench_mujoco_flex.py [--grasps 0 3 5] [--repeats 3]
     [--stiffness 1e8] [--margin 0] [--dt 1e-3]
"""

import argparse

import numpy as np

from ipcgrasp.baselines.mujoco_flex import predict
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import trial_seed

PAPER_SECONDS_PER_GRASP = 421.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grasps", type=int, nargs="+", default=[0, 3, 5], help="cube grasp indices")
    parser.add_argument("--repeats", type=int, default=3, help="runs per grasp (median reported)")
    parser.add_argument("--mu", type=float, default=0.4, help="pad-object friction")
    parser.add_argument("--stiffness", type=float, default=1e8, help="direct-form contact stiffness")
    parser.add_argument("--damping", type=float, default=1e4, help="direct-form contact damping")
    parser.add_argument("--margin", type=float, default=0.0, help="contact margin (m)")
    parser.add_argument("--dt", type=float, default=1e-3, help="time step (s)")
    parser.add_argument("--root-seed", type=int, default=0)
    args = parser.parse_args()

    data_dir = resolve_data_dir()
    grasps = load_physical_grasps(data_dir, "cube_3cm")
    obj = GraspObject.from_file(*load_object(data_dir, "cube_3cm"))
    params = SimParams(mu=args.mu)
    settings = dict(stiffness=args.stiffness, damping=args.damping, margin=args.margin, dt=args.dt)
    print(f"cube_3cm: grasps {args.grasps} x {args.repeats} runs, mu = {args.mu}, {settings}")
    print(f"{'grasp':>5} {'physical R':>10} {'median s':>9} {'min s':>6} {'steps':>6} {'ms/step':>8} "
          f"{'outcome':>10} {'pen pad mm':>10} {'pen ground mm':>13} {'gap mm':>7}")
    medians = []
    for g in args.grasps:
        seed = trial_seed(args.root_seed, g, 0)
        runs = [predict(obj, grasps.object_poses[g], grasps.grasp_poses[g], params, seed, **settings)
                for _ in range(args.repeats)]
        times = np.array([r.runtime for r in runs])
        info = runs[0].info
        medians.append(np.median(times))
        outcome = "success" if runs[0].success else info["failure_mode"]
        print(f"{g:>5} {grasps.robustness[g]:>10.1f} {np.median(times):>9.2f} {times.min():>6.2f} "
              f"{info['steps']:>6} {1e3 * np.median(times) / max(info['steps'], 1):>8.2f} {outcome:>10} "
              f"{1e3 * info['penetration_pad']:>10.3f} {1e3 * info['penetration_ground']:>13.3f} "
              f"{1e3 * info['force_gap']:>7.3f}")
    print(f"median over grasps: {np.median(medians):.2f} s per trial "
          f"(paper's Isaac Gym: {PAPER_SECONDS_PER_GRASP:.0f} s per grasp)")


if __name__ == "__main__":
    main()
