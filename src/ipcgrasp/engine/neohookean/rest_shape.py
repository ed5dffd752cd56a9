"""What the rest state gives: Lame parameters (Pa) of the material, the inverse rest edge matrices
Dm^-1 (1/m) and rest volumes (m^3) of the tets, and lumped vertex masses (kg).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.neohookean.inputs import _as_positions, _as_tets
from ipcgrasp.engine.neohookean.matrix3 import _cofactor, _det3


def lame_parameters(youngs_modulus, poisson_ratio):
    """Lame parameters (mu, lam) in Pa from Young's modulus E (Pa) and Poisson's ratio nu.

    mu = E / (2 (1 + nu)),  lam = E nu / ((1 + nu)(1 - 2 nu)); requires E > 0, -1 < nu < 0.5.
    """
    E = float(youngs_modulus)
    nu = float(poisson_ratio)
    if not np.isfinite(E) or E <= 0.0:
        raise ValueError(f"Young's modulus must be positive and finite, got {E!r}")
    if not -1.0 < nu < 0.5:
        raise ValueError(f"Poisson's ratio must lie in (-1, 0.5), got {nu!r}")
    mu = E / (2.0 * (1.0 + nu))
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    return mu, lam


@njit
def _rest_shape_inverse(X, tets, Dm_inv, volumes):
    """Fill Dm_inv (T,3,3) and signed rest volumes (T,); return the first tet index whose
    volume is not positive, or -1."""
    Dm = np.empty((3, 3))
    for t in range(tets.shape[0]):
        for c in range(3):
            for a in range(3):
                Dm[a, c] = X[tets[t, c + 1], a] - X[tets[t, 0], a]
        det = _det3(Dm)
        volumes[t] = det / 6.0
        if not det > 0.0:
            return t
        C = _cofactor(Dm)
        for a in range(3):
            for b in range(3):
                Dm_inv[t, a, b] = C[b, a] / det
    return -1


def rest_shape_inverse(X, tets):
    """Inverse rest edge matrices Dm^-1 (T,3,3) (1/m) and rest volumes (T,) (m^3).

    Dm = [X1 - X0, X2 - X0, X3 - X0] per tet (columns); volume = det(Dm) / 6. Raises ValueError
    naming the first tet whose rest volume is not positive (degenerate or inverted ordering).
    """
    X = _as_positions(X, "X")
    tets = _as_tets(tets, X.shape[0])
    Dm_inv = np.zeros((tets.shape[0], 3, 3))
    volumes = np.zeros(tets.shape[0])
    bad = _rest_shape_inverse(X, tets, Dm_inv, volumes)
    if bad >= 0:
        raise ValueError(
            f"tet {bad} (vertices {tets[bad].tolist()}) has non-positive rest volume "
            f"{volumes[bad]:.3e} m^3"
        )
    return Dm_inv, volumes


def lumped_masses(X, tets, density):
    """Lumped vertex masses (n,) in kg: each tet gives density * rest volume / 4 to its vertices.

    density in kg/m^3. Vertices in no tet get zero mass.
    """
    rho = float(density)
    if not np.isfinite(rho) or rho <= 0.0:
        raise ValueError(f"density must be positive and finite, got {rho!r}")
    X = _as_positions(X, "X")
    _, volumes = rest_shape_inverse(X, tets)
    tets = _as_tets(tets, X.shape[0])
    masses = np.zeros(X.shape[0])
    np.add.at(masses, tets.ravel(), np.repeat(rho * volumes / 4.0, 4))
    return masses
