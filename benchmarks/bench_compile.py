"""Where `ipcgrasp compile` spends its CPU: the warm-up (grasp.warmup.warm_up, one process) on an
empty numba cache, split by compilation and by phase.

Runs warm_up in a child process whose NUMBA_CACHE_DIR is a new empty temporary directory and
prints, all in CPU s of that child:
- the phases of compilation, exclusive: numba's passes (typing, lowering to LLVM IR, the rest),
  LLVM parsing the IR, LLVM's function passes, and per library LLVM's final-module optimisation
  and machine-code emission, split between libraries compiled for a call from Python (entry
  points) and libraries compiled only as other kernels' callees (numba finalises every library
  on its own, and again inside each library that links it);
- the entry points, inclusive of the callees they compiled first (a callee another entry point
  compiled earlier is not counted again) and exclusive;
- every compiled function, exclusive, summed over its signatures, with how many it has;
- the functions compiled for more than one signature.
The phase split patches numba internals (numba 0.68); a numba without them is reported as such.
Run:
.venv/bin/python benchmarks/bench_compile.py [--top 15] [--src DIR] [--json OUT]
(--src: the src/ directory of another checkout to measure instead of this one).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(__file__).resolve().parent

# The child: numba_phases (this folder, put on sys.path) times the warm-up's compilations and phases.
CHILD = f"import sys\nsys.path.append({str(BENCHMARKS)!r})\n" + r"""
import collections, json, time
from numba.core import compiler_machinery
from numba_phases import Clock, Compilations, time_phases

clock = Clock()  # per open compilation or phase
phases = collections.defaultdict(float)


class Compiles(Compilations):  # a compilation's time outside the phases timed on `clock`
    def on_start(self, ev):
        clock.push()
        super().on_start(ev)

    def on_end(self, ev):
        phases["numba, outside its passes"] += clock.pop()[1]
        super().on_end(ev)


compiles = Compiles().register()


def timed_pass(original):
    def call(self, index, pss, state):
        clock.push()
        try:
            return original(self, index, pss, state)
        finally:
            name = pss if isinstance(pss, str) else getattr(pss, "_name", str(pss))
            label = {"nopython_type_inference": "numba typing", "native_lowering": "numba lowering, outside BaseLower"}
            phases[label.get(name, "numba, its other passes")] += clock.pop()[1]
    return call


try:
    compiler_machinery.PassManager._runPass = timed_pass(compiler_machinery.PassManager._runPass)
    time_phases({"lowering": "numba lowering to LLVM IR (BaseLower)", "parsing": "LLVM parsing the IR",
                 "function passes": "LLVM function passes", "final module": "LLVM final-module optimisation",
                 "machine code": "LLVM emitting machine code"}, phases, clock)
except AttributeError as missing:
    phases.clear()
    phases[f"not measured: this numba lacks {missing}"] = 0.0

started = time.process_time()
from ipcgrasp.grasp.warmup import warm_up  # noqa: E402

warm_up(log=lambda line: None)
total = time.process_time() - started
compilations = [{"function": f"{c['module'].replace('ipcgrasp.', '')}.{c['name']}", "args": c["args"],
                 "inclusive": c["inclusive"], "exclusive": c["exclusive"], "entry": c["entry"]}
                for c in compiles.done]
entry_names = {c["name"] for c in compiles.done if c["entry"]}
split = collections.defaultdict(float)
for key, spent in phases.items():
    if isinstance(key, tuple):
        key = f"{key[0]}, {'entry points' if key[1] in entry_names else 'callees only'}"
    split[key] += spent
print(json.dumps({"total": total, "phases": split, "compilations": compilations}))
"""


def measure(src):
    """warm_up in a child on an empty cache; returns its JSON report."""
    with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(src))
        child = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if child.returncode != 0:
        sys.exit(f"the warm-up failed in the child process:\n{child.stderr}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=15, help="rows per table")
    parser.add_argument("--src", default=str(REPO / "src"), help="src/ directory of the checkout to measure")
    parser.add_argument("--json", help="also write the child's report to this file")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}; src {args.src}")
    report = measure(args.src)
    if args.json:
        Path(args.json).write_text(json.dumps(report), encoding="utf-8")
    compilations = report["compilations"]
    entries = [c for c in compilations if c["entry"]]
    print(f"warm-up CPU {report['total']:.1f} s; {len(compilations)} compilations, {len(entries)} of them for a "
          f"call from Python ({sum(c['inclusive'] for c in entries):.1f} s inclusive)")
    print(f"\n{'phase (exclusive CPU s)':<72}")
    for name, spent in sorted(report["phases"].items(), key=lambda kv: -kv[1]):
        print(f"  {name:<70} {spent:6.2f}")
    print(f"\n{'entry point':<64} {'inclusive':>9} {'exclusive':>9}")
    for c in sorted(entries, key=lambda c: -c["inclusive"])[:args.top]:
        print(f"  {c['function']:<62} {c['inclusive']:9.2f} {c['exclusive']:9.2f}")
    by_function = {}
    for c in compilations:
        spent, signatures = by_function.get(c["function"], (0.0, set()))
        by_function[c["function"]] = (spent + c["exclusive"], signatures | {tuple(c["args"])})
    print(f"\n{'function, all its signatures':<64} {'exclusive':>9} {'signatures':>10}")
    for name, (spent, signatures) in sorted(by_function.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {name:<62} {spent:9.2f} {len(signatures):10d}")
    print("\nipcgrasp functions compiled for more than one signature")
    for name, (spent, signatures) in sorted(by_function.items(), key=lambda kv: -kv[1][0]):
        if len(signatures) > 1 and not name.startswith("numba."):
            print(f"  {name} ({spent:.2f} s): " + "; ".join(f"({', '.join(s)})" for s in sorted(signatures)))


if __name__ == "__main__":
    main()
