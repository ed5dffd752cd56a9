"""Squared distance from a point to the infinite line through e0, e1 (m^2), with its gradient (m) and
Hessian; the ``_add_*`` helpers accumulate them into a larger stencil.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import _V0, _V1, _V2
from ipcgrasp.engine.distance.inputs import _PE_NAMES, _points
from ipcgrasp.engine.distance.vector import _cross, _dot, _sub


@njit
def _point_line_distance(p, e0, e1):
    u = _sub(e1, e0)
    c = _cross(u, _sub(p, e0))
    return _dot(c, c) / _dot(u, u)


@njit
def _add_point_line_gradient(p, e0, e1, ip, i0, i1, grad):
    # d = |r|^2 with r = p - (e0 + alpha u) the offset from the closest point on the line
    u = _sub(e1, e0)
    w = _sub(p, e0)
    alpha = _dot(u, w) / _dot(u, u)
    for k in range(3):
        r2 = 2.0 * (w[k] - alpha * u[k])
        grad[3 * ip + k] += r2
        grad[3 * i0 + k] -= (1.0 - alpha) * r2
        grad[3 * i1 + k] -= alpha * r2


@njit
def _add_point_line_hessian(p, e0, e1, ip, i0, i1, hess):
    # In w = p - e0 and u = e1 - e0, with alpha = u.w / |u|^2, r = w - alpha u, s = r - alpha u:
    #   d_ww = 2 (I - u u^T / |u|^2),  d_wu = -2 (alpha I + u s^T / |u|^2),
    #   d_uu = 2 alpha^2 I - 2 s s^T / |u|^2;  vertices: p = +w, e0 = -w - u, e1 = +u.
    u = _sub(e1, e0)
    w = _sub(p, e0)
    uu = _dot(u, u)
    alpha = _dot(u, w) / uu
    s = (
        w[0] - 2.0 * alpha * u[0],
        w[1] - 2.0 * alpha * u[1],
        w[2] - 2.0 * alpha * u[2],
    )
    slots = (ip, i0, i1)
    cw = (1.0, -1.0, 0.0)
    cu = (0.0, -1.0, 1.0)
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            d_ww = 2.0 * (delta - u[i] * u[j] / uu)
            d_wu = -2.0 * (alpha * delta + u[i] * s[j] / uu)
            d_uw = -2.0 * (alpha * delta + u[j] * s[i] / uu)
            d_uu = 2.0 * (alpha * alpha * delta - s[i] * s[j] / uu)
            for a in range(3):
                for b in range(3):
                    hess[3 * slots[a] + i, 3 * slots[b] + j] += (
                        cw[a] * cw[b] * d_ww
                        + cw[a] * cu[b] * d_wu
                        + cu[a] * cw[b] * d_uw
                        + cu[a] * cu[b] * d_uu
                    )


@njit
def _point_line_distance_gradient(p, e0, e1):
    grad = np.zeros(9)
    _add_point_line_gradient(p, e0, e1, _V0, _V1, _V2, grad)
    return grad


@njit
def _point_line_distance_hessian(p, e0, e1):
    hess = np.zeros((9, 9))
    _add_point_line_hessian(p, e0, e1, _V0, _V1, _V2, hess)
    return hess


def point_line_distance(p, e0, e1):
    """Squared distance from p to the infinite line through e0, e1 (m^2).

    d = |(p - e0) x (e1 - e0)|^2 / |e1 - e0|^2; the edge must not be degenerate.
    """
    return _point_line_distance(*_points(_PE_NAMES, (p, e0, e1)))


def point_line_distance_gradient(p, e0, e1):
    """Gradient (9,) of point_line_distance wrt p, e0, e1 (m)."""
    return _point_line_distance_gradient(*_points(_PE_NAMES, (p, e0, e1)))


def point_line_distance_hessian(p, e0, e1):
    """Hessian (9, 9) of point_line_distance wrt p, e0, e1."""
    return _point_line_distance_hessian(*_points(_PE_NAMES, (p, e0, e1)))
