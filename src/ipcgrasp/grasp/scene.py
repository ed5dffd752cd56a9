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
import scipy.spatial

from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.collisions import CollisionMesh, build_collisions, min_distance
from ipcgrasp.engine.penetration import winding_number


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

    The solids overlap when an edge of one crosses a triangle of the other, or else when a
    connected component of one lies inside the other (generalised winding number of one of its
    vertices, `engine.penetration.winding_number`). Separated surfaces are closest at a
    vertex-triangle or an edge-edge pair: d is the engine's smallest contact distance
    (`engine.collisions.build_collisions` and `min_distance`) over the pairs closer than
    min(cutoff, closest vertex pair), so a small cutoff is cheap.
    Vertices referenced by no face (e.g. interior tet nodes) are ignored; no face may repeat a
    vertex.
    """
    va, fa = _closed_surface(vertices_a, faces_a, "a")
    vb, fb = _closed_surface(vertices_b, faces_b, "b")
    cutoff = float(cutoff)
    if not cutoff > 0.0:
        raise ValueError(f"cutoff must be positive (m), got {cutoff}")
    ea, eb = _edges(fa, len(va)), _edges(fb, len(vb))
    for points, vertices, faces in ((_component_vertices(va, ea), vb, fb), (_component_vertices(vb, eb), va, fa)):
        if np.any(np.abs(winding_number(points, vertices, faces)) > 0.5):
            return 0.0
    if _edges_cross_triangles(va, ea, vb, fb) or _edges_cross_triangles(vb, eb, va, fa):
        return 0.0
    # d <= the closest vertex pair's distance, so every primitive pair closer than d lies within it
    radius = min(cutoff, float(scipy.spatial.cKDTree(vb).query(va)[0].min()))
    if radius == 0.0:
        return 0.0
    x = np.vstack([va, vb])
    mesh = CollisionMesh.build(x, np.vstack([fa, fb + len(va)]), np.repeat([0, 1], [len(va), len(vb)]))
    return min(min_distance(build_collisions(mesh, x, radius), mesh, x), radius)


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
    repeated = (faces[:, 0] == faces[:, 1]) | (faces[:, 1] == faces[:, 2]) | (faces[:, 2] == faces[:, 0])
    if repeated.any():
        raise ValueError(f"faces_{name}[{int(np.argmax(repeated))}] repeats a vertex; remove degenerate faces "
                         "(geometry.validate_mesh does)")
    used, compact = np.unique(faces, return_inverse=True)
    return np.ascontiguousarray(vertices[used]), compact.reshape(-1, 3).astype(np.int64)


def _edges(faces: np.ndarray, n_vertices: int) -> np.ndarray:
    """Unique edges (E, 2) of the triangles faces (F, 3) over n_vertices vertices, (i, j) with i < j."""
    sides = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    keys = np.unique(sides.min(axis=1) * n_vertices + sides.max(axis=1))
    return np.stack([keys // n_vertices, keys % n_vertices], axis=1)


def _component_vertices(vertices: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """One vertex of each connected component of the surface with these edges (E, 2)."""
    graph = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                    shape=(len(vertices), len(vertices)))
    _, labels = scipy.sparse.csgraph.connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    return vertices[first]


def _edges_cross_triangles(va: np.ndarray, edges: np.ndarray, vb: np.ndarray, fb: np.ndarray) -> bool:
    """Whether an edge (E, 2) of surface a crosses a triangle of surface b.

    An edge [p, q] is the path of a point moving from p to q, so the engine's broad phase over
    that motion (radius 0) pairs each edge with the triangles its box touches; each point is
    listed as a one-point edge so that the broad phase counts it as a surface vertex.
    """
    points = np.arange(len(edges))
    start = np.vstack([va[edges[:, 0]], vb])
    end = np.vstack([va[edges[:, 1]], vb])
    vertex_body = np.repeat([0, 1], [len(edges), len(vb)])
    pairs, _, _ = candidates(start, end, np.stack([points, points], axis=1), fb + len(edges), vertex_body, 0.0)
    edge, face = pairs[:, 0], pairs[:, 1]
    triangles = vb[fb[face]]
    return bool(np.any(_segments_cross_triangles(start[edge], end[edge], triangles[:, 0], triangles[:, 1],
                                                 triangles[:, 2])))


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u[:, 0] * v[:, 0] + u[:, 1] * v[:, 1] + u[:, 2] * v[:, 2]


def _segments_cross_triangles(p, q, a, b, c) -> np.ndarray:
    """Whether each segment [p, q] crosses the triangle (a, b, c) (rows of (K, 3) arrays; Moller
    and Trumbore 1997); segments parallel to the triangle's plane never cross (they can only
    touch it)."""
    d, e1, e2 = q - p, b - a, c - a
    h = np.cross(d, e2)
    det = _dot(e1, h)
    parallel = np.abs(det) <= 1e-12 * np.sqrt(_dot(d, d) * _dot(e1, e1) * _dot(e2, e2))
    det = np.where(parallel, 1.0, det)
    s = p - a
    u = _dot(s, h) / det
    k = np.cross(s, e1)
    v = _dot(d, k) / det
    t = _dot(e2, k) / det
    return ~parallel & (u >= 0.0) & (u <= 1.0) & (v >= 0.0) & (u + v <= 1.0) & (t >= 0.0) & (t <= 1.0)
