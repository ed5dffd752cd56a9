"""The most probable resting pose of a rigid object dropped onto a plane (Goldberg et al. 1999,
"Part pose statistics", as trimesh.poses.compute_stable_poses implements it).

The object rests on a face of its convex hull. It first lands on each hull face with the
probability of the solid angle the face subtends at the centre of mass (a drop in a uniformly
random orientation). A face onto whose plane the centre of mass projects outside the face topples
across an edge to a neighbouring face, the one whose wedge (the centroid's planes through the
shared edge, along the face normal) holds the projection (else the last neighbour), and hands its
probability on, until it reaches a stable face: one the projection falls inside. Stable faces with
the same normal (to 3 decimals) are one pose; the most probable one is the object's resting pose,
its outward normal turned to -z.

Hulls of up to TRIMESH_HULL_FACES faces go through trimesh itself, so the resting poses of boxes
and other simple solids are trimesh's to the bit, ties between equally probable poses included.
Its cost grows with the number of stable faces times the hull's size (it copies and transforms the
hull once per stable face): 100 s for a 20,480-face sphere, every face of which is stable. Larger
hulls go through the same rules vectorised here (`pose_probabilities`), whose cost grows as
F log F in the hull's F faces: 0.6 s for an 81,920-face sphere, most of it trimesh finding the
hull. The two give the same poses and probabilities (to rounding). Where several poses tie for
the most probable (within TIE_TOLERANCE: a box's six faces, whose probabilities differ only in
their last bits, in an order that depends on the versions of trimesh, scipy and numpy), the one
that turns the object least from how its mesh is given is taken: the largest trace of the
rotation, then the first in order.
"""

from __future__ import annotations

import numpy as np
import trimesh
from trimesh.triangles import points_to_barycentric

TRIMESH_HULL_FACES = 500
"""Convex hulls with at most this many faces go through trimesh.poses.compute_stable_poses (under
half a second for any such hull), larger ones through the vectorised rules."""
TIE_TOLERANCE = 1e-9
"""Poses whose probabilities are within this of the largest tie for the most probable."""
NORMAL_DECIMALS = 3
"""Stable faces whose outward normals agree to this many decimals are one pose (trimesh's rule)."""


def most_stable_pose(mesh: trimesh.Trimesh) -> np.ndarray:
    """The most probable resting pose (4x4, m) of the closed mesh `mesh` (uniform density) on the
    ground z = 0: rotated so that its most probable stable hull face lies on the ground, lifted so
    that its lowest point is at z = 0 (module docstring)."""
    hull = mesh.convex_hull
    if len(hull.faces) <= TRIMESH_HULL_FACES:
        transforms, probabilities = trimesh.poses.compute_stable_poses(mesh, n_samples=1)
        tied = _most_probable(probabilities)
        poses = [np.asarray(transforms[i], dtype=np.float64) for i in tied]
    else:
        normals, probabilities = pose_probabilities(hull, np.asarray(mesh.center_mass, dtype=np.float64))
        poses = [resting_pose(hull, normals[i]) for i in _most_probable(probabilities)]
    return max(enumerate(poses), key=lambda k: (np.trace(k[1][:3, :3]), -k[0]))[1]


def _most_probable(probabilities) -> np.ndarray:
    """Indices of the poses tied for the largest probability (within TIE_TOLERANCE), in order."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    return np.flatnonzero(probabilities >= probabilities.max() - TIE_TOLERANCE)


def resting_pose(hull: trimesh.Trimesh, normal) -> np.ndarray:
    """The pose (4x4) that turns the outward hull normal `normal` to -z and lifts the hull's lowest
    point to z = 0 (trimesh's construction of a stable pose's transform)."""
    z = -np.asarray(normal, dtype=np.float64)
    x = np.array([-z[1], z[0], 0.0])
    x = np.array([1.0, 0.0, 0.0]) if np.linalg.norm(x) == 0.0 else x / np.linalg.norm(x)
    y = np.cross(z, x)
    pose = np.eye(4)
    pose[:3, :3] = [x, y / np.linalg.norm(y), z]
    pose[2, 3] = -float((hull.vertices @ pose[2, :3]).min())
    return pose


def pose_probabilities(hull: trimesh.Trimesh, com) -> tuple[np.ndarray, np.ndarray]:
    """The stable poses of the convex hull `hull` with its centre of mass at `com` (m) by the
    module's rules in whole-array steps: each pose's outward normal (P, 3), that of its first
    stable face, and its probability (P,), in the order of their first faces in the hull."""
    com = np.asarray(com, dtype=np.float64)
    landing = _landing_probabilities(hull.triangles, com)
    successor = _topple_successors(hull, com)
    # Each face's probability flows down its chain of topples to the chain's stable end: pointer
    # doubling reaches it in log2(F) rounds (a chain closing on itself, possible only through
    # rounding on near-coplanar faces, ends wherever its doubling lands).
    end = np.where(successor < 0, np.arange(len(successor)), successor)
    for _ in range(int(np.ceil(np.log2(max(len(end), 2))))):
        end = end[end]
    resting = np.bincount(end, weights=landing, minlength=len(end))
    faces = np.flatnonzero(resting > 0.0)
    keys = np.round(hull.face_normals[faces], NORMAL_DECIMALS) + 0.0  # + 0.0: -0.0 and 0.0 are one key
    _, first, group = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    totals = np.bincount(group.ravel(), weights=resting[faces])
    order = np.argsort(first)
    return hull.face_normals[faces[first[order]]], totals[order]


def _landing_probabilities(triangles: np.ndarray, com: np.ndarray) -> np.ndarray:
    """Per face (F, 3, 3 vertices, m): its solid angle at `com` over 4 pi (L'Huilier's formula)."""
    rays = triangles - com
    rays /= np.linalg.norm(rays, axis=2, keepdims=True)

    def side(i, j):
        return np.arccos(np.clip(np.einsum("ij,ij->i", rays[:, i], rays[:, j]), -1.0, 1.0))

    a, b, c = side(0, 1), side(1, 2), side(2, 0)
    s = 0.5 * (a + b + c)
    product = np.tan(0.5 * s) * np.tan(0.5 * (s - a)) * np.tan(0.5 * (s - b)) * np.tan(0.5 * (s - c))
    return np.arctan(np.sqrt(np.clip(product, 0.0, None))) / np.pi


def _topple_successors(hull: trimesh.Trimesh, com: np.ndarray) -> np.ndarray:
    """Per hull face, the neighbouring face it topples to, or -1 for a stable face."""
    normals, triangles = hull.face_normals, hull.triangles
    height = np.einsum("ij,ij->i", normals, com - triangles[:, 0])
    projected = com - height[:, None] * normals
    unstable = np.any(points_to_barycentric(triangles, projected) < 0.0, axis=1)
    pairs, edges = hull.face_adjacency, hull.face_adjacency_edges
    order = np.arange(len(pairs))
    source = np.concatenate([pairs[:, 0], pairs[:, 1]])
    target = np.concatenate([pairs[:, 1], pairs[:, 0]])
    rank = np.concatenate([order, order])  # trimesh tries a face's neighbours in adjacency order
    edge = np.concatenate([edges, edges])
    kept = unstable[source]
    source, target, rank, edge = source[kept], target[kept], rank[kept], edge[kept]
    successor = np.full(len(normals), -1)
    if len(source) == 0:
        return successor
    centroid, normal, point = hull.triangles_center[source], normals[source], projected[source]
    v1, v2 = hull.vertices[edge[:, 0]], hull.vertices[edge[:, 1]]
    swap = np.einsum("ij,ij->i", np.cross(v1 - centroid, v2 - centroid), normal) < 0.0
    v1, v2 = np.where(swap[:, None], v2, v1), np.where(swap[:, None], v1, v2)
    inside = (_orient(centroid, v1, v1 + normal, point) >= 0.0) & (_orient(centroid, v2 + normal, v2, point) >= 0.0)
    sort = np.lexsort((rank, source))
    source, target, inside = source[sort], target[sort], inside[sort]
    faces, start = np.unique(source, return_index=True)
    stop = np.append(start[1:], len(source))
    position = np.where(inside, np.arange(len(source)), len(source))
    first_inside = np.minimum.reduceat(position, start)
    chosen = np.where(first_inside < stop, first_inside, stop - 1)  # no wedge holds it: the last neighbour
    successor[faces] = target[chosen]
    return successor


def _orient(a, b, c, d) -> np.ndarray:
    """Per row, the orientation of the point d against the plane through a, b, c ((K, 3) each):
    positive above it (trimesh.poses._orient3dfast)."""
    ad, bd, cd = a - d, b - d, c - d
    return np.einsum("ij,ij->i", ad, np.cross(bd, cd))
