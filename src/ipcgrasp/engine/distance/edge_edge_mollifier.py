"""IPC's edge-edge mollifier, which makes the edge-edge barrier vanish smoothly as two edges become
parallel: the parallelism measure |ea x eb|^2 (m^4), the mollifier m(x, eps_x) and their derivatives.
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.inputs import (
    _EE_NAMES,
    _EE_REST_NAMES,
    _nonnegative,
    _points,
    _positive,
)
from ipcgrasp.engine.distance.vector import _cross, _dot, _sub

# Mollifier threshold factor: eps_x = 1e-3 |ea0 - ea1|^2 |eb0 - eb1|^2 at rest (IPC).
EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE = 1e-3


@njit
def _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1):
    n = _cross(_sub(ea1, ea0), _sub(eb1, eb0))
    return _dot(n, n)


@njit
def _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, scale, grad):
    # x = |u x v|^2: dx/du = 2 v x n, dx/dv = 2 n x u with u = ea1 - ea0, v = eb1 - eb0
    u = _sub(ea1, ea0)
    v = _sub(eb1, eb0)
    n = _cross(u, v)
    x_u = _cross(v, n)
    x_v = _cross(n, u)
    for k in range(3):
        d_u = 2.0 * scale * x_u[k]
        d_v = 2.0 * scale * x_v[k]
        grad[k] -= d_u
        grad[3 + k] += d_u
        grad[6 + k] -= d_v
        grad[9 + k] += d_v


@njit
def _add_cross_squarednorm_hessian(ea0, ea1, eb0, eb1, scale, hess):
    # (u,u) = 2(|v|^2 I - v v^T), (v,v) = 2(|u|^2 I - u u^T), (u,v) = 4 u v^T - 2 v u^T - 2 u.v I
    u = _sub(ea1, ea0)
    v = _sub(eb1, eb0)
    uu = _dot(u, u)
    vv = _dot(v, v)
    uv = _dot(u, v)
    for i in range(3):
        for j in range(3):
            delta = 1.0 if i == j else 0.0
            x_uu = scale * 2.0 * (vv * delta - v[i] * v[j])
            x_vv = scale * 2.0 * (uu * delta - u[i] * u[j])
            x_uv = scale * (4.0 * u[i] * v[j] - 2.0 * v[i] * u[j] - 2.0 * uv * delta)
            # u = ea1 - ea0 (slots 1, 0), v = eb1 - eb0 (slots 3, 2)
            hess[i, j] += x_uu
            hess[3 + i, 3 + j] += x_uu
            hess[i, 3 + j] -= x_uu
            hess[3 + i, j] -= x_uu
            hess[6 + i, 6 + j] += x_vv
            hess[9 + i, 9 + j] += x_vv
            hess[6 + i, 9 + j] -= x_vv
            hess[9 + i, 6 + j] -= x_vv
            for a, sa in ((0, -1.0), (3, 1.0)):
                for b, sb in ((6, -1.0), (9, 1.0)):
                    hess[a + i, b + j] += sa * sb * x_uv
                    hess[b + j, a + i] += sa * sb * x_uv


@njit
def _edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1):
    grad = np.zeros(12)
    _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, 1.0, grad)
    return grad


@njit
def _edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1):
    hess = np.zeros((12, 12))
    _add_cross_squarednorm_hessian(ea0, ea1, eb0, eb1, 1.0, hess)
    return hess


@njit
def _mollifier(x, eps_x):
    if x < eps_x:
        x_div_eps_x = x / eps_x
        return (2.0 - x_div_eps_x) * x_div_eps_x
    return 1.0


@njit
def _mollifier_first_derivative(x, eps_x):
    if x < eps_x:
        return 2.0 / eps_x * (1.0 - x / eps_x)
    return 0.0


@njit
def _mollifier_second_derivative(x, eps_x):
    if x < eps_x:
        return -2.0 / (eps_x * eps_x)
    return 0.0


@njit
def _edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x):
    return _mollifier(_edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1), eps_x)


@njit
def _edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x):
    grad = np.zeros(12)
    x = _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1)
    if x < eps_x:
        _add_cross_squarednorm_gradient(
            ea0, ea1, eb0, eb1, _mollifier_first_derivative(x, eps_x), grad
        )
    return grad


@njit
def _edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x):
    hess = np.zeros((12, 12))
    x = _edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1)
    if x < eps_x:
        _add_cross_squarednorm_hessian(
            ea0, ea1, eb0, eb1, _mollifier_first_derivative(x, eps_x), hess
        )
        grad = np.zeros(12)
        _add_cross_squarednorm_gradient(ea0, ea1, eb0, eb1, 1.0, grad)
        m_xx = _mollifier_second_derivative(x, eps_x)
        for i in range(12):
            for j in range(12):
                hess[i, j] += m_xx * grad[i] * grad[j]
    return hess


@njit
def _edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
    a = _sub(ea1_rest, ea0_rest)
    b = _sub(eb1_rest, eb0_rest)
    return EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE * _dot(a, a) * _dot(b, b)


def edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1):
    """x = |(ea1 - ea0) x (eb1 - eb0)|^2 (m^4), the mollifier's parallelism measure."""
    return _edge_edge_cross_squarednorm(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1):
    """Gradient (12,) of edge_edge_cross_squarednorm wrt ea0, ea1, eb0, eb1 (m^3)."""
    return _edge_edge_cross_squarednorm_gradient(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1):
    """Hessian (12, 12) of edge_edge_cross_squarednorm wrt ea0, ea1, eb0, eb1 (m^2)."""
    return _edge_edge_cross_squarednorm_hessian(*_points(_EE_NAMES, (ea0, ea1, eb0, eb1)))


def mollifier(x, eps_x):
    """IPC's edge-edge mollifier m(x) = (2 - x/eps_x) x/eps_x for x < eps_x, else 1.

    x is edge_edge_cross_squarednorm and eps_x the threshold (both m^4); ipctk's scalar
    edge_edge_mollifier(x, eps_x).
    """
    return _mollifier(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def mollifier_first_derivative(x, eps_x):
    """dm/dx = 2/eps_x (1 - x/eps_x) for x < eps_x, else 0 (1/m^4)."""
    return _mollifier_first_derivative(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def mollifier_second_derivative(x, eps_x):
    """d^2m/dx^2 = -2/eps_x^2 for x < eps_x, else 0 (1/m^8)."""
    return _mollifier_second_derivative(_nonnegative(x, "x"), _positive(eps_x, "eps_x"))


def edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x):
    """Mollifier m(|(ea1 - ea0) x (eb1 - eb0)|^2, eps_x) in [0, 1] (dimensionless).

    Multiplies the edge-edge barrier so that it vanishes smoothly as the edges become
    parallel, which keeps the potential C1 there (Li et al. 2020, edge-edge mollification).
    """
    return _edge_edge_mollifier(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x):
    """Gradient (12,) of edge_edge_mollifier wrt ea0, ea1, eb0, eb1 (1/m)."""
    return _edge_edge_mollifier_gradient(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x):
    """Hessian (12, 12) of edge_edge_mollifier wrt ea0, ea1, eb0, eb1 (1/m^2)."""
    return _edge_edge_mollifier_hessian(
        *_points(_EE_NAMES, (ea0, ea1, eb0, eb1)), _positive(eps_x, "eps_x")
    )


def edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
    """eps_x = 1e-3 |ea0 - ea1|^2 |eb0 - eb1|^2 at rest positions (m^4), as IPC."""
    return _edge_edge_mollifier_threshold(
        *_points(_EE_REST_NAMES, (ea0_rest, ea1_rest, eb0_rest, eb1_rest))
    )
