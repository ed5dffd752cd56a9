"""IPC's lagged friction over a collision set (sec. 5): the lagged contacts (FrictionCollisions)
and the summed friction potential, its gradient, Hessian triplets and forces (displacements in m).
"""

import numpy as np

from ipcgrasp.engine._numba import _copy_into, njit
from ipcgrasp.engine.collisions.barrier_sum import normal_force_magnitudes
from ipcgrasp.engine.collisions.collision_mesh import (
    _plane_arrays,
    _positions,
    _positive,
)
from ipcgrasp.engine.collisions.collision_set import (
    EDGE_EDGE,
    EDGE_VERTEX,
    FACE_VERTEX,
    NUM_KIND_VERTICES,
    VERTEX_PLANE,
    VERTEX_VERTEX,
    FrictionCollisions,
)
from ipcgrasp.engine.collisions.local_blocks import (
    _scatter_hessian,
    _sum_per_vertex,
    _triplet_offsets,
)
from ipcgrasp.engine.distance import _edge_edge_cross_squarednorm
from ipcgrasp.engine.friction import (
    _edge_edge_closest_point,
    _edge_edge_relative_displacement_matrix,
    _edge_edge_tangent_basis,
    _friction_potential,
    _friction_potential_gradient,
    _friction_potential_hessian,
    _point_edge_closest_point,
    _point_edge_relative_displacement_matrix,
    _point_edge_tangent_basis,
    _point_plane_relative_displacement_matrix,
    _point_plane_tangent_basis,
    _point_point_relative_displacement_matrix,
    _point_point_tangent_basis,
    _point_triangle_closest_point,
    _point_triangle_relative_displacement_matrix,
    _point_triangle_tangent_basis,
)


@njit
def _lagged_friction_geometry(kind, vertices, eps_x, x, normal):
    """Keep mask (nearly parallel edge-edge pairs dropped, as ipctk), tangent bases T and
    closest-point coordinates at the lagged positions x."""
    count = kind.shape[0]
    keep = np.ones(count, dtype=np.bool_)
    basis = np.zeros((count, 3, 2))
    coords = np.zeros((count, 2))
    for k in range(count):
        v = vertices[k]
        # rows are copied by _copy_into, not assigned as slices (engine._numba)
        if kind[k] == VERTEX_VERTEX:
            _copy_into(basis[k], _point_point_tangent_basis(x[v[0]], x[v[1]]))
        elif kind[k] == EDGE_VERTEX:
            _copy_into(basis[k], _point_edge_tangent_basis(x[v[0]], x[v[1]], x[v[2]]))
            coords[k, 0] = _point_edge_closest_point(x[v[0]], x[v[1]], x[v[2]])
        elif kind[k] == EDGE_EDGE:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
            if _edge_edge_cross_squarednorm(a0, a1, b0, b1) < eps_x[k]:
                keep[k] = False
                continue
            _copy_into(basis[k], _edge_edge_tangent_basis(a0, a1, b0, b1))
            _copy_into(coords[k], _edge_edge_closest_point(a0, a1, b0, b1))
        elif kind[k] == FACE_VERTEX:
            _copy_into(basis[k], _point_triangle_tangent_basis(x[v[0]], x[v[1]], x[v[2]], x[v[3]]))
            _copy_into(coords[k], _point_triangle_closest_point(x[v[0]], x[v[1]], x[v[2]], x[v[3]]))
        else:
            _copy_into(basis[k], _point_plane_tangent_basis(normal))
    return keep, basis, coords


def build_friction_collisions(collisions, mesh, x_lagged, dhat, barrier_stiffness):
    """Lagged friction contacts of the collisions at the start-of-step positions x_lagged.

    Per collision: lambda_k = kappa w_k |b'(d_k)| 2 sqrt(d_k) at x_lagged, the tangent basis and
    closest-point coordinates at x_lagged, and mu from mesh.mu (mesh.mu_plane for the plane).
    Nearly parallel edge-edge collisions (|ea x eb|^2 < eps_x) are left out, like ipctk's
    TangentialCollisions.build (their mollified barrier has no well-defined normal).
    IPC sec. 5 (lagged friction); dhat (m), barrier_stiffness kappa.
    """
    force = normal_force_magnitudes(collisions, mesh, x_lagged, dhat, barrier_stiffness)
    x = _positions(x_lagged, mesh, "x_lagged")
    keep, basis, coords = _lagged_friction_geometry(
        collisions.kind, collisions.vertices, collisions.eps_x, x, _plane_arrays(mesh)[1]
    )
    kind = collisions.kind[keep]
    bodies = collisions.bodies[keep]
    plane = kind == VERTEX_PLANE
    mu = np.where(
        plane,
        mesh.mu_plane[bodies[:, 0]],
        mesh.mu[bodies[:, 0], np.where(plane, bodies[:, 0], bodies[:, 1])],
    )
    return FrictionCollisions(
        kind=np.ascontiguousarray(kind),
        vertices=np.ascontiguousarray(collisions.vertices[keep]),
        bodies=np.ascontiguousarray(bodies),
        normal_force=np.ascontiguousarray(force[keep]),
        tangent_basis=np.ascontiguousarray(basis[keep]),
        closest_point=np.ascontiguousarray(coords[keep]),
        mu=np.ascontiguousarray(mu, dtype=np.float64),
    )


@njit
def _relative_displacement_matrix(kind, coords):
    if kind == VERTEX_VERTEX:
        return _point_point_relative_displacement_matrix()
    if kind == EDGE_VERTEX:
        return _point_edge_relative_displacement_matrix(coords[0])
    if kind == EDGE_EDGE:
        return _edge_edge_relative_displacement_matrix(coords)
    if kind == FACE_VERTEX:
        return _point_triangle_relative_displacement_matrix(coords)
    return _point_plane_relative_displacement_matrix()


@njit
def _local_displacement(u, v, n):
    du = np.empty(3 * n)
    for a in range(n):
        for i in range(3):
            du[3 * a + i] = u[v[a], i]
    return du


@njit
def _friction_values(kind, vertices, basis, coords, mu, force, u, eps_u):
    total = 0.0
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        total += _friction_potential(du, gamma, basis[k], mu[k], force[k], eps_u)
    return total


@njit
def _friction_gradients(kind, vertices, basis, coords, mu, force, u, eps_u):
    out = np.zeros((kind.shape[0], 4, 3))
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        grad = _friction_potential_gradient(du, gamma, basis[k], mu[k], force[k], eps_u)
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _friction_hessians(kind, vertices, basis, coords, mu, force, u, eps_u, offsets):
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.empty(nnz)
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        hess = _friction_potential_hessian(du, gamma, basis[k], mu[k], force[k], eps_u)
        _scatter_hessian(hess, vertices[k], offsets[k], rows, cols, vals)
    return rows, cols, vals


def _friction_args(fc, mesh, displacement, eps_v_h):
    u = _positions(displacement, mesh, "displacement")
    eps_u = _positive(eps_v_h, "eps_v_h")
    return (fc.kind, fc.vertices, fc.tangent_basis, fc.closest_point, fc.mu, fc.normal_force,
            u, eps_u)


def friction_potential(fc, mesh, displacement, eps_v_h):
    """D(u) = sum_k mu_k lambda_k f0(|T_k^T Gamma_k u|, eps_v h) (IPC sec. 5, eq. 16).

    displacement u = x - x_lagged (N, 3) over the step (m); eps_v_h = eps_v * h (m), the
    tangential displacement below which friction is smoothed toward static. T_k, Gamma_k,
    lambda_k, mu_k are lagged (fc). Units of lambda * m. Equals ipctk's
    FrictionPotential(eps_v_h)(tangential_collisions, mesh, u) for the same lagged data;
    ipctk's velocity form, FrictionPotential(eps_v) at v = u / h, is D(u) / h (f0 is
    positively homogeneous: f0(y / h, eps_v) = f0(y, eps_v h) / h) with the same gradient.
    """
    return _friction_values(*_friction_args(fc, mesh, displacement, eps_v_h))


def friction_potential_gradient(fc, mesh, displacement, eps_v_h):
    """Gradient of friction_potential with respect to the displacement: (N, 3)."""
    local = _friction_gradients(*_friction_args(fc, mesh, displacement, eps_v_h))
    return _sum_per_vertex(local, fc.vertices, mesh.num_vertices)


def friction_potential_hessian(fc, mesh, displacement, eps_v_h):
    """Hessian of friction_potential as COO triplets (rows, cols, vals) over the 3N DOFs.

    Each contact's Hessian mu lambda J A J^T is exactly PSD for IPC's f0 (engine.friction), so it
    equals the PSD-projected Hessian of ipctk.
    """
    args = _friction_args(fc, mesh, displacement, eps_v_h)
    return _friction_hessians(*args, _triplet_offsets(fc.kind))


def friction_forces(fc, mesh, displacement, eps_v_h):
    """Friction force of each contact on each of its vertices: -grad_u D_k, shape (K, 4, 3).

    Rows follow fc.vertices, zero for padding; units of lambda (divide by h^2 for newtons when
    lambda comes from the incremental potential's kappa). Summed per vertex it is
    -friction_potential_gradient.
    """
    return -_friction_gradients(*_friction_args(fc, mesh, displacement, eps_v_h))
