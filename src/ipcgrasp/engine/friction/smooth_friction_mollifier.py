"""IPC's friction mollifier f0 and its derivatives (y >= 0 a tangential displacement norm, m;
eps the smoothing threshold in the same unit), as ipctk's smooth_friction_*.
"""

import math

import numpy as np

from ipcgrasp.engine._numba import njit


@njit
def _smooth_friction_f0(y, eps):
    if y >= eps:
        return y
    return -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0


@njit
def _smooth_friction_f1(y, eps):
    if y >= eps:
        return 1.0
    return -y * y / (eps * eps) + 2.0 * y / eps


@njit
def _smooth_friction_f1_over_x(y, eps):
    if y >= eps:
        return 1.0 / y
    return (2.0 * eps - y) / (eps * eps)


@njit
def _smooth_friction_f2(y, eps):
    if y >= eps:
        return 0.0
    return 2.0 * (eps - y) / (eps * eps)  # no cancellation as y -> eps


@njit
def _smooth_friction_f2_x_minus_f1_over_x3(y, eps):
    if y >= eps:
        return -1.0 / (y * y * y)
    if y == 0.0:
        return -np.inf
    return -1.0 / (y * eps * eps)


def _check_mollifier_args(y, eps):
    y = float(y)
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if not y >= 0.0:
        raise ValueError(f"y is a norm and must be >= 0, got {y!r}")
    return y, eps


def smooth_friction_f0(y, eps):
    """IPC friction mollifier f0(y) = -y^3/(3 eps^2) + y^2/eps + eps/3 for y < eps, y otherwise.

    y >= 0: tangential relative displacement norm (m) (or speed, with eps in m/s); eps > 0 the
    smoothing threshold in the same unit. C1 at y = eps. Li et al. 2020, sec. 5.
    """
    return _smooth_friction_f0(*_check_mollifier_args(y, eps))


def smooth_friction_f1(y, eps):
    """f1 = f0' = -y^2/eps^2 + 2 y/eps for y < eps, 1 otherwise (dimensionless)."""
    return _smooth_friction_f1(*_check_mollifier_args(y, eps))


def smooth_friction_f1_over_x(y, eps):
    """f1(y)/y = -y/eps^2 + 2/eps for y < eps, 1/y otherwise (finite at y = 0: 2/eps). 1/m."""
    return _smooth_friction_f1_over_x(*_check_mollifier_args(y, eps))


def smooth_friction_f2(y, eps):
    """f2 = f1' = -2 y/eps^2 + 2/eps for y < eps, 0 otherwise. 1/m."""
    return _smooth_friction_f2(*_check_mollifier_args(y, eps))


def smooth_friction_f2_x_minus_f1_over_x3(y, eps):
    """(f1'(y) y - f1(y)) / y^3 = -1/(y eps^2) for y < eps, -1/y^3 otherwise (-inf at 0). 1/m^3."""
    return _smooth_friction_f2_x_minus_f1_over_x3(*_check_mollifier_args(y, eps))
