"""Time per evaluation of the image-space quality measure (Tan et al.; the paper reports
2.04 ms +- 0.26 ms per grasp candidate) on the 3 cm cube's top-down silhouette.

Grasp candidates are drawn uniformly in the silhouette's bounding box with a uniform closing
direction, as the paper does; the silhouette is rendered once (its time is reported apart).
Run: .venv/bin/python benchmarks/bench_image_quality.py [--n 500] [--resolution 0.25e-3]
"""

import argparse
import math
import time

import numpy as np
import trimesh

from ipcgrasp.baselines.image_quality import grasp_quality, render_silhouette
from ipcgrasp.data.location import resolve_data_dir


def median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="grasp candidates")
    parser.add_argument("--resolution", type=float, default=0.25e-3, help="pixel size, m")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    mesh = trimesh.load(resolve_data_dir() / "object_meshes" / "cube_3cm.obj", process=False)
    pose = np.diag([1.0, -1.0, -1.0, 1.0])  # looking down at the cube
    pose[2, 3] = 0.2

    start = time.perf_counter()
    silhouette = render_silhouette(mesh, pose, args.resolution)
    grasp_quality(silhouette)
    first_call = time.perf_counter() - start
    render = median_ms(lambda: render_silhouette(mesh, pose, args.resolution), 20)

    rng = np.random.default_rng(args.seed)
    pixels = np.argwhere(silhouette.mask)[:, ::-1]  # (u, v) = (column, row)
    lo, hi = silhouette.to_metric(pixels.min(axis=0)), silhouette.to_metric(pixels.max(axis=0) + 1)
    centres = rng.uniform(lo, hi, (args.n, 2))
    thetas = rng.uniform(-math.pi, math.pi, args.n)
    times, scores = [], []
    for centre, theta in zip(centres, thetas):
        start = time.perf_counter()
        q = grasp_quality(silhouette, centre=centre, theta=theta)
        times.append(time.perf_counter() - start)
        scores.append(q.score)
    times = 1e3 * np.array(times)

    print(f"silhouette: {silhouette.mask.shape[1]} x {silhouette.mask.shape[0]} px at "
          f"{args.resolution * 1e3:g} mm, area {silhouette.area * 1e6:.1f} mm^2")
    print(f"first call (numba compile or cache load + render + one evaluation): {first_call:.2f} s")
    print(f"render_silhouette (incl. smoothed gradient): median {render:.3f} ms")
    print(f"grasp_quality over {args.n} grasps: median {np.median(times):.4f} ms, "
          f"mean {times.mean():.4f} ms, p95 {np.percentile(times, 95):.4f} ms (paper: 2.04 ms)")
    print(f"scores: mean {np.mean(scores):.3f}, fraction >= 0.5: {np.mean(np.array(scores) >= 0.5):.2f}")


if __name__ == "__main__":
    main()
