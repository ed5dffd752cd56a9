"""Strain-energy density on a deformable body's surface, for colouring pads in pictures.

A frame may carry frame["face_values"][body] = (F,) values in J/m^3, one per surface triangle of
`faces[body]`; `surface_energy_density` computes them for a Neo-Hookean tet mesh with the engine's
own energy (ipcgrasp.engine.neohookean), so the colours show the energy the simulation stored.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine.neohookean import lame_parameters, rest_shape_inverse, tet_energies

# the three vertices of each face of tet (v0, v1, v2, v3)
_TET_FACES = np.array([[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]])


def face_tets(tets, faces) -> np.ndarray:
    """Index (F,) of the tet each surface triangle (F, 3) belongs to (same vertex indices as the
    tets (T, 4)); ValueError naming a triangle that is no face of any tet."""
    tets, faces = np.asarray(tets, dtype=np.int64), np.asarray(faces, dtype=np.int64)
    keys = np.sort(tets[:, _TET_FACES], axis=2).reshape(-1, 3)
    owner = {tuple(key): t // 4 for t, key in enumerate(keys.tolist())}
    index = np.empty(len(faces), dtype=np.int64)
    for f, face in enumerate(np.sort(faces, axis=1).tolist()):
        if tuple(face) not in owner:
            raise ValueError(f"surface triangle {f} (vertices {face}) is not a face of any tet")
        index[f] = owner[tuple(face)]
    return index


def surface_energy_density(rest, deformed, tets, faces, youngs_modulus: float, poisson_ratio: float) -> np.ndarray:
    """Neo-Hookean strain-energy density (F,) in J/m^3 of the tet under each surface triangle.

    rest, deformed: (n, 3) vertex positions in m; tets: (T, 4); faces: (F, 3) surface triangles
    indexing the same vertices; youngs_modulus in Pa; poisson_ratio dimensionless. The density of a
    tet is its energy (engine.neohookean.tet_energies, J) over its rest volume (m^3); zero at rest.
    """
    Dm_inv, volumes = rest_shape_inverse(rest, tets)
    mu, lam = lame_parameters(youngs_modulus, poisson_ratio)
    density = tet_energies(deformed, tets, Dm_inv, volumes, mu, lam) / volumes
    return density[face_tets(tets, faces)]
