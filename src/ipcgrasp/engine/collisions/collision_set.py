"""Collision kinds and the arrays of a collision set: `Collisions` (the active contact constraints
of one configuration) and `FrictionCollisions` (their lagged friction data over a time step).
"""

from dataclasses import dataclass

import numpy as np

# Collision kinds; `Collisions.vertices` lists each kind's vertices in the argument order of
# its distance: point_point (v0, v1), point_edge / point_line (v, e0, e1), edge_edge (ea0,
# ea1, eb0, eb1), point_triangle (v, t0, t1, t2), point_plane (v). Unused slots hold -1.
VERTEX_VERTEX = 0
EDGE_VERTEX = 1
EDGE_EDGE = 2
FACE_VERTEX = 3
VERTEX_PLANE = 4
NUM_KIND_VERTICES = np.array([2, 3, 4, 4, 1], dtype=np.int64)


@dataclass(frozen=True)
class Collisions:
    """Active contact constraints of one configuration (K collisions).

    kind (K,) int8: VERTEX_VERTEX ... VERTEX_PLANE; vertices (K, 4) int64 in the argument
    order of the kind's distance, padded with -1; weight (K,) how many candidates produced
    the collision (ipctk's weight); eps_x (K,) edge-edge mollifier threshold (m^4, 0 for
    other kinds); edge_edge_type (K,) int8 the EdgeEdgeDistanceType an edge-edge collision
    was built with (-1 for other kinds); bodies (K, 2) the two bodies (-1 for the plane).
    """

    kind: np.ndarray
    vertices: np.ndarray
    weight: np.ndarray
    eps_x: np.ndarray
    edge_edge_type: np.ndarray
    bodies: np.ndarray

    def __len__(self):
        return self.kind.shape[0]


@dataclass(frozen=True)
class FrictionCollisions:
    """Lagged friction data of K contacts (IPC sec. 5), fixed over a time step.

    kind, vertices, bodies as in Collisions; normal_force (K,) the lagged normal force
    magnitude lambda_k = kappa w_k |b'(d_k)| 2 sqrt(d_k) (units of kappa * m^3; the
    collision's weight folded in, ipctk keeps it apart); tangent_basis (K, 3, 2) orthonormal
    lagged bases T_k; closest_point (K, 2) lagged closest-point coordinates (edge-vertex:
    (alpha, 0); edge-edge: (alpha, beta); face-vertex: barycentric (beta, gamma);
    vertex-vertex, vertex-plane: unused); mu (K,) friction coefficient of the body pair (or of
    the body with the plane).
    """

    kind: np.ndarray
    vertices: np.ndarray
    bodies: np.ndarray
    normal_force: np.ndarray
    tangent_basis: np.ndarray
    closest_point: np.ndarray
    mu: np.ndarray

    def __len__(self):
        return self.kind.shape[0]
