"""How deep the meshes of a configuration actually interpenetrate, whatever the contact model.

The measure: the largest depth (m) by which a surface vertex of one body lies inside another
body, or below the ground plane. A vertex p of body a is inside body b when the generalized
winding number of b's surface triangles at p,

    w(p) = 1 / (4 pi) sum_f Omega_f(p),

with Omega_f the signed solid angle of triangle f seen from p (Van Oosterom and Strackee 1983,
tan(Omega / 2) = det[a b c] / (|a||b||c| + (a.b)|c| + (a.c)|b| + (b.c)|a|) with a, b, c the
triangle's corners relative to p), has |w| > 1/2 (Jacobson et al. 2013, "Robust
inside-outside segmentation using generalized winding numbers"): 1 inside and 0 outside a closed
surface of either orientation, and a graceful fraction for a surface with holes. Its depth is
then the distance from p to b's surface (the smallest point-triangle distance,
`distance.point_triangle_distance`). Below the ground its depth is -height.

Where b's surface is closed and consistently oriented (every body of a grasp scene: tet-mesh
boundaries, closed objects, box jaws), the winding number at p is the signed count of the
triangles the vertical ray from p passes through, a few comparisons per triangle instead of an
arctangent and three square roots; the solid angles are summed only where that count could
depend on rounding (p's vertical line within RAY_REACH of a triangle's edge seen from above, or
p that near a triangle's plane), so the two decide alike.

Only vertices inside the axis-aligned box of the other body's surface are tested, and only for
pairs of bodies that may touch (a collision mesh's `can_collide`; pairs glued together or both
kinematic are skipped): in a grasp, a few dozen vertices against a few hundred triangles. A body
that only moves by affine maps (a rigid or affine object, a kinematic jaw) also has its convex
hull's facets, found once (scipy's Qhull) as triangles of its own vertices: an affine map keeps
them the facets of the moved body's hull, so a vertex outside one of their planes is outside the
body without summing a solid angle over every one of its triangles (a finely meshed object).
The measure is vertex-based: an edge that cuts through a face with both of its ends outside
(a sharp edge pressed into a coarse face) is not seen until a vertex crosses.

The barrier model's configurations are intersection-free, so there it measures 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.distance import _point_triangle_distance

__all__ = ["PenetrationProbe", "penetration_depths", "winding_number"]

# A vertex counts as outside a body's convex hull only beyond this fraction of the body's box
# diagonal from a hull plane: nearer, rounding could misplace it, and the winding number decides.
HULL_MARGIN = 1e-9
# Hull facets whose unit normals and offsets (over the body's extent) agree to this many decimals
# lie in one plane and are tested once (_hull_facets).
PLANE_DIGITS = 9
# The vertical ray's count decides inside a closed surface unless p is within this fraction of
# the scene's largest coordinate of a triangle's edge (seen from above) or of its plane: there
# the solid angles decide (_vertical_ray_crossings).
RAY_REACH = 1e-9


@njit
def _solid_angle(p, a, b, c):
    """Signed solid angle (sr) of triangle (a, b, c) seen from p (Van Oosterom-Strackee)."""
    ax, ay, az = a[0] - p[0], a[1] - p[1], a[2] - p[2]
    bx, by, bz = b[0] - p[0], b[1] - p[1], b[2] - p[2]
    cx, cy, cz = c[0] - p[0], c[1] - p[1], c[2] - p[2]
    la = np.sqrt(ax * ax + ay * ay + az * az)
    lb = np.sqrt(bx * bx + by * by + bz * bz)
    lc = np.sqrt(cx * cx + cy * cy + cz * cz)
    det = ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
    den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb \
        + (bx * cx + by * cy + bz * cz) * la
    return 2.0 * np.arctan2(det, den)


@njit
def _winding_number(p, x, faces, first, last):
    """Generalized winding number at p of the triangles faces[first:last] (rows of x)."""
    total = 0.0
    for f in range(first, last):
        total += _solid_angle(p, x[faces[f, 0]], x[faces[f, 1]], x[faces[f, 2]])
    return total / (4.0 * np.pi)


@njit
def _winding_numbers(points, x, faces):
    out = np.empty(points.shape[0])
    for i in range(points.shape[0]):
        out[i] = _winding_number(points[i], x, faces, np.int64(0), faces.shape[0])
    return out


@njit
def _face_boxes(x, faces):
    """Per triangle (rows of faces, corners rows of x) its corners' smallest and largest x, y
    and largest z (F, 5), m: what the vertical ray test looks at before the triangle itself."""
    boxes = np.empty((faces.shape[0], 5))
    for f in range(faces.shape[0]):
        a, b, c = x[faces[f, 0]], x[faces[f, 1]], x[faces[f, 2]]
        boxes[f, 0] = min(a[0], b[0], c[0])
        boxes[f, 1] = max(a[0], b[0], c[0])
        boxes[f, 2] = min(a[1], b[1], c[1])
        boxes[f, 3] = max(a[1], b[1], c[1])
        boxes[f, 4] = max(a[2], b[2], c[2])
    return boxes


@njit
def _vertical_ray_crossings(p, x, faces, boxes, first, last, reach):
    """(signed count, ambiguous) of the crossings of the vertical ray from p upwards with the
    triangles faces[first:last] (rows of x; boxes: their `_face_boxes`): +1 where it passes
    through a triangle whose corners run counter-clockwise seen from above (it leaves an
    outward-oriented surface there), -1 where they run clockwise. For a closed, consistently
    oriented surface the count is the winding number at p. Ambiguous (the count says nothing)
    when p's vertical line passes within `reach` (m) of a triangle's edge or corner line seen
    from above, or p lies within `reach` of the plane of a triangle the ray meets: there
    rounding could decide, and the solid angles must."""
    count = 0
    for f in range(first, last):
        # beside p seen from above, or wholly below it: each corner's offset from p beyond the
        # reach, told by the extreme corner (rounding a difference is monotonic)
        if (boxes[f, 0] - p[0] > reach or boxes[f, 1] - p[0] < -reach or boxes[f, 2] - p[1] > reach
                or boxes[f, 3] - p[1] < -reach or boxes[f, 4] - p[2] < -reach):
            continue
        a, b, c = x[faces[f, 0]], x[faces[f, 1]], x[faces[f, 2]]
        ax, ay, az = a[0] - p[0], a[1] - p[1], a[2] - p[2]
        bx, by, bz = b[0] - p[0], b[1] - p[1], b[2] - p[2]
        cx, cy, cz = c[0] - p[0], c[1] - p[1], c[2] - p[2]
        # twice the signed areas p makes with each edge seen from above, and each edge's reach
        # (its length in the 1-norm, at least its 2-norm, times `reach`)
        e_ab, e_bc, e_ca = ax * by - ay * bx, bx * cy - by * cx, cx * ay - cy * ax
        r_ab = reach * (abs(bx - ax) + abs(by - ay))
        r_bc = reach * (abs(cx - bx) + abs(cy - by))
        r_ca = reach * (abs(ax - cx) + abs(ay - cy))
        if (e_ab > r_ab and e_bc > r_bc and e_ca > r_ca) or (e_ab < -r_ab and e_bc < -r_bc and e_ca < -r_ca):
            # the ray meets the triangle's plane; above p iff (a - p) . n has the sign of n_z
            nx = (by - ay) * (cz - az) - (bz - az) * (cy - ay)
            ny = (bz - az) * (cx - ax) - (bx - ax) * (cz - az)
            nz = e_ab + e_bc + e_ca
            side = ax * nx + ay * ny + az * nz
            if abs(side) <= reach * (abs(nx) + abs(ny) + abs(nz)):
                return count, True
            if (side > 0.0) == (nz > 0.0):
                count += 1 if nz > 0.0 else -1
        elif not ((e_ab > r_ab or e_bc > r_bc or e_ca > r_ca) and (e_ab < -r_ab or e_bc < -r_bc or e_ca < -r_ca)):
            return count, True  # neither clearly inside nor clearly outside the triangle seen from above
    return count, False


@njit
def _inside(p, x, faces, boxes, first, last, closed, reach):
    """Whether p is inside the surface faces[first:last] (rows of x; boxes: their
    `_face_boxes`): |winding number| > 1/2. A closed surface (`closed`) is decided by counting
    the vertical ray's crossings, the solid angles summed only where that is ambiguous
    (_vertical_ray_crossings)."""
    if closed:
        count, ambiguous = _vertical_ray_crossings(p, x, faces, boxes, first, last, reach)
        if not ambiguous:
            return count != 0
    return abs(_winding_number(p, x, faces, first, last)) > 0.5


@njit
def _outside_hull(p, normals, offsets, first, last):
    """p lies beyond one of the hull planes normals[f] . y = offsets[f], f in [first, last)."""
    for f in range(first, last):
        if normals[f, 0] * p[0] + normals[f, 1] * p[1] + normals[f, 2] * p[2] > offsets[f]:
            return True
    return False


@njit
def _depths(x, vertices, vertex_body, faces, face_start, can_collide, plane_origin, plane_normal,
            plane_body_mask, has_plane, hull, hull_start, closed):
    """Per vertex of `vertices` (surface vertices, any order) its depth (m) inside another body
    or below the plane (0 if none); faces sorted by body, body b's in faces[face_start[b]:
    face_start[b + 1]]; hull[hull_start[b]:hull_start[b + 1]]: body b's convex-hull facets
    (outward-oriented vertex triples; none: no hull test); closed (B,): body b's faces form a
    closed, consistently oriented surface (_inside)."""
    n_bodies = can_collide.shape[0]
    lo = np.full((n_bodies, 3), np.inf)
    hi = np.full((n_bodies, 3), -np.inf)
    largest = 0.0  # the largest coordinate (m)
    for i in range(vertices.shape[0]):
        v = vertices[i]
        b = vertex_body[v]
        for a in range(3):
            lo[b, a] = min(lo[b, a], x[v, a])
            hi[b, a] = max(hi[b, a], x[v, a])
            largest = max(largest, abs(x[v, a]))
    reach = RAY_REACH * largest
    # the hull planes at x, each pushed out by a rounding margin (HULL_MARGIN of the body's box)
    normals = np.empty((hull.shape[0], 3))
    offsets = np.empty(hull.shape[0])
    for b in range(n_bodies):
        size = np.sqrt((hi[b, 0] - lo[b, 0]) ** 2 + (hi[b, 1] - lo[b, 1]) ** 2 + (hi[b, 2] - lo[b, 2]) ** 2)
        for f in range(hull_start[b], hull_start[b + 1]):
            o, e, g = x[hull[f, 0]], x[hull[f, 1]], x[hull[f, 2]]
            n0 = (e[1] - o[1]) * (g[2] - o[2]) - (e[2] - o[2]) * (g[1] - o[1])
            n1 = (e[2] - o[2]) * (g[0] - o[0]) - (e[0] - o[0]) * (g[2] - o[2])
            n2 = (e[0] - o[0]) * (g[1] - o[1]) - (e[1] - o[1]) * (g[0] - o[0])
            length = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            if not length > 0.0:  # a facet squashed flat: no plane, no test (offset +inf)
                length, offsets[f] = 1.0, np.inf
            else:
                offsets[f] = (n0 * o[0] + n1 * o[1] + n2 * o[2]) / length + HULL_MARGIN * size
            normals[f, 0], normals[f, 1], normals[f, 2] = n0 / length, n1 / length, n2 / length
    near = np.zeros((n_bodies, n_bodies), dtype=np.bool_)  # boxes overlap and the pair may touch
    for a in range(n_bodies):
        for b in range(n_bodies):
            if can_collide[a, b] and face_start[b + 1] > face_start[b]:
                near[a, b] = (lo[a, 0] <= hi[b, 0] and lo[b, 0] <= hi[a, 0] and lo[a, 1] <= hi[b, 1]
                              and lo[b, 1] <= hi[a, 1] and lo[a, 2] <= hi[b, 2] and lo[b, 2] <= hi[a, 2])
    boxes = _face_boxes(x, faces)
    depth = np.zeros(vertices.shape[0])
    for i in range(vertices.shape[0]):
        v = vertices[i]
        a = vertex_body[v]
        p = x[v]
        if has_plane and plane_body_mask[a]:
            height = (p[0] - plane_origin[0]) * plane_normal[0] + (p[1] - plane_origin[1]) * plane_normal[1] \
                + (p[2] - plane_origin[2]) * plane_normal[2]
            depth[i] = max(depth[i], -height)
        for b in range(n_bodies):
            if not near[a, b]:
                continue
            if not (lo[b, 0] <= p[0] <= hi[b, 0] and lo[b, 1] <= p[1] <= hi[b, 1] and lo[b, 2] <= p[2] <= hi[b, 2]):
                continue
            if _outside_hull(p, normals, offsets, hull_start[b], hull_start[b + 1]):
                continue
            if not _inside(p, x, faces, boxes, face_start[b], face_start[b + 1], closed[b], reach):
                continue
            d2 = np.inf
            for f in range(face_start[b], face_start[b + 1]):
                d2 = min(d2, _point_triangle_distance(p, x[faces[f, 0]], x[faces[f, 1]], x[faces[f, 2]]))
            depth[i] = max(depth[i], np.sqrt(d2))
    return depth


def winding_number(points, vertices, faces) -> np.ndarray:
    """Generalized winding numbers (P,) of the triangle mesh (vertices (N, 3) m, faces (F, 3)) at
    points (P, 3): 1 inside and 0 outside a closed, outward-oriented surface (-1 inside an
    inward-oriented one)."""
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3:
        raise ValueError(f"vertices must be (N, 3) and faces (F, 3), got {vertices.shape} and {faces.shape}")
    if faces.size and (faces.min() < 0 or faces.max() >= len(vertices)):
        raise ValueError(f"faces index vertices outside [0, {len(vertices)})")
    if not (np.isfinite(points).all() and np.isfinite(vertices).all()):
        raise ValueError("points and vertices must be finite")
    return _winding_numbers(points, vertices, faces)


@dataclass(frozen=True)
class PenetrationProbe:
    """The surface of a scene arranged for `depths` / `max_depth`: faces (F, 3) sorted by body
    with face_start (B + 1,) offsets, the surface vertices, vertex_body (N,), can_collide (B, B),
    the plane (origin, unit normal, or None), plane_body_mask (B,), and the convex-hull facets
    hull (H, 3) of the bodies that move by affine maps only, body b's in hull[hull_start[b]:
    hull_start[b + 1]] (outward-oriented vertex triples), and closed (B,): whether body b's faces
    form a closed, consistently oriented surface (every edge in two faces, once each way)."""

    faces: np.ndarray
    face_start: np.ndarray
    vertices: np.ndarray
    vertex_body: np.ndarray
    can_collide: np.ndarray
    plane_origin: np.ndarray | None
    plane_normal: np.ndarray | None
    plane_body_mask: np.ndarray
    hull: np.ndarray
    hull_start: np.ndarray
    closed: np.ndarray

    @classmethod
    def build(cls, faces, vertex_body, can_collide=None, plane=None, plane_body_mask=None, affine=None,
              positions=None) -> "PenetrationProbe":
        """faces (F, 3) surface triangles over N vertices, each within one body; vertex_body (N,)
        body ids in [0, B); can_collide (B, B) bool, the body pairs to check (default: every two
        different bodies); plane: (origin, normal) of the ground or None; plane_body_mask (B,)
        the bodies checked against it (default: all); affine (B,) bool: the bodies whose every
        configuration is an affine image (det > 0) of `positions` (N, 3) m, their convex hulls
        then spare most solid angles (default: none)."""
        vertex_body = np.ascontiguousarray(vertex_body, dtype=np.int64)
        faces = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
        n = len(vertex_body)
        if faces.size and (faces.min() < 0 or faces.max() >= n):
            raise ValueError(f"faces index vertices outside [0, {n})")
        if n and vertex_body.min() < 0:
            raise ValueError("vertex_body must be >= 0")
        if faces.size and np.any(vertex_body[faces] != vertex_body[faces[:, :1]]):
            raise ValueError("a face joins vertices of different bodies")
        if can_collide is None:
            n_bodies = int(vertex_body.max()) + 1 if n else 0
            can_collide = ~np.eye(n_bodies, dtype=bool)
        can_collide = np.ascontiguousarray(can_collide, dtype=bool)
        n_bodies = can_collide.shape[0]
        if can_collide.shape != (n_bodies, n_bodies) or (n and vertex_body.max() >= n_bodies):
            raise ValueError(f"can_collide must be square and cover every body, got {can_collide.shape}")
        face_body = vertex_body[faces[:, 0]]
        order = np.argsort(face_body, kind="stable")
        face_start = np.searchsorted(face_body[order], np.arange(n_bodies + 1))
        origin = normal = None
        if plane is not None:
            origin = np.asarray(plane[0], dtype=np.float64).reshape(3)
            normal = np.asarray(plane[1], dtype=np.float64).reshape(3)
            length = float(np.linalg.norm(normal))
            if not (np.isfinite(origin).all() and np.isfinite(length) and length > 0.0):
                raise ValueError(f"plane needs a finite origin and a nonzero normal, got {plane}")
            normal = normal / length
        if plane_body_mask is None:
            plane_body_mask = np.full(n_bodies, plane is not None)
        plane_body_mask = np.ascontiguousarray(plane_body_mask, dtype=bool).reshape(n_bodies)
        vertices = np.unique(faces)
        hulls = [np.zeros((0, 3), dtype=np.int64)] * n_bodies
        if affine is not None:
            affine = np.asarray(affine, dtype=bool).reshape(n_bodies)
            positions = np.asarray(positions, dtype=np.float64)
            if positions.shape != (n, 3) or not np.isfinite(positions).all():
                raise ValueError(f"the affine bodies' hulls need finite positions of shape ({n}, 3), "
                                 f"got {positions.shape}")
            for b in np.flatnonzero(affine):
                hulls[b] = _hull_facets(positions, vertices[vertex_body[vertices] == b])
        hull_start = np.cumsum([0] + [len(h) for h in hulls]).astype(np.int64)
        faces = np.ascontiguousarray(faces[order])
        closed = np.array([_closed(faces[face_start[b]:face_start[b + 1]]) for b in range(n_bodies)], dtype=bool)
        return cls(faces, face_start.astype(np.int64), vertices, vertex_body, can_collide, origin, normal,
                   plane_body_mask, np.ascontiguousarray(np.concatenate(hulls), dtype=np.int64), hull_start, closed)

    @classmethod
    def from_collision_mesh(cls, mesh, affine=None) -> "PenetrationProbe":
        """The probe of a `collisions.CollisionMesh` (its body pairs, plane and plane bodies);
        affine (B,) bool: the bodies that move by affine maps of its rest positions only."""
        plane = (mesh.plane_origin, mesh.plane_normal) if mesh.has_plane else None
        return cls.build(mesh.faces, mesh.vertex_body, mesh.can_collide, plane, mesh.plane_body_mask, affine,
                         mesh.rest_positions)

    def depths(self, x) -> np.ndarray:
        """Depth (m) of every vertex (N,) inside another body or below the plane at positions
        x (N, 3); 0 for vertices outside everything (and for vertices on no face)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (len(self.vertex_body), 3) or not np.isfinite(x).all():
            raise ValueError(f"x must be a finite ({len(self.vertex_body)}, 3) array, got shape {x.shape}")
        out = np.zeros(len(x))
        out[self.vertices] = self._surface_depths(x)
        return out

    def max_depth(self, x) -> float:
        """Largest interpenetration depth (m) at positions x (N, 3): 0 when nothing overlaps."""
        return float(self._surface_depths(np.ascontiguousarray(x, dtype=np.float64)).max(initial=0.0))

    def _surface_depths(self, x):
        has_plane = self.plane_normal is not None
        origin = self.plane_origin if has_plane else np.zeros(3)
        normal = self.plane_normal if has_plane else np.array([0.0, 0.0, 1.0])
        return _depths(x, self.vertices, self.vertex_body, self.faces, self.face_start, self.can_collide, origin,
                       normal, self.plane_body_mask, has_plane, self.hull, self.hull_start, self.closed)


def _closed(faces) -> bool:
    """Whether the triangles faces (F, 3) form a closed, consistently oriented surface: every
    directed edge occurs once and its reverse once (no faces: not closed)."""
    if not len(faces):
        return False
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    directed = np.unique(edges, axis=0)
    if len(directed) != len(edges):
        return False
    reversed_ = np.unique(edges[:, ::-1], axis=0)
    return bool(np.array_equal(directed, reversed_))


def _hull_facets(positions, vertices) -> np.ndarray:
    """The convex-hull facets (H, 3) of the points positions[vertices] as outward-oriented triples
    of those vertex indices (Qhull, triangulated), one per plane of the hull (the largest of the
    triangles that tile it: a finely meshed flat side is one test, and an affine map keeps its
    triangles in one plane); none for fewer than 4 points or a flat set."""
    if len(vertices) < 4:
        return np.zeros((0, 3), dtype=np.int64)
    points = positions[vertices]
    try:
        hull = ConvexHull(points)
    except QhullError:  # coplanar or coincident points: no volume to test against
        return np.zeros((0, 3), dtype=np.int64)
    facets = hull.simplices.copy()
    a, b, c = points[facets[:, 0]], points[facets[:, 1]], points[facets[:, 2]]
    normals = np.cross(b - a, c - a)
    inward = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0.0
    facets[inward] = facets[inward][:, [0, 2, 1]]
    # Qhull's unit normal and offset (over the points' extent) rounded: a plane split in two by
    # the rounding only keeps one test more
    size = float(np.ptp(points, axis=0).max())
    planes = np.round(hull.equations / np.array([1.0, 1.0, 1.0, size]), PLANE_DIGITS)
    by_area = np.argsort(-np.linalg.norm(normals, axis=1), kind="stable")
    _, first = np.unique(planes[by_area], axis=0, return_index=True)
    return vertices[facets[np.sort(by_area[first])]].astype(np.int64)


def penetration_depths(x, faces, vertex_body, can_collide=None, plane=None, plane_body_mask=None) -> np.ndarray:
    """Per-vertex interpenetration depth (N,) in m of the bodies at positions x (N, 3); see
    `PenetrationProbe.build` for the other arguments. Build a probe once when measuring many
    configurations of one scene."""
    return PenetrationProbe.build(faces, vertex_body, can_collide, plane, plane_body_mask).depths(x)
