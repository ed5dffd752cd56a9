"""The object to grasp: a validated closed mesh (metres) with its mass."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

from ipcgrasp.geometry.mesh import (MassProperties, MeshRepairWarning, load_object_mesh, mass_properties,
                                    read_mesh_file, validate_mesh)
from ipcgrasp.geometry.repair import RepairReport, repair_mesh
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

    repair: RepairReport | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_mesh(cls, mesh: trimesh.Trimesh, mass: float, name: str = "object",
                  density_range: tuple[float, float] = DENSITY_RANGE, repair: bool = False) -> "GraspObject":
        """Validate (and safely repair) `mesh`; `mass` in kg, its mean density within
        `density_range` (kg/m^3; synthetic test scenes may widen it). `repair`: make one closed
        solid of a mesh the validation refuses, simplifying one above SIMPLIFY_VERTICES vertices
        (`geometry.repair.repair_mesh`; what changed is `.repair` and a MeshRepairWarning)."""
        if repair:
            report = _repaired(mesh, name)
            surface = report.mesh
        else:
            report, surface = None, validate_mesh(mesh, name).mesh
        properties = mass_properties(surface, mass, name)
        _check_density(properties, name, density_range)
        return cls(name, surface, properties.mass, properties, report)

    @classmethod
    def from_file(cls, path: str | os.PathLike, mass: float, name: str | None = None,
                  repair: bool = False) -> "GraspObject":
        """Load a mesh file in metres (any format trimesh reads); `mass` in kg; `repair` as in
        `from_mesh`."""
        report = None
        if repair:
            report = _repaired(read_mesh_file(path), os.fspath(path))
            mesh = report.mesh
        else:
            mesh = load_object_mesh(path)
        name = name or Path(path).stem
        properties = mass_properties(mesh, mass, os.fspath(path))
        _check_density(properties, name, DENSITY_RANGE)
        return cls(name, mesh, properties.mass, properties, report)

    def stable_pose(self) -> np.ndarray:
        """The most probable resting pose on the ground z = 0, 4x4 (`geometry.stable_pose`)."""
        return most_stable_pose(self.mesh)


def _repaired(mesh: trimesh.Trimesh, name: str) -> RepairReport:
    """`repair_mesh` with its summary as a MeshRepairWarning when it changed anything."""
    report = repair_mesh(mesh, name)
    if report.changed:
        warnings.warn(f"{name}: {report.summary()}", MeshRepairWarning, stacklevel=3)
    return report


def _check_density(properties: MassProperties, name: str, density_range: tuple[float, float]) -> None:
    """ValueError naming the object, its density and the plausible range (kg/m^3) when outside it."""
    low, high = density_range
    if not low <= properties.density <= high:
        raise ValueError(
            f"{name}: mass {properties.mass:g} kg in the mesh's volume of {properties.volume * 1e6:.4g} cm^3 is a "
            f"density of {properties.density:.4g} kg/m^3, outside the plausible {low:g}-{high:g} kg/m^3; fix: give "
            "the mass in kg (not g) and the mesh in metres")
