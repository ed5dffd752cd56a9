"""The object to grasp: a validated closed mesh (metres) with its mass."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

from ipcgrasp.geometry.mesh import MassProperties, load_object_mesh, mass_properties, validate_mesh
from ipcgrasp.geometry.stable_pose import most_stable_pose

DENSITY_RANGE = (10.0, 25_000.0)
"""Plausible mean density (kg/m^3) of a graspable object, mass over the mesh's enclosed volume:
from sparse 3D prints and foam (the REACH cube: 3 g in 27 cm^3, 111 kg/m^3) to osmium (22 590).
Outside it the mass is in the wrong unit (g for kg) or the mesh in the wrong scale."""


@dataclass(frozen=True)
class GraspObject:
    """A rigid object: surface mesh in its own frame (m), mass (kg), name."""

    name: str
    mesh: trimesh.Trimesh = field(repr=False)
    mass: float
    properties: MassProperties = field(repr=False)

    @classmethod
    def from_mesh(cls, mesh: trimesh.Trimesh, mass: float, name: str = "object",
                  density_range: tuple[float, float] = DENSITY_RANGE) -> "GraspObject":
        """Validate (and safely repair) `mesh`; `mass` in kg, its mean density within
        `density_range` (kg/m^3; synthetic test scenes may widen it)."""
        report = validate_mesh(mesh, name)
        properties = mass_properties(report.mesh, mass, name)
        _check_density(properties, name, density_range)
        return cls(name, report.mesh, properties.mass, properties)

    @classmethod
    def from_file(cls, path: str | os.PathLike, mass: float, name: str | None = None) -> "GraspObject":
        """Load a mesh file in metres (any format trimesh reads); `mass` in kg."""
        mesh = load_object_mesh(path)
        name = name or Path(path).stem
        properties = mass_properties(mesh, mass, os.fspath(path))
        _check_density(properties, name, DENSITY_RANGE)
        return cls(name, mesh, properties.mass, properties)

    def stable_pose(self) -> np.ndarray:
        """The most probable resting pose on the ground z = 0, 4x4 (`geometry.stable_pose`)."""
        return most_stable_pose(self.mesh)


def _check_density(properties: MassProperties, name: str, density_range: tuple[float, float]) -> None:
    """ValueError naming the object, its density and the plausible range (kg/m^3) when outside it."""
    low, high = density_range
    if not low <= properties.density <= high:
        raise ValueError(
            f"{name}: mass {properties.mass:g} kg in the mesh's volume of {properties.volume * 1e6:.4g} cm^3 is a "
            f"density of {properties.density:.4g} kg/m^3, outside the plausible {low:g}-{high:g} kg/m^3; fix: give "
            "the mass in kg (not g) and the mesh in metres")
