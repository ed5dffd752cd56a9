"""Scene placement and the distance between solids used to open the jaws (DATA.md section 4).

`place_scene` rests the posed object 1 mm above the ground and moves the gripper with it, so the
grasp relative to the object stays the recorded one. `mesh_distance` is the exact Euclidean
distance between two solids bounded by closed triangle surfaces (0 when they overlap); it backs
`Gripper.clearance_opening`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from ipcgrasp.engine._numba import njit


def place_scene(object_mesh, object_pose, grasp_pose, ground_gap: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Shift the posed object along world z so that its lowest point is `ground_gap` (m) above the
    ground z = 0, and the gripper by the same amount (DATA.md section 4).

    `object_mesh` is a trimesh (or an (n, 3) vertex array) in the object frame; the poses are 4x4
    (object and gripper frames in the world, m). Returns the shifted (object_pose, grasp_pose).
    """
    vertices = np.asarray(getattr(object_mesh, "vertices", object_mesh), dtype=np.float64)
    object_pose = _pose(object_pose, "object_pose")
    grasp_pose = _pose(grasp_pose, "grasp_pose")
    if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) == 0:
        raise ValueError(f"object_mesh must have (n, 3) vertices, got shape {vertices.shape}")
    if not ground_gap >= 0.0:
        raise ValueError(f"ground_gap must be non-negative (m), got {ground_gap}")
    lowest = (vertices @ object_pose[2, :3] + object_pose[2, 3]).min()
    shift = np.eye(4)
    shift[2, 3] = ground_gap - lowest
    return shift @ object_pose, shift @ grasp_pose


def _pose(pose, name: str) -> np.ndarray:
    pose = np.asarray(pose, dtype=np.float64)
    if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
        raise ValueError(f"{name} must be a finite 4x4 matrix, got shape {pose.shape}")
    return pose


def mesh_distance(vertices_a, faces_a, vertices_b, faces_b, cutoff: float = np.inf) -> float:
    """Euclidean distance (m) between the solids bounded by two closed triangle surfaces, capped
    at `cutoff`: min(d, cutoff), and 0 when the solids touch or overlap.

    Separated surfaces are closest at a vertex-triangle or an edge-edge pair, so d is the minimum
    over all such pairs of both meshes. The solids overlap when an edge of one crosses a triangle
    of the other, or else when a connected component of one lies inside the other (generalised
    winding number of one of its vertices, Jacobson et al. 2013). Primitives farther than
    `cutoff` from the other mesh's bounding box are skipped, so a small cutoff is cheap.
    Vertices referenced by no face (e.g. interior tet nodes) are ignored.
    """
    va, fa = _closed_surface(vertices_a, faces_a, "a")
    vb, fb = _closed_surface(vertices_b, faces_b, "b")
    cutoff = float(cutoff)
    if not cutoff > 0.0:
        raise ValueError(f"cutoff must be positive (m), got {cutoff}")
    for points, vertices, faces in ((_component_vertices(va, fa), vb, fb), (_component_vertices(vb, fb), va, fa)):
        if np.any(np.abs(winding_numbers(points, vertices, faces)) > 0.5):
            return 0.0
    near_a = _near_box(va, fa, vb, cutoff)
    near_b = _near_box(vb, fb, va, cutoff)
    distance_sq, crossing = _surface_distance_sq(va, near_a[0], near_a[1], near_a[2],
                                                 vb, near_b[0], near_b[1], near_b[2], cutoff)
    if crossing:
        return 0.0
    return min(float(np.sqrt(distance_sq)), cutoff)


def winding_numbers(points, vertices, faces) -> np.ndarray:
    """Generalised winding number of each point w.r.t. a closed, outward-oriented triangle surface:
    sum of the triangles' signed solid angles / (4 pi) (Van Oosterom and Strackee 1983 for each
    solid angle; Jacobson et al. 2013). 1 inside, 0 outside, shape (P,)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    triangles = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    result = np.empty(len(points))
    for i, point in enumerate(points):
        a, b, c = (triangles[:, k] - point for k in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
        numerator = np.einsum("ij,ij->i", a, np.cross(b, c))
        denominator = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc
                       + np.einsum("ij,ij->i", a, c) * lb + np.einsum("ij,ij->i", b, c) * la)
        result[i] = np.arctan2(numerator, denominator).sum() / (2.0 * np.pi)
    return result


def _closed_surface(vertices, faces, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Float64 vertices and int64 faces with the vertices no face references removed."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or not np.all(np.isfinite(vertices)):
        raise ValueError(f"vertices_{name} must be a finite (n, 3) array, got shape {vertices.shape}")
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0 or not np.issubdtype(faces.dtype, np.integer):
        raise ValueError(f"faces_{name} must be a non-empty integer (F, 3) array, got {faces.dtype} {faces.shape}")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise ValueError(f"faces_{name} index vertices outside 0..{len(vertices) - 1}")
    used, compact = np.unique(faces, return_inverse=True)
    return np.ascontiguousarray(vertices[used]), compact.reshape(-1, 3).astype(np.int64)


def _edges(faces: np.ndarray) -> np.ndarray:
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    return np.unique(edges, axis=0)


def _component_vertices(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """One vertex of each connected component of the surface."""
    edges = _edges(faces)
    graph = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                    shape=(len(vertices), len(vertices)))
    _, labels = scipy.sparse.csgraph.connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    return vertices[first]


def _near_box(vertices: np.ndarray, faces: np.ndarray, other: np.ndarray,
              cutoff: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the vertices, faces (F, 3) and edges (E, 2) whose bounding boxes come within
    `cutoff` of the bounding box of the points `other`."""
    edges = _edges(faces)
    if not np.isfinite(cutoff):
        return np.arange(len(vertices)), faces, edges
    lo, hi = other.min(axis=0) - cutoff, other.max(axis=0) + cutoff

    def near(simplices):
        corners = vertices[simplices]
        return np.all((corners.max(axis=1) >= lo) & (corners.min(axis=1) <= hi), axis=1)

    return (np.flatnonzero(near(np.arange(len(vertices))[:, None])),
            np.ascontiguousarray(faces[near(faces)]), np.ascontiguousarray(edges[near(edges)]))


@njit
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def _point_segment_sq(p, a, b):
    """Squared distance from point p to the segment [a, b]."""
    ab, ap = _sub(b, a), _sub(p, a)
    length_sq = _dot(ab, ab)
    t = 0.0 if length_sq <= 0.0 else min(max(_dot(ap, ab) / length_sq, 0.0), 1.0)
    d = (ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2])
    return _dot(d, d)


@njit
def _point_triangle_sq(p, a, b, c):
    """Squared distance from point p to the triangle (a, b, c): to its plane when p projects
    inside it, else to the nearest of its edges."""
    n = _cross(_sub(b, a), _sub(c, a))
    n_sq = _dot(n, n)
    if n_sq > 0.0:
        inside = (_dot(_cross(_sub(b, a), _sub(p, a)), n) >= 0.0
                  and _dot(_cross(_sub(c, b), _sub(p, b)), n) >= 0.0
                  and _dot(_cross(_sub(a, c), _sub(p, c)), n) >= 0.0)
        if inside:
            h = _dot(_sub(p, a), n)
            return h * h / n_sq
    return min(_point_segment_sq(p, a, b), _point_segment_sq(p, b, c), _point_segment_sq(p, c, a))


@njit
def _segment_segment_sq(p0, p1, q0, q1):
    """Squared distance between the segments [p0, p1] and [q0, q1]: minimise over (s, t) in
    [0, 1]^2 (the unconstrained minimiser clamped, then each parameter re-optimised given the
    other), falling back to point-segment distances for degenerate or parallel segments."""
    u, v, w = _sub(p1, p0), _sub(q1, q0), _sub(p0, q0)
    a, b, c, d, e = _dot(u, u), _dot(u, v), _dot(v, v), _dot(u, w), _dot(v, w)
    denominator = a * c - b * b
    if a <= 0.0 or c <= 0.0 or denominator <= 1e-12 * a * c:
        return min(_point_segment_sq(p0, q0, q1), _point_segment_sq(p1, q0, q1),
                   _point_segment_sq(q0, p0, p1), _point_segment_sq(q1, p0, p1))
    s = min(max((b * e - c * d) / denominator, 0.0), 1.0)
    t = (b * s + e) / c
    if t < 0.0:
        t, s = 0.0, min(max(-d / a, 0.0), 1.0)
    elif t > 1.0:
        t, s = 1.0, min(max((b - d) / a, 0.0), 1.0)
    r = (w[0] + s * u[0] - t * v[0], w[1] + s * u[1] - t * v[1], w[2] + s * u[2] - t * v[2])
    return _dot(r, r)


@njit
def _segment_crosses_triangle(p, q, a, b, c):
    """Whether the segment [p, q] crosses the triangle (a, b, c) (Moller and Trumbore 1997);
    segments parallel to the triangle's plane never cross (they can only touch it)."""
    d, e1, e2 = _sub(q, p), _sub(b, a), _sub(c, a)
    h = _cross(d, e2)
    det = _dot(e1, h)
    scale = np.sqrt(_dot(d, d) * _dot(e1, e1) * _dot(e2, e2))
    if abs(det) <= 1e-12 * scale:
        return False
    s = _sub(p, a)
    u = _dot(s, h) / det
    if u < 0.0 or u > 1.0:
        return False
    k = _cross(s, e1)
    v = _dot(d, k) / det
    if v < 0.0 or u + v > 1.0:
        return False
    t = _dot(e2, k) / det
    return 0.0 <= t <= 1.0


@njit
def _boxes_apart(lo_a, hi_a, lo_b, hi_b, gap):
    for k in range(3):
        if lo_a[k] > hi_b[k] + gap or lo_b[k] > hi_a[k] + gap:
            return True
    return False


@njit
def _simplex_boxes(vertices, simplices):
    lo = np.empty((len(simplices), 3))
    hi = np.empty((len(simplices), 3))
    for i in range(len(simplices)):
        for k in range(3):
            lo[i, k] = vertices[simplices[i, 0], k]
            hi[i, k] = lo[i, k]
            for j in range(1, simplices.shape[1]):
                lo[i, k] = min(lo[i, k], vertices[simplices[i, j], k])
                hi[i, k] = max(hi[i, k], vertices[simplices[i, j], k])
    return lo, hi


@njit
def _vertex_triangle_sq(v, points, tv, faces, tri_lo, tri_hi, cutoff, best):
    for i in points:
        p = v[i]
        for f in range(len(faces)):
            if _boxes_apart(p, p, tri_lo[f], tri_hi[f], cutoff):
                continue
            a, b, c = tv[faces[f, 0]], tv[faces[f, 1]], tv[faces[f, 2]]
            best = min(best, _point_triangle_sq(p, a, b, c))
    return best


@njit
def _edges_cross_triangles(v, edges, edge_lo, edge_hi, tv, faces, tri_lo, tri_hi):
    for i in range(len(edges)):
        p, q = v[edges[i, 0]], v[edges[i, 1]]
        for f in range(len(faces)):
            if _boxes_apart(edge_lo[i], edge_hi[i], tri_lo[f], tri_hi[f], 0.0):
                continue
            if _segment_crosses_triangle(p, q, tv[faces[f, 0]], tv[faces[f, 1]], tv[faces[f, 2]]):
                return True
    return False


@njit
def _surface_distance_sq(va, points_a, faces_a, edges_a, vb, points_b, faces_b, edges_b, cutoff):
    """(min(d^2, cutoff^2) over the vertex-triangle pairs of both meshes and their edge-edge
    pairs, whether an edge of one mesh crosses a triangle of the other)."""
    tri_lo_a, tri_hi_a = _simplex_boxes(va, faces_a)
    tri_lo_b, tri_hi_b = _simplex_boxes(vb, faces_b)
    edge_lo_a, edge_hi_a = _simplex_boxes(va, edges_a)
    edge_lo_b, edge_hi_b = _simplex_boxes(vb, edges_b)
    if (_edges_cross_triangles(va, edges_a, edge_lo_a, edge_hi_a, vb, faces_b, tri_lo_b, tri_hi_b)
            or _edges_cross_triangles(vb, edges_b, edge_lo_b, edge_hi_b, va, faces_a, tri_lo_a, tri_hi_a)):
        return 0.0, True
    best = cutoff * cutoff
    best = _vertex_triangle_sq(va, points_a, vb, faces_b, tri_lo_b, tri_hi_b, cutoff, best)
    best = _vertex_triangle_sq(vb, points_b, va, faces_a, tri_lo_a, tri_hi_a, cutoff, best)
    for i in range(len(edges_a)):
        p0, p1 = va[edges_a[i, 0]], va[edges_a[i, 1]]
        for j in range(len(edges_b)):
            if _boxes_apart(edge_lo_a[i], edge_hi_a[i], edge_lo_b[j], edge_hi_b[j], cutoff):
                continue
            best = min(best, _segment_segment_sq(p0, p1, vb[edges_b[j, 0]], vb[edges_b[j, 1]]))
    return best, False
