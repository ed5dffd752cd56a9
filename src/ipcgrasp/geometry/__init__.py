"""Geometry: object mesh loading and validation, mass properties, the most probable resting pose
(`stable_pose`), parametric jaw pads and their backing plates, tetrahedralisation."""

from ipcgrasp.geometry.mesh import (
    MassProperties,
    MeshCheckWarning,
    MeshError,
    MeshRepairWarning,
    MeshReport,
    load_object_mesh,
    mass_properties,
    surface_sha256,
    validate_mesh,
)
from ipcgrasp.geometry.pads import PAD_KINDS, PadShape, backing_plate, pad_outline, pad_surface
from ipcgrasp.geometry.tetra import PadMesh, TetMeshError, make_pad, shape_pad, surface_pad, tet_volumes, tetrahedralize

__all__ = [
    "MassProperties",
    "MeshCheckWarning",
    "MeshError",
    "MeshRepairWarning",
    "MeshReport",
    "PAD_KINDS",
    "PadMesh",
    "PadShape",
    "TetMeshError",
    "backing_plate",
    "load_object_mesh",
    "make_pad",
    "mass_properties",
    "pad_outline",
    "pad_surface",
    "shape_pad",
    "surface_pad",
    "surface_sha256",
    "tet_volumes",
    "tetrahedralize",
    "validate_mesh",
]
