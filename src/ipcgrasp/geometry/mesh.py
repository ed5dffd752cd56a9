"""Object surface meshes: loading, validation, safe repairs and rigid-body mass properties.

A mesh that reaches the simulator is one solid: a single closed, consistently oriented (outward
normals) triangle surface in metres with no zero-area faces that does not intersect itself.
Problems that have one safe answer are repaired with a `MeshRepairWarning` (inconsistent or
inverted winding, zero-area faces whose removal keeps the surface closed); everything else raises
`MeshError` naming the mesh, the problem and the fix.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import os
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import trimesh

from ipcgrasp.geometry.tetra import self_intersections

MIN_GRASP_WIDTH = 2e-3
"""Narrowest object width (m) the pads can grasp: thinner sheets and fins are finer than the pads'
contact resolution. The grasp sampler keeps no contacts closer than this, and a mesh smaller than
this in every direction (largest bounding-box side) is refused."""
MAX_DIAGONAL = 2.0
"""Largest accepted bounding-box diagonal (m)."""
TYPICAL_OBJECT_SIZE = 0.05
"""Largest bounding-box side (m) of a typical graspable object: of the file units a mesh too large
for metres may be in (UNIT_SCALES), the hint names first the one that brings it nearest this."""
UNIT_SCALES = {"centimetres": 0.01, "millimetres": 0.001}
"""File units a mesh too large for metres may be in, with the scale that converts each to metres."""
DEGENERATE_AREA = 1e-12
"""A face is degenerate when its area is below this fraction of the squared bounding-box diagonal."""
LISTED_COMPONENTS = 4
"""How many surfaces (largest first) the error for a mesh of several separate surfaces lists."""


REPAIR_HINT = ("; or let ipcgrasp repair it: --repair on `generate`, `simulate --mesh` and `data import`, "
               "repair=True in Python (docs/own_objects.md)")
"""Appended to the refusals `geometry.repair.repair_mesh` can fix."""


class MeshError(ValueError):
    """A mesh that cannot be used; the message names the mesh, the problem and the fix."""


class MeshRepairWarning(UserWarning):
    """A mesh was repaired on load; the message says what was changed."""


class MeshCheckWarning(UserWarning):
    """A check of `validate_mesh` could not be made; the message says which and why."""


@dataclass(frozen=True)
class MeshReport:
    """What `validate_mesh` found and did.

    `volume` in m^3 and `extents` (bounding-box side lengths, m) are those of the repaired mesh;
    `repairs` lists the changes made, empty when the mesh was used as given.
    """

    name: str
    watertight: bool
    winding_consistent: bool
    n_vertices: int
    n_faces: int
    volume: float
    extents: np.ndarray
    repairs: tuple[str, ...]
    mesh: trimesh.Trimesh = field(repr=False, compare=False)


@dataclass(frozen=True)
class MassProperties:
    """Rigid-body mass properties of a uniform-density solid.

    mass (kg), volume (m^3), density = mass / volume (kg/m^3), center_of_mass (m, mesh frame),
    inertia: the 3x3 inertia tensor about the centre of mass (kg m^2, mesh-frame axes),
    second_moment: S = integral rho X X^T dV about the mesh origin (kg m^2); the affine-body mass
    matrix uses S, and inertia about the origin is tr(S) I - S.
    """

    mass: float
    volume: float
    density: float
    center_of_mass: np.ndarray
    inertia: np.ndarray
    second_moment: np.ndarray


def load_object_mesh(path: str | os.PathLike) -> trimesh.Trimesh:
    """Load an object surface mesh (metres) with trimesh and return it validated and repaired.

    Raises FileNotFoundError for a missing file and `MeshError` for an unreadable or unusable
    mesh; see `validate_mesh` for the checks and repairs.
    """
    return validate_mesh(read_mesh_file(path), os.fspath(path)).mesh


def read_mesh_file(path: str | os.PathLike) -> trimesh.Trimesh:
    """A mesh file as trimesh reads it, not validated; FileNotFoundError or MeshError naming it."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"object mesh {path!r} does not exist")
    try:
        return trimesh.load(path, process=False, force="mesh")  # processing would drop NaN vertices unseen
    except Exception as exc:
        raise MeshError(
            f"object mesh {path!r} could not be read by trimesh ({type(exc).__name__}: {exc}); "
            "fix: export it as a triangle mesh in OBJ, STL, PLY or OFF format") from exc


def validate_mesh(mesh: trimesh.Trimesh, name: str = "<in-memory mesh>") -> MeshReport:
    """Check a surface mesh and repair what has a single safe repair; the input is not modified.

    Checks, in order: faces present and coordinates finite; zero-area faces (removed when the
    surface stays closed); closed two-manifold surface (every edge in exactly two faces);
    consistent winding (re-oriented when inconsistent); one connected surface (faces joined
    through shared edges: two shells, disjoint, overlapping or nested, are refused, since the
    simulator would move them as one rigid body and count the volume of each); positive enclosed
    volume (all faces flipped when the surface is consistently inside-out); bounding-box diagonal
    below MAX_DIAGONAL metres (a centimetre or millimetre file gets a hint naming the scale), largest side at least
    MIN_GRASP_WIDTH; no triangles crossing or touching each other (TetGen's diagnosis,
    `geometry.tetra.self_intersections`; a `MeshCheckWarning` when it gives no verdict). Each
    repair emits a `MeshRepairWarning`; an unusable mesh raises `MeshError`. The repaired copy is
    `report.mesh`.
    """
    if not isinstance(mesh, trimesh.Trimesh):
        raise MeshError(f"{name}: expected a trimesh.Trimesh, got {type(mesh).__name__}")
    mesh = mesh.copy()
    if len(mesh.faces) == 0:
        raise MeshError(f"{name}: the mesh has no faces; fix: export the object as a closed triangle surface")
    _check_finite_vertices(mesh.vertices, name)
    mesh.merge_vertices()
    mesh.remove_unreferenced_vertices()
    repairs: list[str] = []

    diagonal = float(np.linalg.norm(mesh.extents))
    degenerate = mesh.area_faces <= DEGENERATE_AREA * diagonal**2
    if degenerate.any():
        n_degenerate = int(degenerate.sum())
        candidate = mesh.copy()
        candidate.update_faces(~degenerate)
        candidate.remove_unreferenced_vertices()
        if not candidate.is_watertight:
            raise MeshError(
                f"{name}: {n_degenerate} zero-area (degenerate) face(s), and removing them opens "
                "the surface (they close T-junctions); fix: remesh the object, e.g. trimesh "
                "`mesh.process(validate=True)` followed by hole filling, or MeshLab "
                "'Remove Zero Area Faces' + 'Close Holes', and export it again" + REPAIR_HINT)
        mesh = candidate
        repairs.append(f"removed {n_degenerate} zero-area face(s); the surface stays closed")

    if not mesh.is_watertight:
        _, counts = np.unique(mesh.edges_sorted, axis=0, return_counts=True)
        raise MeshError(
            f"{name}: the surface is not watertight ({int((counts == 1).sum())} boundary edge(s), "
            f"{int((counts > 2).sum())} non-manifold edge(s) shared by more than two faces), so "
            "it encloses no well-defined volume; fix: close the holes and remove duplicate or "
            "internal faces, e.g. trimesh.repair.fill_holes or MeshLab 'Close Holes', then export "
            "a single closed surface" + REPAIR_HINT)

    if not mesh.is_winding_consistent:
        flip = _consistent_orientation(mesh.faces, mesh.face_adjacency, mesh.face_adjacency_edges)
        if flip is None:
            raise MeshError(
                f"{name}: the surface is not orientable (no consistent face winding exists); "
                "fix: remesh it as a closed orientable surface" + REPAIR_HINT)
        mesh.faces = np.where(flip[:, None], mesh.faces[:, ::-1], mesh.faces)
        repairs.append(f"made the face winding consistent ({int(flip.sum())} face(s) re-oriented)")
    _check_one_component(mesh, name)

    volume = float(mesh.volume)
    if volume < 0.0:
        mesh.invert()
        volume = -volume
        repairs.append("face normals pointed inwards (negative volume); flipped all faces")
    if not volume > 0.0:
        raise MeshError(f"{name}: the surface encloses zero volume; fix: export the solid object, not a sheet")

    if diagonal > MAX_DIAGONAL:
        raise MeshError(
            f"{name}: bounding-box diagonal {diagonal:.4g} m is larger than {MAX_DIAGONAL} m, "
            f"too large for a graspable object; meshes must be in metres.{_unit_hint(mesh.extents)}")
    if max(mesh.extents) < MIN_GRASP_WIDTH:
        raise MeshError(
            f"{name}: largest bounding-box side {max(mesh.extents):.4g} m is below {MIN_GRASP_WIDTH} m, the "
            "narrowest object the pads can grasp; meshes must be in metres; fix: rescale the mesh to metres "
            "or re-export it in metres")

    crossing = self_intersections(mesh)
    if crossing.verdict:
        low, high = crossing.bounds * 1e3
        raise MeshError(
            f"{name}: the surface intersects itself: {crossing.triangles} of its {len(mesh.faces)} triangles cross or "
            f"touch others (found by TetGen's diagnosis), all within x {low[0]:.4g}..{high[0]:.4g}, "
            f"y {low[1]:.4g}..{high[1]:.4g}, z {low[2]:.4g}..{high[2]:.4g} mm, so the volume, mass and inertia "
            "are not those of a solid; fix: remesh that region, e.g. MeshLab 'Select Self Intersecting Faces' then "
            "delete and close the holes, or rebuild the object as one solid with a boolean union, and export it "
            "again" + REPAIR_HINT)
    if crossing.verdict is None:
        warnings.warn(f"{name}: not checked for self-intersections: {crossing.note}", MeshCheckWarning, stacklevel=2)

    for repair in repairs:
        warnings.warn(f"{name}: {repair}", MeshRepairWarning, stacklevel=2)
    return MeshReport(
        name=name,
        watertight=bool(mesh.is_watertight),
        winding_consistent=bool(mesh.is_winding_consistent),
        n_vertices=len(mesh.vertices),
        n_faces=len(mesh.faces),
        volume=volume,
        extents=np.array(mesh.extents, dtype=np.float64),
        repairs=tuple(repairs),
        mesh=mesh,
    )


def _unit_hint(extents: np.ndarray) -> str:
    """For a mesh too large to be in metres (bounding-box side lengths `extents`, in file units):
    the file units of UNIT_SCALES whose conversion gives an acceptable object, the one nearest
    TYPICAL_OBJECT_SIZE first, each with the size (mm) its fix gives; "" when none does."""
    extents = np.asarray(extents, dtype=float)
    fits = [(unit, scale) for unit, scale in UNIT_SCALES.items()
            if np.linalg.norm(extents) * scale <= MAX_DIAGONAL and extents.max() * scale >= MIN_GRASP_WIDTH]
    if not fits:
        return ""
    fits.sort(key=lambda fit: abs(math.log(extents.max() * fit[1] / TYPICAL_OBJECT_SIZE)))

    def size(scale: float) -> str:
        return " x ".join(f"{side * scale * 1e3:.4g}" for side in extents) + " mm"

    (unit, scale), *others = fits
    hint = (f" It looks like {unit}: scaled by {scale:g} it measures {size(scale)}; fix: convert to metres, e.g. "
            f"`mesh.apply_scale({scale:g})`, or re-export in metres.")
    for unit, scale in others:
        hint += f" If the file is in {unit}, scale by {scale:g} instead ({size(scale)})."
    return hint


def surface_sha256(mesh: trimesh.Trimesh) -> str:
    """SHA-256 of a surface: its float64 vertices (m) then its int64 faces, C order."""
    digest = hashlib.sha256(np.ascontiguousarray(mesh.vertices, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(mesh.faces, dtype=np.int64).tobytes())
    return digest.hexdigest()


def _check_one_component(mesh: trimesh.Trimesh, name: str) -> None:
    """MeshError when the closed, consistently wound `mesh` is several surfaces (faces joined
    through shared edges), naming how many and the largest LISTED_COMPONENTS: faces, enclosed
    volume (cm^3) and bounding box (mm)."""
    labels = trimesh.graph.connected_component_labels(mesh.face_adjacency, node_count=len(mesh.faces))
    n_components = int(labels.max()) + 1
    if n_components == 1:
        return
    parts = []
    for component in range(n_components):
        part = mesh.submesh([np.flatnonzero(labels == component)], append=True)
        parts.append((abs(float(part.volume)), len(part.faces), part.bounds * 1e3))
    parts.sort(key=lambda p: (-float(f"{p[0] * 1e6:.4g}"), *p[2][0]))  # largest first as listed, then by corner
    listed = "; ".join(
        f"{volume * 1e6:.4g} cm^3 in {n_faces} faces, x {low[0]:.4g}..{high[0]:.4g}, y {low[1]:.4g}..{high[1]:.4g}, "
        f"z {low[2]:.4g}..{high[2]:.4g} mm" for volume, n_faces, (low, high) in parts[:LISTED_COMPONENTS])
    more = f"; and {n_components - LISTED_COMPONENTS} more" if n_components > LISTED_COMPONENTS else ""
    raise MeshError(
        f"{name}: the mesh is {n_components} separate closed surfaces, not one solid ({listed}{more}); the "
        "simulator would move them as one rigid body and count the volume of each (shared volume twice where "
        "shells overlap), so mass and inertia would be wrong; fix: export one solid: delete stray, duplicate and inner "
        "shells (for a hollow object keep its outer surface and give its real mass), and merge overlapping shells "
        "with a boolean union in a mesh tool (e.g. Blender's Boolean modifier, Union)" + REPAIR_HINT)


def _check_finite_vertices(vertices: np.ndarray, name: str) -> None:
    """MeshError naming how many vertices (and the first, 0-based in file order) are NaN or infinite."""
    bad = np.flatnonzero(~np.all(np.isfinite(vertices), axis=1))
    if len(bad):
        raise MeshError(f"{name}: {len(bad)} vertex(es) with NaN or infinite coordinates (first: vertex {bad[0]}, "
                        f"0-based in file order, {vertices[bad[0]].tolist()}); fix: re-export the mesh with "
                        "finite coordinates")


def _consistent_orientation(faces: np.ndarray, adjacency: np.ndarray,
                            shared_edges: np.ndarray) -> np.ndarray | None:
    """Which faces to reverse so that neighbours cross their shared edge in opposite directions.

    Breadth-first over the face adjacency graph of each connected piece, then the smaller of the
    two consistent choices is reversed; returns a boolean mask, or None for a non-orientable
    surface.
    """
    def forward(face_index, edges):
        # +1 when the face runs edges[:, 0] -> edges[:, 1], -1 when it runs the other way
        f = faces[face_index]
        runs = np.zeros(len(f), dtype=bool)
        for k in range(3):
            runs |= (f[:, k] == edges[:, 0]) & (f[:, (k + 1) % 3] == edges[:, 1])
        return np.where(runs, 1, -1)

    same_direction = forward(adjacency[:, 0], shared_edges) == forward(adjacency[:, 1], shared_edges)
    n = len(faces)
    # parity 2 = "one of the pair must flip", 1 = "keep relative orientation" (0 means no edge)
    parity = scipy.sparse.coo_matrix(
        (np.where(same_direction, 2, 1), (adjacency[:, 0], adjacency[:, 1])), shape=(n, n)).tocsr()
    parity = parity + parity.T
    flip = np.zeros(n, dtype=bool)
    visited = np.zeros(n, dtype=bool)
    for seed in range(n):
        if visited[seed]:
            continue
        order, predecessors = scipy.sparse.csgraph.breadth_first_order(parity, seed, directed=False)
        visited[order] = True
        children = order[1:]
        parents = predecessors[children]
        flips_parent = np.asarray(parity[parents, children]).ravel() == 2
        for face, parent, relative in zip(children.tolist(), parents.tolist(), flips_parent.tolist()):
            flip[face] = flip[parent] ^ relative
        if 2 * flip[order].sum() > len(order):  # reverse the minority of this piece, not the majority
            flip[order] = ~flip[order]
    relative_flip = flip[adjacency[:, 0]] ^ flip[adjacency[:, 1]]
    if np.any(relative_flip != same_direction):
        return None
    return flip


def mass_properties(mesh: trimesh.Trimesh, mass: float, name: str = "<in-memory mesh>") -> MassProperties:
    """Mass properties of `mesh` (called `name` in errors) filled uniformly with total `mass` (kg).

    Integrals over the closed surface by the divergence theorem (trimesh, after Eberly,
    "Polyhedral Mass Properties"). density = mass / volume; the second moment about the origin is
    S_o = S_c + m c c^T with S_c = tr(I_c)/2 * Id - I_c from the inertia I_c about the centre c.
    """
    if isinstance(mass, bool) or not isinstance(mass, numbers.Real) or not (math.isfinite(mass) and mass > 0.0):
        raise ValueError(f"{name}: mass must be a positive finite number of kilograms, got {mass!r} "
                         f"({type(mass).__name__}); fix: pass the object's mass in kg as a number")
    mass = float(mass)
    volume = float(mesh.volume)
    if not (mesh.is_watertight and volume > 0.0):
        raise MeshError(
            "mass properties need a closed, outward-oriented mesh with positive volume "
            f"(watertight={mesh.is_watertight}, volume={volume:.4g} m^3); fix: pass it through "
            "validate_mesh first")
    density = mass / volume
    props = trimesh.triangles.mass_properties(mesh.triangles, density=density)
    center = np.array(props.center_mass, dtype=np.float64)
    inertia = np.array(props.inertia, dtype=np.float64)
    second_central = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    second_moment = second_central + mass * np.outer(center, center)
    return MassProperties(
        mass=mass,
        volume=volume,
        density=density,
        center_of_mass=center,
        inertia=inertia,
        second_moment=second_moment,
    )
