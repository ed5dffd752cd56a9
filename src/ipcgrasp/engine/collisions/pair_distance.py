"""One collision's squared distance (m^2), its gradient and Hessian over the collision's local
stencil of 3 n_k DOFs, and its edge-edge mollifier, dispatched on the collision's kind.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions.collision_set import (
    EDGE_EDGE,
    EDGE_VERTEX,
    FACE_VERTEX,
    VERTEX_VERTEX,
)
from ipcgrasp.engine.distance import (
    _PT_P_T,
    _edge_edge_distance_gradient_of_type,
    _edge_edge_distance_hessian_of_type,
    _edge_edge_distance_of_type,
    _edge_edge_mollifier,
    _point_line_distance,
    _point_line_distance_gradient,
    _point_line_distance_hessian,
    _point_plane_distance,
    _point_plane_distance_gradient,
    _point_plane_distance_hessian,
    _point_point_distance,
    _point_point_distance_gradient,
    _point_point_distance_hessian,
    _point_triangle_distance_gradient_of_type,
    _point_triangle_distance_hessian_of_type,
    _point_triangle_distance_of_type,
)


@njit
def _distance(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], np.int64(ee_type))
    if kind == FACE_VERTEX:
        return _point_triangle_distance_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T)
    return _point_plane_distance(x[v[0]], origin, normal)


@njit
def _distance_gradient(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance_gradient(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance_gradient(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_gradient_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], ee_type)
    if kind == FACE_VERTEX:
        return _point_triangle_distance_gradient_of_type(
            x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T
        )
    return _point_plane_distance_gradient(x[v[0]], origin, normal)


@njit
def _distance_hessian(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance_hessian(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance_hessian(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_hessian_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], ee_type)
    if kind == FACE_VERTEX:
        return _point_triangle_distance_hessian_of_type(
            x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T
        )
    return _point_plane_distance_hessian(x[v[0]], origin, normal)


@njit
def _mollifier(kind, eps_x, v, x):
    if kind == EDGE_EDGE:
        return _edge_edge_mollifier(x[v[0]], x[v[1]], x[v[2]], x[v[3]], eps_x)
    return 1.0
