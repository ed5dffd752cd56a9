"""Line-line (infinite lines) and edge-edge squared distances (m^2), gradients (m) and Hessians, the
latter per closest-feature sub-case.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import (
    _EE_AUTO,
    _EE_EA0_EB,
    _EE_EA0_EB0,
    _EE_EA0_EB1,
    _EE_EA1_EB,
    _EE_EA1_EB0,
    _EE_EA1_EB1,
    _EE_EA_EB0,
    _EE_EA_EB1,
    _V0,
    _V1,
    _V2,
    _V3,
    EdgeEdgeDistanceType,
    _edge_edge_distance_type,
)
from ipcgrasp.engine.distance.inputs import _EE_NAMES, _points
from ipcgrasp.engine.distance.normal_distance import (
    _LINE_MINUS,
    _LINE_PLUS,
    _add_normal_distance_gradient,
    _add_normal_distance_hessian,
    _normal_distance,
)
from ipcgrasp.engine.distance.point_line import (
    _add_point_line_gradient,
    _add_point_line_hessian,
    _point_line_distance,
)
from ipcgrasp.engine.distance.point_point import (
    _add_point_point_gradient,
    _add_point_point_hessian,
    _point_point_distance,
)
from ipcgrasp.engine.distance.vector import _sub


@njit
def _line_line_distance(ea0, ea1, eb0, eb1):
    return _normal_distance(_sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0))


@njit
def _line_line_distance_gradient(ea0, ea1, eb0, eb1):
    grad = np.zeros(12)
    _add_normal_distance_gradient(
        _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, grad
    )
    return grad


@njit
def _line_line_distance_hessian(ea0, ea1, eb0, eb1):
    hess = np.zeros((12, 12))
    _add_normal_distance_hessian(
        _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, hess
    )
    return hess


@njit
def _edge_edge_distance_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    if dtype == _EE_EA0_EB0:
        return _point_point_distance(ea0, eb0)
    if dtype == _EE_EA0_EB1:
        return _point_point_distance(ea0, eb1)
    if dtype == _EE_EA1_EB0:
        return _point_point_distance(ea1, eb0)
    if dtype == _EE_EA1_EB1:
        return _point_point_distance(ea1, eb1)
    if dtype == _EE_EA_EB0:
        return _point_line_distance(eb0, ea0, ea1)
    if dtype == _EE_EA_EB1:
        return _point_line_distance(eb1, ea0, ea1)
    if dtype == _EE_EA0_EB:
        return _point_line_distance(ea0, eb0, eb1)
    if dtype == _EE_EA1_EB:
        return _point_line_distance(ea1, eb0, eb1)
    return _line_line_distance(ea0, ea1, eb0, eb1)


@njit
def _edge_edge_distance_gradient_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    grad = np.zeros(12)
    if dtype == _EE_EA0_EB0:
        _add_point_point_gradient(ea0, eb0, _V0, _V2, grad)
    elif dtype == _EE_EA0_EB1:
        _add_point_point_gradient(ea0, eb1, _V0, _V3, grad)
    elif dtype == _EE_EA1_EB0:
        _add_point_point_gradient(ea1, eb0, _V1, _V2, grad)
    elif dtype == _EE_EA1_EB1:
        _add_point_point_gradient(ea1, eb1, _V1, _V3, grad)
    elif dtype == _EE_EA_EB0:
        _add_point_line_gradient(eb0, ea0, ea1, _V2, _V0, _V1, grad)
    elif dtype == _EE_EA_EB1:
        _add_point_line_gradient(eb1, ea0, ea1, _V3, _V0, _V1, grad)
    elif dtype == _EE_EA0_EB:
        _add_point_line_gradient(ea0, eb0, eb1, _V0, _V2, _V3, grad)
    elif dtype == _EE_EA1_EB:
        _add_point_line_gradient(ea1, eb0, eb1, _V1, _V2, _V3, grad)
    else:
        _add_normal_distance_gradient(
            _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, grad
        )
    return grad


@njit
def _edge_edge_distance_hessian_of_type(ea0, ea1, eb0, eb1, dtype):
    if dtype == _EE_AUTO:
        dtype = _edge_edge_distance_type(ea0, ea1, eb0, eb1)
    hess = np.zeros((12, 12))
    if dtype == _EE_EA0_EB0:
        _add_point_point_hessian(_V0, _V2, hess)
    elif dtype == _EE_EA0_EB1:
        _add_point_point_hessian(_V0, _V3, hess)
    elif dtype == _EE_EA1_EB0:
        _add_point_point_hessian(_V1, _V2, hess)
    elif dtype == _EE_EA1_EB1:
        _add_point_point_hessian(_V1, _V3, hess)
    elif dtype == _EE_EA_EB0:
        _add_point_line_hessian(eb0, ea0, ea1, _V2, _V0, _V1, hess)
    elif dtype == _EE_EA_EB1:
        _add_point_line_hessian(eb1, ea0, ea1, _V3, _V0, _V1, hess)
    elif dtype == _EE_EA0_EB:
        _add_point_line_hessian(ea0, eb0, eb1, _V0, _V2, _V3, hess)
    elif dtype == _EE_EA1_EB:
        _add_point_line_hessian(ea1, eb0, eb1, _V1, _V2, _V3, hess)
    else:
        _add_normal_distance_hessian(
            _sub(ea1, ea0), _sub(eb1, eb0), _sub(eb0, ea0), _LINE_PLUS, _LINE_MINUS, hess
        )
    return hess


@njit
def _edge_edge_distance(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


@njit
def _edge_edge_distance_gradient(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_gradient_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


@njit
def _edge_edge_distance_hessian(ea0, ea1, eb0, eb1):
    return _edge_edge_distance_hessian_of_type(ea0, ea1, eb0, eb1, _EE_AUTO)


def line_line_distance(ea0, ea1, eb0, eb1):
    """Squared distance between the infinite lines through (ea0, ea1) and (eb0, eb1) (m^2).

    d = ((eb0 - ea0) . n)^2 / |n|^2 with n = (ea1 - ea0) x (eb1 - eb0); parallel lines raise
    ZeroDivisionError.
    """
    return _line_line_distance(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def line_line_distance_gradient(ea0, ea1, eb0, eb1):
    """Gradient (12,) of line_line_distance wrt ea0, ea1, eb0, eb1 (m)."""
    return _line_line_distance_gradient(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def line_line_distance_hessian(ea0, ea1, eb0, eb1):
    """Hessian (12, 12) of line_line_distance wrt ea0, ea1, eb0, eb1."""
    return _line_line_distance_hessian(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_distance(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Squared distance between the segments (ea0, ea1) and (eb0, eb1) (m^2).

    Per sub-case: point-point, point-line (a vertex and the other edge's line) or
    line_line_distance (EA_EB). AUTO classifies with edge_edge_distance_type.
    """
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_of_type(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype))


def edge_edge_distance_gradient(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Gradient (12,) of edge_edge_distance wrt ea0, ea1, eb0, eb1 (m)."""
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_gradient_of_type(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype)
    )


def edge_edge_distance_hessian(ea0, ea1, eb0, eb1, dtype=EdgeEdgeDistanceType.AUTO):
    """Hessian (12, 12) of edge_edge_distance wrt ea0, ea1, eb0, eb1."""
    dtype = EdgeEdgeDistanceType(dtype)
    return _edge_edge_distance_hessian_of_type(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), int(dtype)
    )
