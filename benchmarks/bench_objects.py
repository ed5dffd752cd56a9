"""Cost of a whole trial against the object's surface size, on the real-object set
(benchmarks/objects.py: pybullet_data meshes, repaired and scaled by its rule).

For each object: the mesh through `repair_mesh` (what it changed), the sampler's acceptance and
seconds per 100 grasps, then `--trials` grasps (the first sampled ones, no pose noise) simulated
one after another in this process on one core (the process is pinned to one CPU), each timed
`--repeats` times (median of 3 by default) after one untimed warm-up trial (numba compilation or
cache loading): wall and CPU seconds per trial, Newton iterations, steps and the outcome,
printed against the object's surface vertices, with the Newton iterations the engine ran for
the trial (every step attempt: those retried, abandoned or undone count too) and the lift's step
attempts per lift step taken (the force grip retries a lift step with other jaw positions until
the pads' force is on target, `grasp.procedure`). The machine's load average is printed before
and after (the machine is often shared: compare CPU seconds). `--profile` runs cProfile over
the first trial of the object with the most vertices and prints its top entries by own time.
Run:
.venv/bin/python benchmarks/bench_objects.py [--objects duck mug] [--trials 2] [--repeats 3] [--profile]
"""

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time


from objects import OBJECTS, data_path, grasp_object

from ipcgrasp import SimParams, simulate_grasp
from ipcgrasp.dataset.antipodal import SamplerSettings, sample_antipodal_grasps
from ipcgrasp.grasp.procedure import GraspProcedure

ATTEMPTS = {}
"""Of the trial running: Newton iterations run over all step attempts ("run"), and the lift's step
attempts ("lift tries") and steps taken ("lift steps")."""


def _counted(step):
    def counted(self, closed=None, give_up=None, coarse_rounds=False):
        before = self.backend.newton_iterations_run
        try:
            report = step(self, closed, give_up, coarse_rounds)
        finally:
            ATTEMPTS["run"] += self.backend.newton_iterations_run - before
            ATTEMPTS["lift tries"] += self.phase == "lift"
        return report
    return counted


def _lift_steps(grip_step):
    def counted(self):
        ATTEMPTS["lift steps"] += self.phase == "lift"
        return grip_step(self)
    return counted


GraspProcedure._step = _counted(GraspProcedure._step)
GraspProcedure._grip_step = _lift_steps(GraspProcedure._grip_step)


def trial(obj, object_pose, grasp_pose, params):
    """(wall s, CPU s, result, Newton iterations run, lift tries per lift step) of one noise-free
    trial."""
    ATTEMPTS.update({"run": 0, "lift tries": 0, "lift steps": 0})
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate_grasp(obj, object_pose, grasp_pose, params)
    tries = ATTEMPTS["lift tries"] / ATTEMPTS["lift steps"] if ATTEMPTS["lift steps"] else float("nan")
    return time.perf_counter() - wall, time.process_time() - cpu, result, ATTEMPTS["run"], tries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", nargs="+", choices=list(OBJECTS), default=list(OBJECTS))
    parser.add_argument("--trials", type=int, default=2, help="grasps simulated per object (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each trial, the median kept (default: 3)")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest object's first trial")
    args = parser.parse_args()
    if data_path() is None:
        sys.exit("bench_objects needs pybullet_data: pip install -e '.[bench]'")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          "one core for this process")
    params = SimParams(noise_translation=0.0, noise_rotation=0.0)
    rows, largest = [], None
    for name in args.objects:
        obj, report = grasp_object(name)
        if obj is None:
            print(f"{name}: {report}")
            continue
        started = time.perf_counter()
        sampling = sample_antipodal_grasps(obj, 100, SamplerSettings(mu=params.mu), seed=0)
        sampled = time.perf_counter() - started
        speed = (f"{sampled * 100 / len(sampling.candidates):.1f} s per 100 grasps" if sampling.candidates
                 else f"none in {sampled:.1f} s")
        print(f"{name}: {report.summary()}; {obj.mass * 1e3:.0f} g; sampler {len(sampling.candidates)} of "
              f"{sampling.attempts} ({sampling.acceptance:.1%}), {speed}", flush=True)
        grasps = sampling.candidates[:args.trials]
        if not grasps:
            continue
        trial(obj, sampling.object_pose, grasps[0].grasp_pose, params)  # warm-up, untimed
        for i, candidate in enumerate(grasps):
            runs = [trial(obj, sampling.object_pose, candidate.grasp_pose, params) for _ in range(args.repeats)]
            result = runs[0][2]
            row = (name, len(obj.mesh.vertices), i, statistics.median(r[0] for r in runs),
                   statistics.median(r[1] for r in runs), result.newton_iterations, runs[0][3], result.steps,
                   runs[0][4], "held" if result.success else result.failure_mode)
            rows.append(row)
            print(f"  grasp {i}: {row[3]:.2f} s wall, {row[4]:.2f} s CPU, {row[5]} Newton iterations in the steps "
                  f"taken, {row[6]} run, {row[7]} steps, {row[8]:.1f} tries per lift step, {row[9]}", flush=True)
        if largest is None or len(obj.mesh.vertices) > largest[1]:
            largest = (obj, len(obj.mesh.vertices), sampling.object_pose, grasps[0].grasp_pose)
    print(f"\n{'object':<12} {'vertices':>8} {'grasp':>5} {'wall s':>7} {'CPU s':>7} {'Newton':>7} {'run':>6} "
          f"{'ms/run':>6} {'steps':>6} {'lift tries':>10}  label")
    for name, vertices, i, wall, cpu, newton, run, steps, tries, label in sorted(rows, key=lambda r: r[1]):
        per_run = 1e3 * cpu / run if run else float("nan")  # a trial decided before its first step runs none
        print(f"{name:<12} {vertices:>8} {i:>5} {wall:>7.2f} {cpu:>7.2f} {newton:>7} {run:>6} {per_run:>6.1f} "
              f"{steps:>6} {tries:>10.1f}  {label}")
    if args.profile and largest is not None:
        obj, vertices, object_pose, grasp_pose = largest
        profiler = cProfile.Profile()
        profiler.runcall(simulate_grasp, obj, object_pose, grasp_pose, params)
        print(f"\ncProfile of {obj.name} ({vertices} vertices), top 15 by own time:")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
