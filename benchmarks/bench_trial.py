"""Per-phase cost of whole cube trials: IPC engine, 3 cm cube, grasps 0-9, no pose noise.

For every trial and phase (initialise incl. settle, squeeze, lift, judge incl. hold) prints wall
time (s), CPU time of this process (s, time.process_time: less sensitive to other load on the
machine than wall time), steps and Newton iterations as the trial's result counts them (a
squeeze step the close rule's refinement retries with a shorter increment is counted once), and
for the whole trial every step computed, retries included (with every Newton iteration the
engine computed, those of steps the close rule's overshoot test gave up during their drive
included), those given up, and those whose drive ended with the jaws behind their command (the
drive-and-settle continuation ran out of rounds) with their Newton iterations; then the median
per trial and its ratio to 28.2 s, the median trial time of the original C++ IPC-GraspSim on
these grasps, and the CPU, steps and Newton iterations of all trials split by what each computed
step did (settle, squeeze with no pad, one pad or both pads on the object, squeeze steps given
up during their drive, lift, hold). All trials run in one process after one untimed warm-up
trial (numba compilation or cache loading), so the numbers are steady-state costs. `--kernels N`
also times every call from Python into an engine kernel (numba; the sparse LDL^T factorisation
and solves among them), and prints the N that cost most and what is left: Python and NumPy
between the kernels (the timing adds about 1 us per call). `--regions` splits the CPU by where it
is spent: each region (REGIONS: the grasp layer, the engine's step, its warm start and drive
rounds, the Newton loop, its direction, energies, gradients, line search and broad phase) gets
the Python and NumPy that run in it outside any region it calls, and the kernels it calls
itself. That bounds what moving a region's Python into numba could save. With --regions every
timer reads the wall clock (time.perf_counter, about 0.05 us a reading against about 0.5 us for
the process's CPU clock, which inflated the Python share from 21 % to 27 %): run it on a quiet
machine. Run:
.venv/bin/python benchmarks/bench_trial.py [--grasps 0 5] [--subdivisions 4]
[--pad-resolution 0.002] [--kernels 15] [--regions]
"""

import argparse
import collections
import importlib
import os
import platform
import statistics
import time

import numba
import trimesh

from ipcgrasp import GraspObject, SimParams
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.procedure import GraspProcedure
from ipcgrasp.engine import simulation
from ipcgrasp.engine.solver import drive_round, line_search, newton, potential, proximity, warm_start
from ipcgrasp.engine.solver.newton import Newton

CPP_MEDIAN_S = 28.2  # original C++ IPC-GraspSim, median trial on the cube grasps
PHASES = ("initialise", "squeeze", "lift", "judge")


class _PhaseTimed(GraspProcedure):
    """The grasp procedure, recording per phase wall time, CPU time, steps and Newton iterations,
    and over the trial [steps, iterations] of every step computed (iterations: every one the
    engine computed, `NEWTON_ITERATIONS`), [steps] given up, and [steps, iterations] of those
    that ended with the jaws lagging."""

    def _step(self, closed=None, give_up=None, coarse_rounds=False):
        cpu, iterations = time.process_time(), NEWTON_ITERATIONS[0]
        report = super()._step(closed, give_up, coarse_rounds)
        entry = STEP_KINDS[_step_kind(self.phase, report, coarse_rounds)]
        entry[0] += 1
        entry[1] += time.process_time() - cpu
        entry[2] += NEWTON_ITERATIONS[0] - iterations
        self.computed[0] += 1
        if report is None:
            self.given_up[0] += 1
        elif report.jaw_lag > 0.0:
            self.lagging[0] += 1
            self.lagging[1] += report.newton_iterations
        return report

    def _timed(self, phase):
        name = phase.__name__.strip("_")
        r = self.result
        wall, cpu, steps, iters = time.perf_counter(), time.process_time(), r.steps, r.newton_iterations
        try:
            super()._timed(phase)
        finally:
            self.costs[name] = (time.perf_counter() - wall, time.process_time() - cpu, r.steps - steps,
                                r.newton_iterations - iters)


NEWTON_ITERATIONS = [0]  # every Newton iteration the engine has computed in this process
STEP_KINDS = collections.defaultdict(lambda: [0, 0.0, 0])  # kind -> [steps, CPU s, Newton iterations]


def _step_kind(phase, report, coarse_rounds):
    """What a computed step did: its phase, and for squeeze steps whether it was given up during
    its drive, started with both pads having touched the object (the steps the procedure settles
    with coarse rounds), had a pad on the object (one pad pushing it before the other arrives) or
    none."""
    if phase != "squeeze":
        return phase
    if report is None:
        return "squeeze, given up"
    if coarse_rounds:
        return "squeeze, both pads on"
    return "squeeze, one pad pushing" if any(f > 0.0 for f in report.pad_forces) else "squeeze, no pad on"


def _counting(newton):
    def counted(self, *args, **kwargs):
        result = newton(self, *args, **kwargs)
        NEWTON_ITERATIONS[0] += result[1]
        return result
    return counted


ENGINE_MODULES = ("affine_body", "barrier", "broadphase", "ccd", "collisions", "collisions.barrier_sum",
                  "collisions.build", "collisions.collision_mesh", "collisions.collision_set",
                  "collisions.lagged_friction", "collisions.local_blocks", "collisions.pair_distance", "distance",
                  "distance.distance_type", "distance.edge_edge", "distance.edge_edge_mollifier", "distance.inputs",
                  "distance.normal_distance", "distance.point_edge", "distance.point_line", "distance.point_plane",
                  "distance.point_point", "distance.point_triangle", "distance.vector", "friction",
                  "friction.contact_geometry", "friction.potential", "friction.smooth_friction_mollifier", "ldlt", "mounts",
                  "neohookean", "neohookean.element", "neohookean.inputs", "neohookean.inversion", "neohookean.matrix3",
                  "neohookean.mesh_energy", "neohookean.rest_shape", "penalty", "penalty.clustering",
                  "penalty.clusters", "penalty.contacts", "penalty.potential", "penetration", "scene", "simulation",
                  "solver.assembly", "solver.barrier_stiffness", "solver.contact_model", "solver.dofs", "solver.drive",
                  "solver.hessian", "solver.line_search", "solver.potential", "solver.proximity")


# (owner, attribute, region): the code --regions times, the engine's step pipeline from the outside in
REGIONS = ((simulation.Simulation, "_step", "engine step (Simulation._step)"),
           (warm_start.WarmStart, "__call__", "warm start"),
           (drive_round.DriveRound, "__call__", "drive round"),
           (newton.Newton, "solve", "Newton loop (Newton.solve)"),
           (newton.Newton, "accept", "step acceptance and report"),
           (newton.Newton, "direction", "Newton direction (Hessian, LDL^T)"),
           (potential.IncrementalPotential, "gradient", "gradient"),
           (potential.IncrementalPotential, "energy", "energy (line search trials)"),
           (newton, "backtrack", "backtracking"),
           (newton, "extrapolate", "extrapolation"),
           (proximity.Proximity, "candidates", "broad phase (Proximity.candidates)"),
           (line_search.StepLimits, "ccd_fraction", "CCD"),
           (line_search.StepLimits, "noninverting_fraction", "tet inversion bound"))
OUTSIDE = "grasp layer (procedure, backend, trial set-up)"


def time_regions(clock):
    """Wrap the REGIONS so that each adds to the returned {region: [s inside it, s in the regions
    it calls]} (clock: time.perf_counter or time.process_time); the region running now is the last
    of the returned stack (kernel time goes to it, time_kernels)."""
    spent = collections.defaultdict(lambda: [0.0, 0.0])
    stack = [OUTSIDE]

    def timed(region, f):
        def call(*args, **kwargs):
            if stack[-1] == region:
                return f(*args, **kwargs)
            stack.append(region)
            start = clock()
            try:
                return f(*args, **kwargs)
            finally:
                seconds = clock() - start
                stack.pop()
                spent[region][0] += seconds
                spent[stack[-1]][1] += seconds
        return call

    for owner, attribute, region in REGIONS:
        setattr(owner, attribute, timed(region, getattr(owner, attribute)))
    return spent, stack


def time_kernels(clock, stack=None):
    """Wrap every numba kernel that engine modules call from Python (qdldl's factorisation and
    solves among them, engine.ldlt), so each call adds its time (clock: time.process_time or time.perf_counter) to the returned
    {name: [seconds, calls]}, and with a region stack (time_regions) to {region: seconds}, the
    second dict returned."""
    spent = collections.defaultdict(lambda: [0.0, 0])
    by_region = collections.defaultdict(float)

    def timed(name, f):
        def call(*args, **kwargs):
            start = clock()
            try:
                return f(*args, **kwargs)
            finally:
                entry = spent[name]
                seconds = clock() - start
                entry[0] += seconds
                entry[1] += 1
                if stack is not None:
                    by_region[stack[-1]] += seconds
        return call

    for module_name in ENGINE_MODULES:
        module = importlib.import_module(f"ipcgrasp.engine.{module_name}")
        for name, value in list(vars(module).items()):
            if isinstance(value, numba.core.registry.CPUDispatcher):
                setattr(module, name, timed(name, value))
    return spent, by_region


def cube_setup(subdivisions=0, pad_resolution=None, close_rule="force"):
    """The bundled 3 cm cube (its mesh subdivided `subdivisions` times), its physical grasps and
    the benchmarks' SimParams (no pose noise; pad_resolution None: SimParams')."""
    data = resolve_data_dir()
    mesh_path, mass = load_object(data, "cube_3cm")
    mesh = trimesh.load(mesh_path, force="mesh")
    for _ in range(subdivisions):
        mesh = mesh.subdivide()
    extra = {} if pad_resolution is None else {"pad_resolution": pad_resolution}
    params = SimParams(noise_translation=0.0, noise_rotation=0.0, close_rule=close_rule, **extra)
    return GraspObject.from_mesh(mesh, mass, "cube_3cm"), load_physical_grasps(data, "cube_3cm"), params


def run_trial(obj, object_pose, grasp_pose, params):
    procedure = _PhaseTimed(obj, object_pose, grasp_pose, params, IpcBackend)
    procedure.costs = {}
    procedure.computed, procedure.given_up, procedure.lagging = [0, 0], [0], [0, 0]
    wall, cpu, iterations = time.perf_counter(), time.process_time(), NEWTON_ITERATIONS[0]
    result = procedure.run()
    procedure.computed[1] = NEWTON_ITERATIONS[0] - iterations
    return (result, procedure.costs, procedure.computed, procedure.given_up[0], procedure.lagging,
            time.perf_counter() - wall, time.process_time() - cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grasps", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--subdivisions", type=int, default=0, help="cube mesh subdivisions (4: 1538 vertices)")
    parser.add_argument("--pad-resolution", type=float, default=None, help="pad tet size (m); default SimParams'")
    parser.add_argument("--close-rule", default="force")
    parser.add_argument("--kernels", type=int, default=0, metavar="N",
                        help="time the engine's kernels and list the N costliest (default 0: off)")
    parser.add_argument("--regions", action="store_true",
                        help="split the CPU by region: Python and kernels in each (REGIONS)")
    args = parser.parse_args()
    obj, grasps, params = cube_setup(args.subdivisions, args.pad_resolution, args.close_rule)
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}; "
          f"cube {len(obj.mesh.vertices)} vertices, pad resolution {params.pad_resolution * 1e3:.1f} mm, "
          f"close rule {params.close_rule}")
    Newton.solve = _counting(Newton.solve)
    t0 = time.perf_counter()
    run_trial(obj, grasps.object_poses[args.grasps[0]], grasps.grasp_poses[args.grasps[0]], params)
    print(f"warm-up trial (compile or cache load included): {time.perf_counter() - t0:.2f} s")
    clock = time.perf_counter if args.regions else time.process_time
    regions, stack = time_regions(clock) if args.regions else (None, None)
    spent, by_region = time_kernels(clock, stack) if args.kernels or args.regions else (None, None)
    STEP_KINDS.clear()
    header = "".join(f" {p + ' s/cpu/st/it':>26}" for p in PHASES)
    print(f"{'grasp':>5} {'verdict':>8} {'label':>10} {'wall s':>7} {'cpu s':>7} {'steps':>5} {'iters':>6}{header}"
          f" {'computed st/it':>14} {'given up':>8} {'lagging st/it':>13}")
    walls, cpus, iters, computed_iters, lagging_iters, given_up_steps = [], [], [], 0, 0, 0
    for g in args.grasps:
        result, costs, computed, given_up, lagging, wall, cpu = run_trial(obj, grasps.object_poses[g],
                                                                          grasps.grasp_poses[g], params)
        computed_iters += computed[1]
        given_up_steps += given_up
        lagging_iters += lagging[1]
        walls.append(wall)
        cpus.append(cpu)
        iters.append(result.newton_iterations)
        cells = "".join(f" {costs[p][0]:6.2f}/{costs[p][1]:6.2f}/{costs[p][2]:4d}/{costs[p][3]:5d}" if p in costs
                        else f" {'-':>26}" for p in PHASES)
        print(f"{g:>5} {'held' if result.success else 'FAIL':>8} {result.failure_mode or 'held':>10} {wall:7.2f} "
              f"{cpu:7.2f} {result.steps:5d} {result.newton_iterations:6d}{cells} {computed[0]:6d}/{computed[1]:7d} {given_up:8d} {lagging[0]:6d}/{lagging[1]:6d}")
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"median per trial: wall {wall:.2f} s, CPU {cpu:.2f} s, {statistics.median(iters):.0f} Newton iterations "
          f"counted; {1e3 * sum(cpus) / max(computed_iters, 1):.2f} ms CPU per iteration computed (retried steps "
          f"included: {computed_iters} in all, {lagging_iters} of them in steps with the jaws lagging; "
          f"{given_up_steps} steps given up during their drive)")
    print(f"ratio to C++ IPC-GraspSim ({CPP_MEDIAN_S} s): wall {wall / CPP_MEDIAN_S:.3f}, CPU {cpu / CPP_MEDIAN_S:.3f}")
    total = sum(cpus)
    print(f"CPU over the {len(cpus)} trials {total:.2f} s, by what each computed step did:")
    print(f"  {'step':<26} {'steps':>6} {'CPU s':>7} {'share':>6} {'ms/step':>8} {'iterations/step':>15}")
    for kind, (steps, seconds, its) in sorted(STEP_KINDS.items(), key=lambda item: -item[1][1]):
        print(f"  {kind:<26} {steps:6d} {seconds:7.2f} {100 * seconds / total:5.1f}% {1e3 * seconds / steps:8.2f} "
              f"{its / steps:15.2f}")
    timed = sum(walls) if args.regions else total  # what the clock of the kernels and regions measured
    if args.kernels:
        print(f"{'wall' if args.regions else 'CPU'} over the {len(cpus)} trials {timed:.2f} s; the costliest calls "
              f"from Python:")
        for name, (seconds, calls) in sorted(spent.items(), key=lambda item: -item[1][0])[:args.kernels]:
            print(f"  {100 * seconds / timed:5.1f} %  {seconds:7.3f} s  {calls:7d} calls  {1e6 * seconds / calls:7.1f} us"
                  f"  {name}")
        rest = timed - sum(seconds for seconds, _ in spent.values())
        print(f"  {100 * rest / timed:5.1f} %  {rest:7.3f} s  outside the kernels (Python, NumPy, SciPy between them)")
    if regions is not None:
        regions[OUTSIDE][0] = timed
        python = timed - sum(by_region.values())
        print(f"wall over the {len(cpus)} trials {timed:.2f} s: kernels {100 * (1 - python / timed):.1f} %, Python and "
              f"NumPy between them {100 * python / timed:.1f} %, by region (each without the regions it calls):")
        print(f"  {'region':<48} {'Python':>15} {'kernels':>15}")
        for region, (inside, called) in sorted(regions.items(), key=lambda item: -(item[1][0] - item[1][1]
                                                                                   - by_region[item[0]])):
            own = inside - called - by_region[region]
            print(f"  {region:<48} {own:7.3f} s {100 * own / timed:4.1f} % {by_region[region]:7.3f} s "
                  f"{100 * by_region[region] / timed:4.1f} %")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
