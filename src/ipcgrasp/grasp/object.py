"""The object to grasp: a validated closed mesh (metres) with its mass."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

from ipcgrasp.geometry.mesh import MassProperties, load_object_mesh, mass_properties, validate_mesh


@dataclass(frozen=True)
class GraspObject:
    """A rigid object: surface mesh in its own frame (m), mass (kg), name."""

    name: str
    mesh: trimesh.Trimesh = field(repr=False)
    mass: float
    properties: MassProperties = field(repr=False)

    @classmethod
    def from_mesh(cls, mesh: trimesh.Trimesh, mass: float, name: str = "object") -> "GraspObject":
        """Validate (and safely repair) `mesh`; `mass` in kg."""
        report = validate_mesh(mesh, name)
        return cls(name, report.mesh, float(mass), mass_properties(report.mesh, mass))

    @classmethod
    def from_file(cls, path: str | os.PathLike, mass: float, name: str | None = None) -> "GraspObject":
        """Load a mesh file in metres (any format trimesh reads); `mass` in kg."""
        mesh = load_object_mesh(path)
        return cls(name or Path(path).stem, mesh, float(mass), mass_properties(mesh, mass))

    def stable_pose(self) -> np.ndarray:
        """The most probable resting pose on the ground z = 0 (trimesh stable poses), 4x4."""
        transforms, probabilities = trimesh.poses.compute_stable_poses(self.mesh, n_samples=1)
        return np.asarray(transforms[int(np.argmax(probabilities))], dtype=np.float64)
