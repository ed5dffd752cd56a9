"""The "normal" squared distance g^2 / h, g = w . (u x v), h = |u x v|^2 (m^2), shared by point-plane
(in point-triangle) and line-line (in edge-edge), with its gradient and Hessian accumulated
into a stencil over reduced vectors (u, v, w).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.distance_type import _V0, _V1, _V2, _V3
from ipcgrasp.engine.distance.vector import _cross, _dot, _skew


@njit
def _normal_distance(u, v, w):
    """(w . (u x v))^2 / |u x v|^2: squared distance along the common normal of u and v."""
    n = _cross(u, v)
    g = _dot(w, n)
    return g * g / _dot(n, n)


@njit
def _add_normal_distance_gradient(u, v, w, plus, minus, grad):
    # d = g^2 / h, g = w.(u x v), h = |n|^2, n = u x v; with beta = g / h,
    # grad d = beta (2 grad g - beta grad h), grad g = (v x w, w x u, n),
    # grad h = 2 (v x n, n x u, 0). Reduced vector k (u, v, w) is x[plus[k]] - x[minus[k]].
    n = _cross(u, v)
    beta = _dot(w, n) / _dot(n, n)
    g_u = _cross(v, w)
    g_v = _cross(w, u)
    h_u = _cross(v, n)
    h_v = _cross(n, u)
    for k in range(3):
        d_u = 2.0 * beta * (g_u[k] - beta * h_u[k])
        d_v = 2.0 * beta * (g_v[k] - beta * h_v[k])
        d_w = 2.0 * beta * n[k]
        grad[3 * plus[0] + k] += d_u
        grad[3 * minus[0] + k] -= d_u
        grad[3 * plus[1] + k] += d_v
        grad[3 * minus[1] + k] -= d_v
        grad[3 * plus[2] + k] += d_w
        grad[3 * minus[2] + k] -= d_w


@njit
def _add_normal_distance_hessian(u, v, w, plus, minus, hess):
    # hess d = (2/h) q q^T + 2 beta hess g - beta^2 hess h, q = grad g - beta grad h, over
    # the reduced 9-vector (u, v, w). hess g has the off-diagonal blocks
    # (u,v) = -[w]x, (u,w) = [v]x, (v,w) = -[u]x; hess h has (u,u) = 2(|v|^2 I - v v^T),
    # (v,v) = 2(|u|^2 I - u u^T), (u,v) = 4 u v^T - 2 v u^T - 2 (u.v) I.
    n = _cross(u, v)
    h = _dot(n, n)
    beta = _dot(w, n) / h
    g_u = _cross(v, w)
    g_v = _cross(w, u)
    h_u = _cross(v, n)
    h_v = _cross(n, u)
    q = np.empty(9)
    for k in range(3):
        q[k] = g_u[k] - 2.0 * beta * h_u[k]
        q[3 + k] = g_v[k] - 2.0 * beta * h_v[k]
        q[6 + k] = n[k]
    reduced = np.empty((9, 9))
    two_over_h = 2.0 / h
    for i in range(9):
        for j in range(9):
            reduced[i, j] = two_over_h * q[i] * q[j]
    uu = _dot(u, u)
    vv = _dot(v, v)
    uv = _dot(u, v)
    two_beta = 2.0 * beta
    beta_sqr = beta * beta
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            reduced[i, j] -= beta_sqr * 2.0 * (vv * delta - v[i] * v[j])
            reduced[3 + i, 3 + j] -= beta_sqr * 2.0 * (uu * delta - u[i] * u[j])
            uv_block = beta_sqr * (4.0 * u[i] * v[j] - 2.0 * v[i] * u[j] - 2.0 * uv * delta)
            reduced[i, 3 + j] -= uv_block
            reduced[3 + j, i] -= uv_block
            g_uv = -two_beta * _skew(w, i, j)
            g_uw = two_beta * _skew(v, i, j)
            g_vw = -two_beta * _skew(u, i, j)
            reduced[i, 3 + j] += g_uv
            reduced[3 + j, i] += g_uv
            reduced[i, 6 + j] += g_uw
            reduced[6 + j, i] += g_uw
            reduced[3 + i, 6 + j] += g_vw
            reduced[6 + j, 3 + i] += g_vw
    for r in range(3):
        for c in range(3):
            for i in range(3):
                for j in range(3):
                    value = reduced[3 * r + i, 3 * c + j]
                    hess[3 * plus[r] + i, 3 * plus[c] + j] += value
                    hess[3 * plus[r] + i, 3 * minus[c] + j] -= value
                    hess[3 * minus[r] + i, 3 * plus[c] + j] -= value
                    hess[3 * minus[r] + i, 3 * minus[c] + j] += value


# Reduced vectors of the two normal distances as (plus slot, minus slot) pairs for u, v, w:
# point-plane (p, t0, t1, t2): u = t1 - t0, v = t2 - t0, w = p - t0;
# line-line (ea0, ea1, eb0, eb1): u = ea1 - ea0, v = eb1 - eb0, w = eb0 - ea0.
_PLANE_PLUS = (_V2, _V3, _V0)
_PLANE_MINUS = (_V1, _V1, _V1)
_LINE_PLUS = (_V1, _V3, _V2)
_LINE_MINUS = (_V0, _V2, _V0)
