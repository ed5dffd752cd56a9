"""The elastic energy of a tet mesh (J): per tet, in total, its gradient (N) and per-tet Hessians (N/m)."""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.neohookean.element import (
    _deformation_gradient_into,
    _energy_density,
    _first_piola_into,
    _hessian_workspace,
    _shape_derivatives_into,
    _tet_hessian,
)
from ipcgrasp.engine.neohookean.inputs import _validated
from ipcgrasp.engine.neohookean.inversion import _min_jacobian


@njit
def _tet_energies(x, tets, Dm_inv, volumes, mu, lam, out):
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        out[t] = volumes[t] * _energy_density(F, mu, lam)


@njit
def _elastic_energy(x, tets, Dm_inv, volumes, mu, lam):
    total = 0.0
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        total += volumes[t] * _energy_density(F, mu, lam)
    return total


@njit
def _elastic_gradient(x, tets, Dm_inv, volumes, mu, lam, out):
    """out (n,3) = dE/dx (N); overwritten."""
    out[:, :] = 0.0
    F = np.empty((3, 3))
    C = np.empty((3, 3))
    P = np.empty((3, 3))
    D = np.empty((4, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _first_piola_into(F, mu, lam, C, P)
        _shape_derivatives_into(Dm_inv[t], D)
        for m in range(4):
            for a in range(3):
                out[tets[t, m], a] += volumes[t] * (
                    P[a, 0] * D[m, 0] + P[a, 1] * D[m, 1] + P[a, 2] * D[m, 2]
                )


@njit
def _elastic_hessians(x, tets, Dm_inv, volumes, mu, lam, project, out):
    """out (T,12,12): per-tet Hessians, vertex-major (3 m + a) ordering."""
    F = np.empty((3, 3))
    D = np.empty((4, 3))
    workspace = _hessian_workspace()
    rotation = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _shape_derivatives_into(Dm_inv[t], D)
        for a in range(3):
            for b in range(3):
                rotation[a, b] = 1.0 if a == b else 0.0
        _tet_hessian(F, D, volumes[t], mu, lam, project, out[t], workspace, rotation)


def tet_energies(x, tets, Dm_inv, volumes, mu, lam):
    """Elastic energy of each tet (T,) in J: rest volume * Psi(F); +inf for an inverted tet."""
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    out = np.empty(tets.shape[0])
    _tet_energies(x, tets, Dm_inv, volumes, float(mu), float(lam), out)
    return out


def elastic_energy(x, tets, Dm_inv, volumes, mu, lam):
    """Total Neo-Hookean energy (J) of the mesh at positions x (n,3) m; +inf if a tet is inverted.

    mu, lam in Pa; Dm_inv and volumes from rest_shape_inverse.
    """
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    return float(_elastic_energy(x, tets, Dm_inv, volumes, float(mu), float(lam)))


def elastic_gradient(x, tets, Dm_inv, volumes, mu, lam):
    """Gradient of elastic_energy with respect to x, (n,3) in N (minus the elastic forces)."""
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    out = np.empty_like(x)
    _elastic_gradient(x, tets, Dm_inv, volumes, float(mu), float(lam), out)
    return out


def elastic_hessians(x, tets, Dm_inv, volumes, mu, lam, project=True):
    """Per-tet Hessians (T,12,12) in N/m of the tet energies, rows/cols ordered 3*m + axis for the
    tet's vertices m = 0..3 (tets[t, m]).

    project=True clamps the negative eigenvalues of d2Psi/dF2 at zero (analytic eigensystem of
    Smith et al. 2019), which makes every block PSD; project=False gives the exact Hessian.
    """
    x, tets, Dm_inv, volumes = _validated(x, tets, Dm_inv, volumes)
    if _min_jacobian(x, tets, Dm_inv) <= 0.0:
        raise ValueError("elastic_hessians needs every tet to have det F > 0")
    out = np.empty((tets.shape[0], 12, 12))
    _elastic_hessians(x, tets, Dm_inv, volumes, float(mu), float(lam), bool(project), out)
    return out
