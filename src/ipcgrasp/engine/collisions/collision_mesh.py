"""`CollisionMesh`: a scene's surface connectivity, bodies and contact parameters (arrays only,
positions in m), and the checks of positions and scalars against it.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CollisionMesh:
    """Surface connectivity, bodies and contact parameters of a scene (arrays only).

    rest_positions (N, 3) m; edges (E, 2) and faces (F, 3) vertex indices; face_edges (F, 3)
    the edge index of face side k (vertex k to vertex k+1, ipctk's P_Ek); vertex_body (N,)
    body index of each vertex; can_collide (B, B) bool, which body pairs may touch;
    plane_origin/plane_normal (3,) the static half-space boundary (unit normal pointing to
    the free side) or None; plane_body_mask (B,) which bodies touch the plane; mu (B, B)
    friction coefficient per body pair; mu_plane (B,) each body's friction with the plane.
    """

    rest_positions: np.ndarray
    edges: np.ndarray
    faces: np.ndarray
    face_edges: np.ndarray
    vertex_body: np.ndarray
    can_collide: np.ndarray
    plane_origin: np.ndarray | None
    plane_normal: np.ndarray | None
    plane_body_mask: np.ndarray
    mu: np.ndarray
    mu_plane: np.ndarray

    @property
    def num_vertices(self):
        return self.rest_positions.shape[0]

    @property
    def num_bodies(self):
        return self.can_collide.shape[0]

    @property
    def has_plane(self):
        return self.plane_normal is not None

    @classmethod
    def build(
        cls,
        rest_positions,
        faces,
        vertex_body,
        can_collide=None,
        plane=None,
        mu=0.0,
        mu_plane=0.0,
        plane_body_mask=None,
    ):
        """Collision mesh from surface triangles; derives the edges and face_edges.

        rest_positions (N, 3) m; faces (F, 3) (vertices of different bodies must not share a
        face); vertex_body (N,) ints in [0, B); can_collide (B, B) bool, default: every pair
        of different bodies (no self-contact); plane: (origin, normal) or None (the normal is
        normalised); mu: scalar or symmetric (B, B); mu_plane: scalar or (B,);
        plane_body_mask: (B,) bool, default all bodies (when a plane is given).
        """
        rest_positions = np.ascontiguousarray(rest_positions, dtype=np.float64)
        if rest_positions.ndim != 2 or rest_positions.shape[1] != 3:
            raise ValueError(f"rest_positions must have shape (N, 3), got {rest_positions.shape}")
        if not np.isfinite(rest_positions).all():
            raise ValueError("rest_positions contains NaN or infinite entries")
        n = rest_positions.shape[0]
        faces = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
        if faces.size and (faces.min() < 0 or faces.max() >= n):
            raise ValueError(f"faces index vertices outside [0, {n})")
        if np.any(np.sort(faces, axis=1)[:, 1:] == np.sort(faces, axis=1)[:, :-1]):
            raise ValueError("faces contains a face with a repeated vertex")
        vertex_body = np.ascontiguousarray(vertex_body, dtype=np.int64)
        if vertex_body.shape != (n,):
            raise ValueError(f"vertex_body must have shape ({n},), got {vertex_body.shape}")
        if n and vertex_body.min() < 0:
            raise ValueError("vertex_body must be >= 0")
        if faces.size and np.any(vertex_body[faces] != vertex_body[faces[:, :1]]):
            raise ValueError("a face joins vertices of different bodies")

        if can_collide is None:
            num_bodies = int(vertex_body.max()) + 1 if n else 0
            can_collide = ~np.eye(num_bodies, dtype=bool)
        can_collide = np.ascontiguousarray(can_collide, dtype=bool)
        num_bodies = can_collide.shape[0]
        if can_collide.shape != (num_bodies, num_bodies):
            raise ValueError(f"can_collide must be square, got {can_collide.shape}")
        if not np.array_equal(can_collide, can_collide.T):
            raise ValueError("can_collide must be symmetric")
        if n and vertex_body.max() >= num_bodies:
            raise ValueError(f"vertex_body refers to body {vertex_body.max()} >= {num_bodies}")

        mu = np.ascontiguousarray(np.broadcast_to(mu, (num_bodies, num_bodies)), np.float64)
        if not (np.all(mu >= 0.0) and np.isfinite(mu).all() and np.array_equal(mu, mu.T)):
            raise ValueError("mu must be finite, >= 0 and symmetric")
        mu_plane = np.ascontiguousarray(np.broadcast_to(mu_plane, (num_bodies,)), np.float64)
        if not (np.all(mu_plane >= 0.0) and np.isfinite(mu_plane).all()):
            raise ValueError("mu_plane must be finite and >= 0")

        plane_origin = plane_normal = None
        if plane is not None:
            plane_origin = np.ascontiguousarray(plane[0], dtype=np.float64)
            plane_normal = np.ascontiguousarray(plane[1], dtype=np.float64)
            if plane_origin.shape != (3,) or plane_normal.shape != (3,):
                raise ValueError("plane must be (origin, normal) with two 3-vectors")
            norm = float(np.linalg.norm(plane_normal))
            if not (np.isfinite(plane_origin).all() and np.isfinite(norm) and norm > 0.0):
                raise ValueError(f"plane needs a finite origin and a nonzero normal: {plane}")
            plane_normal = plane_normal / norm
        if plane_body_mask is None:
            plane_body_mask = np.full(num_bodies, plane is not None)
        plane_body_mask = np.ascontiguousarray(plane_body_mask, dtype=bool)
        if plane_body_mask.shape != (num_bodies,):
            raise ValueError(f"plane_body_mask must have shape ({num_bodies},)")
        if plane is None and plane_body_mask.any():
            raise ValueError("plane_body_mask selects bodies but no plane is given")

        sides = np.stack([faces, np.roll(faces, -1, axis=1)], axis=2).reshape(-1, 2)
        edges, side_edge = np.unique(np.sort(sides, axis=1), axis=0, return_inverse=True)
        edges = np.ascontiguousarray(edges.reshape(-1, 2), dtype=np.int64)
        face_edges = np.ascontiguousarray(side_edge.reshape(-1, 3), dtype=np.int64)
        lengths = np.linalg.norm(rest_positions[edges[:, 1]] - rest_positions[edges[:, 0]], axis=1)
        if np.any(lengths == 0.0):
            bad = edges[np.argmin(lengths)]
            raise ValueError(f"edge {bad.tolist()} has zero length at rest (degenerate face)")
        return cls(
            rest_positions, edges, faces, face_edges, vertex_body, can_collide,
            plane_origin, plane_normal, plane_body_mask, mu, mu_plane,
        )


def _positions(x, mesh, name="x"):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (mesh.num_vertices, 3):
        raise ValueError(f"{name} must have shape ({mesh.num_vertices}, 3), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return x


def _positive(value, name):
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _plane_arrays(mesh):
    if mesh.has_plane:
        return mesh.plane_origin, mesh.plane_normal
    return np.zeros(3), np.array([0.0, 0.0, 1.0])
