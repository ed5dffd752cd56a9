"""Penalty contact with a boundary layer (BLEM), the contact model of the penalty baseline.

What is implemented
-------------------
Boundary Layer Expanded Meshes (Hauser 2013; Rocchi, Ames, Li and Hauser, "Stable Simulation of
Underactuated Compliant Hands", ICRA 2016, sec. III-C): every body's surface mesh M carries a
margin r (m), i.e. the body is M dilated by a ball of radius r. Two surface primitives of
different bodies closer than the sum of the margins, 2 r, are in contact with penetration depth
delta = 2 r - d and normal along their closest points; a vertex closer than r to the ground plane
(which has no margin) is in contact with delta = r - h, h its signed height (so a vertex that
sank below the plane is still pushed up). Each contact stores the energy

    P_k = 1/2 k w_k m_k delta_k^2,      force magnitude k w_k m_k delta_k (N),

k the penalty stiffness (N/m per contact), along the closest-point normal. The primitive pairs,
their reduction to closest features and their weights w_k are exactly IPC's collision set
(`collisions.build_collisions` with activation distance 2 r: point-triangle and edge-edge
candidates reduced to vertex-vertex, edge-vertex, face-vertex and edge-edge contacts, duplicates
merged into a weight), m_k is IPC's edge-edge mollifier (1 except for nearly parallel edges), and
the distances, their gradients and Hessians are those of `distance` (squared distances d_k;
with s = sqrt(d): dP/dd = -k delta / (2 s), d2P/dd2 = k (2 r) / (4 s^3)).

Newton uses the Gauss-Newton part of each contact's Hessian, k w m grad(s) grad(s)^T (PSD by
construction; the exact Hessian is available and tested). The rest, -k w m delta Hess(s), is
negative around convex edges and vertices and indefinite for face-vertex and edge-edge contacts
(triangle and edge rotations, 1 / sin of the edge angle); clamping it per contact, as the
barrier's projection does, made the model curvature 5 to 10^5 times the true one along the
Newton direction on a cube grasp and Newton stalled (measured), while Gauss-Newton converges.

Friction: IPC's lagged smoothed Coulomb friction (`friction`, `collisions.friction_potential`)
over the same contacts, with the lagged normal force lambda_k = k w_k m_k delta_k (N).

Clustering (optional, at most K contacts per body pair): the lagged contacts of each body pair
(the ground counts as a body) are grouped by k-means (`scipy.cluster.vq.kmeans2`, k-means++
seeding from a fixed seed, so deterministic) in the 7-D space of Rocchi et al.: contact position,
contact normal and friction coefficient. Features are scaled to be comparable: positions are
divided by the pair's patch size (RMS distance of its contact points from their centroid, at
least the margin r), normals are unit vectors, friction coefficients enter as they are. Each
cluster becomes one representative contact with the weighted mean position, the normalised
weighted mean normal n_c and the weighted mean depth measured along n_c, carrying the summed
weight W_c = sum w_k, so its force k W_c delta_c equals the members' total force when their
normals agree.

Departures from Rocchi et al. and Klamp't
----------------------------------------
- Time integration is ours (implicit Euler as an incremental potential, projected Newton, no
  CCD), not an explicit step with an LCP for contact forces: contact forces here are penalty
  forces, so the simulated bodies interpenetrate by about force / (k x contacts), which is what
  this baseline exists to show (with the "force field" at gaps up to 2 r).
- Klamp't generates one contact point per close triangle pair; we use IPC's per-primitive
  collision set, so the number of contacts on a flat patch depends on the meshes (and so does
  the total stiffness of the patch).
- Distances are unsigned between meshes (as in BLEM): once primitives cross, the depth shrinks
  again and the force flips, i.e. a body driven deeper than 2 r through another loses contact.
  Against the ground the signed height is used.
- Clusters are lagged like friction, and a step is solved in passes: the first with every
  contact on its own (which finds the contacts of the step, discrete detection at each Newton
  iterate), then the contacts at that solution are clustered and the step is solved again from
  there with the clusters fixed; further passes (at most 2) re-cluster while contacts begin at
  vertices no cluster holds (`has_unclustered_contacts`). While fixed, each cluster's depth is
  linear in the positions, delta_c(x) = D_c - (1/W_c) sum_k w_k n_c . (p_k(x) - q_k(x)) + const,
  with p_k, q_k the members' closest points at their lagged barycentric coordinates; its energy
  1/2 k W_c max(delta_c, 0)^2 has the exact PSD Hessian k W_c grad(delta_c) grad(delta_c)^T.
  (Rocchi et al. step explicitly and cluster each step's contacts once; clustering the contacts
  of the start of the step instead let a 3 g cube fall 3 mm into the ground at dt = 20 ms before
  its contacts were seen, and re-clustering inside Newton did not converge: a contact joining a
  cluster changes its stiffness k W_c at once.) Nearly parallel edge-edge contacts (no defined
  normal) are left out of clusters, as ipctk leaves them out of friction. Each member keeps its
  own friction contact with normal force k w_k delta_c (the cluster's force shared by weight).
- Contact weights w_k are not used as k-means weights (kmeans2 has none); they weight the means.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy.cluster.vq import kmeans2

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions import (
    EDGE_EDGE,
    NUM_KIND_VERTICES,
    VERTEX_PLANE,
    Collisions,
    FrictionCollisions,
    _distance,
    _distance_gradient,
    _distance_hessian,
    _lagged_friction_geometry,
    _mollifier,
    _outer,
    _plane_arrays,
    _positions,
    _positive,
    _relative_displacement_matrix,
    _scatter_hessian,
    _sum_per_vertex,
    _triplet_offsets,
    build_collisions,
)
from ipcgrasp.engine.distance import (
    _edge_edge_mollifier,
    _edge_edge_mollifier_gradient,
    _edge_edge_mollifier_hessian,
)

__all__ = [
    "ContactClusters",
    "build_contacts",
    "build_friction_collisions",
    "cluster_contacts",
    "cluster_depths",
    "cluster_forces",
    "cluster_member_gaps",
    "cluster_potential",
    "cluster_potential_gradient",
    "cluster_potential_hessian",
    "contact_distances",
    "contact_forces",
    "has_unclustered_contacts",
    "normal_force_magnitudes",
    "penalty_potential",
    "penalty_potential_gradient",
    "penalty_potential_hessian",
]

CLUSTER_SEED = 0
"""Seed of the k-means++ initialisation (fixed: the same contacts give the same clusters)."""
KMEANS_ITERATIONS = 20


# ---------------------------------------------------------------------------------------------
# Contact set


def build_contacts(mesh, x, margin, candidates=None, plane_vertices=None) -> Collisions:
    """Active BLEM contacts of positions x (N, 3): IPC's collisions closer than 2 r between
    bodies (margin r in m) plus a vertex-plane contact for every vertex of a ground-touching
    body whose signed height is below r (even far below the plane).

    candidates: (vf, ee, vp) from `broadphase.candidates` with inflation radius >= 2 r (the vp
    part is not used); default: a broad phase at x. plane_vertices: the vertices tested against
    the plane (default: every face vertex of a body in mesh.plane_body_mask)."""
    x = _positions(x, mesh)
    margin = _positive(margin, "margin")
    reach = 2.0 * margin
    if candidates is None:
        coll = build_collisions(mesh, x, reach)
        keep = coll.kind != VERTEX_PLANE
        coll = Collisions(*(getattr(coll, f)[keep] for f in Collisions.__dataclass_fields__))
    else:
        vf, ee = candidates[0], candidates[1]
        coll = build_collisions(mesh, x, reach, candidates=(vf, ee, np.zeros(0, dtype=np.int64)))
    if not mesh.has_plane:
        return coll
    if plane_vertices is None:
        surface = np.unique(mesh.faces)
        plane_vertices = surface[mesh.plane_body_mask[mesh.vertex_body[surface]]]
    heights = (x[plane_vertices] - mesh.plane_origin) @ mesh.plane_normal
    below = np.asarray(plane_vertices)[heights < margin]
    n = len(below)
    vertices = np.full((n, 4), -1, dtype=np.int64)
    vertices[:, 0] = below
    bodies = np.stack([mesh.vertex_body[below], np.full(n, -1, dtype=np.int64)], axis=1)
    return Collisions(
        kind=np.concatenate([coll.kind, np.full(n, VERTEX_PLANE, dtype=coll.kind.dtype)]),
        vertices=np.concatenate([coll.vertices, vertices]),
        weight=np.concatenate([coll.weight, np.ones(n)]),
        eps_x=np.concatenate([coll.eps_x, np.zeros(n)]),
        edge_edge_type=np.concatenate([coll.edge_edge_type, np.full(n, -1, dtype=coll.edge_edge_type.dtype)]),
        bodies=np.concatenate([coll.bodies, bodies]),
    )


# ---------------------------------------------------------------------------------------------
# Per-contact kernels (per unit stiffness)


@njit
def _height(p, origin, normal):
    return (p[0] - origin[0]) * normal[0] + (p[1] - origin[1]) * normal[1] + (p[2] - origin[2]) * normal[2]


@njit
def _penalty_values(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin):
    """Per contact: distance s (m; the signed height for the plane), energy per unit stiffness
    1/2 w m delta^2 (m^2) and force per unit stiffness w m delta (m), zero where delta <= 0."""
    count = kind.shape[0]
    s = np.empty(count)
    value = np.zeros(count)
    force = np.zeros(count)
    for k in range(count):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            s[k] = _height(x[v[0]], origin, normal)
            reach = margin
        else:
            s[k] = np.sqrt(_distance(kind[k], ee_type[k], v, x, origin, normal))
            reach = 2.0 * margin
        if s[k] < reach:
            delta = reach - s[k]
            wm = weight[k] * _mollifier(kind[k], eps_x[k], v, x)
            value[k] = 0.5 * wm * delta * delta
            force[k] = wm * delta
    return s, value, force


@njit
def _penalty_gradients(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin):
    """Per contact (K, 4, 3): gradient of 1/2 w m delta^2 per unit stiffness,
    w (m dP/dd grad d + P grad m) with dP/dd = -delta / (2 s); the plane's is -w delta n."""
    out = np.zeros((kind.shape[0], 4, 3))
    reach = 2.0 * margin
    for k in range(kind.shape[0]):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            delta = margin - _height(x[v[0]], origin, normal)
            if delta > 0.0:
                for i in range(3):
                    out[k, 0, i] = -weight[k] * delta * normal[i]
            continue
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        if not (0.0 < d < reach * reach):
            continue
        s = np.sqrt(d)
        delta = reach - s
        grad = (-weight[k] * delta / (2.0 * s)) * _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        if kind[k] == EDGE_EDGE:
            a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
            grad *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
            grad += (0.5 * weight[k] * delta * delta) * _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k])
        for i in range(grad.shape[0]):
            out[k, i // 3, i % 3] = grad[i]
    return out


@njit
def _penalty_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal, margin, gauss_newton, offsets):
    """COO triplets of the Hessians of 1/2 w m delta^2 per unit stiffness. Exact:
    w [m (P'' gd gd^T + P' Hd) + P' (gd gm^T + gm gd^T) + P Hm] with P' = -delta / (2 s),
    P'' = 2 r / (4 s^3); Gauss-Newton: w m grad(s) grad(s)^T = w m gd gd^T / (4 d) (PSD); zero
    beyond the layers. The plane's is w n n^T."""
    nnz = offsets[-1]
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    reach = 2.0 * margin
    for k in range(kind.shape[0]):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            hess = np.zeros((3, 3))
            if _height(x[v[0]], origin, normal) < margin:
                for i in range(3):
                    for j in range(3):
                        hess[i, j] = weight[k] * normal[i] * normal[j]
            _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
            continue
        d = _distance(kind[k], ee_type[k], v, x, origin, normal)
        size = 3 * NUM_KIND_VERTICES[kind[k]]
        if not (0.0 < d < reach * reach):
            _scatter_hessian(np.zeros((size, size)), v, offsets[k], rows, cols, vals)
            continue
        grad_d = _distance_gradient(kind[k], ee_type[k], v, x, origin, normal)
        w = weight[k]
        if gauss_newton:
            hess = (w * _mollifier(kind[k], eps_x[k], v, x) / (4.0 * d)) * _outer(grad_d, grad_d)
        else:
            s = np.sqrt(d)
            delta = reach - s
            dp = -delta / (2.0 * s)
            d2p = reach / (4.0 * s * s * s)
            hess = (w * d2p) * _outer(grad_d, grad_d) + (w * dp) * _distance_hessian(
                kind[k], ee_type[k], v, x, origin, normal)
            if kind[k] == EDGE_EDGE:
                a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
                hess *= _edge_edge_mollifier(a0, a1, b0, b1, eps_x[k])
                cross = (w * dp) * _outer(grad_d, _edge_edge_mollifier_gradient(a0, a1, b0, b1, eps_x[k]))
                hess += cross + cross.T
                hess += (0.5 * w * delta * delta) * _edge_edge_mollifier_hessian(a0, a1, b0, b1, eps_x[k])
        _scatter_hessian(hess, v, offsets[k], rows, cols, vals)
    return rows, cols, vals


def _penalty_args(contacts, mesh, x, margin):
    origin, normal = _plane_arrays(mesh)
    return (contacts.kind, contacts.vertices, contacts.edge_edge_type, contacts.eps_x, contacts.weight,
            _positions(x, mesh), origin, normal, _positive(margin, "margin"))


def penalty_potential(contacts, mesh, x, margin, stiffness) -> float:
    """P(x) = sum_k 1/2 k w_k m_k delta_k(x)^2 (J) over the contacts (from `build_contacts`);
    margin r (m), stiffness k (N/m)."""
    k = _positive(stiffness, "stiffness")
    return k * float(_penalty_values(*_penalty_args(contacts, mesh, x, margin))[1].sum())


def penalty_potential_gradient(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """Gradient of penalty_potential with respect to x: (N, 3) in N."""
    k = _positive(stiffness, "stiffness")
    local = _penalty_gradients(*_penalty_args(contacts, mesh, x, margin))
    return k * _sum_per_vertex(local, contacts.vertices, mesh.num_vertices)


def penalty_potential_hessian(contacts, mesh, x, margin, stiffness, gauss_newton=True):
    """Hessian of penalty_potential as COO triplets (rows, cols, vals) over the 3N DOFs (N/m),
    index 3 * vertex + axis, duplicates to be summed. gauss_newton (what the solver uses): the
    PSD part k w m grad(s) grad(s)^T of each contact, i.e. the exact Hessian without
    -k w m delta Hess(s) and the mollifier's derivatives; False: the exact Hessian."""
    k = _positive(stiffness, "stiffness")
    rows, cols, vals = _penalty_hessians(*_penalty_args(contacts, mesh, x, margin), bool(gauss_newton),
                                         _triplet_offsets(contacts.kind))
    return rows, cols, k * vals


def contact_distances(contacts, mesh, x) -> np.ndarray:
    """Distance (m) of each contact's primitives at x (K,): unsigned between meshes (the
    contact's closest-feature distance), the signed height for vertex-plane contacts."""
    return _penalty_values(*_penalty_args(contacts, mesh, x, 1.0))[0]


def normal_force_magnitudes(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """k w_k m_k delta_k (K,) in N: each contact's penalty force magnitude at x."""
    k = _positive(stiffness, "stiffness")
    return k * _penalty_values(*_penalty_args(contacts, mesh, x, margin))[2]


def contact_forces(contacts, mesh, x, margin, stiffness) -> np.ndarray:
    """Force (N) of each contact on each of its vertices, -grad P_k: (K, 4, 3) in the order of
    contacts.vertices, zero for padding."""
    k = _positive(stiffness, "stiffness")
    return -k * _penalty_gradients(*_penalty_args(contacts, mesh, x, margin))


def _friction_contacts(kind, vertices, bodies, keep, basis, coords, force, mesh):
    """FrictionCollisions of the kept rows, mu from mesh.mu (mesh.mu_plane for the plane)."""
    kind, bodies = kind[keep], bodies[keep]
    plane = kind == VERTEX_PLANE
    other = np.where(plane, bodies[:, 0], bodies[:, 1])
    mu = np.where(plane, mesh.mu_plane[bodies[:, 0]], mesh.mu[bodies[:, 0], other])
    return FrictionCollisions(
        kind=np.ascontiguousarray(kind), vertices=np.ascontiguousarray(vertices[keep]),
        bodies=np.ascontiguousarray(bodies), normal_force=np.ascontiguousarray(force[keep], dtype=np.float64),
        tangent_basis=np.ascontiguousarray(basis[keep]), closest_point=np.ascontiguousarray(coords[keep]),
        mu=np.ascontiguousarray(mu, dtype=np.float64))


def build_friction_collisions(contacts, mesh, x_lagged, margin, stiffness) -> FrictionCollisions:
    """Lagged friction contacts (IPC sec. 5) of the penalty contacts at x_lagged: tangent bases
    and closest points there and normal forces lambda_k = k w_k m_k delta_k in the units of
    `stiffness` x m (N for k in N/m; pass h^2 k for the incremental potential's units). Nearly
    parallel edge-edge contacts and contacts without force (beyond the layers) are left out, as
    in `collisions.build_friction_collisions`."""
    force = normal_force_magnitudes(contacts, mesh, x_lagged, margin, stiffness)
    x = _positions(x_lagged, mesh, "x_lagged")
    keep, basis, coords = _lagged_friction_geometry(contacts.kind, contacts.vertices, contacts.eps_x, x,
                                                    _plane_arrays(mesh)[1])
    keep &= force > 0.0  # contacts beyond the layers at x_lagged carry no friction
    return _friction_contacts(contacts.kind, contacts.vertices, contacts.bodies, keep, basis, coords, force, mesh)


# ---------------------------------------------------------------------------------------------
# Clustering


@dataclass(frozen=True)
class ContactClusters:
    """Representative contacts: at most K per body pair, fixed over a solve (lagged).

    Per cluster c (C): bodies (C, 2) the pair (lower index first; second -1 for the ground);
    normal (C, 3) unit mean normal, the direction bodies[:, 0] is pushed; position (C, 3) mean
    contact point (m); weight (C,) W_c, the members' summed contact weights; reach (C,) D_c,
    2 r (r against the ground); offset (C,) m, so that the depth is
        delta_c(x) = D_c + offset_c - sum_u coefficient_u n_c . x[vertices_u]
    over the cluster's vertices u, the weighted mean of its members' gaps along n_c; depth (C,)
    delta_c at the lagged positions (m).
    Per cluster vertex u (U, sorted by cluster, vertex_start (C + 1,) offsets): vertices,
    vertex_cluster, coefficient = sum over member slots at that vertex of w_k a_kj / W_c, with
    a_kj the member's signed closest-point weights.
    Per member k (M): members (FrictionCollisions of the clustered contacts, normal force
    k w_k delta_c), member_cluster (M,), member_coefficients (M, 4) a_kj (towards bodies[:, 0]
    positive), member_offset (M,) so that a member's gap along n_c is
    n_c . sum_j a_kj x[v_kj] - member_offset_k.
    """

    bodies: np.ndarray
    normal: np.ndarray
    position: np.ndarray
    weight: np.ndarray
    reach: np.ndarray
    offset: np.ndarray
    depth: np.ndarray
    vertices: np.ndarray
    vertex_cluster: np.ndarray
    vertex_start: np.ndarray
    coefficient: np.ndarray
    members: FrictionCollisions
    member_cluster: np.ndarray
    member_coefficients: np.ndarray
    member_offset: np.ndarray

    def __len__(self):
        return self.normal.shape[0]


@njit
def _member_geometry(kind, vertices, coords, x, origin, normal):
    """Per contact: signed closest-point weights a (K, 4) (Gamma_k of friction: sum_j a_j x_j
    is the first body's closest point minus the second's), that vector r (K, 3) and the midpoint
    of the closest points (K, 3); for the plane a = (1), r = h n, midpoint x - h n / 2."""
    count = kind.shape[0]
    coeffs = np.zeros((count, 4))
    r = np.zeros((count, 3))
    mid = np.zeros((count, 3))
    for k in range(count):
        v = vertices[k]
        if kind[k] == VERTEX_PLANE:
            h = _height(x[v[0]], origin, normal)
            coeffs[k, 0] = 1.0
            for i in range(3):
                r[k, i] = h * normal[i]
                mid[k, i] = x[v[0], i] - 0.5 * h * normal[i]
            continue
        gamma = _relative_displacement_matrix(kind[k], coords[k])
        for j in range(NUM_KIND_VERTICES[kind[k]]):
            a = gamma[0, 3 * j]
            coeffs[k, j] = a
            for i in range(3):
                r[k, i] += a * x[v[j], i]
                mid[k, i] += 0.5 * abs(a) * x[v[j], i]
    return coeffs, r, mid


def _kmeans_labels(features, max_clusters, seed):
    """k-means labels (n,) of the rows of features, clusters renumbered 0.. by first occurrence
    (empty clusters dropped)."""
    if len(features) <= max_clusters:
        return np.arange(len(features))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty cluster is dropped below
        _, labels = kmeans2(features, max_clusters, iter=KMEANS_ITERATIONS, minit="++",
                            rng=np.random.default_rng(seed))
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse.ravel()]


def cluster_contacts(contacts, mesh, x_lagged, margin, max_clusters, stiffness, seed=CLUSTER_SEED) -> ContactClusters:
    """Group the active contacts (from `build_contacts`) at x_lagged into at most max_clusters
    representative contacts per body pair by k-means in 7-D (position / patch size, normal,
    friction coefficient); see the module docstring. margin r (m); stiffness k sets the members'
    friction normal forces k w_k delta_c (in its units x m)."""
    max_clusters = int(max_clusters)
    if max_clusters < 1:
        raise ValueError(f"max_clusters must be >= 1, got {max_clusters}")
    k_stiff = _positive(stiffness, "stiffness")
    margin = _positive(margin, "margin")
    x = _positions(x_lagged, mesh, "x_lagged")
    origin, plane_normal = _plane_arrays(mesh)
    force = _penalty_values(*_penalty_args(contacts, mesh, x, margin))[2]
    keep, basis, coords = _lagged_friction_geometry(contacts.kind, contacts.vertices, contacts.eps_x, x, plane_normal)
    coeffs, r, mid = _member_geometry(contacts.kind, contacts.vertices, coords, x, origin, plane_normal)
    length = np.linalg.norm(r, axis=1)
    plane = contacts.kind == VERTEX_PLANE
    keep &= (force > 0.0) & (plane | (length > 0.0))
    idx = np.flatnonzero(keep)
    bodies = contacts.bodies[idx]
    # orient each contact towards the lower body index of its pair (the ground's -1 goes second)
    flip = ~plane[idx] & (bodies[:, 0] > bodies[:, 1])
    sign = np.where(flip, -1.0, 1.0)
    pair = np.where(flip[:, None], bodies[:, ::-1], bodies)
    unit = r[idx] / np.where(length[idx] > 0, length[idx], 1.0)[:, None]
    normals = np.where(plane[idx, None], plane_normal, sign[:, None] * unit)
    member_coeffs = sign[:, None] * coeffs[idx]
    member_offset = np.where(plane[idx], origin @ plane_normal, 0.0)
    weight = contacts.weight[idx]
    friction = _friction_contacts(contacts.kind, contacts.vertices, contacts.bodies, keep, basis, coords,
                                  np.zeros(len(contacts.kind)), mesh)
    mu = friction.mu
    points = mid[idx]

    pair_key = pair[:, 0] * (mesh.num_bodies + 1) + (pair[:, 1] + 1)
    labels = np.empty(len(idx), dtype=np.int64)
    n_clusters = 0
    for key in np.unique(pair_key):
        rows = np.flatnonzero(pair_key == key)
        centred = points[rows] - points[rows].mean(axis=0)
        size = max(float(np.sqrt((centred ** 2).sum(axis=1).mean())), margin)
        features = np.hstack([centred / size, normals[rows], mu[rows, None]])
        local = _kmeans_labels(features, max_clusters, seed)
        labels[rows] = n_clusters + local
        n_clusters += int(local.max()) + 1 if len(rows) else 0

    order = np.argsort(labels, kind="stable")
    labels, member_coeffs, member_offset = labels[order], member_coeffs[order], member_offset[order]
    weight = weight[order]
    normals, points, pair, members_vertices = normals[order], points[order], pair[order], contacts.vertices[idx][order]

    def weighted_sums(values):  # per cluster, sum of weight x value (values (M,) or (M, 3))
        if values.ndim == 1:
            return np.bincount(labels, weights=weight * values, minlength=n_clusters)
        return np.stack([weighted_sums(values[:, i]) for i in range(values.shape[1])], 1)

    W = weighted_sums(np.ones(len(labels)))
    mean_normal = weighted_sums(normals)
    norm = np.linalg.norm(mean_normal, axis=1)
    first = np.searchsorted(labels, np.arange(n_clusters))
    cluster_normal = np.where((norm > 1e-12)[:, None], mean_normal / np.maximum(norm, 1e-300)[:, None], normals[first])
    position = weighted_sums(points) / W[:, None]
    cluster_bodies = pair[first]
    reach = np.where(cluster_bodies[:, 1] < 0, margin, 2.0 * margin)
    offset = weighted_sums(member_offset) / W

    # per (cluster, vertex) coefficients sum_k w_k a_kj / W_c
    slot_vertex = members_vertices.ravel()
    slot_cluster = np.repeat(labels, 4)
    slot_value = (weight[:, None] * member_coeffs).ravel() / W[slot_cluster]
    used = slot_vertex >= 0
    key = slot_cluster[used] * mesh.num_vertices + slot_vertex[used]
    unique, inverse = np.unique(key, return_inverse=True)
    coefficient = np.bincount(inverse.ravel(), weights=slot_value[used], minlength=len(unique))
    vertex_cluster = unique // mesh.num_vertices
    vertices = unique % mesh.num_vertices
    vertex_start = np.searchsorted(vertex_cluster, np.arange(n_clusters + 1))
    depth = _cluster_depths(vertices, vertex_cluster, coefficient, cluster_normal, reach, offset, x)

    members = FrictionCollisions(**{f: np.ascontiguousarray(getattr(friction, f)[order])
                                    for f in FrictionCollisions.__dataclass_fields__})
    members = replace(members, normal_force=k_stiff * weight * np.maximum(depth[labels], 0.0))
    return ContactClusters(
        bodies=np.ascontiguousarray(cluster_bodies, dtype=np.int64), normal=np.ascontiguousarray(cluster_normal),
        position=position, weight=W, reach=reach, offset=offset, depth=depth,
        vertices=np.ascontiguousarray(vertices, dtype=np.int64), vertex_cluster=np.ascontiguousarray(vertex_cluster),
        vertex_start=vertex_start.astype(np.int64), coefficient=coefficient, members=members,
        member_cluster=labels, member_coefficients=np.ascontiguousarray(member_coeffs),
        member_offset=np.ascontiguousarray(member_offset))




def has_unclustered_contacts(clusters: ContactClusters, contacts, mesh, x, margin) -> bool:
    """Whether some active contact (`build_contacts` rows, positions x, margin r) touches a vertex
    that no cluster holds, i.e. began after the clusters were built: they must be built again."""
    active = normal_force_magnitudes(contacts, mesh, x, margin, 1.0) > 0.0
    return not np.isin(contacts.vertices[active, 0], clusters.vertices).all()


@njit
def _cluster_depths(vertices, vertex_cluster, coefficient, normal, reach, offset, x):
    depth = reach + offset
    for u in range(vertices.shape[0]):
        c = vertex_cluster[u]
        v = vertices[u]
        depth[c] -= coefficient[u] * (normal[c, 0] * x[v, 0] + normal[c, 1] * x[v, 1] + normal[c, 2] * x[v, 2])
    return depth


@njit
def _cluster_hessian(vertices, vertex_start, coefficient, normal, weight, active):
    """COO triplets of sum_c W_c grad(delta_c) grad(delta_c)^T per unit stiffness (zero for
    inactive clusters, kept so the sparsity pattern does not change within a solve)."""
    nnz = 0
    for c in range(vertex_start.shape[0] - 1):
        n = vertex_start[c + 1] - vertex_start[c]
        nnz += 9 * n * n
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.zeros(nnz)
    i = 0
    for c in range(vertex_start.shape[0] - 1):
        scale = weight[c] if active[c] else 0.0
        for u in range(vertex_start[c], vertex_start[c + 1]):
            for t in range(vertex_start[c], vertex_start[c + 1]):
                cc = scale * coefficient[u] * coefficient[t]
                for a in range(3):
                    for b in range(3):
                        rows[i] = 3 * vertices[u] + a
                        cols[i] = 3 * vertices[t] + b
                        vals[i] = cc * normal[c, a] * normal[c, b]
                        i += 1
    return rows, cols, vals


def cluster_depths(clusters: ContactClusters, x) -> np.ndarray:
    """Depth delta_c(x) (C,) in m of each representative contact (negative: apart)."""
    return _cluster_depths(clusters.vertices, clusters.vertex_cluster, clusters.coefficient, clusters.normal,
                           clusters.reach, clusters.offset, np.ascontiguousarray(x, dtype=np.float64))


def cluster_potential(clusters: ContactClusters, x, stiffness) -> float:
    """sum_c 1/2 k W_c max(delta_c(x), 0)^2 (J)."""
    depth = np.maximum(cluster_depths(clusters, x), 0.0)
    return 0.5 * _positive(stiffness, "stiffness") * float(clusters.weight @ depth ** 2)


def cluster_forces(clusters: ContactClusters, x, stiffness) -> np.ndarray:
    """Force (N) on each cluster vertex (U, 3): k W_c max(delta_c, 0) coefficient_u n_c."""
    depth = np.maximum(cluster_depths(clusters, x), 0.0)
    c = clusters.vertex_cluster
    scale = _positive(stiffness, "stiffness") * clusters.weight[c] * depth[c] * clusters.coefficient
    return scale[:, None] * clusters.normal[c]


def cluster_potential_gradient(clusters: ContactClusters, x, stiffness) -> np.ndarray:
    """Gradient of cluster_potential with respect to x: (N, 3) in N."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    np.add.at(out, clusters.vertices, -cluster_forces(clusters, x, stiffness))
    return out


def cluster_potential_hessian(clusters: ContactClusters, x, stiffness):
    """Hessian of cluster_potential as COO triplets (rows, cols, vals) (N/m): the exact
    k W_c grad(delta_c) grad(delta_c)^T of each active cluster (PSD, rank one)."""
    active = cluster_depths(clusters, x) > 0.0
    rows, cols, vals = _cluster_hessian(clusters.vertices, clusters.vertex_start, clusters.coefficient,
                                        clusters.normal, clusters.weight, active)
    return rows, cols, _positive(stiffness, "stiffness") * vals


def cluster_member_gaps(clusters: ContactClusters, x) -> np.ndarray:
    """Each member's gap (M,) in m along its cluster's normal at x (the ground's: height)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    v = clusters.members.vertices
    n = clusters.normal[clusters.member_cluster]
    along = np.einsum("kjd,kd->kj", x[np.where(v >= 0, v, 0)], n)
    return (clusters.member_coefficients * np.where(v >= 0, along, 0.0)).sum(axis=1) - clusters.member_offset
