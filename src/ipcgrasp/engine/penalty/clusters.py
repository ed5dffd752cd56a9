"""Representative contacts (`ContactClusters`, fixed over a solve) and, while fixed, their depths (m),
energy (J), forces (N) and exact Hessian triplets (N/m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.collisions import FrictionCollisions, _positive


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
