"""Barrier potential over >= 10,000 contacts and a collision-free step size: ours (numba)
side by side with ipctk's C++ on the same CollisionMesh, in one run.

Scene: two finely triangulated square sheets (`--grid` x `--grid` vertices, 1 mm spacing),
the upper one turned by 17 degrees about z and floating dhat / 2 above the lower one, every
vertex jittered in z by up to 0.2 dhat. Each vertex over the other sheet's interior is a
point-triangle contact and each crossing of two edges in plan view an edge-edge contact.

Rows (median of `--runs` repeats after one warm-up call; ours and ipctk's calls are
interleaved within each repeat so load from other processes hits both alike):
- build collisions, given candidates: our broad-phase candidates at x (inflation dhat) handed
  to our build_collisions and, as ipctk.Candidates, to ipctk.NormalCollisions.build;
- build collisions with each one's own broad phase: build_collisions(mesh, x, dhat) vs
  ipctk.NormalCollisions.build(mesh, x, dhat);
- barrier potential, gradient, PSD-projected Hessian (eigenvalues clamped at 0) over that
  set: ours vs ipctk.BarrierPotential(dhat, 1.0). Our Hessian is COO triplets, ipctk's an
  assembled scipy CSC matrix, so a second row adds our assembly to CSC; a row without the
  projection shows what the 12 x 12 eigendecompositions cost;
- collision-free step size for a step moving the upper sheet 2 dhat down through the lower
  one: our candidates() + collision_free_stepsize (Additive CCD) vs
  ipctk.compute_collision_free_stepsize (its broad phase, Tight Inclusion CCD), and the
  narrow phase alone on our candidate set (ipctk with Tight Inclusion and with its
  AdditiveCCD).
ipctk runs with one thread and with its default thread count; ours runs on one thread.
Before timing, the script checks that both sides agree (collision counts per kind, barrier
value, gradient, Hessian) and prints the differences.

Run: .venv/bin/python benchmarks/bench_barrier.py [--grid 80] [--runs 7]
"""

import argparse
import os
import platform
import time

import ipctk
import numpy as np
import scipy.sparse as sp

from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.ccd import collision_free_stepsize
from ipcgrasp.engine.collisions import (
    EDGE_EDGE,
    EDGE_VERTEX,
    FACE_VERTEX,
    VERTEX_VERTEX,
    CollisionMesh,
    barrier_potential,
    barrier_potential_gradient,
    barrier_potential_hessian,
    build_collisions,
)

SPACING = 1e-3  # m, grid spacing of both sheets
DHAT = 1e-4  # m, activation distance
TURN = np.radians(17.0)


def sheet(n):
    """Vertices (n*n, 3) of an n x n grid with SPACING, centred on the origin, and faces."""
    s = (np.arange(n) - 0.5 * (n - 1)) * SPACING
    gx, gy = np.meshgrid(s, s, indexing="ij")
    vertices = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(n * n)])
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (i * n + j).ravel()
    b, c, d = a + n, a + n + 1, a + 1
    faces = np.vstack([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    return vertices, faces


def two_sheets(n, rng):
    """Rest positions, faces and body ids of the lower (body 0) and upper (body 1) sheet."""
    lower, faces = sheet(n)
    c, s = np.cos(TURN), np.sin(TURN)
    upper = lower @ np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    upper[:, 2] = 0.5 * DHAT
    x = np.vstack([lower, upper])
    x[:, 2] += rng.uniform(-0.2 * DHAT, 0.2 * DHAT, len(x))
    return x, np.vstack([faces, faces + n * n]), np.repeat([0, 1], n * n)


def ipctk_candidates(vf, ee):
    result = ipctk.Candidates()
    result.fv_candidates = [ipctk.FaceVertexCandidate(int(f), int(v)) for v, f in vf]
    result.ee_candidates = [ipctk.EdgeEdgeCandidate(int(a), int(b)) for a, b in ee]
    return result


def to_csc(triplets, n_dof):
    rows, cols, vals = triplets
    return sp.csc_matrix((vals, (rows, cols)), shape=(n_dof, n_dof))


def relative_difference(ours, reference):
    """max |ours - reference| / max |reference| (arrays or sparse matrices)."""
    difference = ours - reference
    if sp.issparse(difference):
        return abs(difference).max() / abs(reference).max()
    return np.abs(difference).max() / np.abs(reference).max()


def interleaved_medians(calls, runs):
    """Median wall time (s) of each zero-argument call over `runs` interleaved repeats."""
    for call in calls:
        call()
    times = np.empty((runs, len(calls)))
    for r in range(runs):
        for k, call in enumerate(calls):
            start = time.perf_counter()
            call()
            times[r, k] = time.perf_counter() - start
    return np.median(times, axis=0)


def with_threads(threads, call):
    def run():
        ipctk.set_num_threads(threads)
        return call()
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=80, help="vertices per sheet side")
    parser.add_argument("--runs", type=int, default=7, help="timed repeats (>= 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.runs < 5:
        parser.error("--runs must be >= 5")
    ipctk.set_logger_level(ipctk.LoggerLevel.error)
    default_threads = ipctk.get_num_threads()

    x, faces, body = two_sheets(args.grid, np.random.default_rng(args.seed))
    mesh = CollisionMesh.build(x, faces, body)
    n_dof = x.size
    ipc_mesh = ipctk.CollisionMesh(
        x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32)
    )
    assert np.array_equal(ipc_mesh.edges, mesh.edges) and np.array_equal(ipc_mesh.faces, faces)
    ipc_mesh.can_collide = ipctk.make_connected_components_filter(faces.astype(np.int32))
    xf = np.asfortranarray(x)  # ipctk takes column-major arrays; no copy inside the timing

    # -- agreement --------------------------------------------------------------------------
    vf, ee, vp = candidates(x, x, mesh.edges, mesh.faces, body, DHAT)
    shared = ipctk_candidates(vf, ee)
    ours = build_collisions(mesh, x, DHAT, (vf, ee, vp))
    own = build_collisions(mesh, x, DHAT)
    reference = ipctk.NormalCollisions()
    reference.build(shared, ipc_mesh, xf, DHAT)
    reference_own = ipctk.NormalCollisions()
    reference_own.build(ipc_mesh, xf, DHAT)
    kinds = [("point-triangle", FACE_VERTEX, reference.fv_collisions),
             ("edge-edge", EDGE_EDGE, reference.ee_collisions),
             ("point-edge", EDGE_VERTEX, reference.ev_collisions),
             ("point-point", VERTEX_VERTEX, reference.vv_collisions)]
    counts = {name: (int(np.count_nonzero(ours.kind == kind)), len(items))
              for name, kind, items in kinds}
    potential = ipctk.BarrierPotential(DHAT, 1.0)
    clamp = ipctk.PSDProjectionMethod.CLAMP
    value = barrier_potential(ours, mesh, x, DHAT)
    value_ref = potential(reference, ipc_mesh, xf)
    value_rel = abs(value - value_ref) / abs(value_ref)
    gradient_rel = relative_difference(
        barrier_potential_gradient(ours, mesh, x, DHAT).ravel(),
        potential.gradient(reference, ipc_mesh, xf))
    hessian_rel = relative_difference(
        to_csc(barrier_potential_hessian(ours, mesh, x, DHAT, project_to_psd=True), n_dof),
        potential.hessian(reference, ipc_mesh, xf, clamp))
    same_sets = len(own) == len(ours) and len(reference_own) == len(reference)

    x1 = x.copy()
    x1[body == 1, 2] -= 2.0 * DHAT
    x1f = np.asfortranarray(x1)
    vf1, ee1, _ = candidates(x, x1, mesh.edges, mesh.faces, body, 0.0)
    shared1 = ipctk_candidates(vf1, ee1)
    step = collision_free_stepsize(x, x1, vf1, ee1, [], mesh.edges, mesh.faces)
    step_ref = ipctk.compute_collision_free_stepsize(ipc_mesh, xf, x1f)
    additive = ipctk.AdditiveCCD()
    step_additive = shared1.compute_collision_free_stepsize(
        ipc_mesh, xf, x1f, narrow_phase_ccd=additive)

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"python {platform.python_version()}, ipctk {ipctk.__version__} "
          f"(default {default_threads} threads)")
    print(f"scene: two {args.grid}x{args.grid} sheets, {len(x)} vertices, {len(faces)} faces, "
          f"{len(mesh.edges)} edges, dhat {DHAT:g} m; {len(vf)} vertex-face + {len(ee)} "
          f"edge-edge candidates")
    print("active collisions (ours / ipctk): " + ", ".join(
        f"{name} {a} / {b}" for name, (a, b) in counts.items()) + f"; total {len(ours)} / "
        f"{len(reference)}")
    print(f"agreement: barrier potential {value:.12e} vs {value_ref:.12e}, rel. diff "
          f"{value_rel:.1e} ({'OK' if value_rel < 1e-8 else 'FAIL'} < 1e-8); gradient "
          f"{gradient_rel:.1e}, PSD Hessian {hessian_rel:.1e} (max abs diff / max abs); "
          f"own broad phases give the same sets: {same_sets}")
    print(f"step size (upper sheet moved {2 * DHAT:g} m down): ours {step:.6f}, ipctk "
          f"{step_ref:.6f} (Tight Inclusion), {step_additive:.6f} (AdditiveCCD); {len(vf1)} "
          f"vertex-face + {len(ee1)} edge-edge CCD candidates")
    if max(value_rel, gradient_rel, hessian_rel) >= 1e-8 or any(
        a != b for a, b in counts.values()
    ):
        raise SystemExit("ours and ipctk disagree; timings not comparable")

    # -- timings -----------------------------------------------------------------------------
    def ours_hessian():
        return barrier_potential_hessian(ours, mesh, x, DHAT, project_to_psd=True)

    rows = [
        ("build collisions (given candidates)",
         lambda: build_collisions(mesh, x, DHAT, (vf, ee, vp)),
         lambda: ipctk.NormalCollisions().build(shared, ipc_mesh, xf, DHAT)),
        ("build collisions (own broad phase)",
         lambda: build_collisions(mesh, x, DHAT),
         lambda: ipctk.NormalCollisions().build(ipc_mesh, xf, DHAT)),
        ("barrier potential",
         lambda: barrier_potential(ours, mesh, x, DHAT),
         lambda: potential(reference, ipc_mesh, xf)),
        ("barrier gradient",
         lambda: barrier_potential_gradient(ours, mesh, x, DHAT),
         lambda: potential.gradient(reference, ipc_mesh, xf)),
        ("barrier Hessian, no projection (ours: COO)",
         lambda: barrier_potential_hessian(ours, mesh, x, DHAT, project_to_psd=False),
         lambda: potential.hessian(reference, ipc_mesh, xf)),
        ("barrier Hessian, PSD (ours: COO triplets)",
         ours_hessian,
         lambda: potential.hessian(reference, ipc_mesh, xf, clamp)),
        ("barrier Hessian, PSD (ours: + CSC assembly)",
         lambda: to_csc(ours_hessian(), n_dof),
         lambda: potential.hessian(reference, ipc_mesh, xf, clamp)),
        ("step size: narrow phase, same candidates",
         lambda: collision_free_stepsize(x, x1, vf1, ee1, [], mesh.edges, mesh.faces),
         lambda: shared1.compute_collision_free_stepsize(ipc_mesh, xf, x1f)),
        ("step size: narrow phase, ipctk AdditiveCCD",
         lambda: collision_free_stepsize(x, x1, vf1, ee1, [], mesh.edges, mesh.faces),
         lambda: shared1.compute_collision_free_stepsize(
             ipc_mesh, xf, x1f, narrow_phase_ccd=additive)),
        ("step size: broad + narrow phase",
         lambda: collision_free_stepsize(
             x, x1, *candidates(x, x1, mesh.edges, mesh.faces, body, 0.0)[:2], [],
             mesh.edges, mesh.faces),
         lambda: ipctk.compute_collision_free_stepsize(ipc_mesh, xf, x1f)),
    ]
    print(f"\nmedian of {args.runs} runs, ms; ours on 1 thread")
    print(f"{'operation':<44} {'ours':>9} {'ipctk 1t':>9} {'ratio':>7} "
          f"{f'ipctk {default_threads}t':>9} {'ratio':>7}")
    for label, ours_call, ipctk_call in rows:
        ours_time, one, default = interleaved_medians(
            [ours_call, with_threads(1, ipctk_call), with_threads(default_threads, ipctk_call)],
            args.runs,
        )
        print(f"{label:<44} {1e3 * ours_time:9.2f} {1e3 * one:9.2f} {ours_time / one:7.2f} "
              f"{1e3 * default:9.2f} {ours_time / default:7.2f}")
    ipctk.set_num_threads(default_threads)
    print("ratio = ours / ipctk (< 1: ours faster)")


if __name__ == "__main__":
    main()
