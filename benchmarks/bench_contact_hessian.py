"""Cost per call of the contact Hessian kernels when many contacts are active (issue 14).

Runs cube grasp 5 (3 cm cube, no pose noise, default SimParams) once, recording the inputs of
`collisions._barrier_hessians`, `collisions._friction_hessians` and
`simulation._add_mapped_blocks` at the call with the most contacts (about 250 while the pads
hold the cube in the lift), then times each kernel on those inputs: CPU time
(`time.process_time`), median of `--runs` repeats of `--calls` calls each. The barrier kernel is
also timed without the PSD projection, which shows what the projection costs.

To compare with another checkout, run this script with that checkout's `src/` first on the
path (`PYTHONPATH=../other/src .venv/bin/python benchmarks/bench_contact_hessian.py`) and
alternate the runs. Run: .venv/bin/python benchmarks/bench_contact_hessian.py [--runs 7]
"""

import argparse
import statistics
import time
import warnings

import numpy as np
import trimesh

from ipcgrasp import GraspObject, SimParams
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.engine import collisions, simulation
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.procedure import GraspProcedure

GRASP = 5


def record_largest_calls():
    """Run the grasp with the three kernels wrapped; per kernel the arguments (copied) of the
    call with the most contacts."""
    largest = {}
    kernels = {"barrier": (collisions, "_barrier_hessians"), "friction": (collisions, "_friction_hessians"),
               "mapped": (simulation, "_add_mapped_blocks")}

    def recording(name, kernel):
        def wrapped(*args):
            contacts = args[5].shape[0] - 1 if name == "mapped" else args[0].shape[0]
            if name not in largest or contacts > largest[name][0]:
                largest[name] = (contacts, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
            return kernel(*args)
        return wrapped

    originals = {name: getattr(module, attr) for name, (module, attr) in kernels.items()}
    for name, (module, attr) in kernels.items():
        setattr(module, attr, recording(name, originals[name]))
    try:
        data = resolve_data_dir()
        mesh_path, mass = load_object(data, "cube_3cm")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grasps = load_physical_grasps(data, "cube_3cm")
        obj = GraspObject.from_mesh(trimesh.load(mesh_path, force="mesh"), mass, "cube_3cm")
        params = SimParams(noise_translation=0.0, noise_rotation=0.0)
        GraspProcedure(obj, grasps.object_poses[GRASP], grasps.grasp_poses[GRASP], params, IpcBackend).run()
    finally:
        for name, (module, attr) in kernels.items():
            setattr(module, attr, originals[name])
    return {name: (originals[name], contacts, args) for name, (contacts, args) in largest.items()}


def cpu_ms_per_call(kernel, args, calls, runs):
    kernel(*args)
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(calls):
            kernel(*args)
        times.append((time.process_time() - start) / calls * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print(f"ipcgrasp from {simulation.__file__}")
    recorded = record_largest_calls()
    barrier, contacts, barrier_args = recorded["barrier"]
    kinds = np.bincount(barrier_args[0], minlength=5)
    print(f"grasp {GRASP}, largest call: {contacts} contacts (vertex-vertex {kinds[0]}, edge-vertex {kinds[1]}, "
          f"edge-edge {kinds[2]}, face-vertex {kinds[3]}, vertex-plane {kinds[4]})")
    rows = [("barrier Hessians, PSD-projected", barrier, barrier_args)]
    unprojected = list(barrier_args)
    unprojected[-2] = False
    rows.append(("barrier Hessians, not projected", barrier, unprojected))
    kernel, _, friction_args = recorded["friction"]
    rows.append(("friction Hessians", kernel, friction_args))
    kernel, blocks, mapped_args = recorded["mapped"]
    rows.append((f"contact blocks into the CSC pattern ({blocks} blocks)", kernel, mapped_args))
    for label, kernel, kernel_args in rows:
        print(f"{label:>55}: {cpu_ms_per_call(kernel, kernel_args, args.calls, args.runs):.3f} ms CPU per call")


if __name__ == "__main__":
    main()
