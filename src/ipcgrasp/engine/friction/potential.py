"""The lagged friction potential of one contact, D = mu lambda f0(|T^T Gamma du|, eps_v dt) (J), with
its gradient (N) and PSD Hessian (N/m).
"""

import math

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.friction.smooth_friction_mollifier import (
    _smooth_friction_f0,
    _smooth_friction_f1_over_x,
    _smooth_friction_f2,
)


@njit
def _tangent_jacobian(gamma, basis):
    """J = Gamma^T T (m x 2): u_t = J^T du."""
    m = gamma.shape[1]
    jac = np.zeros((m, 2))
    for a in range(m):
        for k in range(2):
            s = 0.0
            for i in range(3):
                s += gamma[i, a] * basis[i, k]
            jac[a, k] = s
    return jac


@njit
def _tangential_displacement(jac, du):
    u_t = np.zeros(2)
    for a in range(jac.shape[0]):
        u_t[0] += jac[a, 0] * du[a]
        u_t[1] += jac[a, 1] * du[a]
    return u_t


@njit
def _friction_potential(du, gamma, basis, mu, normal_force, eps_u):
    u_t = _tangential_displacement(_tangent_jacobian(gamma, basis), du)
    return mu * normal_force * _smooth_friction_f0(math.hypot(u_t[0], u_t[1]), eps_u)


@njit
def _friction_potential_gradient(du, gamma, basis, mu, normal_force, eps_u):
    jac = _tangent_jacobian(gamma, basis)
    u_t = _tangential_displacement(jac, du)
    scale = mu * normal_force * _smooth_friction_f1_over_x(math.hypot(u_t[0], u_t[1]), eps_u)
    grad = np.empty(jac.shape[0])
    for a in range(jac.shape[0]):
        grad[a] = scale * (jac[a, 0] * u_t[0] + jac[a, 1] * u_t[1])
    return grad


@njit
def _friction_potential_hessian(du, gamma, basis, mu, normal_force, eps_u):
    # Hessian = mu lambda J A J^T with the 2x2 A = f1'(y) uu^T/y^2 + f1(y)/y (I - uu^T/y^2),
    # y = |u_t|. Both eigenvalues f1'(y) and f1(y)/y are >= 0 for IPC's mollifier, so the PSD
    # projection of IPC (clamp the eigenvalues of mu lambda A at 0) only acts when mu lambda < 0.
    # At y = 0 both eigenvalues equal 2/eps_u and A = (2/eps_u) I.
    jac = _tangent_jacobian(gamma, basis)
    m = jac.shape[0]
    hess = np.zeros((m, m))
    scale = mu * normal_force
    if scale <= 0.0:
        return hess
    u_t = _tangential_displacement(jac, du)
    y = math.hypot(u_t[0], u_t[1])
    lambda_perp = scale * _smooth_friction_f1_over_x(y, eps_u)
    a00 = lambda_perp
    a01 = 0.0
    a11 = lambda_perp
    if y > 0.0:
        lambda_along = scale * _smooth_friction_f2(y, eps_u)
        c0 = u_t[0] / y
        c1 = u_t[1] / y
        diff = lambda_along - lambda_perp
        a00 += diff * c0 * c0
        a01 += diff * c0 * c1
        a11 += diff * c1 * c1
    for a in range(m):
        ja0 = a00 * jac[a, 0] + a01 * jac[a, 1]
        ja1 = a01 * jac[a, 0] + a11 * jac[a, 1]
        for b in range(a, m):
            value = ja0 * jac[b, 0] + ja1 * jac[b, 1]
            hess[a, b] = value
            hess[b, a] = value
    return hess


def _friction_args(displacement, gamma, basis, mu, normal_force, eps_v, dt):
    gamma = np.ascontiguousarray(gamma, dtype=np.float64)
    if gamma.ndim != 2 or gamma.shape[0] != 3:
        raise ValueError(f"gamma must have shape (3, m), got {gamma.shape}")
    du = np.ascontiguousarray(displacement, dtype=np.float64).ravel()
    if du.shape[0] != gamma.shape[1]:
        raise ValueError(
            f"displacement has {du.shape[0]} entries but gamma has {gamma.shape[1]} columns"
        )
    basis = np.ascontiguousarray(basis, dtype=np.float64)
    if basis.shape != (3, 2):
        raise ValueError(f"basis must have shape (3, 2), got {basis.shape}")
    for name, array in (("displacement", du), ("gamma", gamma), ("basis", basis)):
        if not np.isfinite(array).all():
            raise ValueError(f"{name} contains NaN or infinite entries")
    mu, normal_force, eps_v, dt = float(mu), float(normal_force), float(eps_v), float(dt)
    if not mu >= 0.0:
        raise ValueError(f"mu must be >= 0, got {mu!r}")
    if not (normal_force >= 0.0 and math.isfinite(normal_force)):
        raise ValueError(f"normal_force must be finite and >= 0, got {normal_force!r}")
    if not (eps_v > 0.0 and dt > 0.0 and math.isfinite(eps_v * dt)):
        raise ValueError(f"eps_v and dt must be positive and finite, got {eps_v!r}, {dt!r}")
    return du, gamma, basis, mu, normal_force, eps_v * dt


def friction_potential(displacement, gamma, basis, mu, normal_force, eps_v, dt):
    """Lagged friction potential D = mu lambda f0(|T^T Gamma du|, eps_v dt) of one contact (J).

    displacement: stacked DOF displacements du over the step (m; m entries or (n, 3));
    gamma: lagged relative displacement matrix (3 x m); basis: lagged tangent basis T (3x2);
    mu: friction coefficient; normal_force: lagged normal-force magnitude lambda (N);
    eps_v: static/dynamic transition speed (m/s); dt: time step (s). Li et al. 2020, sec. 5.
    """
    return _friction_potential(
        *_friction_args(displacement, gamma, basis, mu, normal_force, eps_v, dt)
    )


def friction_potential_gradient(displacement, gamma, basis, mu, normal_force, eps_v, dt):
    """grad D = mu lambda f1(|u_t|)/|u_t| Gamma^T T u_t (N; m entries), minus the friction force.

    Arguments as friction_potential. Its norm in the relative motion is mu lambda f1(|u_t|).
    """
    return _friction_potential_gradient(
        *_friction_args(displacement, gamma, basis, mu, normal_force, eps_v, dt)
    )


def friction_potential_hessian(displacement, gamma, basis, mu, normal_force, eps_v, dt):
    """PSD Hessian of D (N/m; m x m): mu lambda Gamma^T T A T^T Gamma with the 2x2
    A = f1'(y) uu^T/y^2 + f1(y)/y (I - uu^T/y^2), y = |u_t| (exact: A is PSD for IPC's f0).

    Arguments as friction_potential. Equals ipctk's tangential Hessian with PSD projection.
    """
    return _friction_potential_hessian(
        *_friction_args(displacement, gamma, basis, mu, normal_force, eps_v, dt)
    )
