"""Squared distance from a point to a plane through origin with a (not necessarily unit) normal (m^2)."""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance.inputs import _points
from ipcgrasp.engine.distance.vector import _dot, _sub


@njit
def _point_plane_distance(p, origin, normal):
    g = _dot(_sub(p, origin), normal)
    return g * g / _dot(normal, normal)


@njit
def _point_plane_distance_gradient(p, origin, normal):
    scale = 2.0 * _dot(_sub(p, origin), normal) / _dot(normal, normal)
    grad = np.empty(3)
    for k in range(3):
        grad[k] = scale * normal[k]
    return grad


@njit
def _point_plane_distance_hessian(p, origin, normal):
    scale = 2.0 / _dot(normal, normal)
    hess = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            hess[i, j] = scale * normal[i] * normal[j]
    return hess


def point_plane_distance(p, origin, normal):
    """Squared distance from p to the plane through origin with normal n (m^2).

    d = ((p - origin) . n)^2 / |n|^2; n need not be unit length.
    """
    return _point_plane_distance(*_points(("p", "origin", "normal"), (p, origin, normal)))


def point_plane_distance_gradient(p, origin, normal):
    """Gradient (3,) of point_plane_distance wrt p only (m), as ipctk."""
    return _point_plane_distance_gradient(
        *_points(("p", "origin", "normal"), (p, origin, normal))
    )


def point_plane_distance_hessian(p, origin, normal):
    """Hessian (3, 3) of point_plane_distance wrt p: 2 n n^T / |n|^2."""
    return _point_plane_distance_hessian(
        *_points(("p", "origin", "normal"), (p, origin, normal))
    )
