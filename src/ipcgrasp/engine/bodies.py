"""The bodies a simulation holds: deformable (tet mesh), affine (stiff rigid), kinematic, ground.

Every body is described in its own frame; the simulation places it with a 4x4 pose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ipcgrasp.engine.affine_body import affine_mass_matrix
from ipcgrasp.engine.neohookean import lame_parameters, lumped_masses, rest_shape_inverse
from ipcgrasp.engine.tetmesh import boundary_faces


def _int_array(a, name, width=None):
    arr = np.ascontiguousarray(a, dtype=np.int64)
    if width is not None and (arr.ndim != 2 or arr.shape[1] != width):
        raise ValueError(f"{name} must have shape (n, {width}), got {arr.shape}")
    return arr


def _points(a, name):
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite (n, 3) array, got shape {arr.shape}")
    return arr


@dataclass
class DeformableBody:
    """Neo-Hookean tet mesh. Positions in m (body frame), E in Pa, density in kg/m^3.

    `prescribed` vertices (indices) are glued to the body's driver: each step they move to the
    driver pose applied to their rest positions (Dirichlet condition).
    """

    name: str
    rest_positions: np.ndarray
    tets: np.ndarray
    youngs_modulus: float
    poisson_ratio: float
    density: float
    prescribed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self):
        self.rest_positions = _points(self.rest_positions, f"{self.name}.rest_positions")
        self.tets = _int_array(self.tets, f"{self.name}.tets", 4)
        self.prescribed = np.unique(_int_array(self.prescribed, f"{self.name}.prescribed"))
        n = len(self.rest_positions)
        if self.tets.size and (self.tets.min() < 0 or self.tets.max() >= n):
            raise ValueError(f"{self.name}.tets index vertices outside 0..{n - 1}")
        if self.prescribed.size and (self.prescribed.min() < 0 or self.prescribed.max() >= n):
            raise ValueError(f"{self.name}.prescribed indexes vertices outside 0..{n - 1}")
        if not (self.youngs_modulus > 0 and 0 <= self.poisson_ratio < 0.5 and self.density > 0):
            raise ValueError(f"{self.name}: need E > 0, 0 <= nu < 0.5, density > 0 "
                             f"(got {self.youngs_modulus}, {self.poisson_ratio}, {self.density})")
        self.mu, self.lam = lame_parameters(self.youngs_modulus, self.poisson_ratio)
        self.Dm_inv, self.volumes = rest_shape_inverse(self.rest_positions, self.tets)
        self.masses = lumped_masses(self.rest_positions, self.tets, self.density)
        self.faces = boundary_faces(self.tets, self.rest_positions)

    @property
    def n_vertices(self) -> int:
        return len(self.rest_positions)


@dataclass
class AffineBody:
    """A stiff body with 12 DOF (x = p + A X) and a closed triangle surface for contact.

    Mass in kg; centre of mass (3,) m and second moment S = int rho X X^T dV (3,3) kg m^2 in the
    body frame; `stiffness` (Pa) of the orthogonality potential that keeps A a rotation.
    """

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    mass: float
    center_of_mass: np.ndarray
    second_moment: np.ndarray
    volume: float
    stiffness: float = 1e9

    def __post_init__(self):
        self.vertices = _points(self.vertices, f"{self.name}.vertices")
        self.faces = _int_array(self.faces, f"{self.name}.faces", 3)
        self.center_of_mass = np.asarray(self.center_of_mass, dtype=np.float64)
        self.second_moment = np.asarray(self.second_moment, dtype=np.float64)
        self.mass_matrix = affine_mass_matrix(self.mass, self.center_of_mass, self.second_moment)

    @property
    def n_vertices(self) -> int:
        return len(self.vertices)


@dataclass
class KinematicBody:
    """A rigid obstacle whose motion is prescribed each step (no degrees of freedom)."""

    name: str
    vertices: np.ndarray
    faces: np.ndarray

    def __post_init__(self):
        self.vertices = _points(self.vertices, f"{self.name}.vertices")
        self.faces = _int_array(self.faces, f"{self.name}.faces", 3)

    @property
    def n_vertices(self) -> int:
        return len(self.vertices)


@dataclass
class Ground:
    """The half-space above the plane through `origin` with unit `normal`, friction `mu`."""

    mu: float = 0.1
    origin: tuple = (0.0, 0.0, 0.0)
    normal: tuple = (0.0, 0.0, 1.0)

    def __post_init__(self):
        self.origin = np.asarray(self.origin, dtype=np.float64)
        n = np.asarray(self.normal, dtype=np.float64)
        self.normal = n / np.linalg.norm(n)
