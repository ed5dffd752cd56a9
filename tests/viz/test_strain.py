import numpy as np
import pytest

from ipcgrasp.engine.neohookean import energy_density, lame_parameters
from ipcgrasp.engine.tetmesh import boundary_faces
from ipcgrasp.viz.strain import face_tets, surface_energy_density

# a unit cube of 2 mm split into 5 tets
CUBE = 0.002 * np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]], float)
TETS = np.array([[0, 1, 2, 4], [1, 3, 2, 7], [1, 4, 5, 7], [2, 6, 4, 7], [1, 2, 4, 7]])


def test_each_surface_triangle_maps_to_the_tet_that_has_it():
    faces = boundary_faces(TETS, CUBE)
    owners = face_tets(TETS, faces)
    for face, tet in zip(faces, owners):
        assert set(face) <= set(TETS[tet])
    assert 4 not in owners  # the inner tet has no surface triangle
    with pytest.raises(ValueError, match="not a face of any tet"):
        face_tets(TETS, [[0, 3, 5]])


def test_density_is_zero_at_rest_and_the_analytic_value_under_uniform_stretch():
    faces = boundary_faces(TETS, CUBE)
    E, nu = 1e8, 0.45
    assert np.allclose(surface_energy_density(CUBE, CUBE + [0.01, 0, 0], TETS, faces, E, nu), 0.0, atol=1e-6)
    F = np.diag([1.1, 0.95, 1.0])
    stretched = CUBE @ F.T
    expected = energy_density(F, *lame_parameters(E, nu))
    assert expected > 1e5
    np.testing.assert_allclose(surface_energy_density(CUBE, stretched, TETS, faces, E, nu), expected, rtol=1e-9)


def test_a_squeezed_corner_tet_stores_the_most():
    faces = boundary_faces(TETS, CUBE)
    deformed = CUBE.copy()
    deformed[0] += [0.0003, 0.0003, 0.0003]  # push one corner in: only tet 0 deforms
    density = surface_energy_density(CUBE, deformed, TETS, faces, 1e8, 0.45)
    owners = face_tets(TETS, faces)
    assert np.all(density[owners == 0] > 0) and np.allclose(density[owners != 0], 0.0, atol=1e-6)
