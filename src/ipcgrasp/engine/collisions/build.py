"""Building the collision set: broad-phase candidates reduced to their closest features (ipctk's
NormalCollisionsBuilder rules), merged into weighted collisions (dhat in m).
"""

import numpy as np

from ipcgrasp.engine._numba import _stable_argsort, njit
from ipcgrasp.engine.broadphase import candidates as _broadphase_candidates
from ipcgrasp.engine.collisions.collision_mesh import (
    _plane_arrays,
    _positions,
    _positive,
)
from ipcgrasp.engine.collisions.collision_set import (
    EDGE_EDGE,
    EDGE_VERTEX,
    FACE_VERTEX,
    VERTEX_PLANE,
    VERTEX_VERTEX,
    Collisions,
)
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
    _PT_P_T2,
    _edge_edge_cross_squarednorm,
    _edge_edge_distance_of_type,
    _edge_edge_distance_type,
    _edge_edge_mollifier_threshold,
    _point_plane_distance,
    _point_triangle_distance_of_type,
    _point_triangle_distance_type,
)


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
    order = _stable_argsort(keys)
    out = np.empty(keys.shape[0], dtype=np.int64)
    n = 0
    for i in range(order.shape[0]):
        if n == 0 or keys[order[i]] != out[n - 1]:
            out[n] = keys[order[i]]
            n += 1
    return out[:n]


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
    order = _stable_argsort(flat)  # stable: the first occurrence leads each run
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
