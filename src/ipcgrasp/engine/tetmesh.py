"""Boundary extraction for tetrahedral meshes: surface triangles and their vertices for contact
(`collisions.CollisionMesh` derives the edges).

Setup-time NumPy code (run once per body), so no numba kernels here.
"""

import numpy as np

__all__ = ["boundary_faces", "surface_vertices"]

# Meshes up to this many vertices number a sorted vertex triple (a, b, c) as (a n + b) n + c in
# int64 (n^3 < 2^63): np.unique over one integer column is much faster than over rows.
_MAX_KEYED_VERTICES = 2_000_000
# The four faces of tet (v0, v1, v2, v3), each followed by the vertex opposite to it.
_TET_FACES = np.array([[1, 2, 3, 0], [0, 3, 2, 1], [0, 1, 3, 2], [0, 2, 1, 3]])


def boundary_faces(tets, X):
    """Outward-oriented boundary triangles (F,3) of a tet mesh with rest positions X (n,3) m.

    A face is on the boundary when exactly one tet has it. Each is ordered so that its normal
    (x1 - x0) x (x2 - x0) points away from the fourth vertex of its tet, which is outward
    whatever the orientation of the tet's own vertex order. Rows come sorted by their sorted
    vertex triple (deterministic).
    """
    X = np.asarray(X, dtype=np.float64)
    tets = np.asarray(tets)
    if X.ndim != 2 or X.shape[1] != 3:
        raise ValueError(f"X must have shape (n, 3), got {X.shape}")
    if tets.ndim != 2 or tets.shape[1] != 4:
        raise ValueError(f"tets must have shape (T, 4), got {tets.shape}")
    if tets.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    tets = tets.astype(np.int64)
    if tets.min() < 0 or tets.max() >= X.shape[0]:
        raise ValueError(f"tets index vertices outside [0, {X.shape[0]})")

    local = tets[:, _TET_FACES].reshape(-1, 4)  # (4T, 3 face vertices + opposite vertex)
    faces, opposite = local[:, :3], local[:, 3]
    keys = np.sort(faces, axis=1)
    n = np.int64(X.shape[0])
    if n <= _MAX_KEYED_VERTICES:  # one integer per sorted triple, in the triples' lexicographic order
        keys = (keys[:, 0] * n + keys[:, 1]) * n + keys[:, 2]
    _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    if counts.max() > 2:
        raise ValueError("a triangle is shared by more than two tets (non-manifold tet mesh)")
    once = first[counts == 1]
    faces, opposite = faces[once].copy(), opposite[once]

    a, b, c = X[faces[:, 0]], X[faces[:, 1]], X[faces[:, 2]]
    side = np.einsum("ij,ij->i", np.cross(b - a, c - a), X[opposite] - a)
    if np.any(side == 0.0):
        raise ValueError("a boundary triangle belongs to a flat (zero-volume) tet")
    inward = side > 0.0
    faces[inward] = faces[inward][:, [0, 2, 1]]
    return faces


def surface_vertices(faces):
    """Sorted unique vertex indices (V,) used by the triangles faces (F,3)."""
    faces = np.asarray(faces)
    if faces.ndim != 2 or faces.shape[1] != 3:
        raise ValueError(f"faces must have shape (F, 3), got {faces.shape}")
    return np.unique(faces.astype(np.int64))
