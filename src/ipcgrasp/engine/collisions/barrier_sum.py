"""The barrier potential summed over a collision set (m^4, no stiffness), its gradient and
(PSD-projected) Hessian triplets, the smallest distance and the contact forces.

Few kernels on purpose: numba re-optimises every callee linked into each compiled kernel, so
each extra kernel over the distance Hessians costs seconds of cold-start compile time.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.barrier import (
    _barrier,
    _barrier_first_derivative,
    _barrier_second_derivative,
    _project_to_psd_on_range,
)
from ipcgrasp.engine.collisions.collision_mesh import (
    _plane_arrays,
    _positions,
    _positive,
)
from ipcgrasp.engine.collisions.collision_set import EDGE_EDGE, NUM_KIND_VERTICES
from ipcgrasp.engine.collisions.local_blocks import (
    _outer,
    _scatter_hessian,
    _sum_per_vertex,
    _triplet_offsets,
)
from ipcgrasp.engine.collisions.pair_distance import (
    _distance,
    _distance_gradient,
    _distance_hessian,
    _mollifier,
)
from ipcgrasp.engine.distance import (
    _edge_edge_cross_squarednorm,
    _edge_edge_mollifier,
    _edge_edge_mollifier_gradient,
    _edge_edge_mollifier_hessian,
)


@njit
def _barrier_values(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq):
    """Per collision: squared distance d, barrier w m b(d), and w m |b'(d)| 2 sqrt(d)."""
    count = kind.shape[0]
    d = np.empty(count)
    value = np.zeros(count)
    force = np.zeros(count)
    for k in range(count):
        v = vertices[k]
        d[k] = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if d[k] < dhat_sq:
            wm = weight[k] * _mollifier(kind[k], eps_x[k], v, x)
            value[k] = wm * _barrier(d[k], dhat_sq)
            force[k] = -wm * _barrier_first_derivative(d[k], dhat_sq) * 2.0 * np.sqrt(d[k])
    return d, value, force


@njit
def _barrier_gradients(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq):
    """Per collision (K, 4, 3): grad [w m b(d)] = w (m b'(d) grad d + b(d) grad m)."""
    out = np.zeros((kind.shape[0], 4, 3))
    for k in range(kind.shape[0]):
        v = vertices[k]
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if d >= dhat_sq:
            continue
        grad = (weight[k] * _barrier_first_derivative(d, dhat_sq)) * _distance_gradient(
            kind[k], ee_type[k], v, x, origin, normal
        )
        if kind[k] == EDGE_EDGE and _edge_edge_cross_squarednorm(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) < eps_x[k]:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]  # else the mollifier is 1, its gradient 0
            grad *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
            grad += (weight[k] * _barrier(d, dhat_sq)) * _edge_edge_mollifier_gradient(
                a0, a1, b0, b1, eps_x[k]
            )
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _barrier_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq,
                      project, offsets):
    """COO triplets of the Hessians of w m b(d) (ipctk NormalPotential):
    w [m (b'' gd gd^T + b' Hd) + b' (gd gm^T + gm gd^T) + b Hm], each optionally PSD-projected.
    The projection runs in a second loop over the assembled blocks: the same routine called
    inside the first loop measured 1.4 times slower (docs/performance.md, "The barrier Hessians'
    PSD projection")."""
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    for k in range(kind.shape[0]):
        v = vertices[k]
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        grad_d = _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        if d >= dhat_sq:
            hess = np.zeros((grad_d.shape[0], grad_d.shape[0]))
        else:
            w = weight[k]
            db = _barrier_first_derivative(d, dhat_sq)
            d2b = _barrier_second_derivative(d, dhat_sq)
            hess = (w * d2b) * _outer(grad_d, grad_d) + (w * db) * _distance_hessian(
                kind[k], ee_type[k], v, x, origin, normal
            )
            # edges far from parallel: mollifier 1, its gradient and Hessian 0 (hess unchanged)
            if kind[k] == EDGE_EDGE and _edge_edge_cross_squarednorm(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) < eps_x[k]:
                a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
                hess *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
                cross = (w * db) * _outer(
                    grad_d, _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k])
                )
                hess += cross + cross.T
                hess += (w * _barrier(d, dhat_sq)) * _edge_edge_mollifier_hessian(
                    a0, a1, b0, b1, eps_x[k]
                )
        _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
    if project:
        for k in range(kind.shape[0]):
            lo = offsets[k]
            size = 3 * NUM_KIND_VERTICES[kind[k]]
            projected = _project_to_psd_on_range(vals[lo:lo + size * size].reshape((size, size)))
            for r in range(size):  # loops, not _copy_into: a hot copy into a reshaped slice (engine._numba)
                for c in range(size):
                    vals[lo + size * r + c] = projected[r, c]
    return rows, cols, vals


def _barrier_args(collisions, mesh, x, dhat):
    x = _positions(x, mesh)
    dhat = _positive(dhat, "dhat")
    origin, normal = _plane_arrays(mesh)
    return (
        collisions.kind, collisions.vertices, collisions.edge_edge_type, collisions.eps_x,
        collisions.weight, x, origin, normal, dhat * dhat,
    )


def barrier_potential(collisions, mesh, x, dhat):
    """B(x) = sum_k w_k m_k(x) b(d_k(x), dhat^2) over the collisions (m^4; no stiffness).

    x (N, 3) m; dhat (m, unsquared). b is IPC's log barrier on squared distances (Li et al.
    2020 eq. 6), m_k the edge-edge mollifier (1 for other kinds), w_k the weight. +inf if a
    collision has d <= 0. Equals ipctk BarrierPotential(dhat, 1.0)(collisions, mesh, x).
    """
    return float(_barrier_values(*_barrier_args(collisions, mesh, x, dhat))[1].sum())


def barrier_potential_gradient(collisions, mesh, x, dhat):
    """Gradient of barrier_potential with respect to x: (N, 3) (m^3)."""
    args = _barrier_args(collisions, mesh, x, dhat)
    return _sum_per_vertex(_barrier_gradients(*args), collisions.vertices, mesh.num_vertices)


def barrier_potential_hessian(collisions, mesh, x, dhat, project_to_psd=True):
    """Hessian of barrier_potential as COO triplets (rows, cols, vals) over the 3N DOFs (m^2).

    Index 3 * vertex + axis; duplicate entries are summed by the caller's assembly (e.g.
    scipy.sparse.coo_matrix(...).tocsr()). With project_to_psd each collision's local Hessian
    is projected to the nearest PSD matrix first (projected Newton; IPC sec. 4.4).
    """
    args = _barrier_args(collisions, mesh, x, dhat)
    return _barrier_hessians(*args, bool(project_to_psd), _triplet_offsets(collisions.kind))


def min_distance(collisions, mesh, x):
    """Smallest unsquared distance (m) over the collisions at x; inf if there are none."""
    if len(collisions) == 0:
        _positions(x, mesh)
        return np.inf
    # any dhat will do: only the distances are used
    d = _barrier_values(*_barrier_args(collisions, mesh, x, 1.0))[0]
    return float(np.sqrt(max(d.min(), 0.0)))


def contact_forces(collisions, mesh, x, dhat, barrier_stiffness):
    """Force of each collision on each of its vertices: -kappa grad_x [w_k m_k b(d_k)].

    Returns (K, 4, 3), rows in the order of collisions.vertices, zero for padding slots.
    Units of kappa * m^3; in the incremental potential (docs/physics.md) dividing by h^2
    gives newtons. Summed over collisions (per vertex) it is -kappa barrier_potential_gradient.
    """
    kappa = _positive(barrier_stiffness, "barrier_stiffness")
    return -kappa * _barrier_gradients(*_barrier_args(collisions, mesh, x, dhat))


def normal_force_magnitudes(collisions, mesh, x, dhat, barrier_stiffness):
    """IPC's contact force magnitudes lambda_k = kappa w_k m_k |b'(d_k)| 2 sqrt(d_k) (K,).

    |d/d sqrt(d)| of the collision's barrier w m b(d) at fixed mollifier, in the units of
    kappa * m^3 (ipctk's barrier_force_magnitude times the collision's weight and mollifier).
    """
    kappa = _positive(barrier_stiffness, "barrier_stiffness")
    return kappa * _barrier_values(*_barrier_args(collisions, mesh, x, dhat))[2]
