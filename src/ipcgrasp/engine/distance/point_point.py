"""Point-point squared distance |p0 - p1|^2 (m^2) with its gradient (m) and Hessian; the ``_add_*``
helpers accumulate them into a larger stencil (slot k at entries 3k..3k+2).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import _V0, _V1
from ipcgrasp.engine.distance.inputs import _points
from ipcgrasp.engine.distance.vector import _dot, _sub


@njit
def _point_point_distance(p0, p1):
    r = _sub(p1, p0)
    return _dot(r, r)


@njit
def _add_point_point_gradient(p0, p1, i0, i1, grad):
    for k in range(3):
        r2 = 2.0 * (p0[k] - p1[k])
        grad[3 * i0 + k] += r2
        grad[3 * i1 + k] -= r2


@njit
def _add_point_point_hessian(i0, i1, hess):
    for k in range(3):
        hess[3 * i0 + k, 3 * i0 + k] += 2.0
        hess[3 * i1 + k, 3 * i1 + k] += 2.0
        hess[3 * i0 + k, 3 * i1 + k] -= 2.0
        hess[3 * i1 + k, 3 * i0 + k] -= 2.0


@njit
def _point_point_distance_gradient(p0, p1):
    grad = np.zeros(6)
    _add_point_point_gradient(p0, p1, _V0, _V1, grad)
    return grad


@njit
def _point_point_distance_hessian(p0, p1):
    hess = np.zeros((6, 6))
    _add_point_point_hessian(_V0, _V1, hess)
    return hess


def point_point_distance(p0, p1):
    """Squared distance |p0 - p1|^2 (m^2)."""
    return _point_point_distance(*_points(("p0", "p1"), (p0, p1)))


def point_point_distance_gradient(p0, p1):
    """Gradient (6,) of |p0 - p1|^2 wrt p0, p1: (2 (p0 - p1), 2 (p1 - p0)) (m)."""
    return _point_point_distance_gradient(*_points(("p0", "p1"), (p0, p1)))


def point_point_distance_hessian(p0, p1):
    """Hessian (6, 6) of |p0 - p1|^2 wrt p0, p1: 2 [[I, -I], [-I, I]]."""
    return _point_point_distance_hessian(*_points(("p0", "p1"), (p0, p1)))
