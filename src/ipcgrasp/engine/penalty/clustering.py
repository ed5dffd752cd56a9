"""Grouping the active contacts of each body pair into at most K representative contacts by k-means
in 7-D (position / patch size, normal, friction coefficient; deterministic seed).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions import (
    NUM_KIND_VERTICES,
    VERTEX_PLANE,
    FrictionCollisions,
    _lagged_friction_geometry,
    _plane_arrays,
    _positions,
    _positive,
    _relative_displacement_matrix,
)
from ipcgrasp.engine.penalty.clusters import ContactClusters, _cluster_depths
from ipcgrasp.engine.penalty.contacts import _friction_contacts
from ipcgrasp.engine.penalty.potential import (
    _height,
    _penalty_args,
    _penalty_values,
    normal_force_magnitudes,
)

CLUSTER_SEED = 0
"""Seed of the k-means++ initialisation (fixed: the same contacts give the same clusters)."""
KMEANS_ITERATIONS = 20


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
    # imported here: every trial imports this module (the penalty package serves both contact
    # models), and only a penalty trial with clusters runs k-means; scipy.cluster costs 15 ms
    from scipy.cluster.vq import kmeans2

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
