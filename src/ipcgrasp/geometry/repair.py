"""Opt-in mesh repair (`--repair`, `repair=True`): one closed, outward-oriented solid from a mesh
`validate_mesh` refuses, with a report of what changed, and simplification of large surfaces
within a stated geometric error bound.

The steps (docs/own_objects.md gives the measured comparison of pymeshfix, manifold3d and
trimesh's repair behind this choice):

1. Geometry only: texture coordinates and normals dropped, vertices at the same position merged,
   zero-area and duplicate faces removed (counted).
2. The surface is split into its connected pieces. A piece that is not closed, or not a
   two-manifold, is passed through MeshFix (pymeshfix): its holes are filled and its degenerate
   and self-intersecting triangles rebuilt. A piece MeshFix cannot close is a refusal.
3. The closed pieces are joined by a boolean union (manifold3d), so overlapping pieces (a convex
   decomposition, a handle pushed into a mug) count their shared volume once. Pieces left apart
   by less than WELD_GAP are welded: each is grown by WELD_GAP / 2 (a Minkowski sum with an
   octahedron) before the union, which moves the surface by at most WELD_GAP / 2. Pieces
   farther apart stay apart and are refused (they are separate objects).
4. Zero-area triangles the union leaves are removed by simplifying within SLIVER_TOLERANCES; a
   surface that still crosses itself is cleaned by MeshFix, accepted when its volume changes by
   less than CLEAN_VOLUME_CHANGE.
5. Above `max_vertices` vertices the surface is simplified by manifold3d within `tolerance`
   (every point of the surface moves by less than `tolerance`), and the distance between the
   simplified and the unsimplified surface is measured and reported.
6. The result goes through `validate_mesh`; what it still refuses is refused with the reason and
   what the repair did before it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import trimesh

from ipcgrasp.geometry.mesh import DEGENERATE_AREA, REPAIR_HINT, MeshError, MeshRepairWarning, validate_mesh

WELD_GAP = 1e-4
"""Pieces of a mesh closer than this (m) are welded into one solid (step 3 of the module
docstring): convex decompositions leave their pieces touching or a few micrometres apart."""
SIMPLIFY_VERTICES = 2000
"""Vertex count above which `repair_mesh` simplifies the surface: the contact cost of a trial
grows with the object's surface size (docs/performance.md)."""
SIMPLIFY_TOLERANCE = 1e-4
"""Largest distance (m) any point of the surface may move when it is simplified."""
STRAY_AREA = 0.01
"""An open piece MeshFix cannot close is dropped when its area is below this fraction of the
whole surface (a stray triangle or sheet); a larger one is a refusal."""
SLIVER_TOLERANCES = (1e-7, 1e-6, 1e-5)
"""Distances (m) the surface may move, tried in turn, to remove zero-area triangles a union leaves."""
CLEAN_VOLUME_CHANGE = 0.01
"""Largest relative volume change accepted from MeshFix's removal of self-intersections."""
DISTANCE_SAMPLES = 2000
"""Surface points sampled on each side to measure the distance between two surfaces."""


class MeshRepairError(MeshError):
    """A mesh `repair_mesh` cannot make into one solid; the message names the mesh, what was
    tried and the fix."""


@dataclass(frozen=True)
class RepairReport:
    """What `repair_mesh` changed (lengths in m, volumes in m^3).

    faces_removed: zero-area and duplicate faces dropped; stray_pieces: open pieces MeshFix could
    not close and whose area is below STRAY_AREA of the whole, dropped; pieces: connected pieces of the input
    surface; holes_filled: boundary loops closed; rebuilt_pieces: pieces passed through MeshFix;
    welded: whether pieces were grown by WELD_GAP / 2 to join; volume_before: the pieces' own
    enclosed volumes summed (after their holes were filled; overlaps counted twice), volume_after:
    the solid's volume; distance: measured largest distance from the repaired surface (before
    simplification) to the input surface: how far the repair moved it (hole patches, welds); vertices_before/after; and
    simplified_distance: measured largest distance the simplification moved the surface (None
    when not simplified). `mesh` passed `validate_mesh`.
    """

    name: str
    faces_removed: int
    stray_pieces: int
    pieces: int
    holes_filled: int
    rebuilt_pieces: int
    welded: bool
    volume_before: float
    volume_after: float
    distance: float
    vertices_before: int
    vertices_after: int
    simplified_distance: float | None
    mesh: trimesh.Trimesh = field(repr=False, compare=False)

    @property
    def volume_change(self) -> float:
        """Relative change of the enclosed volume, volume_after / volume_before - 1."""
        return self.volume_after / self.volume_before - 1.0

    @property
    def changed(self) -> bool:
        """Whether the repair changed anything beyond merging duplicate vertices."""
        return bool(self.faces_removed or self.stray_pieces or self.pieces > 1 or self.holes_filled or self.rebuilt_pieces
                    or self.simplified_distance is not None or self.distance > 0.0)

    def record(self) -> dict:
        """What changed as JSON-ready values, units in the keys (m, m^3): `summary` and every
        field but the mesh, with `volume_change` (relative)."""
        return {"summary": self.summary(), "faces_removed": self.faces_removed, "stray_pieces": self.stray_pieces,
                "pieces": self.pieces, "holes_filled": self.holes_filled, "rebuilt_pieces": self.rebuilt_pieces,
                "welded": self.welded, "volume_before_m3": self.volume_before, "volume_after_m3": self.volume_after,
                "volume_change": self.volume_change, "distance_m": self.distance,
                "vertices_before": self.vertices_before, "vertices_after": self.vertices_after,
                "simplified_distance_m": self.simplified_distance}

    def summary(self) -> str:
        """One line saying what changed, for the command line and the warning."""
        parts = []
        if self.faces_removed:
            parts.append(f"removed {self.faces_removed} zero-area or duplicate face(s)")
        if self.stray_pieces:
            parts.append(f"dropped {self.stray_pieces} stray open piece(s) enclosing nothing")
        if self.holes_filled:
            parts.append(f"filled {self.holes_filled} hole(s)")
        if self.rebuilt_pieces:
            parts.append(f"rebuilt {self.rebuilt_pieces} open, non-manifold, self-intersecting or sliver-holding "
                         "surface(s) (MeshFix)")
        if self.pieces > 1:
            parts.append(f"joined {self.pieces} pieces into one solid by a union"
                         + (f" (welded across gaps below {WELD_GAP * 1e3:g} mm)" if self.welded else ""))
        if self.simplified_distance is not None:
            parts.append(f"simplified to {self.vertices_after} vertices (surface moved at most "
                         f"{self.simplified_distance * 1e3:.3f} mm)")
        if not parts:
            return "nothing to repair"
        return (", ".join(parts) + f"; {self.vertices_before} -> {self.vertices_after} vertices, volume "
                f"{self.volume_before * 1e6:.4g} -> {self.volume_after * 1e6:.4g} cm^3 ({self.volume_change:+.1%}), "
                f"repaired surface at most {self.distance * 1e3:.3f} mm from the input")


def repair_mesh(mesh: trimesh.Trimesh, name: str = "<in-memory mesh>", max_vertices: int | None = SIMPLIFY_VERTICES,
                tolerance: float = SIMPLIFY_TOLERANCE) -> RepairReport:
    """Make `mesh` (m) one closed, outward-oriented solid and report what changed (module
    docstring); `max_vertices` None never simplifies, `tolerance` (m) bounds the simplification.
    Raises `MeshRepairError` naming `name`, what was tried and the fix when it cannot."""
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshRepairError(f"{name}: nothing to repair (no triangle faces); fix: export the object as a "
                              "triangle surface")
    if not np.all(np.isfinite(mesh.vertices)):
        raise MeshRepairError(f"{name}: vertices with NaN or infinite coordinates cannot be repaired; fix: re-export "
                              "the mesh with finite coordinates")
    if not (tolerance > 0.0 and np.isfinite(tolerance)):
        raise ValueError(f"tolerance must be a positive length in m, got {tolerance!r}")
    source = trimesh.Trimesh(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces), process=False)
    source.merge_vertices()
    n_faces = len(source.faces)
    diagonal = float(np.linalg.norm(source.extents))
    keep = source.area_faces > DEGENERATE_AREA * diagonal**2
    kept = np.flatnonzero(keep)
    keep[kept[~_first_of_duplicates(source.faces[kept])]] = False
    source.update_faces(keep)
    source.remove_unreferenced_vertices()
    faces_removed = n_faces - len(source.faces)
    if len(source.faces) == 0:
        raise MeshRepairError(f"{name}: every face has zero area; fix: export the solid object, not a sheet or a line")

    labels = trimesh.graph.connected_component_labels(source.face_adjacency, node_count=len(source.faces))
    pieces = source.submesh([np.flatnonzero(labels == k) for k in range(int(labels.max()) + 1)], repair=False)
    closed, holes, rebuilt, dropped = [], 0, 0, 0
    total_area = float(source.area)
    for piece in pieces:
        if piece.is_watertight and piece.is_winding_consistent:
            closed.append(piece)
            continue
        fixed, filled = _meshfix(piece)
        holes += filled
        rebuilt += 1
        if fixed is None and piece.area <= STRAY_AREA * total_area:
            dropped += 1  # a stray sheet: encloses nothing
            continue
        if fixed is None:
            raise MeshRepairError(
                f"{name}: a piece of {len(piece.faces)} faces (x {piece.bounds[0][0] * 1e3:.4g}..{piece.bounds[1][0] * 1e3:.4g}, "
                f"y {piece.bounds[0][1] * 1e3:.4g}..{piece.bounds[1][1] * 1e3:.4g}, z {piece.bounds[0][2] * 1e3:.4g}.."
                f"{piece.bounds[1][2] * 1e3:.4g} mm) could not be closed: MeshFix found no closed surface for it "
                "(a sheet, or holes too large to fill); fix: model the object as a closed solid, or delete that piece")
        closed.append(fixed)
    volume_before = float(sum(abs(piece.volume) for piece in closed))

    if not closed:
        raise MeshRepairError(f"{name}: no piece of the surface could be closed; fix: export the object as a closed "
                              "solid")
    solid, welded = _union(closed, name)
    solid = _without_slivers(solid, name)
    crossing = _crossing(solid)
    if crossing:
        fixed, _ = _meshfix(solid)
        if fixed is None or _crossing(fixed) or abs(fixed.volume / solid.volume - 1.0) > CLEAN_VOLUME_CHANGE:
            raise MeshRepairError(f"{name}: the surface intersects itself ({crossing} triangles) and MeshFix could not "
                                  f"remove the intersections without changing the volume by more than "
                                  f"{CLEAN_VOLUME_CHANGE:.0%}; fix: rebuild that region in a mesh tool (e.g. MeshLab "
                                  "'Select Self Intersecting Faces', delete, 'Close Holes') and export it again")
        solid = fixed
        rebuilt += 1
    distance = surface_distance(solid, source, both_ways=False)

    simplified_distance = None
    vertices_before = len(source.vertices)
    if max_vertices is not None and len(solid.vertices) > max_vertices:
        for attempt_tolerance in tolerance / 2.0 ** np.arange(4):
            simpler = _simplify(solid, attempt_tolerance)
            moved = surface_distance(solid, simpler)
            if moved <= tolerance:
                break
        if moved <= tolerance and len(simpler.vertices) < len(solid.vertices):
            simplified_distance, solid = moved, simpler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeshRepairWarning)
        try:
            report = validate_mesh(solid, name)
        except MeshError as exc:
            problem = str(exc).replace(REPAIR_HINT, "")
            raise MeshRepairError(f"{problem} (left after the repair: {len(pieces)} piece(s), {holes} hole(s) "
                                  "filled)") from exc
    return RepairReport(name, faces_removed, dropped, len(pieces), holes, rebuilt, welded, volume_before, report.volume,
                        distance, vertices_before, len(report.mesh.vertices), simplified_distance, report.mesh)


def _first_of_duplicates(faces: np.ndarray) -> np.ndarray:
    """Mask keeping the first of faces over the same three vertices (any order or winding)."""
    mask = np.zeros(len(faces), dtype=bool)
    mask[trimesh.grouping.unique_rows(np.sort(faces, axis=1))[0]] = True
    return mask


def _meshfix(piece: trimesh.Trimesh) -> tuple[trimesh.Trimesh | None, int]:
    """(closed surface, holes filled) by MeshFix: fill every hole, then remove degenerate and
    self-intersecting triangles; (None, holes) when the result is not closed."""
    import pymeshfix

    fix = pymeshfix.MeshFix(np.asarray(piece.vertices, dtype=np.float64), np.asarray(piece.faces, dtype=np.int32))
    holes = int(fix.n_boundaries) if hasattr(fix, "n_boundaries") else 0
    fix.fill_holes()
    fix.clean()
    fix.fill_holes()
    if len(fix.faces) == 0:
        return None, holes
    fixed = trimesh.Trimesh(np.asarray(fix.points, dtype=np.float64), np.asarray(fix.faces), process=False)
    fixed.merge_vertices()
    if not (fixed.is_watertight and fixed.is_winding_consistent):
        return None, holes
    if fixed.volume < 0.0:
        fixed.invert()
    return fixed, holes


def _to_manifold(mesh: trimesh.Trimesh):
    import manifold3d

    solid = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.asarray(mesh.vertices, dtype=np.float64),
                                                  tri_verts=np.asarray(mesh.faces, dtype=np.uint64)))
    if solid.status() != manifold3d.Error.NoError:
        flipped = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.asarray(mesh.vertices, dtype=np.float64),
                                                        tri_verts=np.asarray(mesh.faces[:, ::-1], dtype=np.uint64)))
        solid = flipped if flipped.status() == manifold3d.Error.NoError else solid
    return solid


def _from_manifold(solid) -> trimesh.Trimesh:
    out = solid.to_mesh64()
    return trimesh.Trimesh(np.asarray(out.vert_properties)[:, :3].astype(np.float64), np.asarray(out.tri_verts),
                           process=False)


def _union(pieces: list[trimesh.Trimesh], name: str) -> tuple[trimesh.Trimesh, bool]:
    """(one closed surface: the union of the closed `pieces`, whether they were welded)."""
    import manifold3d

    if len(pieces) == 1:
        solid = _from_manifold(_to_manifold(pieces[0]))
        return (solid if solid.is_watertight and len(solid.faces) else pieces[0]), False
    solids = [_to_manifold(piece) for piece in pieces]
    bad = [i for i, solid in enumerate(solids) if solid.status() != manifold3d.Error.NoError]
    if bad:
        raise MeshRepairError(f"{name}: {len(bad)} closed piece(s) are not two-manifold for the union (manifold3d: "
                              f"{solids[bad[0]].status()}); fix: export the object as one closed solid")
    union = manifold3d.Manifold.batch_boolean(solids, manifold3d.OpType.Add)
    welded = False
    if len(union.decompose()) > 1:
        grow = manifold3d.Manifold.sphere(0.5 * WELD_GAP, 4)  # an octahedron of radius WELD_GAP / 2
        union = manifold3d.Manifold.batch_boolean([solid.minkowski_sum(grow) for solid in solids],
                                                  manifold3d.OpType.Add)
        welded = True
    shells = union.decompose()
    if len(shells) > 1:
        boxes = "; ".join(f"{shell.volume() * 1e6:.4g} cm^3" for shell in sorted(shells, key=lambda s: -s.volume())[:4])
        raise MeshRepairError(f"{name}: its pieces form {len(shells)} separate solids more than {WELD_GAP * 1e3:g} mm "
                              f"apart ({boxes}), not one object; fix: export one object per file, or join the parts "
                              "in a mesh tool")
    return _from_manifold(union), welded


def _without_slivers(solid: trimesh.Trimesh, name: str) -> trimesh.Trimesh:
    """`solid` without zero-area triangles (the slivers a union leaves where pieces meet at a
    grazing angle): simplified by manifold3d at the first of SLIVER_TOLERANCES (m) that removes
    them all; MeshRepairError when none does."""
    def slivers(mesh):
        return int((mesh.area_faces <= DEGENERATE_AREA * float(np.linalg.norm(mesh.extents)) ** 2).sum())

    if not slivers(solid):
        return solid
    manifold = _to_manifold(solid)
    for tolerance in SLIVER_TOLERANCES:
        cleaner = _from_manifold(manifold.simplify(tolerance))
        if not slivers(cleaner):
            return cleaner
    raise MeshRepairError(f"{name}: the union of its pieces holds {slivers(solid)} zero-area triangles that no "
                          f"simplification within {SLIVER_TOLERANCES[-1] * 1e3:g} mm removes; fix: join the pieces "
                          "in a mesh tool (boolean union) and export one solid")


def _crossing(mesh: trimesh.Trimesh) -> int:
    """How many triangles of `mesh` cross others (TetGen's diagnosis; 0 when none or no verdict)."""
    from ipcgrasp.geometry.tetra import self_intersections

    found = self_intersections(mesh)
    return int(found.triangles) if found.verdict else 0


def _simplify(mesh: trimesh.Trimesh, tolerance: float) -> trimesh.Trimesh:
    """manifold3d's simplification: vertices removed while every surface point moves less than
    `tolerance` (m); the result stays a closed two-manifold."""
    return _from_manifold(_to_manifold(mesh).simplify(float(tolerance)))


def point_triangle_distance(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Distance (m) of each point (n, 3) to the matching triangle (n, 3, 3): the nearer of its
    projection onto the plane (when inside) and its three edges."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    normal = np.cross(b - a, c - a)
    area2 = np.einsum("ij,ij->i", normal, normal)
    best = np.full(len(points), np.inf)
    for p0, p1 in ((a, b), (b, c), (c, a)):
        edge = p1 - p0
        length2 = np.einsum("ij,ij->i", edge, edge)
        t = np.clip(np.einsum("ij,ij->i", points - p0, edge) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(points - (p0 + t[:, None] * edge), axis=1))
    flat = area2 > 0
    safe = np.where(flat, area2, 1.0)
    inside = flat.copy()
    for p0, p1 in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(p1 - p0, points - p0), normal) >= 0.0
    plane = np.abs(np.einsum("ij,ij->i", points - a, normal)) / np.sqrt(safe)
    return np.where(inside, np.minimum(best, plane), best)


def distance_to_surface(points: np.ndarray, mesh: trimesh.Trimesh) -> np.ndarray:
    """Exact distance (m) of each point (n, 3) to the triangles of `mesh`: the nearest triangle by
    centroid bounds the answer, and only triangles whose bounding sphere reaches within it are
    measured."""
    from scipy.spatial import cKDTree

    triangles = np.asarray(mesh.triangles)
    centres = triangles.mean(axis=1)
    radii = np.linalg.norm(triangles - centres[:, None], axis=2).max(axis=1)
    tree = cKDTree(centres)
    _, nearest = tree.query(points)
    upper = point_triangle_distance(points, triangles[nearest])
    result = upper.copy()
    for k, candidates in enumerate(tree.query_ball_point(points, upper + radii.max())):
        candidates = np.asarray(candidates, dtype=np.int64)
        candidates = candidates[np.linalg.norm(centres[candidates] - points[k], axis=1) - radii[candidates] <= upper[k]]
        if len(candidates):
            result[k] = point_triangle_distance(np.repeat(points[k][None], len(candidates), axis=0),
                                                triangles[candidates]).min()
    return result


def surface_distance(a: trimesh.Trimesh, b: trimesh.Trimesh, samples: int = DISTANCE_SAMPLES,
                     both_ways: bool = True) -> float:
    """Largest distance (m) from the surface `a` to `b`, and with `both_ways` from `b` to `a` too:
    from `samples` points of each (seeded, by area, plus all vertices) to the other surface; a
    lower bound of the Hausdorff distance that meets it as the samples get denser."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for source, target in ((a, b), (b, a))[:2 if both_ways else 1]:
        points = np.vstack([trimesh.sample.sample_surface(source, samples, seed=rng)[0], source.vertices])
        worst = max(worst, float(distance_to_surface(points, target).max()))
    return worst
