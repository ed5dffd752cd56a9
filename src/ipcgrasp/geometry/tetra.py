"""Tetrahedral meshes of closed surfaces with TetGen (Si 2015), and ready-to-simulate jaw pads."""

from __future__ import annotations

import functools
import os
import pickle
import tempfile
from dataclasses import dataclass

import numpy as np
import tetgen
import trimesh

from ipcgrasp.engine.tetmesh import boundary_faces
from ipcgrasp.geometry.pads import ARC_SEGMENTS, PAD_SCALE, PAD_THICKNESS, PadShape

DEFAULT_PAD_RESOLUTION = 3e-3
"""Default target tet edge length of the pads (m): about 570 tets / 210 nodes for the rounded pad,
close to the original study's 497 tets / 212 nodes."""


class TetMeshError(RuntimeError):
    """TetGen could not mesh the surface, or its output failed the checks."""


def tet_volumes(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed tet volumes (m^3): det[x1 - x0, x2 - x0, x3 - x0] / 6, positive when x3 lies on
    the side of the triangle (x0, x1, x2) that its counter-clockwise normal points to."""
    p = np.asarray(nodes, dtype=np.float64)[np.asarray(tets)]
    e1, e2, e3 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(e1, e2), e3) / 6.0


def tetrahedralize(surface: trimesh.Trimesh, max_volume: float = 2e-9, min_dihedral: float = 10.0,
                   min_ratio: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Quality tetrahedral mesh of the solid bounded by `surface` (closed, m).

    TetGen switches "pq<min_ratio>/<min_dihedral>a<max_volume>": a constrained Delaunay mesh
    refined until every tet's radius-edge ratio is <= min_ratio, its dihedral angles are
    >= min_dihedral degrees and its volume <= max_volume (m^3; TetGen's final mesh optimisation
    may leave a few tets up to ~40 % above it).
    The boundary may be refined by Steiner points on the surface. Returns nodes (n, 3) float64
    and tets (T, 4) int64, every tet with positive `tet_volumes`.
    """
    if not isinstance(surface, trimesh.Trimesh):
        raise TypeError(f"surface must be a trimesh.Trimesh, got {type(surface).__name__}")
    if not surface.is_watertight:
        raise TetMeshError("tetrahedralize needs a closed (watertight) surface; this one has holes "
                           "or non-manifold edges")
    if not (max_volume > 0.0 and min_dihedral >= 0.0 and min_ratio > 1.0):
        raise ValueError(f"need max_volume > 0, min_dihedral >= 0, min_ratio > 1; got "
                         f"{max_volume}, {min_dihedral}, {min_ratio}")
    vertices = np.ascontiguousarray(surface.vertices, dtype=np.float64)
    faces = np.ascontiguousarray(surface.faces, dtype=np.int32)
    # without fixedvolume TetGen ignores maxvolume
    options = dict(order=1, mindihedral=float(min_dihedral), minratio=float(min_ratio),
                   maxvolume=float(max_volume), fixedvolume=True)
    try:
        nodes, tets = _run_tetgen_isolated(vertices, faces, options)
    except RuntimeError as exc:
        raise TetMeshError(f"TetGen failed on a surface with {len(vertices)} vertices and "
                           f"{len(faces)} faces (self-intersecting input?): {exc}") from exc
    nodes = np.array(nodes, dtype=np.float64)
    tets = np.array(tets, dtype=np.int64)
    if tets.ndim != 2 or tets.shape[1] != 4 or len(tets) == 0:
        raise TetMeshError(f"TetGen returned no linear tetrahedra (elements of shape {tets.shape})")
    volumes = tet_volumes(nodes, tets)
    tets[volumes < 0.0] = tets[volumes < 0.0][:, [0, 2, 1, 3]]
    volumes = np.abs(volumes)
    if volumes.min() <= 1e-12 * volumes.max():
        raise TetMeshError(f"TetGen produced a degenerate tet (volume {volumes.min():.3g} m^3)")
    if not np.isclose(volumes.sum(), abs(surface.volume), rtol=1e-6):
        raise TetMeshError(f"tet volumes sum to {volumes.sum():.6g} m^3 but the surface encloses "
                           f"{abs(surface.volume):.6g} m^3 (self-intersecting or nested input?)")
    return nodes, tets


def _run_tetgen(vertices: np.ndarray, faces: np.ndarray, options: dict) -> tuple[np.ndarray, np.ndarray]:
    result = tetgen.TetGen(vertices, faces).tetrahedralize(**options)
    return np.asarray(result[0]), np.asarray(result[1])


def _run_tetgen_isolated(vertices: np.ndarray, faces: np.ndarray,
                         options: dict) -> tuple[np.ndarray, np.ndarray]:
    """Run TetGen in a forked child process (a few ms) inside a scratch working directory.

    When tetgen 0.8.4 rejects an input (e.g. a self-intersecting surface) it raises, writes
    `_skipped.node/.face` into the working directory, and leaves the heap corrupted so that the
    process aborts later ("corrupted size vs. prev_size"). The child reports its result or
    error through a pipe and leaves with os._exit, so neither reaches the caller. Without
    os.fork (Windows) TetGen runs in-process.
    """
    if not hasattr(os, "fork"):
        return _run_tetgen(vertices, faces, options)
    with tempfile.TemporaryDirectory(prefix="ipcgrasp-tetgen-") as workdir:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(read_end)
                os.chdir(workdir)
                try:
                    payload = ("ok", _run_tetgen(vertices, faces, options))
                except Exception as exc:
                    payload = ("error", f"{type(exc).__name__}: {exc}")
                with os.fdopen(write_end, "wb") as stream:
                    pickle.dump(payload, stream, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as stream:
            data = stream.read()
        _, wait_status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"TetGen's child process died without a result (wait status {wait_status})")
    outcome, value = pickle.loads(data)
    if outcome == "error":
        raise RuntimeError(value)
    return value


@dataclass(frozen=True)
class PadMesh:
    """A tetrahedralised jaw pad in the tooltip frame (front face z = 0, closing along +z).

    nodes (n, 3) rest positions (m); tets (T, 4) positively oriented; surface_faces (F, 3)
    outward-oriented boundary triangles indexing `nodes`; back_nodes the indices of the nodes on
    the back face z = -thickness (glued to the backing plate); kind "rounded", "rectangular" or "mesh";
    dimensions (length along x, width along y, thickness along z) in m.
    """

    nodes: np.ndarray
    tets: np.ndarray
    surface_faces: np.ndarray
    back_nodes: np.ndarray
    kind: str
    dimensions: tuple[float, float, float]

    @property
    def volume(self) -> float:
        """Total rest volume (m^3)."""
        return float(tet_volumes(self.nodes, self.tets).sum())

    def surface_mesh(self) -> trimesh.Trimesh:
        """The boundary as a trimesh (all nodes kept, so vertex indices equal node indices)."""
        return trimesh.Trimesh(self.nodes, self.surface_faces, process=False)


def make_pad(kind: str = "rounded", resolution: float = DEFAULT_PAD_RESOLUTION,
             scale: float = PAD_SCALE, thickness: float = PAD_THICKNESS,
             arc_segments: int = ARC_SEGMENTS) -> PadMesh:
    """Generate and tetrahedralise the YuMi pad (`pad_surface` parameters; thickness before the
    scale); `shape_pad` for any `PadShape`."""
    return shape_pad(PadShape(kind, thickness=thickness, scale=scale, arc_segments=arc_segments), resolution)


def shape_pad(shape: PadShape, resolution: float = DEFAULT_PAD_RESOLUTION) -> PadMesh:
    """Tetrahedralise the pad `shape` at the target tet edge length `resolution` (m).

    TetGen's volume bound is that of the regular tet with this edge, resolution^3 / (6 sqrt 2),
    with min dihedral 10 degrees and radius-edge ratio 1.5 (DESIGN.md section 9). The result is
    deterministic, so it is cached; its arrays are read-only (copy them to modify).
    """
    if not isinstance(shape, PadShape):
        raise TypeError(f"shape must be a PadShape, got {type(shape).__name__}")
    return _shape_pad_cached(shape, float(resolution))


@functools.lru_cache(maxsize=16)
def _shape_pad_cached(shape: PadShape, resolution: float) -> PadMesh:
    return surface_pad(shape.surface(), shape.kind, resolution)


def surface_pad(surface: trimesh.Trimesh, kind: str, resolution: float = DEFAULT_PAD_RESOLUTION) -> PadMesh:
    """Tetrahedralise a closed pad surface given in the tooltip frame (front face z = 0, the solid
    at z <= 0, its flat back face the lowest z, glued to the backing plate) at the target tet edge
    length `resolution` (m, as `shape_pad`); `kind` names it (e.g. "rounded", "mesh")."""
    if not resolution > 0.0:
        raise ValueError(f"resolution (target edge length, m) must be positive, got {resolution}")
    nodes, tets = tetrahedralize(surface, max_volume=resolution**3 / (6.0 * np.sqrt(2.0)))
    depth = float(surface.bounds[1, 2] - surface.bounds[0, 2])
    back_nodes = np.flatnonzero(nodes[:, 2] <= nodes[:, 2].min() + 1e-6 * depth)
    length, width, _ = surface.extents
    surface_faces = boundary_faces(tets, nodes)
    for array in (nodes, tets, surface_faces, back_nodes):
        array.flags.writeable = False
    return PadMesh(
        nodes=nodes,
        tets=tets,
        surface_faces=surface_faces,
        back_nodes=back_nodes,
        kind=kind,
        dimensions=(float(length), float(width), float(depth)),
    )
