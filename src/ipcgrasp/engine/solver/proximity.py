"""Which primitive pairs can touch: broad-phase candidates for a straight motion of the contact
surface, and the pair cache that serves most of a step's queries.

A query for radii up to dhat is answered from pairs found once, by a broad phase of radius
dhat + 2 PAIR_CACHE_SLACK dhat at reference positions, while the contact surface stays within
PAIR_CACHE_SLACK dhat of them up to a common translation (at each end of the query's motion its
own: a lift carries pads and object up together, farther in one step than the slack); the cached
pairs are filtered by the broad phase's own box test. A query then gets every pair that comes
within its radius on the motion, as a broad phase would, and for a motion that stays within the
slack of one translation exactly the broad phase's pairs. A query that leaves the slack finds
new reference pairs: that is the cache's one invalidation point.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.broadphase import _candidates as _broad_phase
from ipcgrasp.engine.broadphase import _near_plane
from ipcgrasp.engine.solver.settings import PAIR_CACHE_SLACK


@njit
def _body_boxes_over_vertices(x0, x1, vertex_body, n_bodies):
    """Per body the axis-aligned box (lo, hi), each (B, 3) in m, of all its vertices (interior ones
    too) at x0 and x1, not grown (lo > hi for a body without vertices)."""
    lo = np.full((n_bodies, 3), np.inf)
    hi = np.full((n_bodies, 3), -np.inf)
    for v in range(x0.shape[0]):
        b = vertex_body[v]
        for a in range(3):
            lo[b, a] = min(lo[b, a], x0[v, a], x1[v, a])
            hi[b, a] = max(hi[b, a], x0[v, a], x1[v, a])
    return lo, hi


@njit
def _near_partners(x0, x1, elements, vertex_body, body_lo, body_hi, can_collide, reach):
    """Which elements (rows of vertex indices) have a box over x0 and x1 that comes within
    `reach` (m, per axis) of the box of some body their own body may collide with; the others
    cannot be in any broad-phase pair of that radius."""
    keep = np.zeros(elements.shape[0], dtype=np.bool_)
    for i in range(elements.shape[0]):
        b = vertex_body[elements[i, 0]]
        lo0 = lo1 = lo2 = np.inf
        hi0 = hi1 = hi2 = -np.inf
        for j in range(elements.shape[1]):
            v = elements[i, j]
            lo0 = min(lo0, x0[v, 0], x1[v, 0])
            lo1 = min(lo1, x0[v, 1], x1[v, 1])
            lo2 = min(lo2, x0[v, 2], x1[v, 2])
            hi0 = max(hi0, x0[v, 0], x1[v, 0])
            hi1 = max(hi1, x0[v, 1], x1[v, 1])
            hi2 = max(hi2, x0[v, 2], x1[v, 2])
        for o in range(can_collide.shape[0]):
            if (can_collide[b, o] and lo0 - reach <= body_hi[o, 0] and body_lo[o, 0] <= hi0 + reach
                    and lo1 - reach <= body_hi[o, 1] and body_lo[o, 1] <= hi1 + reach
                    and lo2 - reach <= body_hi[o, 2] and body_lo[o, 2] <= hi2 + reach):
                keep[i] = True
                break
    return keep


@njit
def _moved_within(x, x_ref, bound, shift):
    """Whether every coordinate of x (n,3) is within `bound` (m) of x_ref translated by `shift` (3,)."""
    for v in range(x.shape[0]):
        for a in range(3):
            if not abs(x[v, a] - x_ref[v, a] - shift[a]) <= bound:
                return False
    return True


@njit
def _swept_interval(x0, x1, elems, e, a):
    """(lo, hi) of coordinate a over element e's vertices at x0 and x1."""
    v = elems[e, 0]
    lo = min(x0[v, a], x1[v, a])
    hi = max(x0[v, a], x1[v, a])
    for k in range(1, elems.shape[1]):
        v = elems[e, k]
        lo = min(lo, min(x0[v, a], x1[v, a]))
        hi = max(hi, max(x0[v, a], x1[v, a]))
    return lo, hi


@njit
def _overlapping_pairs(x0, x1, pairs, elems_a, elems_b, half_radius):
    """The pairs (i, j) (rows of elems_a, elems_b) whose boxes over x0 and x1 grown by
    half_radius overlap, computed exactly as broadphase._swept_boxes and _overlap do: the broad
    phase's own test, applied to a superset of its pairs."""
    keep = np.zeros(pairs.shape[0], dtype=np.bool_)
    for p in range(pairs.shape[0]):
        i = pairs[p, 0]
        j = pairs[p, 1]
        overlap = True
        for a in range(3):
            lo_a, hi_a = _swept_interval(x0, x1, elems_a, i, a)
            lo_b, hi_b = _swept_interval(x0, x1, elems_b, j, a)
            if lo_a - half_radius > hi_b + half_radius or lo_b - half_radius > hi_a + half_radius:
                overlap = False
                break
        keep[p] = overlap
    return pairs[keep]


@njit
def _mean(x):
    """The mean (3,) of the positions x (n,3)."""
    total = np.zeros(3)
    for v in range(x.shape[0]):
        for a in range(3):
            total[a] += x[v, a]
    return total / x.shape[0]


@njit
def _within_translated(x, ref, ref_mean, bound):
    """Whether every coordinate of x (n,3) is within `bound` (m) of ref (n,3) moved by the mean
    translation since (x's mean less ref_mean, ref's mean)."""
    return _moved_within(x, ref, bound, _mean(x) - ref_mean)


@njit
def _cached_pairs(x0, x1, ref, ref_mean, vf, ee, vertex_rows, faces, edges, slack, half_radius):
    """Proximity.candidates from its pair cache (ref: the positions the cached vertex-face and
    edge-edge pairs vf, ee were found at, ref_mean their mean): whether x0 and x1 each lie within
    `slack` (m) of ref moved by the contact surface's mean translation since (their mean -
    ref_mean), and if so the cached pairs whose boxes over x0 -> x1 grown by half_radius overlap.
    Every point of the motion then lies within the slack of ref moved by the interpolated
    translation, so two primitives come no more than 2 slack nearer each other than at ref."""
    if not (_within_translated(x0, ref, ref_mean, slack) and _within_translated(x1, ref, ref_mean, slack)):
        return False, vf[:0], ee[:0]
    return (True, _overlapping_pairs(x0, x1, vf, vertex_rows, faces, half_radius),
            _overlapping_pairs(x0, x1, ee, edges, edges, half_radius))


class Proximity:
    """Broad-phase candidates over the collision mesh `mesh` (engine.collisions.CollisionMesh:
    its geometry, body pairs and ground plane are read at construction) for the activation
    distance dhat (m); bbox_diagonal (m): the scene's size, which scales the margins against
    rounding. plane_vertices: the contact-surface vertices that may touch the ground.

    pair_cache: (reference positions (N,3), their mean (3,), vertex-face pairs, edge-edge pairs)
    of the pairs `candidates` reuses, or None before the first query that uses it;
    broad_phases: how many broad phases (spatial hashing) `candidates` has run (a count for
    tests and benchmarks)."""

    def __init__(self, mesh, dhat: float, bbox_diagonal: float):
        self.edges, self.faces, self.vertex_body = mesh.edges, mesh.faces, mesh.vertex_body
        self.can_collide = mesh.can_collide
        self.has_plane, self.plane_origin, self.plane_normal = mesh.has_plane, mesh.plane_origin, mesh.plane_normal
        self.plane_vertices = np.flatnonzero(mesh.plane_body_mask[mesh.vertex_body])
        self.dhat = dhat
        self.bbox_diagonal = bbox_diagonal
        used = np.zeros(mesh.num_vertices, dtype=bool)
        used[mesh.edges] = True
        used[mesh.faces] = True
        self._surface_vertices = np.flatnonzero(used)
        self._surface_vertex_rows = np.ascontiguousarray(self._surface_vertices[:, None])
        self._vertex_rows = np.arange(mesh.num_vertices, dtype=np.int64)[:, None]  # vertex v as a one-vertex element
        self.pair_cache = None
        self.broad_phases = 0

    def candidates(self, x0, x1, radius, can_collide=None):
        """Broad-phase pairs (vertex-face, edge-edge, vertex-plane) that come within `radius` (m)
        somewhere on the straight motion from x0 to x1 (as broadphase.candidates). Primitives
        farther than the radius from every body they may touch are left out first (with a
        margin against rounding): most of a pad is far from everything. can_collide: (B, B)
        body pairs to look at (default: the mesh's); given, the ground is left out.

        Vertex-face and edge-edge pairs for radii up to dhat come from the pair cache, kept while
        x0 and x1 each stay within PAIR_CACHE_SLACK dhat of its reference positions moved by the
        contact surface's mean translation since (pairs do not change when every body moves
        alike, as when the jaws lift the object), filtered by the broad phase's own box test,
        without a grid per Newton iteration. Every pair that comes within `radius` on the motion
        is among the cached ones, so the query gets it. Where the motion stays within the slack
        of one translation these are exactly the broad phase's pairs; over a longer common
        translation a broad phase's swept boxes also pair primitives that only pass each other
        along it, which never come within the radius."""
        slack = PAIR_CACHE_SLACK * self.dhat
        cache = self.pair_cache
        if can_collide is None and radius <= self.dhat and _within_translated(x1, x0, _mean(x0), slack):
            # proximity is unchanged by a common translation (a lift carries pads and object up)
            hit = cache is not None
            if hit:
                hit, vf, ee = _cached_pairs(x0, x1, *cache, self._vertex_rows, self.faces, self.edges, slack,
                                            0.5 * radius)
            if not hit:
                margin = 1e-9 * self.bbox_diagonal  # covers rounding in the boxes
                cache = (x0.copy(), x0.mean(axis=0),
                         *self._grid_candidates(x0, x0, self.dhat + 2.0 * slack + margin, self.can_collide))
                self.pair_cache = cache
                vf = _overlapping_pairs(x0, x1, cache[2], self._vertex_rows, self.faces, 0.5 * radius)
                ee = _overlapping_pairs(x0, x1, cache[3], self.edges, self.edges, 0.5 * radius)
        else:
            vf, ee = self._grid_candidates(x0, x1, radius, self.can_collide if can_collide is None else can_collide)
        if self.has_plane and can_collide is None:
            vp = _near_plane(x0, x1, self.plane_vertices, self.plane_origin, self.plane_normal, float(radius))
        else:
            vp = np.zeros(0, dtype=np.int64)
        return vf, ee, vp

    def _grid_candidates(self, x0, x1, radius, pairs):
        """Vertex-face and edge-edge pairs of `candidates` by a broad phase (spatial hashing) over
        the primitives near a body they may touch; pairs: (B, B) body pairs to look at."""
        self.broad_phases += 1
        body_lo, body_hi = _body_boxes_over_vertices(x0, x1, self.vertex_body, self.can_collide.shape[0])
        reach = 2.0 * radius + 1e-9 * self.bbox_diagonal
        verts = self._surface_vertices[_near_partners(x0, x1, self._surface_vertex_rows, self.vertex_body, body_lo,
                                                      body_hi, pairs, reach)]
        edges = np.flatnonzero(_near_partners(x0, x1, self.edges, self.vertex_body, body_lo, body_hi, pairs, reach))
        faces = np.flatnonzero(_near_partners(x0, x1, self.faces, self.vertex_body, body_lo, body_hi, pairs, reach))
        vf, ee = _broad_phase(x0, x1, verts, self.edges[edges], self.faces[faces], self.vertex_body, 0.5 * radius,
                              pairs)
        vf[:, 1] = faces[vf[:, 1]]
        return vf, np.ascontiguousarray(edges[ee])
