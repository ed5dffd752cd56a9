"""grasp.warmup (`ipcgrasp compile`): its synthetic trials call the kernels of a real trial with
the same argument types, so a real trial after it compiles (or loads) nothing more; its kernel
list (KERNELS) names exactly what it compiles, with the argument types real calls have, so helper
processes compiling from the list fill the cache a trial then loads."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ipcgrasp.engine._numba import compile_listed, numba_type
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp import warmup
from ipcgrasp.grasp.warmup import KERNELS, _helper_order, box_grasp

# In a fresh process: warm up, list every ipcgrasp kernel's compiled signatures, run a real cube
# trial per contact model and list what that trial added. numba registers a signature loaded
# from its disk cache as it does a compiled one, so this holds with a warm cache too. "compiled":
# whether the warm-up compiled any kernel (a cold or stale cache) instead of loading it.
CHILD = textwrap.dedent("""
    import gc, json, sys, warnings
    import numba
    from ipcgrasp import GraspObject, SimParams, simulate_grasp
    from ipcgrasp.data.location import resolve_data_dir
    from ipcgrasp.data.reach import load_physical_grasps
    from ipcgrasp.grasp.warmup import warm_up

    def dispatchers():
        return [d for d in gc.get_objects()
                if isinstance(d, numba.core.registry.CPUDispatcher) and d.py_func.__module__.startswith("ipcgrasp")]

    def signatures():
        return {f"{d.py_func.__module__}.{d.py_func.__name__}{s}" for d in dispatchers() for s in d.signatures}

    outcomes = [outcome for _, _, outcome in warm_up(log=lambda line: None)]
    before = signatures()
    compiled = any(d.stats.cache_misses for d in dispatchers())
    json.dump(sorted(before), open(sys.argv[1], "w"))
    data = resolve_data_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grasps = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003)
    for model in ("ipc", "penalty"):
        simulate_grasp(obj, grasps.object_poses[0], grasps.grasp_poses[0], SimParams(contact_model=model), seed=0)
    json.dump({"outcomes": outcomes, "kernels": len(before), "added": sorted(signatures() - before),
               "compiled": compiled}, sys.stdout)
""")


def listed_signatures():
    """The signatures KERNELS lists, written as CHILD's `signatures()` writes a compiled one."""
    return {f"{module}.{name}{tuple(numba_type(t) for t in types)}"
            for module, name, types, _ in json.loads(KERNELS.read_text(encoding="utf-8"))}


@pytest.mark.slow
def test_a_real_trial_after_the_warm_up_needs_no_kernel_it_did_not_compile(tmp_path):
    # on a warm cache: a process that compiles a kernel also registers the signatures of kernels
    # compiled only as its callees, one that loads them all only those called from Python, which
    # is what KERNELS lists; a warm-up that compiled (a cold or stale cache) has filled the cache,
    # and the child runs again on it
    compiled = tmp_path / "compiled.json"
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", CHILD, str(compiled)], capture_output=True, text=True,
                             timeout=900)
        assert run.returncode == 0, run.stderr
        found = json.loads(run.stdout)
        if not found["compiled"]:
            break
    assert not found["compiled"], "the warm-up compiled kernels again on the cache it had just filled"
    assert found["outcomes"][0] == "held"  # the IPC trial lifts the box
    assert found["kernels"] > 40
    assert found["added"] == []
    listed, warmed = listed_signatures(), set(json.loads(compiled.read_text()))
    assert listed == warmed, ("grasp/warmup_kernels.json is out of date; refresh it with "
                              "`python -m ipcgrasp.grasp.warmup --record`: "
                              f"listed only {sorted(listed - warmed)}, compiled only {sorted(warmed - listed)}")


def test_helpers_start_with_the_costliest_kernel_of_their_share_then_go_from_the_far_end():
    costs = [4, 1, 2, 1, 1, 0.5, 0.5, 2, 6, 12, 0.4, 0.3, 2, 1, 1, 1, 0.5]  # CPU s, 36.2 in all
    kernels = [["ipcgrasp.engine.scene", f"_k{k}", [], cost] for k, cost in enumerate(costs)]
    alone = [entry[1] for entry in _helper_order(kernels, 0, 1)]
    # the warm-up's half ends in _k9 (18.0 s before it, 30.0 s after it): it is the helper's
    assert alone == ["_k9"] + [f"_k{k}" for k in range(16, -1, -1) if k != 9]
    first, second = _helper_order(kernels, 0, 2), _helper_order(kernels, 1, 2)
    # thirds of 12.07 s: _k8 and _k9 have their middles in the second, _k10 to _k16 in the third
    assert [entry[1] for entry in first[:3]] == ["_k9", "_k16", "_k15"]
    assert [entry[1] for entry in second[:3]] == ["_k12", "_k8", "_k7"]  # then half way along
    assert sorted(map(str, first)) == sorted(map(str, second)) == sorted(map(str, kernels))


def test_every_listed_kernel_has_its_recorded_cost():
    listed = json.loads(KERNELS.read_text(encoding="utf-8"))
    assert all(len(entry) == 4 and entry[3] >= 0.0 for entry in listed)
    assert max(listed, key=lambda entry: entry[3])[1] == "_add_contact_hessians"


def test_without_a_readable_kernel_list_the_warm_up_compiles_alone(tmp_path, monkeypatch):
    broken = tmp_path / "warmup_kernels.json"
    broken.write_text("[not json")
    monkeypatch.setattr(warmup, "KERNELS", broken)
    lines = []
    helpers, stop = warmup._start_helpers(1, lines.append)
    assert helpers == [] and stop is None
    assert lines and "cannot read the kernel list" in lines[0] and "one process" in lines[0]


def test_a_listed_kernel_that_cannot_be_compiled_is_reported_not_raised():
    skipped = compile_listed([["ipcgrasp.engine.scene", "_no_such_kernel", ["float64"]],
                              ["ipcgrasp.engine.scene", "_step_norm", ["UniTuple(float64, 3)"]]])
    assert len(skipped) == 2
    assert "_no_such_kernel" in skipped[0] and "AttributeError" in skipped[0]
    assert "UniTuple(float64, 3)" in skipped[1] and "ValueError" in skipped[1]


# `ipcgrasp compile --jobs 2` into an empty cache, then a cube trial in a new process on that cache:
# it must load every kernel (no cache miss) and give the result a trial on the usual cache gives.
TRIAL = textwrap.dedent("""
    import gc, json, sys, warnings
    import numba
    from ipcgrasp import GraspObject, SimParams, simulate_grasp
    from ipcgrasp.data.location import resolve_data_dir
    from ipcgrasp.data.reach import load_physical_grasps

    data = resolve_data_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grasps = load_physical_grasps(data, "cube_3cm")
    obj = GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003)
    r = simulate_grasp(obj, grasps.object_poses[0], grasps.grasp_poses[0], SimParams(), seed=0)
    misses = sorted(f"{d.py_func.__module__}.{d.py_func.__name__}" for d in gc.get_objects()
                    if isinstance(d, numba.core.registry.CPUDispatcher) and d.py_func.__module__.startswith("ipcgrasp")
                    and d.stats.cache_misses)
    json.dump({"misses": misses, "result": [r.success, r.newton_iterations, list(r.close_forces), r.lift_height]},
              sys.stdout)
""")


@pytest.mark.slow
def test_compiling_with_a_helper_fills_the_cache_a_trial_then_loads(tmp_path):
    cache = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    compiled = subprocess.run([sys.executable, "-m", "ipcgrasp.cli", "compile", "--jobs", "2"], env=cache,
                              capture_output=True, text=True, timeout=900)
    assert compiled.returncode == 0, compiled.stderr
    assert "compiling with 2 processes" in compiled.stdout
    listed = len(json.loads(KERNELS.read_text()))
    assert f"{listed} of {listed} kernels" in compiled.stdout  # the progress bar ends with every listed kernel held
    assert "could not compile" not in compiled.stderr  # the helper found every listed kernel
    assert "Traceback" not in compiled.stderr  # and did not fail
    fresh = subprocess.run([sys.executable, "-c", TRIAL], env=cache, capture_output=True, text=True, timeout=900)
    usual = subprocess.run([sys.executable, "-c", TRIAL], capture_output=True, text=True, timeout=900)
    assert fresh.returncode == 0, fresh.stderr
    assert usual.returncode == 0, usual.stderr
    fresh, usual = json.loads(fresh.stdout), json.loads(usual.stdout)
    assert fresh["misses"] == []
    assert fresh["result"] == usual["result"]  # the same machine code's result, to the bit


def test_the_warm_up_box_sits_on_the_ground_between_the_open_jaws():
    gripper = Gripper.yumi()
    obj, object_pose, grasp_pose = box_grasp(gripper)
    vertices = obj.mesh.vertices @ object_pose[:3, :3].T + object_pose[:3, 3]
    assert np.isclose(vertices[:, 2].min(), 1e-3)  # place_scene: 1 mm above the ground
    tips = gripper.tooltip_poses(grasp_pose)[:, :3, 3]
    np.testing.assert_allclose(tips.mean(axis=0), vertices.mean(axis=0), atol=1e-9)  # centred on the box
    closing = tips[1] - tips[0]
    assert abs(closing[2]) < 1e-9 and np.linalg.norm(closing) > 0.03  # horizontal, wider than the box


def test_the_compile_progress_counts_a_listed_kernel_once_this_process_holds_it():
    from ipcgrasp.engine import _numba

    three_d = "array(int64, 3d, C)"  # a signature no engine code compiles
    listed = [["ipcgrasp.engine._numba", "_copy_into", [three_d, three_d], 1.5],
              ["ipcgrasp.engine._numba", "_no_such_kernel", ["float64"], 2.0],
              ["ipcgrasp.no_such_module", "_copy_into", [three_d, three_d], 4.0]]
    assert warmup.ready_kernels(listed) == (0, 0.0)
    _numba._copy_into(np.zeros((2, 1, 3), dtype=np.int64), np.ones((2, 1, 3), dtype=np.int64))
    assert warmup.ready_kernels(listed) == (1, 1.5)


def test_the_compile_progress_prints_the_log_as_written_and_counts_the_kernels_held(capsys):
    from ipcgrasp import cli

    lines = []
    with cli._compile_progress() as log:
        log("a line of the warm-up's log [kept as written]")
        lines.append(warmup.ready_kernels(json.loads(KERNELS.read_text())))
    out = capsys.readouterr().out
    assert "a line of the warm-up's log [kept as written]" in out
    listed = len(json.loads(KERNELS.read_text()))
    assert f"{lines[0][0]} of {listed} kernels" in out
