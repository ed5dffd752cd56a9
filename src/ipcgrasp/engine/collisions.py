"""The active contact set of a configuration and the potentials summed over it.

IPC (Li et al. 2020, "Incremental Potential Contact", sec. 4) sums a log barrier over every
pair of surface primitives closer than dhat. This module holds that set as flat arrays
(`Collisions`) built from broad-phase candidates, evaluates the summed barrier potential
with its gradient and (PSD-projected) Hessian triplets, the contact forces, and IPC's lagged
friction (sec. 5) over the same set (`FrictionCollisions`). Loops over contacts are `@njit`
kernels; the per-contact formulas come from `distance`, `barrier` and `friction`.

Semantics follow ipctk 1.6.1 (`NormalCollisions.build`, `BarrierPotential`,
`TangentialCollisions.build`, `FrictionPotential`), so totals match it one to one:

- A face-vertex candidate whose closest triangle feature is an edge becomes an edge-vertex
  collision, a vertex a vertex-vertex collision; an edge-edge candidate likewise reduces to
  edge-vertex or vertex-vertex unless its edges are nearly parallel (|ea x eb|^2 < eps_x, with
  eps_x = 1e-3 |ea|^2 |eb|^2 at rest), in which case it stays a mollified edge-edge collision.
- Equal collisions found from several candidates are merged into one whose `weight` counts
  them (ipctk increases the weight instead of adding a duplicate): the potential is
  sum_k w_k m_k(x) b(d_k(x), dhat^2), with m_k the edge-edge mollifier (1 for other kinds).
- Each collision is a smooth function of x once built (ipctk's known distance types): an
  edge-vertex collision measures the point-line distance, a face-vertex collision the
  point-plane distance to the triangle's plane, and an edge-edge collision the sub-case of
  the closest-feature type it had when built (line-line unless mollified as near-parallel).
  At the build positions these equal the true primitive distances.

Distances d are squared (m^2); dhat and every returned distance are unsquared (m).
Vertex degrees of freedom are flattened as 3 * vertex + axis.
"""

from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine._numba import _copy_into, njit
from ipcgrasp.engine.barrier import (
    _barrier,
    _barrier_first_derivative,
    _barrier_second_derivative,
    _project_to_psd_on_range,
)
from ipcgrasp.engine.broadphase import candidates as _broadphase_candidates
from ipcgrasp.engine.distance import (
    _EE_EA0_EB,
    _EE_EA0_EB1,
    _EE_EA1_EB0,
    _EE_EA1_EB1,
    _EE_EA_EB,
    _EE_EA_EB0,
    _EE_EA_EB1,
    _PT_P_E0,
    _PT_P_E2,
    _PT_P_T,
    _PT_P_T2,
    _edge_edge_cross_squarednorm,
    _edge_edge_distance_gradient_of_type,
    _edge_edge_distance_hessian_of_type,
    _edge_edge_distance_of_type,
    _edge_edge_distance_type,
    _edge_edge_mollifier,
    _edge_edge_mollifier_gradient,
    _edge_edge_mollifier_hessian,
    _edge_edge_mollifier_threshold,
    _point_line_distance,
    _point_line_distance_gradient,
    _point_line_distance_hessian,
    _point_plane_distance,
    _point_plane_distance_gradient,
    _point_plane_distance_hessian,
    _point_point_distance,
    _point_point_distance_gradient,
    _point_point_distance_hessian,
    _point_triangle_distance_gradient_of_type,
    _point_triangle_distance_hessian_of_type,
    _point_triangle_distance_of_type,
    _point_triangle_distance_type,
)
from ipcgrasp.engine.friction import (
    _edge_edge_closest_point,
    _edge_edge_relative_displacement_matrix,
    _edge_edge_tangent_basis,
    _friction_potential,
    _friction_potential_gradient,
    _friction_potential_hessian,
    _point_edge_closest_point,
    _point_edge_relative_displacement_matrix,
    _point_edge_tangent_basis,
    _point_plane_relative_displacement_matrix,
    _point_plane_tangent_basis,
    _point_point_relative_displacement_matrix,
    _point_point_tangent_basis,
    _point_triangle_closest_point,
    _point_triangle_relative_displacement_matrix,
    _point_triangle_tangent_basis,
)

__all__ = [
    "VERTEX_VERTEX",
    "EDGE_VERTEX",
    "EDGE_EDGE",
    "FACE_VERTEX",
    "VERTEX_PLANE",
    "NUM_KIND_VERTICES",
    "CollisionMesh",
    "Collisions",
    "FrictionCollisions",
    "build_collisions",
    "barrier_potential",
    "barrier_potential_gradient",
    "barrier_potential_hessian",
    "min_distance",
    "contact_forces",
    "normal_force_magnitudes",
    "build_friction_collisions",
    "friction_potential",
    "friction_potential_gradient",
    "friction_potential_hessian",
    "friction_forces",
]

# Collision kinds; `Collisions.vertices` lists each kind's vertices in the argument order of
# its distance: point_point (v0, v1), point_edge / point_line (v, e0, e1), edge_edge (ea0,
# ea1, eb0, eb1), point_triangle (v, t0, t1, t2), point_plane (v). Unused slots hold -1.
VERTEX_VERTEX = 0
EDGE_VERTEX = 1
EDGE_EDGE = 2
FACE_VERTEX = 3
VERTEX_PLANE = 4
NUM_KIND_VERTICES = np.array([2, 3, 4, 4, 1], dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Data


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


# ---------------------------------------------------------------------------------------------
# Building the collision set


@njit
def _classify_candidates(
    x, rest, edges, faces, face_edges, body, can_collide, plane_body_mask, vf, ee, vp,
    plane_origin, plane_normal, dhat_squared,
):
    """Reduce active candidates to collisions (ipctk's NormalCollisionsBuilder rules).

    Candidates between bodies that may not collide or primitives sharing a vertex are skipped.
    Returns, for the n active candidates: kind, vertices (n, 4), a dedup key pair (n, 2)
    (vertex-vertex: sorted vertices; edge-vertex: (edge, vertex); edge-edge: sorted edges;
    face-vertex: (face, vertex); vertex-plane: (vertex, 0)), eps_x and edge_edge_type.
    """
    total = vf.shape[0] + ee.shape[0] + vp.shape[0]
    kind = np.empty(total, dtype=np.int8)
    vertices = np.full((total, 4), -1, dtype=np.int64)
    key = np.empty((total, 2), dtype=np.int64)
    eps_x = np.zeros(total)
    ee_type = np.full(total, -1, dtype=np.int8)
    n = 0

    for i in range(vf.shape[0]):
        v = vf[i, 0]
        f = vf[i, 1]
        t0 = faces[f, 0]
        t1 = faces[f, 1]
        t2 = faces[f, 2]
        if not can_collide[body[v], body[t0]] or v == t0 or v == t1 or v == t2:
            continue
        dtype = _point_triangle_distance_type(x[v], x[t0], x[t1], x[t2])
        if not _point_triangle_distance_of_type(x[v], x[t0], x[t1], x[t2], dtype) < dhat_squared:
            continue
        vertices[n, 0] = v
        if dtype <= _PT_P_T2:
            other = faces[f, dtype]
            kind[n] = VERTEX_VERTEX
            vertices[n, 1] = other
            key[n, 0] = min(v, other)
            key[n, 1] = max(v, other)
        elif dtype <= _PT_P_E2:
            e = face_edges[f, dtype - _PT_P_E0]
            kind[n] = EDGE_VERTEX
            vertices[n, 1] = edges[e, 0]
            vertices[n, 2] = edges[e, 1]
            key[n, 0] = e
            key[n, 1] = v
        else:
            kind[n] = FACE_VERTEX
            vertices[n, 1] = t0
            vertices[n, 2] = t1
            vertices[n, 3] = t2
            key[n, 0] = f
            key[n, 1] = v
        n += 1

    for i in range(ee.shape[0]):
        ea = ee[i, 0]
        eb = ee[i, 1]
        a0 = edges[ea, 0]
        a1 = edges[ea, 1]
        b0 = edges[eb, 0]
        b1 = edges[eb, 1]
        if not can_collide[body[a0], body[b0]] or a0 == b0 or a0 == b1 or a1 == b0 or a1 == b1:
            continue
        dtype = _edge_edge_distance_type(x[a0], x[a1], x[b0], x[b1])
        d = _edge_edge_distance_of_type(x[a0], x[a1], x[b0], x[b1], dtype)
        if not d < dhat_squared:
            continue
        eps = _edge_edge_mollifier_threshold(rest[a0], rest[a1], rest[b0], rest[b1])
        if dtype == _EE_EA_EB or _edge_edge_cross_squarednorm(x[a0], x[a1], x[b0], x[b1]) < eps:
            kind[n] = EDGE_EDGE
            vertices[n, 0] = a0
            vertices[n, 1] = a1
            vertices[n, 2] = b0
            vertices[n, 3] = b1
            key[n, 0] = min(ea, eb)
            key[n, 1] = max(ea, eb)
            eps_x[n] = eps
            ee_type[n] = dtype
        elif dtype <= _EE_EA1_EB1:
            # EA0_EB0, EA0_EB1, EA1_EB0, EA1_EB1 = 2 * (end of A) + (end of B)
            va = a1 if dtype >= _EE_EA1_EB0 else a0
            vb = b1 if dtype == _EE_EA0_EB1 or dtype == _EE_EA1_EB1 else b0
            kind[n] = VERTEX_VERTEX
            vertices[n, 0] = va
            vertices[n, 1] = vb
            key[n, 0] = min(va, vb)
            key[n, 1] = max(va, vb)
        elif dtype == _EE_EA_EB0 or dtype == _EE_EA_EB1:
            vb = b0 if dtype == _EE_EA_EB0 else b1
            kind[n] = EDGE_VERTEX
            vertices[n, 0] = vb
            vertices[n, 1] = a0
            vertices[n, 2] = a1
            key[n, 0] = ea
            key[n, 1] = vb
        else:
            va = a0 if dtype == _EE_EA0_EB else a1
            kind[n] = EDGE_VERTEX
            vertices[n, 0] = va
            vertices[n, 1] = b0
            vertices[n, 2] = b1
            key[n, 0] = eb
            key[n, 1] = va
        n += 1

    for i in range(vp.shape[0]):
        v = vp[i]
        if not plane_body_mask[body[v]]:
            continue
        if not _point_plane_distance(x[v], plane_origin, plane_normal) < dhat_squared:
            continue
        kind[n] = VERTEX_PLANE
        vertices[n, 0] = v
        key[n, 0] = v
        key[n, 1] = 0
        n += 1

    return kind[:n], vertices[:n], key[:n], eps_x[:n], ee_type[:n]


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


def _checked_pairs(pairs, name, bound_first, bound_second):
    """An (n, 2) int64 index array, checked against [0, bound)."""
    pairs = np.ascontiguousarray(np.asarray(pairs, dtype=np.int64).reshape(-1, 2))
    for column, bound in ((pairs[:, 0], bound_first), (pairs[:, 1], bound_second)):
        if column.size and (column.min() < 0 or column.max() >= bound):
            raise ValueError(f"{name} candidates index outside [0, {bound})")
    return pairs


@njit
def _sorted_unique_keys(keys):
    """Sorted unique values of a 1-D int64 array."""
    keys = np.sort(keys)
    n = 0
    for i in range(keys.shape[0]):
        if i == 0 or keys[i] != keys[n - 1]:
            keys[n] = keys[i]
            n += 1
    return keys[:n]


@njit
def _sorted_unique_pairs(pairs, bound_second, symmetric):
    """Sorted unique rows of an (n, 2) index array whose second column is < bound_second (each
    row ordered first when symmetric)."""
    keys = np.empty(pairs.shape[0], dtype=np.int64)
    for i in range(pairs.shape[0]):
        a, b = pairs[i, 0], pairs[i, 1]
        if symmetric and b < a:
            a, b = b, a
        keys[i] = a * bound_second + b
    keys = _sorted_unique_keys(keys)
    out = np.empty((keys.shape[0], 2), dtype=np.int64)
    for i in range(keys.shape[0]):
        out[i, 0] = keys[i] // bound_second
        out[i, 1] = keys[i] % bound_second
    return out


def _checked_candidates(mesh, vf, ee, vp):
    """Candidates as int64 arrays, checked against the mesh's index ranges (duplicates are
    removed by _collisions_from_candidates)."""
    num_edges = mesh.edges.shape[0]
    vf = _checked_pairs(vf, "vertex-face", mesh.num_vertices, mesh.faces.shape[0])
    ee = _checked_pairs(ee, "edge-edge", num_edges, num_edges)
    vp = np.asarray(vp, dtype=np.int64).ravel()
    if vp.size and (vp.min() < 0 or vp.max() >= mesh.num_vertices):
        raise ValueError(f"vertex-plane candidates index outside [0, {mesh.num_vertices})")
    return vf, ee, vp


def build_collisions(mesh, x, dhat, candidates=None):
    """Active collisions (squared distance < dhat^2) of positions x (N, 3), as ipctk builds them.

    dhat: activation distance (m, unsquared). candidates: (vf_pairs (n, 2) [vertex, face],
    ee_pairs (m, 2) [edge, edge], vp (k,) vertices near the plane) from `broadphase.candidates`;
    by default computed at x with inflation radius dhat. Candidates between bodies that may not
    collide (mesh.can_collide, mesh.plane_body_mask) or primitives sharing a vertex are
    dropped, duplicates counted once. Each active candidate is reduced to its closest features
    (IPC sec. 4.3; ipctk NormalCollisions.build): equal collisions are merged and their weight
    counts the candidates that produced them. Collisions are ordered by kind.

    Unlike ipctk's build(mesh, x, dhat), whose broad phase inflates by dhat / 2 and so misses
    vertices between dhat / 2 and dhat from a plane, every vertex within dhat of the plane is
    found (ipctk's build from Candidates built with radius dhat agrees).
    """
    x = _positions(x, mesh)
    dhat = _positive(dhat, "dhat")
    if candidates is None:
        surface = np.unique(mesh.faces)
        candidates = _broadphase_candidates(
            x, x, mesh.edges, mesh.faces, mesh.vertex_body, dhat,
            can_collide=mesh.can_collide,
            plane_origin=mesh.plane_origin,
            plane_normal=mesh.plane_normal,
            plane_vertices=surface[mesh.plane_body_mask[mesh.vertex_body[surface]]],
        )
    return _collisions_from_candidates(mesh, x, dhat, *_checked_candidates(mesh, *candidates))


def _collisions_from_candidates(mesh, x, dhat, vf, ee, vp):
    """build_collisions for positions x (N, 3) C-contiguous and finite, dhat > 0 and int64
    candidates within the mesh's index ranges (as a broad phase over x returns them; duplicates
    allowed): the engine's inner loop, which has checked its inputs once."""
    num_edges = mesh.edges.shape[0]
    vf = _sorted_unique_pairs(vf, mesh.faces.shape[0], np.False_)
    ee = _sorted_unique_pairs(ee, num_edges, np.True_)
    vp = _sorted_unique_keys(vp) if mesh.has_plane else vp[:0]
    origin, normal = _plane_arrays(mesh)
    kind, vertices, key, eps_x, ee_type = _classify_candidates(
        x, mesh.rest_positions, mesh.edges, mesh.faces, mesh.face_edges, mesh.vertex_body,
        mesh.can_collide, mesh.plane_body_mask, vf, ee, vp, origin, normal, dhat * dhat,
    )
    base = max(mesh.num_vertices, mesh.edges.shape[0], mesh.faces.shape[0]) + 1
    first, weight = _merged(kind, key, base)
    kind, vertices = kind[first], vertices[first]
    return Collisions(kind=kind, vertices=vertices, weight=weight, eps_x=eps_x[first],
                      edge_edge_type=ee_type[first], bodies=_collision_bodies(kind, vertices, mesh.vertex_body))


@njit
def _merged(kind, key, base):
    """Equal collisions merged: (index of each distinct (kind, key) at its first occurrence, in
    increasing (kind, key) order; how many candidates produced it, as float64 weights)."""
    flat = np.empty(kind.shape[0], dtype=np.int64)
    for i in range(kind.shape[0]):
        flat[i] = (np.int64(kind[i]) * base + key[i, 0]) * base + key[i, 1]
    order = np.argsort(flat, kind="mergesort")  # stable: the first occurrence leads each run
    first = np.empty(kind.shape[0], dtype=np.int64)
    weight = np.zeros(kind.shape[0])
    n = 0
    for i in range(order.shape[0]):
        if i == 0 or flat[order[i]] != flat[order[i - 1]]:
            first[n] = order[i]
            n += 1
        weight[n - 1] += 1.0
    return first[:n], weight[:n]


@njit
def _collision_bodies(kind, vertices, vertex_body):
    """(K, 2) bodies of each collision: its first vertex's and the other primitive's (-1: the
    ground plane)."""
    bodies = np.empty((kind.shape[0], 2), dtype=np.int64)
    for k in range(kind.shape[0]):
        bodies[k, 0] = vertex_body[vertices[k, 0]]
        if kind[k] == VERTEX_PLANE:
            bodies[k, 1] = -1
        elif kind[k] == EDGE_EDGE:
            bodies[k, 1] = vertex_body[vertices[k, 2]]
        else:
            bodies[k, 1] = vertex_body[vertices[k, 1]]
    return bodies


# ---------------------------------------------------------------------------------------------
# Per-collision distance and mollifier (local stencil of 3 n_k DOFs)


@njit
def _distance(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], np.int64(ee_type))
    if kind == FACE_VERTEX:
        return _point_triangle_distance_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T)
    return _point_plane_distance(x[v[0]], origin, normal)


@njit
def _distance_gradient(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance_gradient(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance_gradient(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_gradient_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], ee_type)
    if kind == FACE_VERTEX:
        return _point_triangle_distance_gradient_of_type(
            x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T
        )
    return _point_plane_distance_gradient(x[v[0]], origin, normal)


@njit
def _distance_hessian(kind, ee_type, v, x, origin, normal):
    if kind == VERTEX_VERTEX:
        return _point_point_distance_hessian(x[v[0]], x[v[1]])
    if kind == EDGE_VERTEX:
        return _point_line_distance_hessian(x[v[0]], x[v[1]], x[v[2]])
    if kind == EDGE_EDGE:
        return _edge_edge_distance_hessian_of_type(x[v[0]], x[v[1]], x[v[2]], x[v[3]], ee_type)
    if kind == FACE_VERTEX:
        return _point_triangle_distance_hessian_of_type(
            x[v[0]], x[v[1]], x[v[2]], x[v[3]], _PT_P_T
        )
    return _point_plane_distance_hessian(x[v[0]], origin, normal)


@njit
def _mollifier(kind, eps_x, v, x):
    if kind == EDGE_EDGE:
        return _edge_edge_mollifier(x[v[0]], x[v[1]], x[v[2]], x[v[3]], eps_x)
    return 1.0


# ---------------------------------------------------------------------------------------------
# Barrier over the collision set. Few kernels on purpose: numba re-optimises every callee
# linked into each compiled kernel, so each extra kernel over the distance Hessians costs
# seconds of cold-start compile time.


@njit
def _barrier_values(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq):
    """Per collision: squared distance d, barrier w m b(d), and w m |b'(d)| 2 sqrt(d)."""
    count = kind.shape[0]
    d = np.empty(count)
    value = np.zeros(count)
    force = np.zeros(count)
    for k in range(count):
        v = vertices[k]
        d[k] = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if d[k] < dhat_sq:
            wm = weight[k] * _mollifier(kind[k], eps_x[k], v, x)
            value[k] = wm * _barrier(d[k], dhat_sq)
            force[k] = -wm * _barrier_first_derivative(d[k], dhat_sq) * 2.0 * np.sqrt(d[k])
    return d, value, force


@njit
def _barrier_gradients(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq):
    """Per collision (K, 4, 3): grad [w m b(d)] = w (m b'(d) grad d + b(d) grad m)."""
    out = np.zeros((kind.shape[0], 4, 3))
    for k in range(kind.shape[0]):
        v = vertices[k]
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if d >= dhat_sq:
            continue
        grad = (weight[k] * _barrier_first_derivative(d, dhat_sq)) * _distance_gradient(
            kind[k], ee_type[k], v, x, origin, normal
        )
        if kind[k] == EDGE_EDGE and _edge_edge_cross_squarednorm(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) < eps_x[k]:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]  # else the mollifier is 1, its gradient 0
            grad *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
            grad += (weight[k] * _barrier(d, dhat_sq)) * _edge_edge_mollifier_gradient(
                a0, a1, b0, b1, eps_x[k]
            )
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _sum_per_vertex(local, vertices, num_vertices):
    """Sum per-collision vertex rows (K, 4, 3) into (num_vertices, 3), skipping padding."""
    out = np.zeros((num_vertices, 3))
    for k in range(local.shape[0]):
        for a in range(4):
            if vertices[k, a] >= 0:
                for i in range(3):
                    out[vertices[k, a], i] += local[k, a, i]
    return out


@njit
def _scatter_hessian(local, v, offset, rows, cols, vals):
    size = local.shape[0]
    i = offset
    for a in range(size):
        for b in range(size):
            rows[i] = 3 * v[a // 3] + a % 3
            cols[i] = 3 * v[b // 3] + b % 3
            vals[i] = local[a, b]
            i += 1


@njit
def _triplet_offsets(kind):
    """Where each collision's square block of Hessian triplets starts (K + 1,)."""
    offsets = np.zeros(kind.shape[0] + 1, dtype=np.int64)
    for k in range(kind.shape[0]):
        size = 3 * NUM_KIND_VERTICES[kind[k]]
        offsets[k + 1] = offsets[k] + size * size
    return offsets


@njit
def _barrier_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq,
                      project, offsets):
    """COO triplets of the Hessians of w m b(d) (ipctk NormalPotential):
    w [m (b'' gd gd^T + b' Hd) + b' (gd gm^T + gm gd^T) + b Hm], each optionally PSD-projected.
    The projection runs in a second loop over the assembled blocks: the same routine called
    inside the first loop measured 1.4 times slower (docs/performance.md, "The barrier Hessians'
    PSD projection")."""
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    for k in range(kind.shape[0]):
        v = vertices[k]
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        grad_d = _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        if d >= dhat_sq:
            hess = np.zeros((grad_d.shape[0], grad_d.shape[0]))
        else:
            w = weight[k]
            db = _barrier_first_derivative(d, dhat_sq)
            d2b = _barrier_second_derivative(d, dhat_sq)
            hess = (w * d2b) * _outer(grad_d, grad_d) + (w * db) * _distance_hessian(
                kind[k], ee_type[k], v, x, origin, normal
            )
            # edges far from parallel: mollifier 1, its gradient and Hessian 0 (hess unchanged)
            if kind[k] == EDGE_EDGE and _edge_edge_cross_squarednorm(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) < eps_x[k]:
                a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
                hess *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
                cross = (w * db) * _outer(
                    grad_d, _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k])
                )
                hess += cross + cross.T
                hess += (w * _barrier(d, dhat_sq)) * _edge_edge_mollifier_hessian(
                    a0, a1, b0, b1, eps_x[k]
                )
        _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
    if project:
        for k in range(kind.shape[0]):
            lo = offsets[k]
            size = 3 * NUM_KIND_VERTICES[kind[k]]
            projected = _project_to_psd_on_range(vals[lo:lo + size * size].reshape((size, size)))
            for r in range(size):  # loops, not _copy_into: a hot copy into a reshaped slice (engine._numba)
                for c in range(size):
                    vals[lo + size * r + c] = projected[r, c]
    return rows, cols, vals


def _barrier_args(collisions, mesh, x, dhat):
    x = _positions(x, mesh)
    dhat = _positive(dhat, "dhat")
    origin, normal = _plane_arrays(mesh)
    return (
        collisions.kind, collisions.vertices, collisions.edge_edge_type, collisions.eps_x,
        collisions.weight, x, origin, normal, dhat * dhat,
    )


def barrier_potential(collisions, mesh, x, dhat):
    """B(x) = sum_k w_k m_k(x) b(d_k(x), dhat^2) over the collisions (m^4; no stiffness).

    x (N, 3) m; dhat (m, unsquared). b is IPC's log barrier on squared distances (Li et al.
    2020 eq. 6), m_k the edge-edge mollifier (1 for other kinds), w_k the weight. +inf if a
    collision has d <= 0. Equals ipctk BarrierPotential(dhat, 1.0)(collisions, mesh, x).
    """
    return float(_barrier_values(*_barrier_args(collisions, mesh, x, dhat))[1].sum())


def barrier_potential_gradient(collisions, mesh, x, dhat):
    """Gradient of barrier_potential with respect to x: (N, 3) (m^3)."""
    args = _barrier_args(collisions, mesh, x, dhat)
    return _sum_per_vertex(_barrier_gradients(*args), collisions.vertices, mesh.num_vertices)


def barrier_potential_hessian(collisions, mesh, x, dhat, project_to_psd=True):
    """Hessian of barrier_potential as COO triplets (rows, cols, vals) over the 3N DOFs (m^2).

    Index 3 * vertex + axis; duplicate entries are summed by the caller's assembly (e.g.
    scipy.sparse.coo_matrix(...).tocsr()). With project_to_psd each collision's local Hessian
    is projected to the nearest PSD matrix first (projected Newton; IPC sec. 4.4).
    """
    args = _barrier_args(collisions, mesh, x, dhat)
    return _barrier_hessians(*args, bool(project_to_psd), _triplet_offsets(collisions.kind))


def min_distance(collisions, mesh, x):
    """Smallest unsquared distance (m) over the collisions at x; inf if there are none."""
    if len(collisions) == 0:
        _positions(x, mesh)
        return np.inf
    # any dhat will do: only the distances are used
    d = _barrier_values(*_barrier_args(collisions, mesh, x, 1.0))[0]
    return float(np.sqrt(max(d.min(), 0.0)))


def contact_forces(collisions, mesh, x, dhat, barrier_stiffness):
    """Force of each collision on each of its vertices: -kappa grad_x [w_k m_k b(d_k)].

    Returns (K, 4, 3), rows in the order of collisions.vertices, zero for padding slots.
    Units of kappa * m^3; in the incremental potential (docs/physics.md) dividing by h^2
    gives newtons. Summed over collisions (per vertex) it is -kappa barrier_potential_gradient.
    """
    kappa = _positive(barrier_stiffness, "barrier_stiffness")
    return -kappa * _barrier_gradients(*_barrier_args(collisions, mesh, x, dhat))


def normal_force_magnitudes(collisions, mesh, x, dhat, barrier_stiffness):
    """IPC's contact force magnitudes lambda_k = kappa w_k m_k |b'(d_k)| 2 sqrt(d_k) (K,).

    |d/d sqrt(d)| of the collision's barrier w m b(d) at fixed mollifier, in the units of
    kappa * m^3 (ipctk's barrier_force_magnitude times the collision's weight and mollifier).
    """
    kappa = _positive(barrier_stiffness, "barrier_stiffness")
    return kappa * _barrier_values(*_barrier_args(collisions, mesh, x, dhat))[2]


# ---------------------------------------------------------------------------------------------
# Lagged friction


@njit
def _outer(a, b):
    """np.outer(a, b) of two 1-D arrays, the same products; numba compiles its np.outer slowly
    (engine._numba)."""
    out = np.empty((a.shape[0], b.shape[0]))
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = a[i] * b[j]
    return out


@njit
def _lagged_friction_geometry(kind, vertices, eps_x, x, normal):
    """Keep mask (nearly parallel edge-edge pairs dropped, as ipctk), tangent bases T and
    closest-point coordinates at the lagged positions x."""
    count = kind.shape[0]
    keep = np.ones(count, dtype=np.bool_)
    basis = np.zeros((count, 3, 2))
    coords = np.zeros((count, 2))
    for k in range(count):
        v = vertices[k]
        # rows are copied by _copy_into, not assigned as slices (engine._numba)
        if kind[k] == VERTEX_VERTEX:
            _copy_into(basis[k], _point_point_tangent_basis(x[v[0]], x[v[1]]))
        elif kind[k] == EDGE_VERTEX:
            _copy_into(basis[k], _point_edge_tangent_basis(x[v[0]], x[v[1]], x[v[2]]))
            coords[k, 0] = _point_edge_closest_point(x[v[0]], x[v[1]], x[v[2]])
        elif kind[k] == EDGE_EDGE:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
            if _edge_edge_cross_squarednorm(a0, a1, b0, b1) < eps_x[k]:
                keep[k] = False
                continue
            _copy_into(basis[k], _edge_edge_tangent_basis(a0, a1, b0, b1))
            _copy_into(coords[k], _edge_edge_closest_point(a0, a1, b0, b1))
        elif kind[k] == FACE_VERTEX:
            _copy_into(basis[k], _point_triangle_tangent_basis(x[v[0]], x[v[1]], x[v[2]], x[v[3]]))
            _copy_into(coords[k], _point_triangle_closest_point(x[v[0]], x[v[1]], x[v[2]], x[v[3]]))
        else:
            _copy_into(basis[k], _point_plane_tangent_basis(normal))
    return keep, basis, coords


def build_friction_collisions(collisions, mesh, x_lagged, dhat, barrier_stiffness):
    """Lagged friction contacts of the collisions at the start-of-step positions x_lagged.

    Per collision: lambda_k = kappa w_k |b'(d_k)| 2 sqrt(d_k) at x_lagged, the tangent basis and
    closest-point coordinates at x_lagged, and mu from mesh.mu (mesh.mu_plane for the plane).
    Nearly parallel edge-edge collisions (|ea x eb|^2 < eps_x) are left out, like ipctk's
    TangentialCollisions.build (their mollified barrier has no well-defined normal).
    IPC sec. 5 (lagged friction); dhat (m), barrier_stiffness kappa.
    """
    force = normal_force_magnitudes(collisions, mesh, x_lagged, dhat, barrier_stiffness)
    x = _positions(x_lagged, mesh, "x_lagged")
    keep, basis, coords = _lagged_friction_geometry(
        collisions.kind, collisions.vertices, collisions.eps_x, x, _plane_arrays(mesh)[1]
    )
    kind = collisions.kind[keep]
    bodies = collisions.bodies[keep]
    plane = kind == VERTEX_PLANE
    mu = np.where(
        plane,
        mesh.mu_plane[bodies[:, 0]],
        mesh.mu[bodies[:, 0], np.where(plane, bodies[:, 0], bodies[:, 1])],
    )
    return FrictionCollisions(
        kind=np.ascontiguousarray(kind),
        vertices=np.ascontiguousarray(collisions.vertices[keep]),
        bodies=np.ascontiguousarray(bodies),
        normal_force=np.ascontiguousarray(force[keep]),
        tangent_basis=np.ascontiguousarray(basis[keep]),
        closest_point=np.ascontiguousarray(coords[keep]),
        mu=np.ascontiguousarray(mu, dtype=np.float64),
    )


@njit
def _relative_displacement_matrix(kind, coords):
    if kind == VERTEX_VERTEX:
        return _point_point_relative_displacement_matrix()
    if kind == EDGE_VERTEX:
        return _point_edge_relative_displacement_matrix(coords[0])
    if kind == EDGE_EDGE:
        return _edge_edge_relative_displacement_matrix(coords)
    if kind == FACE_VERTEX:
        return _point_triangle_relative_displacement_matrix(coords)
    return _point_plane_relative_displacement_matrix()


@njit
def _local_displacement(u, v, n):
    du = np.empty(3 * n)
    for a in range(n):
        for i in range(3):
            du[3 * a + i] = u[v[a], i]
    return du


@njit
def _friction_values(kind, vertices, basis, coords, mu, force, u, eps_u):
    total = 0.0
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        total += _friction_potential(du, gamma, basis[k], mu[k], force[k], eps_u)
    return total


@njit
def _friction_gradients(kind, vertices, basis, coords, mu, force, u, eps_u):
    out = np.zeros((kind.shape[0], 4, 3))
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        grad = _friction_potential_gradient(du, gamma, basis[k], mu[k], force[k], eps_u)
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _friction_hessians(kind, vertices, basis, coords, mu, force, u, eps_u, offsets):
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.empty(nnz)
    for k in range(kind.shape[0]):
        du = _local_displacement(u, vertices[k], NUM_KIND_VERTICES[kind[k]])
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        hess = _friction_potential_hessian(du, gamma, basis[k], mu[k], force[k], eps_u)
        _scatter_hessian(hess, vertices[k], offsets[k], rows, cols, vals)
    return rows, cols, vals


def _friction_args(fc, mesh, displacement, eps_v_h):
    u = _positions(displacement, mesh, "displacement")
    eps_u = _positive(eps_v_h, "eps_v_h")
    return (fc.kind, fc.vertices, fc.tangent_basis, fc.closest_point, fc.mu, fc.normal_force,
            u, eps_u)


def friction_potential(fc, mesh, displacement, eps_v_h):
    """D(u) = sum_k mu_k lambda_k f0(|T_k^T Gamma_k u|, eps_v h) (IPC sec. 5, eq. 16).

    displacement u = x - x_lagged (N, 3) over the step (m); eps_v_h = eps_v * h (m), the
    tangential displacement below which friction is smoothed toward static. T_k, Gamma_k,
    lambda_k, mu_k are lagged (fc). Units of lambda * m. Equals ipctk's
    FrictionPotential(eps_v_h)(tangential_collisions, mesh, u) for the same lagged data;
    ipctk's velocity form, FrictionPotential(eps_v) at v = u / h, is D(u) / h (f0 is
    positively homogeneous: f0(y / h, eps_v) = f0(y, eps_v h) / h) with the same gradient.
    """
    return _friction_values(*_friction_args(fc, mesh, displacement, eps_v_h))


def friction_potential_gradient(fc, mesh, displacement, eps_v_h):
    """Gradient of friction_potential with respect to the displacement: (N, 3)."""
    local = _friction_gradients(*_friction_args(fc, mesh, displacement, eps_v_h))
    return _sum_per_vertex(local, fc.vertices, mesh.num_vertices)


def friction_potential_hessian(fc, mesh, displacement, eps_v_h):
    """Hessian of friction_potential as COO triplets (rows, cols, vals) over the 3N DOFs.

    Each contact's Hessian mu lambda J A J^T is exactly PSD for IPC's f0 (friction.py), so it
    equals the PSD-projected Hessian of ipctk.
    """
    args = _friction_args(fc, mesh, displacement, eps_v_h)
    return _friction_hessians(*args, _triplet_offsets(fc.kind))


def friction_forces(fc, mesh, displacement, eps_v_h):
    """Friction force of each contact on each of its vertices: -grad_u D_k, shape (K, 4, 3).

    Rows follow fc.vertices, zero for padding; units of lambda (divide by h^2 for newtons when
    lambda comes from the incremental potential's kappa). Summed per vertex it is
    -friction_potential_gradient.
    """
    return -_friction_gradients(*_friction_args(fc, mesh, displacement, eps_v_h))
