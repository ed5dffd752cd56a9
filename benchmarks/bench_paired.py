"""Paired speed comparison of two checkouts: both run the same cube trials at the same time, each
process pinned to its own core, so both see the same machine.

This 2-core machine is shared: CPU time of one checkout varies by 10-30 % from run to run (and
from day to day), more than most engine changes gain, so a before/after figure from runs taken
one after the other says little. Here each round starts one process per checkout at once
(`--old-src` on one core, this checkout's src/ or `--new-src` on the other; the cores swap every
round). Each process runs one untimed warm-up trial (numba cache loading; compile first if the
cache is cold), then the grasps `--repeats` times and keeps each grasp's smallest CPU time
(time.process_time). A round's figure is the sum of those minima. The comparison is the
geometric mean of the rounds' ratios new/old: the two cores differ by a few per cent (core 0,
which also serves the machine's interrupts, measured 3-5 % slower), and over an even number of
rounds each checkout spends half of them on each core, so that factor cancels. Both checkouts must give the same trial
outcomes for the comparison to be like for like: verdicts, labels, closing forces and Newton
iterations are compared and any difference is listed (a speed change that is not bit for bit
identical shows here first; `bench_cube_robustness.py` and `bench_convergence.py` are the full
verdict checks). IPC engine, 3 cm cube, no pose noise, SimParams defaults. Run:
git worktree add /tmp/old <commit>; .venv/bin/python benchmarks/bench_paired.py --old-src /tmp/old/src
(a worktree outside the repository's folder finds the bundled data through IPCGRASP_DATA)
[--rounds 4] [--repeats 2] [--grasps 0 5] [--subdivisions 4] [--pad-resolution 0.002]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# The child: pin to a core, run the trials, print per grasp (min CPU s, outcome) as JSON.
CHILD = r"""
import json, os, sys, time, warnings
args = json.loads(sys.argv[1])
os.sched_setaffinity(0, {args["core"]})
warnings.simplefilter("ignore")
sys.path.insert(0, args["benchmarks"])
from bench_trial import cube_setup
from ipcgrasp.grasp.simulate import simulate_grasp
obj, grasps, params = cube_setup(args["subdivisions"], args["pad_resolution"])
def trial(g):
    return simulate_grasp(obj, grasps.object_poses[g], grasps.grasp_poses[g], params)
trial(args["grasps"][0])
cpu, outcome = {}, {}
for _ in range(args["repeats"]):
    for g in args["grasps"]:
        start = time.process_time()
        r = trial(g)
        spent = time.process_time() - start
        cpu[g] = min(cpu.get(g, spent), spent)
        outcome[g] = [bool(r.success), r.failure_mode, [float(f) for f in r.close_forces], int(r.newton_iterations)]
print(json.dumps({"cpu": cpu, "outcome": outcome}))
"""


def benchmarks_of(src: Path) -> Path:
    """The benchmarks/ beside a checkout's src/ (its own cube_setup, which imports only what that
    checkout has), else this checkout's."""
    own = src.resolve().parent / "benchmarks"
    return own if (own / "bench_trial.py").is_file() else REPO / "benchmarks"


def run_pair(sources, cores, args):
    """Start one child per checkout at once (sources[i] pinned to cores[i]); their results."""
    children = []
    for src, core in zip(sources, cores):
        spec = json.dumps({"core": core, "grasps": args.grasps, "repeats": args.repeats,
                           "subdivisions": args.subdivisions, "pad_resolution": args.pad_resolution,
                           "benchmarks": str(benchmarks_of(src))})
        env = dict(os.environ, PYTHONPATH=str(src))
        children.append(subprocess.Popen([sys.executable, "-c", CHILD, spec], env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True))
    results = []
    for child, src in zip(children, sources):
        out, err = child.communicate()
        if child.returncode != 0:
            sys.exit(f"the trials of {src} failed:\n{err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-src", type=Path, required=True, help="src/ of the checkout to compare against")
    parser.add_argument("--new-src", type=Path, default=REPO / "src",
                        help="src/ of the new checkout (default: this one)")
    parser.add_argument("--grasps", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--rounds", type=int, default=4, help="paired runs (cores swap each round; keep it even)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each grasp per process (minimum kept)")
    parser.add_argument("--subdivisions", type=int, default=0, help="cube mesh subdivisions (4: 1538 vertices)")
    parser.add_argument("--pad-resolution", type=float, default=None, help="pad tet size (m); default SimParams'")
    args = parser.parse_args()
    for src in (args.old_src, args.new_src):
        if not (src / "ipcgrasp" / "__init__.py").is_file():
            sys.exit(f"{src} is not a src/ directory holding the ipcgrasp package; fix: pass a checkout's src/ "
                     "(e.g. git worktree add /tmp/old <commit>, then --old-src /tmp/old/src)")
    if args.rounds % 2:
        print(f"--rounds {args.rounds} is odd: one checkout gets a core more often, whose speed then biases the ratio")
    if len(os.sched_getaffinity(0)) < 2:
        sys.exit("bench_paired needs 2 cores to run both checkouts at once")
    core_a, core_b = sorted(os.sched_getaffinity(0))[:2]
    print(f"old {args.old_src}, new {args.new_src}; grasps {args.grasps}, {args.repeats} repeats per process, "
          f"cube subdivisions {args.subdivisions}, pad resolution {args.pad_resolution or 'default'}")
    ratios, sums, outcomes = [], {"old": [], "new": []}, None
    for k in range(args.rounds):
        cores = (core_a, core_b) if k % 2 == 0 else (core_b, core_a)
        old, new = run_pair((args.old_src, args.new_src), cores, args)
        total = {name: sum(side["cpu"].values()) for name, side in (("old", old), ("new", new))}
        for name in total:
            sums[name].append(total[name])
        ratios.append(total["new"] / total["old"])
        print(f"round {k + 1}: old {total['old']:.3f} s (core {cores[0]}), new {total['new']:.3f} s "
              f"(core {cores[1]}), CPU summed over the grasps' fastest runs; new/old {ratios[-1]:.3f}")
        outcomes = (old["outcome"], new["outcome"])
    print(f"new/old over {args.rounds} rounds: geometric mean {statistics.geometric_mean(ratios):.3f}, range "
          f"{min(ratios):.3f}-{max(ratios):.3f} (median CPU old {statistics.median(sums['old']):.3f} s, "
          f"new {statistics.median(sums['new']):.3f} s)")
    differing = [g for g in outcomes[0] if outcomes[0][g] != outcomes[1][g]]
    if differing:
        print("the trials differ (not a like-for-like comparison: check the verdicts):")
        for g in differing:
            print(f"  grasp {g}: old {outcomes[0][g]}, new {outcomes[1][g]} (success, label, closing forces N, "
                  "Newton iterations)")
    else:
        print("outcomes identical: verdicts, labels, closing forces to the bit and Newton iterations")


if __name__ == "__main__":
    main()
