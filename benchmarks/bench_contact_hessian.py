"""Cost per call of the contact Hessian kernels when many contacts are active.

Runs cube grasp 5 (3 cm cube, no pose noise, default SimParams) once, recording the inputs of
`assembly._add_contact_hessians` at the call with the most contacts (about 250 while the pads
hold the cube in the lift), then times it and the kernels it calls (`collisions._barrier_hessians`,
`collisions._friction_hessians`, `assembly._add_mapped_blocks`) on those inputs: CPU time
(`time.process_time`), median of `--runs` repeats of `--calls` calls each. The barrier kernel is
also timed without the PSD projection, which shows what the projection costs. The pattern's
values are added to on every call (timing only).

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
from ipcgrasp.engine.solver import contact_model
from ipcgrasp.engine.solver import assembly
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.procedure import GraspProcedure

GRASP = 5


def record_largest_call(subdivisions):
    """Run the grasp with `assembly._add_contact_hessians` (the one kernel the Newton Hessian
    calls for contact) wrapped where solver.contact_model calls it; the arguments (copied) of its
    call with the most contacts."""
    largest = None
    original = contact_model._add_contact_hessians

    def wrapped(*args):
        nonlocal largest
        contacts = args[7].shape[0]
        if largest is None or contacts > largest[0]:
            largest = (contacts, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
        return original(*args)

    contact_model._add_contact_hessians = wrapped
    try:
        data = resolve_data_dir()
        mesh_path, mass = load_object(data, "cube_3cm")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grasps = load_physical_grasps(data, "cube_3cm")
        mesh = trimesh.load(mesh_path, force="mesh")
        for _ in range(subdivisions):
            mesh = mesh.subdivide()
        obj = GraspObject.from_mesh(mesh, mass, "cube_3cm")
        params = SimParams(noise_translation=0.0, noise_rotation=0.0)
        GraspProcedure(obj, grasps.object_poses[GRASP], grasps.grasp_poses[GRASP], params, IpcBackend).run()
    finally:
        contact_model._add_contact_hessians = original
    return largest


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
    parser.add_argument("--subdivisions", type=int, default=0, help="cube mesh subdivisions (4: 1538 vertices)")
    args = parser.parse_args()
    print(f"ipcgrasp from {simulation.__file__}")
    contacts, whole = record_largest_call(args.subdivisions)
    (data, indptr, indices, z_index, z_coef, dense_lo, x, kind, vertices, ee_type, eps_x, weight, origin, normal,
     dhat, kappa, friction, f_kind, f_vertices, f_basis, f_coords, f_mu, f_force, x_t, eps_u, _project) = whole
    kinds = np.bincount(kind, minlength=5)
    print(f"grasp {GRASP}, largest call: {contacts} contacts (vertex-vertex {kinds[0]}, edge-vertex {kinds[1]}, "
          f"edge-edge {kinds[2]}, face-vertex {kinds[3]}, vertex-plane {kinds[4]}), {f_kind.shape[0]} with friction")
    offsets = collisions._triplet_offsets(kind)
    barrier_args = [kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat * dhat, True, offsets]
    rows, _, vals = collisions._barrier_hessians(*barrier_args)
    f_offsets = collisions._triplet_offsets(f_kind)
    rows = [("all of it (assembly._add_contact_hessians)", assembly._add_contact_hessians, whole),
            ("barrier Hessians, PSD-projected", collisions._barrier_hessians, barrier_args),
            ("barrier Hessians, not projected", collisions._barrier_hessians, barrier_args[:-2] + [False, offsets]),
            ("friction Hessians", collisions._friction_hessians,
             [f_kind, f_vertices, f_basis, f_coords, f_mu, f_force, x - x_t, eps_u, f_offsets]),
            (f"barrier blocks into the CSC pattern ({contacts} blocks)", assembly._add_mapped_blocks,
             [data, indptr, indices, rows, vals, offsets, kappa, z_index, z_coef, dense_lo])]
    for label, kernel, kernel_args in rows:
        print(f"{label:>55}: {cpu_ms_per_call(kernel, kernel_args, args.calls, args.runs):.3f} ms CPU per call")


if __name__ == "__main__":
    main()
