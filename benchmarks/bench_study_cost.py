"""What the default study's grid costs, estimated from a measured sample of its own trials.

The grid is most of the study (docs/study.md): one job per (jaw, E) of config/config.yaml
runs the cube's training grasps x `trials` perturbed trials under every (mu, close rule) of the
row together (`grasp.simulate.run_variants`: the variants share the settling and, per close rule,
the squeeze until both pads touch). This runs trial 0 of every training grasp as the grid's rows
do, with the study's fixed `sim` parameters, seeds and split, in `--workers` processes, and prints
the CPU time per row trial (all the row's variants of one grasp and seed) and per variant of
each (jaw, E), then the grid's estimated core-hours and its wall time on `--workers` cores.
`--alone` runs every variant on its own instead (what the sharing saves). The psi rule uses
SimParams' default Psi_th rather than the calibrated one (a sample of cost, not of verdicts).

    .venv/bin/python benchmarks/bench_study_cost.py [--configfile config/config.yaml] [--alone]
"""

import argparse
import itertools
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import yaml

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp.grasp.simulate import run_trial, run_variants
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.study.runs import load_study_object, study_params
from ipcgrasp.study.split import stratified_grasp_split

OBJECT = "cube_3cm"


def one(job):
    """CPU seconds (process time) of one row trial: every variant of the row on one grasp and seed."""
    data_dir, registry, sim, settings, variants, grasp, seed, alone = job
    warnings.filterwarnings("ignore", message=".*pose rotations rounded")  # the REACH cube's poses, known
    obj, physical = load_study_object(data_dir, OBJECT, load_registry(registry))
    variants = [study_params(sim, **settings, **variant) for variant in variants]
    pose, grasp_pose = physical.object_poses[grasp], physical.grasp_poses[grasp]
    started = time.process_time()
    if alone:
        for params in variants:
            run_trial(obj, pose, grasp_pose, params, seed)
    else:
        run_variants(obj, pose, grasp_pose, variants, seed)
    return settings, time.process_time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configfile", default="config/config.yaml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--alone", action="store_true", help="run each variant on its own (no sharing)")
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
    variants = [{"mu": mu, "close_rule": rule} for mu in grid["mu"] for rule in grid["rules"]]
    rows = list(itertools.product(grid["jaws"], grid["E"]))
    jobs = [(data_dir, config["registry"], config["sim"], {"jaw": j, "E": E}, variants, int(g),
             trial_seed(config["seed"], int(g), 0), args.alone)
            for j, E in rows for g in training]
    print(f"sampling {len(jobs)} row trials of {len(variants)} variants each ({'alone' if args.alone else 'shared'}): "
          f"{len(rows)} (jaw, E) x {len(training)} training grasps, trial 0, {args.workers} workers", flush=True)
    cpu = {row: [] for row in rows}
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for settings, seconds in pool.map(one, jobs):
            cpu[(settings["jaw"], settings["E"])].append(seconds)
    wall = time.perf_counter() - started
    row_trials = len(training) * config["trials"]
    total = 0.0
    print(f"{'jaw':>12} {'E [Pa]':>8} {'CPU s per row trial (median, mean)':>36} {'per variant':>12}")
    for row in rows:
        mean = statistics.fmean(cpu[row])
        total += mean * row_trials
        print(f"{row[0]:>12} {row[1]:>8.0e} {statistics.median(cpu[row]):>18.2f} {mean:>17.2f} "
              f"{mean / len(variants):>12.3f}")
    print(f"sample: {len(jobs)} row trials in {wall:.0f} s wall on {args.workers} workers")
    print(f"grid estimate: {row_trials * len(rows) * len(variants)} trials, {total / 3600:.2f} core-hours, "
          f"{total / 60 / args.workers:.1f} min on {args.workers} cores")


if __name__ == "__main__":
    main()
