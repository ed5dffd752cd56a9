"""Tetrahedral meshes of closed surfaces with TetGen (Si 2015), and ready-to-simulate jaw pads."""

from __future__ import annotations

import ctypes
import faulthandler
import functools
import os
import pickle
import resource
import select
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

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
    """Run TetGen in a forked child process (`_forked`, a few ms) inside a scratch working
    directory. Without os.fork (Windows) TetGen runs in-process."""
    if not hasattr(os, "fork"):
        return _run_tetgen(vertices, faces, options)
    with tempfile.TemporaryDirectory(prefix="ipcgrasp-tetgen-") as workdir:
        outcome, value = _forked(lambda: _run_tetgen(vertices, faces, options), workdir)
    if outcome == "ok":
        return value
    if outcome == "error":
        raise RuntimeError(value)
    raise RuntimeError(f"TetGen's child process died without a result ({outcome}: {value})")


def _forked(function, workdir: str, output: str | None = None,
            timeout: float | None = None) -> tuple[str, object]:
    """Run `function()` in a forked child process whose working directory is `workdir`.

    When tetgen 0.8.4 rejects an input (e.g. a self-intersecting surface) it raises, writes
    `_skipped.node/.face` into the working directory, and leaves the heap corrupted so that the
    process aborts later ("corrupted size vs. prev_size"). The child reports through a pipe and
    leaves with os._exit, so neither reaches the caller; it dumps no core and no faulthandler
    traceback when it aborts. `output`: a file name in `workdir` that
    receives the child's standard output and error (file descriptors 1 and 2, so C code's
    printf too, flushed before the child leaves). `timeout` (s): the child is killed after it,
    and when the wait is interrupted (the exception goes on).

    Returns ("ok", function's result), ("error", "Type: message") when it raised, ("died",
    wait status) when the child ended without reporting, or ("timeout", seconds).
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            os.chdir(workdir)
            faulthandler.disable()  # an abort is an expected answer here, not a crash to report
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if output is not None:
                target = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(target, 1)
                os.dup2(target, 2)
            try:
                payload = ("ok", function())
            except Exception as exc:
                payload = ("error", f"{type(exc).__name__}: {exc}")
            ctypes.CDLL(None).fflush(None)
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump(payload, stream, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    deadline = None if timeout is None else time.monotonic() + timeout
    chunks = []
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([read_end], [], [], wait)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", timeout
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:  # e.g. Ctrl-C while waiting: the child goes with the caller
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(read_end)
    _, wait_status = os.waitpid(pid, 0)
    if not chunks:
        return "died", wait_status
    return pickle.loads(b"".join(chunks))


SELF_INTERSECTION_TIMEOUT = 300.0
"""Longest TetGen's self-intersection diagnosis may take (s) before `self_intersections` gives
up without a verdict; it takes about 5 s for an 82,000-triangle sphere."""


@dataclass(frozen=True)
class SelfIntersections:
    """What TetGen's diagnosis (`self_intersections`) found: `verdict` True when triangles of the
    surface cross (or touch) each other, False when none do, None when TetGen gave no verdict
    (`note` says why). `triangles`: how many distinct triangles cross another; `bounds` (2, 3):
    the box around them (m, mesh frame), or None."""

    verdict: bool | None
    triangles: int = 0
    bounds: np.ndarray | None = None
    note: str = ""


def self_intersections(surface: trimesh.Trimesh, timeout: float = SELF_INTERSECTION_TIMEOUT) -> SelfIntersections:
    """Whether the triangles of a closed `surface` intersect each other other than at their shared
    edges and corners, by TetGen's diagnosis of its input (switch -d; exact geometric predicates).

    TetGen prints "The input surface mesh is correct." when no triangles intersect, and otherwise
    writes the intersecting triangles as pairs to `_skipped.face` (corners in `_skipped.node`).
    It runs in a forked child (`_forked`) in a scratch directory; without os.fork (Windows), after
    `timeout` seconds, or without either answer the verdict is None.
    """
    if not hasattr(os, "fork"):
        return SelfIntersections(None, note="TetGen's diagnosis runs in a child process, and this platform has "
                                            "no os.fork")
    vertices = np.ascontiguousarray(surface.vertices, dtype=np.float64)
    faces = np.ascontiguousarray(surface.faces, dtype=np.int32)

    def diagnose():
        try:
            tetgen.TetGen(vertices, faces).tetrahedralize(diagnose=True, quiet=False)
        except RuntimeError:
            pass  # tetgen 0.8.4 raises after a diagnosis, whatever it found

    with tempfile.TemporaryDirectory(prefix="ipcgrasp-tetgen-") as workdir:
        outcome, value = _forked(diagnose, workdir, output="tetgen.log", timeout=timeout)
        folder = Path(workdir)
        if (folder / "_skipped.face").is_file() and (folder / "_skipped.node").is_file():
            nodes = _read_table(folder / "_skipped.node", 4)
            triangles = np.unique(np.sort(_read_table(folder / "_skipped.face", 4)[:, 1:].astype(np.int64), axis=1),
                                  axis=0)
            corners = dict(zip(nodes[:, 0].astype(np.int64).tolist(), nodes[:, 1:]))
            points = np.array([corners[i] for i in triangles.ravel().tolist()]).reshape(-1, 3)
            return SelfIntersections(True, len(triangles), np.array([points.min(axis=0), points.max(axis=0)]))
        log = (folder / "tetgen.log").read_text(errors="replace") if (folder / "tetgen.log").is_file() else ""
    if outcome == "ok" and "The input surface mesh is correct." in log:
        return SelfIntersections(False)
    return SelfIntersections(None, note=f"TetGen's diagnosis ended without an answer ({outcome}: {value})")


def _read_table(path: Path, columns: int) -> np.ndarray:
    """The rows of a TetGen .node or .face file after its header line, their first `columns`
    numbers each (comments after # dropped)."""
    rows = []
    for line in path.read_text().splitlines()[1:]:
        fields = line.split("#", 1)[0].split()
        if len(fields) >= columns:
            rows.append([float(x) for x in fields[:columns]])
    return np.array(rows, dtype=np.float64).reshape(-1, columns)


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
    with min dihedral 10 degrees and radius-edge ratio 1.5 (TetGen's quality bounds: no sliver tets). The result is
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
