"""Cold and warm start: importing ipcgrasp and running the first cube trial, numba cache empty.

Runs the first trial (IPC engine, 3 cm cube, grasp 0 without pose noise) in a fresh Python
process whose numba cache directory (NUMBA_CACHE_DIR) is a new empty temporary directory: that
is what a fresh clone pays, almost all of it numba compilation. Then runs the same trial in a
second process on the now filled cache (warm start: cache loading only). Prints CPU time of the
child process (s, user + system from the OS; less sensitive to other load than wall time) and
wall time (s) for each, and with --kernels the kernels that cost most to compile (inclusive
CPU s, from numba's compiler event API, first process only). Run:
.venv/bin/python benchmarks/bench_cold_start.py [--repeats 2] [--kernels 15] [--src DIR]
(--src: the src/ directory of another checkout to measure instead of this one).
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

# The child: import, run one trial, optionally record per-kernel compile times (inclusive).
CHILD = r"""
import json, sys, time
cpu0 = time.process_time()
kernels = {}
if int(sys.argv[1]):
    from numba.core import event

    _starts = []
    class _Timed(event.Listener):
        def on_start(self, ev):
            _starts.append(time.process_time())
        def on_end(self, ev):
            d = ev.data["dispatcher"]
            t = time.process_time() - _starts.pop()
            name = f"{d.py_func.__module__.rsplit('.', 1)[-1]}.{d.py_func.__name__}"
            tot, n = kernels.get(name, (0.0, 0))
            kernels[name] = (tot + t, n + 1)
            if not _starts:  # compiled for a call from Python: not part of another compilation
                tot, n = kernels.get("(all kernels called from Python)", (0.0, 0))
                kernels["(all kernels called from Python)"] = (tot + t, n + 1)
    event.register("numba:compile", _Timed())

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
print(json.dumps({"cpu_import": cpu_import, "held": bool(result.success),
                  "iterations": int(result.newton_iterations), "kernels": kernels}))
"""


def run_child(src, cache_dir, kernels):
    """One child process; returns (CPU s of the child, wall s, its JSON report)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", CHILD, str(int(kernels))], env=env,
                           capture_output=True, text=True)
    if child.returncode != 0:
        sys.exit(f"the trial failed in the child process:\n{child.stderr}")
    out = child.stdout
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold + warm pairs to run")
    parser.add_argument("--kernels", type=int, default=0, help="list the N costliest kernels to compile")
    parser.add_argument("--src", default=str(REPO / "src"), help="src/ directory of the checkout to measure")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}; src {args.src}")
    cold, warm = [], []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
            cpu, wall, report = run_child(args.src, cache, args.kernels > 0)
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
    for label, runs in (("cold", cold), ("warm", warm)):
        print(f"median {label} start: CPU {statistics.median(c for c, _ in runs):.1f} s, "
              f"wall {statistics.median(w for _, w in runs):.1f} s over {len(runs)} runs")


if __name__ == "__main__":
    main()
