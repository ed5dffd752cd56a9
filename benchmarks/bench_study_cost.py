"""What the default study's grid costs, estimated from a measured sample of its own trials.

The grid is most of the study (README, "The study"): every (jaw, rule, E, mu) cell runs the
cube's training grasps x `trials` perturbed trials. This runs trial 0 of every training grasp
at one mu (`--mu`, default 0.4) for every (jaw, rule, E) of config/config.yaml, with the study's
fixed `sim` parameters, seeds and split, in `--workers` processes, and prints the CPU time per
trial of each (jaw, rule, E), then the grid's estimated core-hours (sampled mean x the grid's
trial count per (jaw, rule, E)) and its wall time on `--workers` cores. The psi rule uses
SimParams' default Psi_th rather than the calibrated one (a sample of cost, not of verdicts).

    .venv/bin/python benchmarks/bench_study_cost.py [--configfile config/config.yaml]
"""

import argparse
import itertools
import os
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import yaml

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp.grasp.simulate import run_trial
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.study.runs import load_study_object, study_params
from ipcgrasp.study.split import stratified_grasp_split

OBJECT = "cube_3cm"


def one(job):
    """CPU seconds (process time) and label of one trial."""
    data_dir, registry, sim, settings, grasp, seed = job
    warnings.filterwarnings("ignore", message=".*pose rotations rounded")  # the REACH cube's poses, known
    obj, physical = load_study_object(data_dir, OBJECT, load_registry(registry))
    params = study_params(sim, **settings)
    started = time.process_time()
    result = run_trial(obj, physical.object_poses[grasp], physical.grasp_poses[grasp], params, seed)
    return settings, time.process_time() - started, result.failure_mode or "held"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configfile", default="config/config.yaml")
    parser.add_argument("--mu", type=float, default=0.4)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=".*pose rotations rounded")
    with open(args.configfile) as f:
        config = yaml.safe_load(f)
    data_dir = resolve_data_dir(config["data_dir"] or None)
    obj, physical = load_study_object(data_dir, OBJECT, load_registry(config["registry"]))
    split = config["split"]
    training, _ = stratified_grasp_split(physical.robustness, split["training_fraction"], split["threshold"],
                                         config["seed"])
    grid = config["grid"]
    cells = list(itertools.product(grid["jaws"], grid["rules"], grid["E"]))
    jobs = [(data_dir, config["registry"], config["sim"], {"jaw": j, "close_rule": r, "E": E, "mu": args.mu},
             int(g), trial_seed(config["seed"], int(g), 0))
            for j, r, E in cells for g in training]
    print(f"sampling {len(jobs)} trials: {len(cells)} (jaw, rule, E) x {len(training)} training grasps, "
          f"mu {args.mu}, trial 0, {args.workers} workers", flush=True)
    cpu = {cell: [] for cell in cells}
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for settings, seconds, label in pool.map(one, jobs):
            cpu[(settings["jaw"], settings["close_rule"], settings["E"])].append(seconds)
    wall = time.perf_counter() - started
    per_cell_trials = len(grid["mu"]) * len(training) * config["trials"]
    total = 0.0
    print(f"{'jaw':>12} {'rule':>5} {'E [Pa]':>8} {'CPU s per trial (median, mean)':>32}")
    for cell in cells:
        mean = statistics.fmean(cpu[cell])
        total += mean * per_cell_trials
        print(f"{cell[0]:>12} {cell[1]:>5} {cell[2]:>8.0e} {statistics.median(cpu[cell]):>15.2f} {mean:>15.2f}")
    n_trials = per_cell_trials * len(cells)
    print(f"sample: {len(jobs)} trials in {wall:.0f} s wall on {args.workers} workers")
    print(f"grid estimate: {n_trials} trials, {total / 3600:.2f} core-hours, "
          f"{total / 60 / args.workers:.0f} min on {args.workers} cores")


if __name__ == "__main__":
    main()
