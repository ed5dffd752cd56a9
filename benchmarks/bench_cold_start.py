"""Cold and warm start: importing ipcgrasp and running the first cube trial, numba cache empty.

Runs the first trial (IPC engine, 3 cm cube, grasp 0 without pose noise) in a fresh Python
process whose numba cache directory (NUMBA_CACHE_DIR) is a new empty temporary directory: that
is what a fresh clone pays, almost all of it numba compilation. Then runs the same trial in a
second process on the now filled cache (warm start: cache loading only). Prints CPU time of the
child process (s, user + system from the OS; less sensitive to other load than wall time) and
wall time (s) for each, and with --kernels the kernels that cost most to compile (inclusive
CPU s, from numba's compiler event API, first process only), and with --phases how the cold
start's compilation splits between numba lowering to LLVM IR and LLVM parsing, optimising and
emitting machine code (exclusive CPU s, first process only; numba finalises every function it
compiles, also those only other kernels call, and the split shows what those cost).
With --compile-jobs N [N ...] it measures instead what a fresh clone's `./run.sh` pays:
`ipcgrasp compile --jobs N` on an empty cache, wall time and the CPU time of it and its helper
processes, then the first cube trial in a new process (warm: nothing left to compile).
With --cli N it measures instead what a user's first trial pays once the cache is filled:
`ipcgrasp simulate --object cube_3cm --grasp 0 --trials 1 --no-noise` end to end in a new
process, N times for each --src in turn (alternating, so both see the same load), each checkout
with its own cache beside its sources (run `ipcgrasp compile` in it first); it prints the wall and
CPU time (s) and the wall time of each phase: the interpreter and the command line's import,
imports and set-up (object, grasps, gripper), the trial's time in numba's compiler lock (loading
kernels from the cache), the rest of the trial, the report, and the exit (after the command, to
the end of the process). Run:
.venv/bin/python benchmarks/bench_cold_start.py [--repeats 2] [--kernels 15] [--phases] [--src DIR]
[--compile-jobs 1 2]
.venv/bin/python benchmarks/bench_cold_start.py --cli 5 --src old/src src
(--src: the src/ directory of another checkout to measure instead of this one; with --cli
several).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(__file__).resolve().parent

# The child: import, run one trial, optionally record per-kernel compile times (inclusive) and the
# phases of compilation, with numba_phases (this folder, put on sys.path).
CHILD = f"import sys\nsys.path.append({str(BENCHMARKS)!r})\n" + r"""
import json, sys, time
cpu0 = time.process_time()
compiles = None
if int(sys.argv[1]) or int(sys.argv[2]):
    from numba_phases import Compilations

    compiles = Compilations().register()

phases = {}
if int(sys.argv[2]):
    # where numba's compilation goes: its lowering to LLVM IR (Python), LLVM parsing that IR, LLVM
    # optimising each function and each library's final linked module, LLVM emitting machine
    # code; the last two split by whether the library's function was compiled for a call from
    # Python (a kernel) or only for other kernels (numba finalises both). Exclusive CPU s; these
    # are numba internals, so a numba without them is reported as such, not measured.
    from numba.core import event
    from numba_phases import Clock, time_phases

    class _Llvm(event.Listener):  # numba holds this lock for every call into LLVM
        starts = []
        def on_start(self, ev):
            self.starts.append(time.process_time())
        def on_end(self, ev):
            start = self.starts.pop()
            if not self.starts:
                key = "every call into LLVM (includes the LLVM lines)"
                phases[key] = phases.get(key, 0.0) + time.process_time() - start
    event.register("numba:llvm_lock", _Llvm())
    try:
        time_phases({"lowering": "numba lowering to LLVM IR", "parsing": "LLVM parsing the IR",
                     "function passes": "LLVM optimising functions",
                     "final module": "LLVM optimising a library's final module",
                     "machine code": "LLVM emitting a library's machine code"}, phases, Clock())
    except AttributeError as missing:
        phases = {f"not measured: this numba lacks {missing}": 0.0}

from ipcgrasp import GraspObject, SimParams
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.procedure import GraspProcedure
import trimesh

cpu_import = time.process_time() - cpu0
data = resolve_data_dir()
mesh_path, mass = load_object(data, "cube_3cm")
grasps = load_physical_grasps(data, "cube_3cm")
obj = GraspObject.from_mesh(trimesh.load(mesh_path, force="mesh"), mass, "cube_3cm")
params = SimParams(noise_translation=0.0, noise_rotation=0.0)
result = GraspProcedure(obj, grasps.object_poses[0], grasps.grasp_poses[0], params, IpcBackend).run()
kernels, top_level = {}, set()  # top_level: the kernels compiled for a call from Python
for c in compiles.done if compiles else ():
    names = [f"{c['module'].rsplit('.', 1)[-1]}.{c['name']}"]
    if c["entry"]:
        top_level.add(c["name"])
        names.append("(all kernels called from Python)")
    for name in names:
        tot, n = kernels.get(name, (0.0, 0))
        kernels[name] = (tot + c["inclusive"], n + 1)
split = {}
for key, spent in phases.items():
    if isinstance(key, tuple):
        key = f"{key[0]}, {'kernels' if key[1] in top_level else 'functions only kernels call'}"
    split[key] = split.get(key, 0.0) + spent
print(json.dumps({"cpu_import": cpu_import, "held": bool(result.success),
                  "iterations": int(result.newton_iterations), "kernels": kernels, "phases": split,
                  "cpu": time.process_time() - cpu0}))
"""


# The --cli child: the command line as `python -m ipcgrasp` runs it (its own exit included), with
# the wall clock (time.time(), s) at the phase boundaries written as JSON to the file argv[1].
CLI_CHILD = r"""
import json, runpy, sys, time
marks = {"main": None}
out, sys.argv = sys.argv[1], ["ipcgrasp"] + sys.argv[2:]
import ipcgrasp.cli as cli

def _wrap(name, before, after, also=None):
    original = getattr(cli, name)
    def call(*args, **kwargs):
        marks[before] = time.time()
        if also:
            also()
        try:
            return original(*args, **kwargs)
        finally:
            marks[after] = time.time()
            with open(out, "w") as f:
                json.dump(marks, f)
    setattr(cli, name, call)

def _listen():  # numba is imported by now: time the trial's holds of numba's compiler lock
    from numba.core import event
    class _Lock(event.Listener):
        depth, start = 0, 0.0
        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                self.start = time.time()
        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                marks["lock"] = marks.get("lock", 0.0) + time.time() - self.start
    event.register("numba:compiler_lock", _Lock())

_wrap("_cmd_simulate", "main", "command")
_wrap("_run_trials", "trials", "trials_end", _listen)
_wrap("_report", "report", "report_end")
runpy.run_module("ipcgrasp", run_name="__main__", alter_sys=True)
"""
CLI_COMMAND = ["simulate", "--object", "cube_3cm", "--grasp", "0", "--trials", "1", "--no-noise"]
CLI_PHASES = ("interpreter, cli import", "imports, set-up", "trial: kernel loads (compiler lock)", "trial: the rest",
              "report", "exit")


def run_cli(src):
    """One `ipcgrasp simulate` (CLI_COMMAND) in a new process on src's own numba cache; returns
    (wall s, CPU s of the child, {phase: wall s})."""
    with tempfile.NamedTemporaryFile(suffix=".json") as marks_file:
        env = dict(os.environ, PYTHONPATH=str(src))
        env.pop("NUMBA_CACHE_DIR", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.time()
        child = subprocess.run([sys.executable, "-c", CLI_CHILD, marks_file.name, *CLI_COMMAND], env=env,
                               capture_output=True, text=True)
        end = time.time()
        if child.returncode != 0:
            sys.exit(f"ipcgrasp simulate failed in the child process:\n{child.stderr}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        m = json.loads(Path(marks_file.name).read_text())
    lock = m.get("lock", 0.0)
    phases = dict(zip(CLI_PHASES, (m["main"] - start, m["trials"] - m["main"], lock,
                                   m["trials_end"] - m["trials"] - lock, m["report_end"] - m["trials_end"],
                                   end - m["command"])))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return end - start, cpu, phases


def measure_cli(sources, runs):
    """--cli: `runs` rounds, each running CLI_COMMAND once per source in turn; per source the
    median wall and CPU time and the median of each phase."""
    results = {src: [] for src in sources}
    for i in range(runs):
        for src in sources:
            wall, cpu, phases = run_cli(src)
            results[src].append((wall, cpu, phases))
            print(f"run {i}: {src}: wall {wall:.2f} s, CPU {cpu:.2f} s; "
                  + ", ".join(f"{name} {t:.2f}" for name, t in phases.items()), flush=True)
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f}")
    for src, rows in results.items():
        print(f"median of {len(rows)}, {src}: wall {statistics.median(r[0] for r in rows):.2f} s, CPU "
              f"{statistics.median(r[1] for r in rows):.2f} s")
        for name in CLI_PHASES:
            print(f"  {name:<40} {statistics.median(r[2][name] for r in rows):.3f} s")


def run_child(src, cache_dir, kernels, phases=False):
    """One child process; returns (CPU s of the child, wall s, its JSON report)."""
    cpu, wall, out = _timed_child([sys.executable, "-c", CHILD, str(int(kernels)), str(int(phases))], src, cache_dir,
                                  "the trial")
    return cpu, wall, json.loads(out.strip().splitlines()[-1])


def run_compile(src, cache_dir, jobs):
    """`ipcgrasp compile --jobs jobs` in a child process; returns (CPU s of it and its helpers,
    wall s)."""
    command = [sys.executable, "-m", "ipcgrasp.cli", "compile", "--jobs", str(jobs)]
    cpu, wall, _ = _timed_child(command, src, cache_dir, f"ipcgrasp compile --jobs {jobs}")
    return cpu, wall


def _timed_child(command, src, cache_dir, what):
    """Run `command` with NUMBA_CACHE_DIR=cache_dir and src first on the path; returns (CPU s of
    the child and its children, wall s, its standard output); exits naming `what` on failure."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    child = subprocess.run(command, env=env, capture_output=True, text=True)
    if child.returncode != 0:
        sys.exit(f"{what} failed in the child process:\n{child.stderr}")
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, child.stdout


def measure_compile(src, jobs_list, repeats):
    """--compile-jobs: per jobs, `repeats` runs of `ipcgrasp compile` on an empty cache, each
    followed by the first trial in a new process."""
    for jobs in jobs_list:
        runs = []
        for i in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
                cpu, wall = run_compile(src, cache, jobs)
                trial_cpu, trial_wall, report = run_child(src, cache, False)
                runs.append((cpu, wall, trial_wall))
                print(f"jobs {jobs}, run {i}: ipcgrasp compile wall {wall:5.1f} s, CPU {cpu:5.1f} s; then the first "
                      f"trial wall {trial_wall:4.1f} s, CPU {trial_cpu:4.1f} s "
                      f"({'held' if report['held'] else 'FAIL'}, {report['iterations']} iterations)", flush=True)
        print(f"median, jobs {jobs}: compile wall {statistics.median(r[1] for r in runs):.1f} s, CPU "
              f"{statistics.median(r[0] for r in runs):.1f} s; compile + first trial wall "
              f"{statistics.median(r[1] + r[2] for r in runs):.1f} s over {len(runs)} runs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold + warm pairs to run")
    parser.add_argument("--kernels", type=int, default=0, help="list the N costliest kernels to compile")
    parser.add_argument("--src", nargs="+", default=[str(REPO / "src")],
                        help="src/ directory of the checkout to measure (with --cli: several, measured in turn)")
    parser.add_argument("--phases", action="store_true",
                        help="split the cold start's compilation into numba's and LLVM's phases")
    parser.add_argument("--compile-jobs", type=int, nargs="+", metavar="N",
                        help="measure `ipcgrasp compile --jobs N` on an empty cache instead, for each N")
    parser.add_argument("--cli", type=int, metavar="N",
                        help="measure `ipcgrasp simulate` end to end on the filled cache instead, N runs per --src")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}; src {' '.join(args.src)}")
    if args.cli:
        measure_cli(args.src, args.cli)
        return
    if len(args.src) > 1:
        parser.error("several --src only with --cli")
    args.src = args.src[0]
    if args.compile_jobs:
        measure_compile(args.src, args.compile_jobs, args.repeats)
        return
    cold, warm = [], []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
            cpu, wall, report = run_child(args.src, cache, args.kernels > 0, args.phases)
            cold.append((cpu, wall))
            print(f"run {i}: cold CPU {cpu:6.1f} s wall {wall:6.1f} s (import CPU {report['cpu_import']:.1f} s), "
                  f"{'held' if report['held'] else 'FAIL'}, {report['iterations']} iterations", flush=True)
            cpu, wall, _ = run_child(args.src, cache, False)
            warm.append((cpu, wall))
            print(f"run {i}: warm CPU {cpu:6.1f} s wall {wall:6.1f} s", flush=True)
            if args.kernels and report["kernels"]:
                print(f"  {'kernel (inclusive compile CPU s, compilations)':<60}")
                ranked = sorted(report["kernels"].items(), key=lambda kv: -kv[1][0])
                for name, (t, n) in ranked[:args.kernels]:
                    print(f"  {name:<52} {t:6.2f} {n:3d}")
            if args.phases:
                print(f"  {'phase of the cold start (exclusive CPU s of the child)':<72}")
                for name, t in sorted(report["phases"].items(), key=lambda kv: -kv[1]):
                    print(f"  {name:<72} {t:6.2f}")
                print(f"  {'the child in all':<72} {report['cpu']:6.2f}")
    for label, runs in (("cold", cold), ("warm", warm)):
        print(f"median {label} start: CPU {statistics.median(c for c, _ in runs):.1f} s, "
              f"wall {statistics.median(w for _, w in runs):.1f} s over {len(runs)} runs")


if __name__ == "__main__":
    main()
