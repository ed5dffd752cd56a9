"""Per-collision local rows and blocks: outer products, rows summed per vertex, and square blocks
scattered to COO Hessian triplets (index 3 * vertex + axis).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions.collision_set import NUM_KIND_VERTICES


@njit
def _outer(a, b):
    """np.outer(a, b) of two 1-D arrays, the same products; numba compiles its np.outer slowly
    (engine._numba)."""
    out = np.empty((a.shape[0], b.shape[0]))
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = a[i] * b[j]
    return out


@njit
def _sum_per_vertex(local, vertices, num_vertices):
    """Sum per-collision vertex rows (K, 4, 3) into (num_vertices, 3), skipping padding."""
    out = np.zeros((num_vertices, 3))
    for k in range(local.shape[0]):
        for a in range(4):
            if vertices[k, a] >= 0:
                for i in range(3):
                    out[vertices[k, a], i] += local[k, a, i]
    return out


@njit
def _scatter_hessian(local, v, offset, rows, cols, vals):
    size = local.shape[0]
    i = offset
    for a in range(size):
        for b in range(size):
            rows[i] = 3 * v[a // 3] + a % 3
            cols[i] = 3 * v[b // 3] + b % 3
            vals[i] = local[a, b]
            i += 1


@njit
def _triplet_offsets(kind):
    """Where each collision's square block of Hessian triplets starts (K + 1,)."""
    offsets = np.zeros(kind.shape[0] + 1, dtype=np.int64)
    for k in range(kind.shape[0]):
        size = 3 * NUM_KIND_VERTICES[kind[k]]
        offsets[k + 1] = offsets[k] + size * size
    return offsets
