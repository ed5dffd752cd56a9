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

One module per job: smooth_friction_mollifier (f0 and its derivatives), contact_geometry (the
lagged T, closest-point coordinates and Gamma of each contact kind) and potential (D of one
contact with its gradient and Hessian).
"""

from ipcgrasp.engine.friction.contact_geometry import (
    _edge_edge_closest_point,
    _edge_edge_relative_displacement_matrix,
    _edge_edge_tangent_basis,
    _point_edge_closest_point,
    _point_edge_relative_displacement_matrix,
    _point_edge_tangent_basis,
    _point_plane_relative_displacement_matrix,
    _point_plane_tangent_basis,
    _point_point_relative_displacement_matrix,
    _point_point_tangent_basis,
    _point_triangle_closest_point,
    _point_triangle_relative_displacement_matrix,
    _point_triangle_tangent_basis,
    edge_edge_closest_point,
    edge_edge_relative_displacement_matrix,
    edge_edge_tangent_basis,
    point_edge_closest_point,
    point_edge_relative_displacement_matrix,
    point_edge_tangent_basis,
    point_plane_relative_displacement_matrix,
    point_plane_tangent_basis,
    point_point_relative_displacement_matrix,
    point_point_tangent_basis,
    point_triangle_closest_point,
    point_triangle_relative_displacement_matrix,
    point_triangle_tangent_basis,
)
from ipcgrasp.engine.friction.potential import (
    _friction_potential,
    _friction_potential_gradient,
    _friction_potential_hessian,
    friction_potential,
    friction_potential_gradient,
    friction_potential_hessian,
)
from ipcgrasp.engine.friction.smooth_friction_mollifier import (
    smooth_friction_f0,
    smooth_friction_f1,
    smooth_friction_f1_over_x,
    smooth_friction_f2,
    smooth_friction_f2_x_minus_f1_over_x3,
)

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

# Private kernels that other engine modules (and tests) import
__all__ += [
    "_edge_edge_closest_point",
    "_edge_edge_relative_displacement_matrix",
    "_edge_edge_tangent_basis",
    "_friction_potential",
    "_friction_potential_gradient",
    "_friction_potential_hessian",
    "_point_edge_closest_point",
    "_point_edge_relative_displacement_matrix",
    "_point_edge_tangent_basis",
    "_point_plane_relative_displacement_matrix",
    "_point_plane_tangent_basis",
    "_point_point_relative_displacement_matrix",
    "_point_point_tangent_basis",
    "_point_triangle_closest_point",
    "_point_triangle_relative_displacement_matrix",
    "_point_triangle_tangent_basis",
]
