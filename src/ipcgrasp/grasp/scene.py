"""Scene placement and the distance between solids used to open the jaws (docs/data.md).

`place_scene` rests the posed object 1 mm above the ground and moves the gripper with it, so the
grasp relative to the object stays the recorded one. `mesh_distance` is the exact Euclidean
distance between two solids bounded by closed triangle surfaces (0 when they overlap); it backs
`Gripper.clearance_opening`; `SolidDistance` answers it for many placements of the same two surfaces.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import scipy.spatial

from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.collisions import CollisionMesh, build_collisions, min_distance
from ipcgrasp.engine.penetration import winding_number


def place_scene(object_mesh, object_pose, grasp_pose, ground_gap: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Shift the posed object along world z so that its lowest point is `ground_gap` (m) above the
    ground z = 0, and the gripper by the same amount (docs/data.md).

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
    at `cutoff`: min(d, cutoff), and 0 when the solids touch or overlap (see `SolidDistance`,
    which answers many placements of the same two surfaces faster)."""
    vertices_a = np.asarray(vertices_a, dtype=np.float64)
    vertices_b = np.asarray(vertices_b, dtype=np.float64)
    for name, vertices in (("a", vertices_a), ("b", vertices_b)):
        if vertices.ndim != 2 or vertices.shape[1] != 3:
            raise ValueError(f"vertices_{name} must be a finite (n, 3) array, got shape {vertices.shape}")
    return solid_distance(faces_a, len(vertices_a), faces_b, len(vertices_b)).distance(vertices_a, vertices_b, cutoff)


def solid_distance(faces_a, n_a: int, faces_b, n_b: int) -> SolidDistance:
    """The SolidDistance of these two surfaces (faces over n_a and n_b vertices), kept for the
    last few pairs asked for: opening the jaws asks for many placements of one jaw and one object."""
    keys = []
    for faces, n in ((faces_a, n_a), (faces_b, n_b)):
        faces = np.ascontiguousarray(faces)
        keys.append((faces.dtype.str, faces.shape, faces.tobytes(), int(n)))
    return _cached_solid_distance(*keys)


@functools.lru_cache(maxsize=8)
def _cached_solid_distance(key_a, key_b) -> SolidDistance:
    (dtype_a, shape_a, bytes_a, n_a), (dtype_b, shape_b, bytes_b, n_b) = key_a, key_b
    return SolidDistance(np.frombuffer(bytes_a, dtype=dtype_a).reshape(shape_a), n_a,
                         np.frombuffer(bytes_b, dtype=dtype_b).reshape(shape_b), n_b)


class SolidDistance:
    """Distances between the solids bounded by two closed triangle surfaces a and b of fixed
    connectivity (faces_a over n_a vertices, faces_b over n_b), placed anywhere: what depends on
    the connectivity alone (the surface vertices, edges, one vertex per connected component and
    the collision mesh) is derived once, then `distance` takes the vertex positions.

    The solids overlap when an edge of one crosses a triangle of the other, or else when a
    connected component of one lies inside the other (generalised winding number of one of its
    vertices, `engine.penetration.winding_number`). Separated surfaces are closest at a
    vertex-triangle or an edge-edge pair: d is the engine's smallest contact distance
    (`engine.collisions.build_collisions` and `min_distance`) over the pairs closer than
    min(cutoff, closest vertex pair), so a small cutoff is cheap.
    Vertices referenced by no face (e.g. interior tet nodes) are ignored; no face may repeat a
    vertex.
    """

    def __init__(self, faces_a, n_a: int, faces_b, n_b: int):
        self._used_a, self._faces_a = _closed_surface(faces_a, n_a, "a")
        self._used_b, self._faces_b = _closed_surface(faces_b, n_b, "b")
        self._n = (int(n_a), int(n_b))
        self._edges_a = _edges(self._faces_a, len(self._used_a))
        self._edges_b = _edges(self._faces_b, len(self._used_b))
        self._component_a = _component_vertices(len(self._used_a), self._edges_a)
        self._component_b = _component_vertices(len(self._used_b), self._edges_b)
        self._mesh = None  # the collision mesh of both surfaces, built at the first placement asked for

    def distance(self, vertices_a, vertices_b, cutoff: float = np.inf) -> float:
        """min(d, cutoff) (m) for the solids with these vertex positions ((n_a, 3) and (n_b, 3),
        m), 0 when they touch or overlap."""
        va = self._positions(vertices_a, self._used_a, self._n[0], "a")
        vb = self._positions(vertices_b, self._used_b, self._n[1], "b")
        cutoff = float(cutoff)
        if not cutoff > 0.0:
            raise ValueError(f"cutoff must be positive (m), got {cutoff}")
        # Solids in disjoint boxes neither overlap nor come closer than the boxes' gap: most of the
        # placements opening the jaws asks about.
        box_gap = float(np.linalg.norm(np.maximum(np.maximum(vb.min(axis=0) - va.max(axis=0),
                                                             va.min(axis=0) - vb.max(axis=0)), 0.0)))
        if box_gap >= cutoff:
            return cutoff
        if box_gap == 0.0 and self._overlap(va, vb):
            return 0.0
        # d <= the closest vertex pair's distance, so every primitive pair closer than d lies within it
        radius = min(cutoff, float(scipy.spatial.cKDTree(vb).query(va)[0].min()))
        if radius == 0.0:
            return 0.0
        x = np.vstack([va, vb])
        if self._mesh is None:
            # Its rest positions only set the edge-edge mollifier, which distances do not use.
            self._mesh = CollisionMesh.build(x, np.vstack([self._faces_a, self._faces_b + len(va)]),
                                             np.repeat([0, 1], [len(va), len(vb)]))
        return min(min_distance(build_collisions(self._mesh, x, radius), self._mesh, x), radius)

    def _overlap(self, va, vb) -> bool:
        """Whether the solids touch or overlap: a point of one inside the other (one per connected
        surface component) or an edge of one crossing a face of the other."""
        fa, fb, ea, eb = self._faces_a, self._faces_b, self._edges_a, self._edges_b
        for points, vertices, faces in ((va[self._component_a], vb, fb), (vb[self._component_b], va, fa)):
            if np.any(np.abs(winding_number(points, vertices, faces)) > 0.5):
                return True
        return _edges_cross_triangles(va, ea, vb, fb) or _edges_cross_triangles(vb, eb, va, fa)

    @staticmethod
    def _positions(vertices, used, n: int, name: str) -> np.ndarray:
        vertices = np.asarray(vertices, dtype=np.float64)
        if vertices.shape != (n, 3) or not np.all(np.isfinite(vertices)):
            raise ValueError(f"vertices_{name} must be a finite ({n}, 3) array, got shape {vertices.shape}")
        return np.ascontiguousarray(vertices[used])


def _closed_surface(faces, n_vertices: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The vertices some face references (sorted indices into the n_vertices) and the faces
    (int64) renumbered over them."""
    faces = np.asarray(faces)
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0 or not np.issubdtype(faces.dtype, np.integer):
        raise ValueError(f"faces_{name} must be a non-empty integer (F, 3) array, got {faces.dtype} {faces.shape}")
    if faces.min() < 0 or faces.max() >= n_vertices:
        raise ValueError(f"faces_{name} index vertices outside 0..{n_vertices - 1}")
    repeated = (faces[:, 0] == faces[:, 1]) | (faces[:, 1] == faces[:, 2]) | (faces[:, 2] == faces[:, 0])
    if repeated.any():
        raise ValueError(f"faces_{name}[{int(np.argmax(repeated))}] repeats a vertex; remove degenerate faces "
                         "(geometry.validate_mesh does)")
    used, compact = np.unique(faces, return_inverse=True)
    return used, compact.reshape(-1, 3).astype(np.int64)


def _edges(faces: np.ndarray, n_vertices: int) -> np.ndarray:
    """Unique edges (E, 2) of the triangles faces (F, 3) over n_vertices vertices, (i, j) with i < j."""
    sides = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    keys = np.unique(sides.min(axis=1) * n_vertices + sides.max(axis=1))
    return np.stack([keys // n_vertices, keys % n_vertices], axis=1)


def _component_vertices(n_vertices: int, edges: np.ndarray) -> np.ndarray:
    """Index of one vertex of each connected component of the surface with these edges (E, 2)."""
    graph = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                    shape=(n_vertices, n_vertices))
    _, labels = scipy.sparse.csgraph.connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    return first


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
