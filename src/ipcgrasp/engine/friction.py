"""IPC's lagged smoothed Coulomb friction (Li et al. 2020, "Incremental Potential Contact", sec. 5).

For one contact with lagged normal-force magnitude lambda (N), lagged tangent basis T (3x2,
orthonormal columns spanning the plane orthogonal to the contact normal) and lagged relative
displacement matrix Gamma (3 x m, mapping the stacked DOF displacements du of the contact's
vertices over the step to the relative displacement of the two closest points), the friction
dissipation potential is

    D(du) = mu * lambda * f0(|u_t|, eps_u),   u_t = T^T Gamma du,   eps_u = eps_v * dt,

with IPC's C1 mollifier f0 (a cubic below eps_u, the identity above). -grad D is the friction
force; on the relative motion it has magnitude mu * lambda once |u_t| >= eps_u (Coulomb).
In the incremental potential (docs/physics.md), whose forces carry a factor dt^2, the term
is dt^2 * D with lambda in N; equivalently D with lambda = kappa |b'(d)| 2 sqrt(d), the barrier's
normal force in those units (as IPC and ipctk do).

The smoothing functions match ipctk 1.6.1's `smooth_friction_*` for y >= 0; with velocities
v = du / dt, ipctk's FrictionPotential(eps_v) evaluates D_ipctk(v) = D(du) / dt.
"""

import math

import numpy as np

from ipcgrasp.engine._numba import njit

__all__ = [
    "smooth_friction_f0",
    "smooth_friction_f1",
    "smooth_friction_f1_over_x",
    "smooth_friction_f2",
    "smooth_friction_f2_x_minus_f1_over_x3",
    "point_point_tangent_basis",
    "point_edge_tangent_basis",
    "point_triangle_tangent_basis",
    "edge_edge_tangent_basis",
    "point_plane_tangent_basis",
    "point_edge_closest_point",
    "point_triangle_closest_point",
    "edge_edge_closest_point",
    "point_point_relative_displacement_matrix",
    "point_edge_relative_displacement_matrix",
    "point_triangle_relative_displacement_matrix",
    "edge_edge_relative_displacement_matrix",
    "point_plane_relative_displacement_matrix",
    "friction_potential",
    "friction_potential_gradient",
    "friction_potential_hessian",
]


# -- Mollifier f0 and its derivatives (y >= 0 is a tangential displacement norm, m) ---------------


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


# -- Small vector helpers (scalar divisions raise ZeroDivisionError on degenerate input) ----------


@njit
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def _unit(a):
    inv_norm = 1.0 / math.sqrt(_dot(a, a))
    out = np.empty(3)
    for i in range(3):
        out[i] = a[i] * inv_norm
    return out


@njit
def _basis_from_tangent(tangent, normal):
    """Orthonormal [t, n x t] from a tangent direction t orthogonal to the normal n."""
    basis = np.empty((3, 2))
    t0 = _unit(tangent)
    t1 = _unit(_cross(normal, t0))
    for i in range(3):
        basis[i, 0] = t0[i]
        basis[i, 1] = t1[i]
    return basis


# -- Tangent bases (3x2) --------------------------------------------------------------------------


@njit
def _point_plane_tangent_basis(normal):
    # Cross the normal with the coordinate axis it is least aligned with (well conditioned).
    axis = np.zeros(3)
    k = 0
    for i in range(1, 3):
        if abs(normal[i]) < abs(normal[k]):
            k = i
    axis[k] = 1.0
    return _basis_from_tangent(_cross(normal, axis), normal)


@njit
def _point_point_tangent_basis(p0, p1):
    return _point_plane_tangent_basis(p1 - p0)


@njit
def _point_edge_tangent_basis(p, e0, e1):
    edge = e1 - e0
    return _basis_from_tangent(edge, _cross(_cross(edge, p - e0), edge))


@njit
def _point_triangle_tangent_basis(p, t0, t1, t2):
    edge = t1 - t0
    return _basis_from_tangent(edge, _cross(edge, t2 - t0))


@njit
def _edge_edge_tangent_basis(ea0, ea1, eb0, eb1):
    edge_a = ea1 - ea0
    return _basis_from_tangent(edge_a, _cross(edge_a, eb1 - eb0))


# -- Closest-point coordinates --------------------------------------------------------------------


@njit
def _point_edge_closest_point(p, e0, e1):
    edge = e1 - e0
    return _dot(p - e0, edge) / _dot(edge, edge)


@njit
def _solve_2x2_symmetric(a00, a01, a11, b0, b1):
    out = np.empty(2)
    inv_det = 1.0 / (a00 * a11 - a01 * a01)
    out[0] = (a11 * b0 - a01 * b1) * inv_det
    out[1] = (a00 * b1 - a01 * b0) * inv_det
    return out


@njit
def _point_triangle_closest_point(p, t0, t1, t2):
    e1 = t1 - t0
    e2 = t2 - t0
    r = p - t0
    return _solve_2x2_symmetric(_dot(e1, e1), _dot(e1, e2), _dot(e2, e2), _dot(e1, r), _dot(e2, r))


@njit
def _edge_edge_closest_point(ea0, ea1, eb0, eb1):
    edge_a = ea1 - ea0
    edge_b = eb1 - eb0
    r = eb0 - ea0
    # Normal equations of min |ea0 + alpha edge_a - eb0 - beta edge_b|^2 over (alpha, beta).
    return _solve_2x2_symmetric(
        _dot(edge_a, edge_a),
        -_dot(edge_a, edge_b),
        _dot(edge_b, edge_b),
        _dot(edge_a, r),
        -_dot(edge_b, r),
    )


# -- Relative displacement matrices Gamma = weights (x) I3 ----------------------------------------


@njit
def _relative_displacement_matrix(weights):
    n = weights.shape[0]
    gamma = np.zeros((3, 3 * n))
    for j in range(n):
        for i in range(3):
            gamma[i, 3 * j + i] = weights[j]
    return gamma


@njit
def _point_point_relative_displacement_matrix():
    return _relative_displacement_matrix(np.array([1.0, -1.0]))


@njit
def _point_edge_relative_displacement_matrix(alpha):
    return _relative_displacement_matrix(np.array([1.0, alpha - 1.0, -alpha]))


@njit
def _point_triangle_relative_displacement_matrix(coords):
    beta = coords[0]
    gamma = coords[1]
    return _relative_displacement_matrix(np.array([1.0, beta + gamma - 1.0, -beta, -gamma]))


@njit
def _edge_edge_relative_displacement_matrix(coords):
    alpha = coords[0]
    beta = coords[1]
    return _relative_displacement_matrix(np.array([1.0 - alpha, alpha, beta - 1.0, -beta]))


@njit
def _point_plane_relative_displacement_matrix():
    return _relative_displacement_matrix(np.array([1.0]))


# -- Lagged friction potential of one contact -----------------------------------------------------


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


# -- Public API -----------------------------------------------------------------------------------


def _point(x, name):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite entries: {x}")
    return x


def _coords(coords):
    coords = np.ascontiguousarray(coords, dtype=np.float64)
    if coords.shape != (2,):
        raise ValueError(f"coords must have shape (2,), got {coords.shape}")
    return coords


def _geometric(kernel, name, **points):
    args = [_point(value, key) for key, value in points.items()]
    try:
        result = kernel(*args)
    except ZeroDivisionError:
        result = np.nan
    if not np.isfinite(result).all():
        raise ValueError(
            f"{name}: degenerate configuration (zero-length edge, zero-area triangle, "
            f"parallel edges, or coincident primitives): {points}"
        )
    return result


def point_point_tangent_basis(p0, p1):
    """3x2 orthonormal basis of the plane orthogonal to p1 - p0 (m; basis dimensionless)."""
    return _geometric(_point_point_tangent_basis, "point_point_tangent_basis", p0=p0, p1=p1)


def point_edge_tangent_basis(p, e0, e1):
    """3x2 orthonormal basis [edge direction, edge x normal] orthogonal to the point-line normal."""
    return _geometric(_point_edge_tangent_basis, "point_edge_tangent_basis", p=p, e0=e0, e1=e1)


def point_triangle_tangent_basis(p, t0, t1, t2):
    """3x2 orthonormal basis of the triangle's plane: [(t1 - t0)/|t1 - t0|, n x that]."""
    return _geometric(
        _point_triangle_tangent_basis, "point_triangle_tangent_basis", p=p, t0=t0, t1=t1, t2=t2
    )


def edge_edge_tangent_basis(ea0, ea1, eb0, eb1):
    """3x2 orthonormal basis of the plane spanned by both edge directions (normal ea x eb)."""
    return _geometric(
        _edge_edge_tangent_basis, "edge_edge_tangent_basis", ea0=ea0, ea1=ea1, eb0=eb0, eb1=eb1
    )


def point_plane_tangent_basis(normal):
    """3x2 orthonormal basis of the plane with the given (not necessarily unit) normal."""
    return _geometric(_point_plane_tangent_basis, "point_plane_tangent_basis", normal=normal)


def point_edge_closest_point(p, e0, e1):
    """alpha with e0 + alpha (e1 - e0) the projection of p on the edge's line (unclamped)."""
    return _geometric(_point_edge_closest_point, "point_edge_closest_point", p=p, e0=e0, e1=e1)


def point_triangle_closest_point(p, t0, t1, t2):
    """(beta, gamma) with t0 + beta (t1 - t0) + gamma (t2 - t0) = p projected on the plane."""
    return _geometric(
        _point_triangle_closest_point, "point_triangle_closest_point", p=p, t0=t0, t1=t1, t2=t2
    )


def edge_edge_closest_point(ea0, ea1, eb0, eb1):
    """(alpha, beta): ea0 + alpha (ea1 - ea0), eb0 + beta (eb1 - eb0) closest on the two lines."""
    return _geometric(
        _edge_edge_closest_point, "edge_edge_closest_point", ea0=ea0, ea1=ea1, eb0=eb0, eb1=eb1
    )


def point_point_relative_displacement_matrix():
    """Gamma (3x6): du_p0 - du_p1."""
    return _point_point_relative_displacement_matrix()


def point_edge_relative_displacement_matrix(alpha):
    """Gamma (3x9): du_p - ((1 - alpha) du_e0 + alpha du_e1)."""
    return _point_edge_relative_displacement_matrix(float(alpha))


def point_triangle_relative_displacement_matrix(coords):
    """Gamma (3x12): du_p - ((1 - beta - gamma) du_t0 + beta du_t1 + gamma du_t2)."""
    return _point_triangle_relative_displacement_matrix(_coords(coords))


def edge_edge_relative_displacement_matrix(coords):
    """Gamma (3x12): ((1 - alpha) du_ea0 + alpha du_ea1) - ((1 - beta) du_eb0 + beta du_eb1)."""
    return _edge_edge_relative_displacement_matrix(_coords(coords))


def point_plane_relative_displacement_matrix():
    """Gamma (3x3): du_p (the plane is static)."""
    return _point_plane_relative_displacement_matrix()


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
