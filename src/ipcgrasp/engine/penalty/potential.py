"""The penalty energy 1/2 k w m delta^2 summed over the contacts (J), its gradient (N), exact or
Gauss-Newton Hessian triplets (N/m), and each contact's distance (m) and force (N).
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions import (
    EDGE_EDGE,
    NUM_KIND_VERTICES,
    VERTEX_PLANE,
    _distance,
    _distance_gradient,
    _distance_hessian,
    _mollifier,
    _outer,
    _plane_arrays,
    _positions,
    _positive,
    _scatter_hessian,
    _sum_per_vertex,
    _triplet_offsets,
)
from ipcgrasp.engine.distance import (
    _edge_edge_mollifier,
    _edge_edge_mollifier_gradient,
    _edge_edge_mollifier_hessian,
)


@njit
def _height(p, origin, normal):
    return (p[0] - origin[0]) * normal[0] + (p[1] - origin[1]) * normal[1] + (p[2] - origin[2]) * normal[2]


@njit
def _penalty_values(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin):
    """Per contact: distance s (m; the signed height for the plane), energy per unit stiffness
    1/2 w m delta^2 (m^2) and force per unit stiffness w m delta (m), zero where delta <= 0."""
    count = kind.shape[0]
    s = np.empty(count)
    value = np.zeros(count)
    force = np.zeros(count)
    for k in range(count):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            s[k] = _height(x[v[0]], origin, normal)
            reach = margin
        else:
            s[k] = np.sqrt(_distance(kind[k], ee_type[k], v, x, origin, normal))
            reach = 2.0 * margin
        if s[k] < reach:
            delta = reach - s[k]
            wm = weight[k] * _mollifier(kind[k], eps_x[k], v, x)
            value[k] = 0.5 * wm * delta * delta
            force[k] = wm * delta
    return s, value, force


@njit
def _penalty_gradients(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin):
    """Per contact (K, 4, 3): gradient of 1/2 w m delta^2 per unit stiffness,
    w (m dP/dd grad d + P grad m) with dP/dd = -delta / (2 s); the plane's is -w delta n."""
    out = np.zeros((kind.shape[0], 4, 3))
    reach = 2.0 * margin
    for k in range(kind.shape[0]):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            delta = margin - _height(x[v[0]], origin, normal)
            if delta > 0.0:
                for i in range(3):
                    out[k, 0, i] = -weight[k] * delta * normal[i]
            continue
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if not (0.0 < d < reach * reach):
            continue
        s = np.sqrt(d)
        delta = reach - s
        grad = (-weight[k] * delta / (2.0 * s)) * _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        if kind[k] == EDGE_EDGE:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
            grad *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
            grad += (0.5 * weight[k] * delta * delta) * _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k])
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _plane_hessian(weight, height, margin, normal):
    """A vertex-plane contact's Hessian of 1/2 w delta^2 per unit stiffness (3, 3): w n n^T
    within the margin, else zero."""
    hess = np.zeros((3, 3))
    if height < margin:
        for i in range(3):
            for j in range(3):
                hess[i, j] = weight * normal[i] * normal[j]
    return hess


@njit
def _penalty_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin, offsets):
    """COO triplets of the Gauss-Newton Hessians of 1/2 w m delta^2 per unit stiffness (what the
    solver uses): w m grad(s) grad(s)^T = w m gd gd^T / (4 d) (PSD); zero beyond the layers. The
    plane's is w n n^T. A kernel of its own, without the distance Hessians of
    `_penalty_exact_hessians`, which a trial does not compile."""
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    reach = 2.0 * margin
    for k in range(kind.shape[0]):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            hess = _plane_hessian(weight[k], _height(x[v[0]], origin, normal), margin, normal)
            _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
            continue
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        size = 3 * NUM_KIND_VERTICES[kind[k]]
        if not (0.0 < d < reach * reach):
            _scatter_hessian(np.zeros((size, size)), v, offsets[k], rows, cols, vals)
            continue
        grad_d = _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        hess = (weight[k] * _mollifier(kind[k], eps_x[k], v, x) / (4.0 * d)) * _outer(grad_d, grad_d)
        _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
    return rows, cols, vals


@njit
def _penalty_exact_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin, offsets):
    """COO triplets of the exact Hessians of 1/2 w m delta^2 per unit stiffness:
    w [m (P'' gd gd^T + P' Hd) + P' (gd gm^T + gm gd^T) + P Hm] with P' = -delta / (2 s),
    P'' = 2 r / (4 s^3); zero beyond the layers. The plane's is w n n^T."""
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    reach = 2.0 * margin
    for k in range(kind.shape[0]):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            hess = _plane_hessian(weight[k], _height(x[v[0]], origin, normal), margin, normal)
            _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
            continue
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        size = 3 * NUM_KIND_VERTICES[kind[k]]
        if not (0.0 < d < reach * reach):
            _scatter_hessian(np.zeros((size, size)), v, offsets[k], rows, cols, vals)
            continue
        grad_d = _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        w = weight[k]
        s = np.sqrt(d)
        delta = reach - s
        dp = -delta / (2.0 * s)
        d2p = reach / (4.0 * s * s * s)
        hess = (w * d2p) * _outer(grad_d, grad_d) + (w * dp) * _distance_hessian(
            kind[k], ee_type[k], v, x, origin, normal)
        if kind[k] == EDGE_EDGE:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
            hess *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
            cross = (w * dp) * _outer(grad_d, _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k]))
            hess += cross + cross.T
            hess += (0.5 * w * delta * delta) * _edge_edge_mollifier_hessian(a0, a1, b0, b1, eps_x[k])
        _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
    return rows, cols, vals


def _penalty_args(contacts, mesh, x, margin):
    origin, normal = _plane_arrays(mesh)
    return (contacts.kind, contacts.vertices, contacts.edge_edge_type, contacts.eps_x, contacts.weight,
            _positions(x, mesh), origin, normal, _positive(margin, "margin"))


def penalty_potential(contacts, mesh, x, margin, stiffness) -> float:
    """P(x) = sum_k 1/2 k w_k m_k delta_k(x)^2 (J) over the contacts (from `build_contacts`);
    margin r (m), stiffness k (N/m)."""
    k = _positive(stiffness, "stiffness")
    return k * float(_penalty_values(*_penalty_args(contacts, mesh, x, margin))[1].sum())


def penalty_potential_gradient(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """Gradient of penalty_potential with respect to x: (N, 3) in N."""
    k = _positive(stiffness, "stiffness")
    local = _penalty_gradients(*_penalty_args(contacts, mesh, x, margin))
    return k * _sum_per_vertex(local, contacts.vertices, mesh.num_vertices)


def penalty_potential_hessian(contacts, mesh, x, margin, stiffness, gauss_newton=True):
    """Hessian of penalty_potential as COO triplets (rows, cols, vals) over the 3N DOFs (N/m),
    index 3 * vertex + axis, duplicates to be summed. gauss_newton (what the solver uses): the
    PSD part k w m grad(s) grad(s)^T of each contact, i.e. the exact Hessian without
    -k w m delta Hess(s) and the mollifier's derivatives; False: the exact Hessian."""
    k = _positive(stiffness, "stiffness")
    kernel = _penalty_hessians if gauss_newton else _penalty_exact_hessians
    rows, cols, vals = kernel(*_penalty_args(contacts, mesh, x, margin), _triplet_offsets(contacts.kind))
    return rows, cols, k * vals


def contact_distances(contacts, mesh, x) -> np.ndarray:
    """Distance (m) of each contact's primitives at x (K,): unsigned between meshes (the
    contact's closest-feature distance), the signed height for vertex-plane contacts."""
    return _penalty_values(*_penalty_args(contacts, mesh, x, 1.0))[0]


def normal_force_magnitudes(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """k w_k m_k delta_k (K,) in N: each contact's penalty force magnitude at x."""
    k = _positive(stiffness, "stiffness")
    return k * _penalty_values(*_penalty_args(contacts, mesh, x, margin))[2]


def contact_forces(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """Force (N) of each contact on each of its vertices, -grad P_k: (K, 4, 3) in the order of
    contacts.vertices, zero for padding."""
    k = _positive(stiffness, "stiffness")
    return -k * _penalty_gradients(*_penalty_args(contacts, mesh, x, margin))
