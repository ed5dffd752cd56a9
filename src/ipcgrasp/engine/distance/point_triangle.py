"""Point-triangle squared distance (m^2), gradient (m) and Hessian, per closest-feature sub-case."""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import (
    _PT_AUTO,
    _PT_P_E0,
    _PT_P_E1,
    _PT_P_E2,
    _PT_P_T0,
    _PT_P_T1,
    _PT_P_T2,
    _V0,
    _V1,
    _V2,
    _V3,
    PointTriangleDistanceType,
    _point_triangle_distance_type,
)
from ipcgrasp.engine.distance.inputs import _PT_NAMES, _points
from ipcgrasp.engine.distance.normal_distance import (
    _PLANE_MINUS,
    _PLANE_PLUS,
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
def _point_triangle_distance_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    if dtype == _PT_P_T0:
        return _point_point_distance(p, t0)
    if dtype == _PT_P_T1:
        return _point_point_distance(p, t1)
    if dtype == _PT_P_T2:
        return _point_point_distance(p, t2)
    if dtype == _PT_P_E0:
        return _point_line_distance(p, t0, t1)
    if dtype == _PT_P_E1:
        return _point_line_distance(p, t1, t2)
    if dtype == _PT_P_E2:
        return _point_line_distance(p, t2, t0)
    return _normal_distance(_sub(t1, t0), _sub(t2, t0), _sub(p, t0))


@njit
def _point_triangle_distance_gradient_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    grad = np.zeros(12)
    if dtype == _PT_P_T0:
        _add_point_point_gradient(p, t0, _V0, _V1, grad)
    elif dtype == _PT_P_T1:
        _add_point_point_gradient(p, t1, _V0, _V2, grad)
    elif dtype == _PT_P_T2:
        _add_point_point_gradient(p, t2, _V0, _V3, grad)
    elif dtype == _PT_P_E0:
        _add_point_line_gradient(p, t0, t1, _V0, _V1, _V2, grad)
    elif dtype == _PT_P_E1:
        _add_point_line_gradient(p, t1, t2, _V0, _V2, _V3, grad)
    elif dtype == _PT_P_E2:
        _add_point_line_gradient(p, t2, t0, _V0, _V3, _V1, grad)
    else:
        _add_normal_distance_gradient(
            _sub(t1, t0), _sub(t2, t0), _sub(p, t0), _PLANE_PLUS, _PLANE_MINUS, grad
        )
    return grad


@njit
def _point_triangle_distance_hessian_of_type(p, t0, t1, t2, dtype):
    if dtype == _PT_AUTO:
        dtype = _point_triangle_distance_type(p, t0, t1, t2)
    hess = np.zeros((12, 12))
    if dtype == _PT_P_T0:
        _add_point_point_hessian(_V0, _V1, hess)
    elif dtype == _PT_P_T1:
        _add_point_point_hessian(_V0, _V2, hess)
    elif dtype == _PT_P_T2:
        _add_point_point_hessian(_V0, _V3, hess)
    elif dtype == _PT_P_E0:
        _add_point_line_hessian(p, t0, t1, _V0, _V1, _V2, hess)
    elif dtype == _PT_P_E1:
        _add_point_line_hessian(p, t1, t2, _V0, _V2, _V3, hess)
    elif dtype == _PT_P_E2:
        _add_point_line_hessian(p, t2, t0, _V0, _V3, _V1, hess)
    else:
        _add_normal_distance_hessian(
            _sub(t1, t0), _sub(t2, t0), _sub(p, t0), _PLANE_PLUS, _PLANE_MINUS, hess
        )
    return hess


@njit
def _point_triangle_distance(p, t0, t1, t2):
    return _point_triangle_distance_of_type(p, t0, t1, t2, _PT_AUTO)


@njit
def _point_triangle_distance_gradient(p, t0, t1, t2):
    return _point_triangle_distance_gradient_of_type(p, t0, t1, t2, _PT_AUTO)


@njit
def _point_triangle_distance_hessian(p, t0, t1, t2):
    return _point_triangle_distance_hessian_of_type(p, t0, t1, t2, _PT_AUTO)


def point_triangle_distance(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Squared distance from p to the triangle (t0, t1, t2) (m^2).

    Per sub-case: |p - tk|^2 (P_Tk), point-line distance to edge k (P_Ek), or the squared
    distance to the plane ((p - t0) . n)^2 / |n|^2, n = (t1 - t0) x (t2 - t0) (P_T).
    AUTO classifies with point_triangle_distance_type.
    """
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_of_type(*_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype))


def point_triangle_distance_gradient(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Gradient (12,) of point_triangle_distance wrt p, t0, t1, t2 (m)."""
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_gradient_of_type(
        *_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype)
    )


def point_triangle_distance_hessian(p, t0, t1, t2, dtype=PointTriangleDistanceType.AUTO):
    """Hessian (12, 12) of point_triangle_distance wrt p, t0, t1, t2."""
    dtype = PointTriangleDistanceType(dtype)
    return _point_triangle_distance_hessian_of_type(
        *_points(_PT_NAMES, (p, t0, t1, t2)), int(dtype)
    )
