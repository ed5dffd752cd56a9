"""Point-edge squared distance (m^2), gradient (m) and Hessian, per closest-feature sub-case."""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import (
    _PE_AUTO,
    _PE_P_E0,
    _PE_P_E1,
    _V0,
    _V1,
    _V2,
    PointEdgeDistanceType,
    _point_edge_distance_type,
)
from ipcgrasp.engine.distance.inputs import _PE_NAMES, _points
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


@njit
def _point_edge_distance_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    if dtype == _PE_P_E0:
        return _point_point_distance(p, e0)
    if dtype == _PE_P_E1:
        return _point_point_distance(p, e1)
    return _point_line_distance(p, e0, e1)


@njit
def _point_edge_distance_gradient_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    grad = np.zeros(9)
    if dtype == _PE_P_E0:
        _add_point_point_gradient(p, e0, _V0, _V1, grad)
    elif dtype == _PE_P_E1:
        _add_point_point_gradient(p, e1, _V0, _V2, grad)
    else:
        _add_point_line_gradient(p, e0, e1, _V0, _V1, _V2, grad)
    return grad


@njit
def _point_edge_distance_hessian_of_type(p, e0, e1, dtype):
    if dtype == _PE_AUTO:
        dtype = _point_edge_distance_type(p, e0, e1)
    hess = np.zeros((9, 9))
    if dtype == _PE_P_E0:
        _add_point_point_hessian(_V0, _V1, hess)
    elif dtype == _PE_P_E1:
        _add_point_point_hessian(_V0, _V2, hess)
    else:
        _add_point_line_hessian(p, e0, e1, _V0, _V1, _V2, hess)
    return hess


@njit
def _point_edge_distance(p, e0, e1):
    return _point_edge_distance_of_type(p, e0, e1, _PE_AUTO)


@njit
def _point_edge_distance_gradient(p, e0, e1):
    return _point_edge_distance_gradient_of_type(p, e0, e1, _PE_AUTO)


@njit
def _point_edge_distance_hessian(p, e0, e1):
    return _point_edge_distance_hessian_of_type(p, e0, e1, _PE_AUTO)


def point_edge_distance(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Squared distance from p to the segment (e0, e1) (m^2).

    dtype selects the sub-case (point-point to e0 or e1, or point-line); AUTO classifies it
    with point_edge_distance_type.
    """
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))


def point_edge_distance_gradient(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Gradient (9,) of point_edge_distance wrt p, e0, e1 (m)."""
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_gradient_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))


def point_edge_distance_hessian(p, e0, e1, dtype=PointEdgeDistanceType.AUTO):
    """Hessian (9, 9) of point_edge_distance wrt p, e0, e1."""
    dtype = PointEdgeDistanceType(dtype)
    return _point_edge_distance_hessian_of_type(*_points(_PE_NAMES, (p, e0, e1)), int(dtype))
