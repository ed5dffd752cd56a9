"""Compressible Neo-Hookean elasticity on linear tetrahedra (docs/physics.md, "Strain energy of a pad").

Energy density (J/m^3) of the deformation gradient F = Ds Dm^-1, J = det F > 0:

    Psi(F) = mu/2 (tr(F^T F) - 3) - mu ln J + lam/2 (ln J)^2

with the Lame parameters mu = E / (2 (1 + nu)), lam = E nu / ((1 + nu)(1 - 2 nu)) (Pa). A tet's
energy is its rest volume times Psi (J). Ds = [x1 - x0, x2 - x0, x3 - x0] holds the deformed edge
vectors as columns, Dm the rest ones.

Element Hessians are projected to positive semi-definite in F-space with the analytic
eigensystem of isotropic energies (Smith, De Goes, Kim 2019, "Analytic Eigensystems for
Isotropic Distortion Energies"): with F = U diag(sigma) V^T (U, V rotations), the 9x9 Hessian
d2Psi/dF2 has three twist modes U (e_i e_j^T - e_j e_i^T) V^T / sqrt 2, three flip modes
U (e_i e_j^T + e_j e_i^T) V^T / sqrt 2 and three scaling modes U diag(w) V^T, w an eigenvector
of the 3x3 Hessian of Psi in the singular values. For this energy the twist and flip
eigenvalues have closed forms without the sigma_i = sigma_j singularity:

    twist_ij = mu + (lam ln J - mu) / (sigma_i sigma_j)
    flip_ij  = mu + (mu - lam ln J) / (sigma_i sigma_j)

Clamping the nine eigenvalues at zero gives the PSD projection of d2Psi/dF2; the element
Hessian is vol * B^T (d2Psi/dF2) B with B = dvec(F)/dx (12 -> 9, onto), so it is PSD exactly when
the F-space Hessian is, and the projection leaves an already-PSD Hessian unchanged.
The 3x3 SVD (one-sided Jacobi) and symmetric eigensolve (cyclic Jacobi) are written out (matrix3):
for 3x3 matrices they are several times faster than LAPACK calls from numba. The scaling block
is nearly always positive definite and then enters through its Cholesky factor (nothing to
clamp); the SVD can start from the rotation of a nearby F (a simulation's previous iterate),
which saves most Jacobi rotations. Mesh loops reuse per-call scratch (the `_into` kernels).

Kernels (`_name`) take float64 arrays and int64 tets; the public wrappers validate and convert.

One module per job: rest_shape (Lame parameters, Dm^-1 and rest volumes, lumped masses),
matrix3 (3x3 determinant, cofactor, rotation SVD, symmetric eigensystem, Cholesky), element
(one tet: deformation gradient, energy density, stress, projected Hessian), mesh_energy (tet
energies, total energy, gradient and per-tet Hessians of a mesh), inversion (the smallest
det F and the largest non-inverting step) and inputs (the public functions' argument checks).
"""

from ipcgrasp.engine.neohookean.element import (
    _deformation_gradient_into,
    _hessian_workspace,
    _shape_derivatives_into,
    _tet_hessian,
    energy_density,
    first_piola_kirchhoff,
)
from ipcgrasp.engine.neohookean.inversion import (
    _max_noninverting_step,
    any_inverted,
    max_noninverting_step,
    min_jacobian,
)
from ipcgrasp.engine.neohookean.matrix3 import (
    _cofactor_into,
    _det3,
    _rotation_svd,
    _symmetric_eigen3,
)
from ipcgrasp.engine.neohookean.mesh_energy import (
    _elastic_energy,
    _elastic_gradient,
    _tet_energies,
    elastic_energy,
    elastic_gradient,
    elastic_hessians,
    tet_energies,
)
from ipcgrasp.engine.neohookean.rest_shape import (
    lame_parameters,
    lumped_masses,
    rest_shape_inverse,
)

__all__ = [
    "any_inverted",
    "elastic_energy",
    "elastic_gradient",
    "elastic_hessians",
    "energy_density",
    "first_piola_kirchhoff",
    "lame_parameters",
    "lumped_masses",
    "max_noninverting_step",
    "min_jacobian",
    "rest_shape_inverse",
    "tet_energies",
]

# Private kernels that other engine modules (and tests) import
__all__ += [
    "_cofactor_into",
    "_deformation_gradient_into",
    "_det3",
    "_elastic_energy",
    "_elastic_gradient",
    "_hessian_workspace",
    "_max_noninverting_step",
    "_rotation_svd",
    "_shape_derivatives_into",
    "_symmetric_eigen3",
    "_tet_energies",
    "_tet_hessian",
]
