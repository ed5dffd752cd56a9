"""Collision-free step size over >= 10,000 candidates: ours (Additive CCD, numba) side by side
with ipctk's compute_collision_free_stepsize on the same CollisionMesh.

Scene: two 2 cm cubes, each face subdivided into a fine grid (`--subdivisions`), facing each
other 1 mm apart and each moving 2 mm towards the other with per-vertex jitter, so the facing
grids produce tens of thousands of vertex-face and edge-edge candidates.

Rows (median of `--runs` runs, the first call of each kernel left out):
- narrow phase on one candidate set: our candidates (pairs between the two cubes) handed to
  both our collision_free_stepsize and ipctk.Candidates.compute_collision_free_stepsize, the
  latter with its default Tight Inclusion CCD and with its Additive CCD;
- broad phase alone: our candidates() (pairs between the two cubes only) against
  ipctk.Candidates.build (its default broad phase; it also pairs primitives within a cube);
- full: our candidates() + collision_free_stepsize against
  ipctk.compute_collision_free_stepsize (its own broad phase, default Tight Inclusion CCD).
ipctk runs with its default thread count and with one thread; ours runs on one thread.
Run: .venv/bin/python benchmarks/bench_ccd.py [--subdivisions 4] [--runs 5]
"""

import argparse
import time

import ipctk
import numpy as np
import trimesh

from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.ccd import collision_free_stepsize


def two_cubes(subdivisions, rng):
    cube = trimesh.creation.box(extents=(0.02, 0.02, 0.02))
    for _ in range(subdivisions):
        cube = cube.subdivide()
    n = len(cube.vertices)
    x0 = np.vstack([cube.vertices, cube.vertices + [0.021, 0.0, 0.0]])
    faces = np.vstack([cube.faces, cube.faces + n])
    edges = np.vstack([cube.edges_unique, cube.edges_unique + n])
    body = np.repeat([0, 1], n)
    x1 = x0 + rng.normal(0, 2e-4, x0.shape)
    x1[body == 0] += [0.002, 0, 0]
    x1[body == 1] -= [0.002, 0, 0]
    return x0, x1, edges, faces, body


def median_time(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def step_text(step):
    return f"{step:7.4f}" if step is not None else f"{'-':>7}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subdivisions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ipctk.set_logger_level(ipctk.LoggerLevel.error)

    x0, x1, edges, faces, body = two_cubes(args.subdivisions, np.random.default_rng(args.seed))
    mesh = ipctk.CollisionMesh(x0, edges.astype(np.int32), faces.astype(np.int32))
    assert np.array_equal(mesh.edges, edges) and np.array_equal(mesh.faces, faces)

    vf, ee, _ = candidates(x0, x1, edges, faces, body, inflation_radius=0.0)
    shared = ipctk.Candidates()
    shared.fv_candidates = [ipctk.FaceVertexCandidate(int(f), int(v)) for v, f in vf]
    shared.ee_candidates = [ipctk.EdgeEdgeCandidate(int(a), int(b)) for a, b in ee]
    print(f"two cubes, {len(x0)} vertices, {len(faces)} faces, {len(edges)} edges; "
          f"candidates: {len(vf)} vertex-face + {len(ee)} edge-edge = {len(vf) + len(ee)}; "
          f"median of {args.runs} runs")

    def broad_phase_only():
        candidates(x0, x1, edges, faces, body, inflation_radius=0.0)

    tight = ipctk.TightInclusionCCD()
    additive = ipctk.AdditiveCCD()
    rows = [
        ("narrow phase, same candidates",
         lambda: collision_free_stepsize(x0, x1, vf, ee, [], edges, faces),
         [("TightInclusion", lambda: shared.compute_collision_free_stepsize(
             mesh, x0, x1, narrow_phase_ccd=tight)),
          ("AdditiveCCD", lambda: shared.compute_collision_free_stepsize(
              mesh, x0, x1, narrow_phase_ccd=additive))]),
        ("broad phase only",
         broad_phase_only,
         [("Candidates.build", lambda: ipctk.Candidates().build(mesh, x0, x1, 0.0))]),
        ("full (broad + narrow phase)",
         lambda: collision_free_stepsize(
             x0, x1, *candidates(x0, x1, edges, faces, body, 0.0)[:2], [], edges, faces),
         [("TightInclusion", lambda: ipctk.compute_collision_free_stepsize(mesh, x0, x1))]),
    ]
    default_threads = ipctk.get_num_threads()
    print(f"{'':<31} {'ours ms':>8} {'step':>7}   {'ipctk':<15} {'threads':>7} {'ms':>8} "
          f"{'step':>7} {'ours/ipctk':>10}")
    for label, ours, references in rows:
        ours_time, ours_step = median_time(ours, args.runs)
        for name, reference in references:
            for threads in sorted({default_threads, 1}, reverse=True):
                ipctk.set_num_threads(threads)
                ref_time, ref_step = median_time(reference, args.runs)
                print(f"{label:<31} {1e3 * ours_time:8.2f} {step_text(ours_step)}   "
                      f"{name:<16}{threads:7d} {1e3 * ref_time:8.2f} {step_text(ref_step)} "
                      f"{ours_time / ref_time:10.3f}")
        ipctk.set_num_threads(default_threads)


if __name__ == "__main__":
    main()
