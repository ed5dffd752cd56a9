"""Compile the simulator's numba kernels ahead of the first trial (`ipcgrasp compile`).

numba compiles a kernel on its first call and keeps the machine code in its on-disk cache
(`__pycache__` beside the sources, or NUMBA_CACHE_DIR); a fresh install's first trial therefore
spends about 50 s of CPU compiling and every later process loads the cache in a few seconds.
`warm_up` pays that once, up front: it simulates one grasp of a synthetic 3 cm box (no data
needed, no pose noise) with each contact model the study uses, which calls every kernel of a
trial with the argument types a real trial passes. `./run.sh` runs it after installing.

numba compiles one kernel at a time in a process. With jobs > 1, helper processes compile the
kernels listed in KERNELS (the warm-up's own, recorded by `record_kernels` with their costs)
while the warm-up runs, each first a costly kernel the warm-up reaches late, then the list from
its far end (`_helper_order`): each process finds in the on-disk cache what another has
finished.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import trimesh

from ipcgrasp.collector import collector_paused
from ipcgrasp.documents import load_json
from ipcgrasp.engine._numba import compile_listed
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import CONTACT_MODELS, SimParams
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.simulate import simulate_grasp

BOX_SIDE = 0.03  # m, the bundled cube's size
BOX_MASS = 0.003  # kg
# The kernels warm_up compiles for calls from Python, with their argument types and the CPU s of
# their compilation, in the order a warm-up with an empty cache finishes them: `python -m
# ipcgrasp.grasp.warmup --record` rewrites it (tests/grasp/test_warmup.py checks that it lists what
# warm_up compiles).
KERNELS = Path(__file__).with_name("warmup_kernels.json")
# More compiling processes than this mostly compile the same callees again (each kernel compiles
# its own call tree).
MAX_JOBS = 4


def box_grasp(gripper: Gripper) -> tuple[GraspObject, np.ndarray, np.ndarray]:
    """A 3 cm box resting on the ground and a top-down grasp across it at mid-height:
    (object, object_pose, grasp_pose), poses 4x4 in m."""
    obj = GraspObject.from_mesh(trimesh.creation.box(extents=(BOX_SIDE,) * 3), BOX_MASS, "warm-up box")
    object_pose, grasp_pose = place_scene(obj.mesh, np.eye(4), gripper.top_down_grasp())
    return obj, object_pose, grasp_pose


def default_jobs() -> int:
    """Processes for `ipcgrasp compile`: the cores this process may run on, at most MAX_JOBS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_JOBS))


def _helper_order(kernels: list, helper: int, helpers: int) -> list:
    """What helper `helper` of `helpers` compiles, in order. The warm-up compiles the list's
    kernels in the list's order; their recorded costs (an entry's fourth item, CPU s) split the
    list into helpers + 1 stretches of equal cost, the warm-up's first. Helper k first compiles
    the costliest kernel of stretch k + 1, long before the warm-up reaches it, then the list from
    its far end (the warm-up compiles from the near end), each further helper starting an equal
    share of the list further along: a kernel a helper is still compiling when the warm-up needs
    it is compiled twice, and the list's costliest kernel lies near its middle, where a helper
    going from the far end alone would reach it just before the warm-up does."""
    share = sum(entry[3] for entry in kernels) / (helpers + 1)
    stretch, before = [], 0.0
    for k, entry in enumerate(kernels):
        if int((before + entry[3] / 2) // share) == helper + 1:  # its middle in share helper + 1
            stretch.append(k)
        before += entry[3]
    first = [max(stretch, key=lambda k: kernels[k][3])] if stretch else []
    order = list(reversed(range(len(kernels))))
    start = helper * len(order) // helpers
    return [kernels[k] for k in first + [k for k in order[start:] + order[:start] if k not in first]]


def ready_kernels(kernels: list) -> tuple[int, float]:
    """Of the listed kernels (KERNELS' entries: [module, name, argument types, CPU s]), how many
    this process holds for their listed signature, compiled here (also as another kernel's callee)
    or loaded from the on-disk cache, and the CPU s recorded for them: the warm-up's progress
    (what helpers compile counts once the warm-up loads it). A kernel the list names but the code
    lacks counts as not ready."""
    ready, seconds = 0, 0.0
    for module, name, argument_types, cost, *_ in kernels:
        dispatcher = getattr(sys.modules.get(module), name, None)
        signatures = getattr(dispatcher, "signatures", ())
        if any([str(t) for t in signature] == argument_types for signature in signatures):
            ready += 1
            seconds += cost
    return ready, seconds


def _compile_helper(kernels: list, stop) -> None:
    """A helper process's work: compile the kernels until done or stopped; report what it skipped."""
    with collector_paused():
        skipped = compile_listed(kernels, stop)
    for line in skipped:
        print(f"ipcgrasp compile: a helper could not compile {line}; the warm-up compiles it", file=sys.stderr)


def warm_up(log: Callable[[str], None] = print, jobs: int = 1) -> list[tuple[str, float, str]]:
    """Simulate the box grasp once per contact model (SimParams defaults otherwise) and measure
    the jaws closed into the box once, compiling what is not in numba's cache yet; jobs > 1
    starts jobs - 1 helper processes that compile the kernels listed in KERNELS meanwhile. Every
    process compiles with the garbage collector paused (`ipcgrasp.collector`): numba's compiler
    allocates millions of objects, and the collector's passes over the growing heap took 6.4 s of
    a 59.5 s warm-up on an empty cache; paused, a compiling process peaks at 1.3 GB, not 0.75 GB.
    Returns (contact model, CPU s of this process, outcome: "held" or the failure label and
    reason) per model; the outcome is for information (the penalty model with its default
    stiffness lets the box slip), the kernels are compiled either way."""
    if jobs < 1:
        raise ValueError(f"warm_up: jobs must be at least 1, got {jobs}")
    helpers, stop = _start_helpers(jobs - 1, log)
    try:
        with collector_paused():
            return _simulate_box(log)
    finally:
        if stop is not None:
            stop.set()  # each helper ends after the kernel it is compiling
        for helper in helpers:
            helper.join()


def _start_helpers(count: int, log: Callable[[str], None]) -> tuple[list, object]:
    """Start up to `count` helper processes on the kernel list; returns them and the Event that
    stops them (None without helpers). None are started when the list cannot be read or no
    process can be: the helpers only speed the warm-up up."""
    if count == 0:
        return [], None
    try:
        kernels = load_json(KERNELS)
    except (OSError, ValueError) as exc:
        log(f"cannot read the kernel list {KERNELS} ({exc}); compiling in one process")
        return [], None
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing compiled, nothing forked
    stop, helpers = context.Event(), []
    for k in range(count):
        helper = context.Process(target=_compile_helper, args=(_helper_order(kernels, k, count), stop), daemon=True)
        try:
            helper.start()
        except OSError as exc:
            log(f"could not start a helper process ({exc}); compiling in fewer processes")
            break
        helpers.append(helper)
    log(f"compiling with {len(helpers) + 1} processes ({len(helpers)} helper{'s' if len(helpers) != 1 else ''} "
        "from the kernel list)")
    return helpers, stop


def _simulate_box(log: Callable[[str], None]) -> list[tuple[str, float, str]]:
    gripper = Gripper.yumi()
    obj, object_pose, grasp_pose = box_grasp(gripper)
    done = []
    for model in CONTACT_MODELS:
        log(f"compiling the kernels of a trial with {model} contact ...")
        started = time.process_time()
        params = SimParams(contact_model=model, noise_translation=0.0, noise_rotation=0.0)
        result = simulate_grasp(obj, object_pose, grasp_pose, params, gripper=gripper)
        seconds = time.process_time() - started
        outcome = "held" if result.success else f"{result.failure_mode}: {result.reason}"
        log(f"  {model}: {seconds:.1f} s CPU ({outcome})")
        done.append((model, seconds, outcome))
    # Opening the jaws around this box meets no placement whose bounding box touches the box's; a
    # real object's may, and those run the solids' overlap tests: the jaws closed into the box do.
    world = obj.mesh.vertices @ object_pose[:3, :3].T + object_pose[:3, 3]
    gripper.jaw_distances(grasp_pose, world, obj.mesh.faces, opening=0.5 * BOX_SIDE)
    return done


# In a child process: the warm-up, then as JSON either the kernels it compiles in the order their
# compilations end, each with its CPU s ("order", run with an empty cache) or the kernels it calls
# from Python ("called", run with the cache the first filled).
_RECORD = """
import json, sys
from ipcgrasp.engine._numba import Compilations, loaded_kernels
from ipcgrasp.grasp.warmup import warm_up
with Compilations() as compiled:
    warm_up(log=lambda line: None)
if sys.argv[1] == "order":
    json.dump([entry + [seconds] for entry, seconds in zip(compiled.kernels, compiled.seconds)], sys.stdout)
else:
    json.dump(loaded_kernels(), sys.stdout)
"""


def record_kernels(path: Path = KERNELS) -> int:
    """Write to `path` (atomically) the kernels the warm-up calls from Python, with their argument
    types, in the order a warm-up with an empty numba cache finishes compiling them (a kernel
    compiled first as another's callee counts from then), each with the CPU s of that first
    compilation, its callees included (what `_helper_order` shares the list by); returns how
    many. Runs the warm-up in two child processes on a temporary NUMBA_CACHE_DIR, removed after:
    about a minute of CPU."""
    from ipcgrasp.io import write_bytes_atomic

    found = {}
    with tempfile.TemporaryDirectory(prefix="ipcgrasp-record-") as cache:
        for mode in ("order", "called"):
            child = subprocess.run([sys.executable, "-c", _RECORD, mode], env=dict(os.environ, NUMBA_CACHE_DIR=cache),
                                   capture_output=True, text=True)
            if child.returncode != 0:
                raise RuntimeError(f"recording the warm-up's kernels failed:\n{child.stderr}")
            found[mode] = json.loads(child.stdout)
    first = {}  # kernel -> (when its first compilation ended, its CPU s)
    for k, (*entry, seconds) in enumerate(found["order"]):
        first.setdefault(json.dumps(entry), (k, seconds))
    listed = sorted(found["called"], key=lambda entry: first.get(json.dumps(entry), (len(first), 0.0)))
    lines = [json.dumps(entry + [round(first.get(json.dumps(entry), (0, 0.0))[1], 2)]) for entry in listed]
    write_bytes_atomic(path, ("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8"))
    return len(lines)


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python -m ipcgrasp.grasp.warmup --record   (rewrites " + str(KERNELS) + ")")
    print(f"recorded {record_kernels()} kernels in {KERNELS}")
