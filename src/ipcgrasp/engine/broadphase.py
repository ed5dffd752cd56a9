"""Broad phase: candidate primitive pairs that may come within an inflation radius.

Every surface primitive (vertex, edge, triangle) gets the axis-aligned box of its vertices at
t0 and t1 (a linear trajectory stays inside it), grown by half the inflation radius r on every
side, so two primitives whose distance (m) is <= r at any time of the step have overlapping
boxes. Only boxes that overlap the box around all primitives of a body theirs may collide with
enter a uniform grid (spatial hashing): on a large object most of the surface is far from the
pads. Overlapping boxes found there are filtered on the body pair and on shared vertices.

Vertex-face and edge-edge pairs are all a 3-D IPC contact set needs (point-edge and
point-point contacts are degenerate cases of these two distances); vertices are tested
against one optional plane (the ground) exactly.
"""

import numpy as np

from ipcgrasp.engine._numba import _copy_into, njit


@njit
def _swept_boxes(x0, x1, elements, half_radius):
    """Boxes (lo, hi), each (m, 3) in m, around elements (m, k) over positions x0 and x1."""
    m, k = elements.shape
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    for i in range(m):
        for a in range(3):
            v = elements[i, 0]
            low = min(x0[v, a], x1[v, a])
            high = max(x0[v, a], x1[v, a])
            for j in range(1, k):
                v = elements[i, j]
                low = min(low, min(x0[v, a], x1[v, a]))
                high = max(high, max(x0[v, a], x1[v, a]))
            lo[i, a] = low - half_radius
            hi[i, a] = high + half_radius
    return lo, hi


@njit
def _overlap(i, j, lo_a, hi_a, lo_b, hi_b):
    for a in range(3):
        if lo_a[i, a] > hi_b[j, a] or lo_b[j, a] > hi_a[i, a]:
            return False
    return True


@njit
def _share_vertex(i, j, elems_a, elems_b):
    for p in range(elems_a.shape[1]):
        for q in range(elems_b.shape[1]):
            if elems_a[i, p] == elems_b[j, q]:
                return True
    return False


@njit
def _append(pairs, count, i, j):
    """Store (i, j) at row `count`, doubling the buffer when full; returns (buffer, count + 1)."""
    if count == pairs.shape[0]:
        grown = np.empty((2 * pairs.shape[0], 2), dtype=np.int64)
        _copy_into(grown[:count], pairs)
        pairs = grown
    pairs[count, 0] = i
    pairs[count, 1] = j
    return pairs, count + 1


@njit
def _cell(c, origin, cell_size, n_cells):
    """Index of the grid cell holding coordinate c along one axis (clamped to the grid)."""
    i = int(np.floor((c - origin) / cell_size))
    return min(max(i, 0), n_cells - 1)


@njit
def _cell_key(point, origin, cell_size, dims):
    key = 0
    for a in range(2, -1, -1):
        key = key * dims[a] + _cell(point[a], origin[a], cell_size, dims[a])
    return key


@njit
def _table_size(n):
    """Smallest odd prime >= n: the bucket count of the cell hash table."""
    m = max(n, 3) | 1
    while True:
        d = 3
        while d * d <= m and m % d != 0:
            d += 2
        if d * d > m:
            return m
        m += 2


@njit
def _body_boxes_over_primitives(boxes, elements, vertex_body, n_bodies):
    """Per body, the box (lo, hi), each (n_bodies, 3) in m, around all its primitives' boxes
    (`boxes`: a tuple of (lo, hi) over the primitives of `elements`, alike): only the primitives
    given count, and the body's box is grown as their boxes are."""
    lo = np.full((n_bodies, 3), np.inf)
    hi = np.full((n_bodies, 3), -np.inf)
    for (box_lo, box_hi), elems in zip(boxes, elements):
        for i in range(box_lo.shape[0]):
            b = vertex_body[elems[i, 0]]
            for a in range(3):
                lo[b, a] = min(lo[b, a], box_lo[i, a])
                hi[b, a] = max(hi[b, a], box_hi[i, a])
    return lo, hi


@njit
def _reaching(lo, hi, elems, vertex_body, body_lo, body_hi, can_collide):
    """Which boxes (bool per box) overlap the box of a body theirs may collide with: no other
    box can overlap one that does not, so only these enter the grid."""
    reaching = np.zeros(lo.shape[0], dtype=np.bool_)
    for i in range(lo.shape[0]):
        b = vertex_body[elems[i, 0]]
        for c in range(body_lo.shape[0]):
            if can_collide[b, c] and _overlap(i, c, lo, hi, body_lo, body_hi):
                reaching[i] = True
                break
    return reaching


@njit
def _grid_entries(lo, hi, elems, reaching, body, n_bodies, origin, cell_size, dims, n_buckets):
    """One entry per (grid cell, box) a `reaching` box touches, grouped by hash bucket (cell
    key mod n_buckets) and, within a bucket, by body, with a counting sort.

    Returns per entry: bucket, cell key, box index, body, and the end (exclusive) of its run
    of entries with the same bucket and body.
    """
    n = lo.shape[0]
    first = np.empty((n, 3), dtype=np.int64)
    last = np.empty((n, 3), dtype=np.int64)
    total = 0
    for i in range(n):
        if not reaching[i]:
            first[i] = 0
            last[i] = -1
            continue
        cells = 1
        for a in range(3):
            first[i, a] = _cell(lo[i, a], origin[a], cell_size, dims[a])
            last[i, a] = _cell(hi[i, a], origin[a], cell_size, dims[a])
            cells *= last[i, a] - first[i, a] + 1
        total += cells
    group = np.empty(total, dtype=np.int64)
    cell = np.empty(total, dtype=np.int64)
    box = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(n):
        if not reaching[i]:
            continue
        b = body[elems[i, 0]]
        for cz in range(first[i, 2], last[i, 2] + 1):
            for cy in range(first[i, 1], last[i, 1] + 1):
                for cx in range(first[i, 0], last[i, 0] + 1):
                    cell[k] = cx + dims[0] * (cy + dims[1] * cz)
                    group[k] = (cell[k] % n_buckets) * n_bodies + b
                    box[k] = i
                    k += 1
    start = np.zeros(n_buckets * n_bodies + 1, dtype=np.int64)
    for k in range(total):
        start[group[k] + 1] += 1
    for g in range(n_buckets * n_bodies):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    order = np.empty(total, dtype=np.int64)
    for k in range(total):
        order[fill[group[k]]] = k
        fill[group[k]] += 1
    group = group[order]
    bucket = group // n_bodies
    return bucket, cell[order], box[order], group - bucket * n_bodies, start[group + 1]


@njit
def _grid_pairs(lo_a, hi_a, elems_a, grid_a, lo_b, hi_b, elems_b, grid_b, same_set,
                origin, cell_size, dims, can_collide):
    """Pairs (i in set a, j in set b; i < j when both sets are one) whose boxes overlap, whose
    bodies may collide and which, within one body, share no vertex.

    grid_a, grid_b are `_grid_entries` outputs. Entries of a body that cannot meet the current
    one are skipped a whole (bucket, body) run at a time. Boxes sharing several cells are
    paired only in the cell that holds the lowest corner of their intersection, so each pair
    appears once.
    """
    buckets_a, cells_a, ids_a, bodies_a, _ = grid_a
    buckets_b, cells_b, ids_b, bodies_b, group_end_b = grid_b
    pairs = np.empty((max(16, lo_a.shape[0] + lo_b.shape[0]), 2), dtype=np.int64)
    count = np.int64(0)
    corner = np.empty(3)
    ia = 0
    ib = 0
    while ia < buckets_a.shape[0] and ib < buckets_b.shape[0]:
        bucket = buckets_a[ia]
        if bucket < buckets_b[ib]:
            ia += 1
            continue
        if buckets_b[ib] < bucket:
            ib += 1
            continue
        end_a = ia
        while end_a < buckets_a.shape[0] and buckets_a[end_a] == bucket:
            end_a += 1
        end_b = ib
        while end_b < buckets_b.shape[0] and buckets_b[end_b] == bucket:
            end_b += 1
        for p in range(ia, end_a):
            body_i = bodies_a[p]
            cell = cells_a[p]
            q = p + 1 if same_set else ib
            while q < end_b:
                if not can_collide[body_i, bodies_b[q]]:
                    q = group_end_b[q]
                    continue
                q += 1
                if cells_b[q - 1] != cell:  # another cell hashed to this bucket
                    continue
                i = ids_a[p]
                j = ids_b[q - 1]
                if same_set and i > j:
                    i, j = j, i
                if not _overlap(i, j, lo_a, hi_a, lo_b, hi_b):
                    continue
                for a in range(3):
                    corner[a] = max(lo_a[i, a], lo_b[j, a])
                if _cell_key(corner, origin, cell_size, dims) != cell:
                    continue
                if body_i == bodies_b[q - 1] and _share_vertex(i, j, elems_a, elems_b):
                    continue
                pairs, count = _append(pairs, count, i, j)
        ia = end_a
        ib = end_b
    return pairs[:count].copy()


@njit
def _candidates(x0, x1, surface_vertices, edges, faces, vertex_body, half_radius, can_collide):
    """Vertex-face pairs [vertex, face] and edge-edge pairs [edge, edge] (indices into x,
    faces, edges) whose swept boxes, grown by half_radius, overlap.

    Boxes are binned into a uniform grid whose cell size is the mean largest box extent,
    hashed into about twice as many buckets as boxes (Teschner et al., "Optimized spatial
    hashing for collision detection of deformable objects", VMV 2003).
    """
    vertex_elems = surface_vertices.reshape(-1, 1)
    lo_v, hi_v = _swept_boxes(x0, x1, vertex_elems, half_radius)
    lo_f, hi_f = _swept_boxes(x0, x1, faces, half_radius)
    lo_e, hi_e = _swept_boxes(x0, x1, edges, half_radius)

    origin = np.full(3, np.inf)
    top = np.full(3, -np.inf)
    extent_sum = 0.0
    n_boxes = 0
    for lo, hi in ((lo_v, hi_v), (lo_f, hi_f), (lo_e, hi_e)):
        for i in range(lo.shape[0]):
            extent = 0.0
            for a in range(3):
                origin[a] = min(origin[a], lo[i, a])
                top[a] = max(top[a], hi[i, a])
                extent = max(extent, hi[i, a] - lo[i, a])
            extent_sum += extent
            n_boxes += 1
    if n_boxes == 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
    cell_size = extent_sum / n_boxes
    if not cell_size > 0.0:  # every box is a single point
        cell_size = 1.0
    dims = np.empty(3, dtype=np.int64)
    while True:
        for a in range(3):
            dims[a] = int((top[a] - origin[a]) / cell_size) + 1
        # keep cell keys far from int64 overflow
        if dims[0] * dims[1] * dims[2] < 2**40:
            break
        cell_size *= 2.0

    n_bodies = can_collide.shape[0]
    n_buckets = _table_size(2 * n_boxes)
    body_lo, body_hi = _body_boxes_over_primitives(((lo_v, hi_v), (lo_f, hi_f), (lo_e, hi_e)),
                                                   (vertex_elems, faces, edges), vertex_body, n_bodies)
    grid_v = _grid_entries(
        lo_v, hi_v, vertex_elems, _reaching(lo_v, hi_v, vertex_elems, vertex_body, body_lo, body_hi, can_collide),
        vertex_body, n_bodies, origin, cell_size, dims, n_buckets)
    grid_f = _grid_entries(
        lo_f, hi_f, faces, _reaching(lo_f, hi_f, faces, vertex_body, body_lo, body_hi, can_collide),
        vertex_body, n_bodies, origin, cell_size, dims, n_buckets)
    grid_e = _grid_entries(
        lo_e, hi_e, edges, _reaching(lo_e, hi_e, edges, vertex_body, body_lo, body_hi, can_collide),
        vertex_body, n_bodies, origin, cell_size, dims, n_buckets)
    vf = _grid_pairs(lo_v, hi_v, vertex_elems, grid_v, lo_f, hi_f, faces, grid_f, np.False_,
                     origin, cell_size, dims, can_collide)
    for c in range(vf.shape[0]):
        vf[c, 0] = surface_vertices[vf[c, 0]]
    ee = _grid_pairs(lo_e, hi_e, edges, grid_e, lo_e, hi_e, edges, grid_e, np.True_,
                     origin, cell_size, dims, can_collide)
    return vf, ee


def _int_array(a, name, ncols, n_vertices):
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros((0, ncols), dtype=np.int64)
    if not np.issubdtype(a.dtype, np.integer) or a.ndim != 2 or a.shape[1] != ncols:
        raise ValueError(f"{name} must be an (m, {ncols}) integer array, got {a.dtype} {a.shape}")
    if a.min() < 0 or a.max() >= n_vertices:
        raise ValueError(f"{name} has vertex indices outside [0, {n_vertices})")
    return np.ascontiguousarray(a, dtype=np.int64)


def _positions(x, name):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} has non-finite entries")
    return x


def _plane_candidates(x0, x1, vertices, plane_origin, plane_normal, inflation_radius):
    """Vertices (int64) among `vertices` whose straight path from x0 to x1 comes within
    `inflation_radius` (m) of the plane through `plane_origin` with normal `plane_normal`.

    The signed distance is linear along the path, so the path's distance to the plane is 0
    if it changes sign and min(|s0|, |s1|) otherwise.
    """
    normal = np.asarray(plane_normal, dtype=np.float64)
    norm = np.linalg.norm(normal)
    if normal.shape != (3,) or not norm > 0.0:
        raise ValueError(f"plane_normal must be a non-zero 3-vector, got {plane_normal}")
    origin = np.asarray(plane_origin, dtype=np.float64)
    if origin.shape != (3,):
        raise ValueError(f"plane_origin must be a 3-vector, got {plane_origin}")
    return _near_plane(x0, x1, np.ascontiguousarray(vertices, dtype=np.int64), origin, normal / norm,
                       float(inflation_radius))


@njit
def _near_plane(x0, x1, vertices, origin, unit_normal, radius):
    """_plane_candidates for C-contiguous float64 positions and a unit normal."""
    near = np.empty(vertices.shape[0], dtype=np.int64)
    n = 0
    for k in range(vertices.shape[0]):
        v = vertices[k]
        s0 = s1 = 0.0
        for a in range(3):
            s0 += (x0[v, a] - origin[a]) * unit_normal[a]
            s1 += (x1[v, a] - origin[a]) * unit_normal[a]
        if s0 * s1 <= 0.0 or min(abs(s0), abs(s1)) <= radius:
            near[n] = v
            n += 1
    return near[:n]


def candidates(
    x0, x1, edges, faces, vertex_body, inflation_radius, can_collide=None,
    plane_origin=None, plane_normal=None, plane_vertices=None,
):
    """Candidate pairs for contact and CCD over the straight step from x0 to x1.

    x0, x1: (n, 3) vertex positions (m) at the start and end of the step (may be equal).
    edges (E, 2), faces (F, 3): surface primitives; vertices used by neither (e.g. interior
    tetrahedral nodes) take no part. vertex_body (n,): body id of each vertex; every edge and
    face must lie in one body. can_collide: optional symmetric (B, B) bool matrix of body
    pairs that may touch (default: any two different bodies); with can_collide[b, b] a body's
    own primitives are paired too, except pairs that share a vertex.
    inflation_radius (m): every pair whose distance is <= it at some time of the step is
    returned (and some farther pairs whose boxes overlap).
    plane_origin, plane_normal: optional plane (e.g. the ground); plane_vertices: vertices
    that may touch it (default: all surface vertices).

    Returns (vf_pairs (k, 2) [vertex, face], ee_pairs (m, 2) [edge a, edge b] with a < b,
    vp_pairs (q,) vertices near the plane), all int64.
    """
    x0 = _positions(x0, "x0")
    x1 = _positions(x1, "x1")
    n = x0.shape[0]
    if x1.shape != x0.shape:
        raise ValueError(f"x0 and x1 differ in shape: {x0.shape} and {x1.shape}")
    if not (inflation_radius >= 0.0 and np.isfinite(inflation_radius)):
        raise ValueError(f"inflation_radius must be finite and >= 0, got {inflation_radius}")
    edges = _int_array(edges, "edges", 2, n)
    faces = _int_array(faces, "faces", 3, n)
    vertex_body = np.asarray(vertex_body)
    if vertex_body.shape != (n,) or not np.issubdtype(vertex_body.dtype, np.integer):
        raise ValueError(f"vertex_body must be an integer array of shape ({n},)")
    vertex_body = np.ascontiguousarray(vertex_body, dtype=np.int64)
    if n and vertex_body.min() < 0:
        raise ValueError("vertex_body has negative body ids")
    for name, elems in (("edges", edges), ("faces", faces)):
        bodies = vertex_body[elems]
        if np.any(bodies != bodies[:, :1]):
            bad = int(np.flatnonzero(np.any(bodies != bodies[:, :1], axis=1))[0])
            raise ValueError(f"{name}[{bad}] = {elems[bad]} joins vertices of different bodies")
    n_bodies = int(vertex_body.max()) + 1 if n else 0
    if can_collide is None:
        can_collide = ~np.eye(n_bodies, dtype=np.bool_)
    else:
        can_collide = np.asarray(can_collide)
        if can_collide.dtype != np.bool_ or can_collide.ndim != 2 or (
            can_collide.shape[0] != can_collide.shape[1] or can_collide.shape[0] < n_bodies
        ):
            raise ValueError(
                f"can_collide must be a square bool matrix covering {n_bodies} bodies, "
                f"got {can_collide.dtype} {can_collide.shape}"
            )
        if not np.array_equal(can_collide, can_collide.T):
            raise ValueError("can_collide must be symmetric")
        can_collide = np.ascontiguousarray(can_collide)
    used = np.zeros(n, dtype=np.bool_)
    used[edges] = True
    used[faces] = True
    surface_vertices = np.flatnonzero(used)

    vf, ee = _candidates(
        x0, x1, surface_vertices, edges, faces, vertex_body, 0.5 * float(inflation_radius),
        can_collide,
    )
    if plane_origin is None and plane_normal is None:
        vp = np.zeros(0, dtype=np.int64)
    elif plane_origin is None or plane_normal is None:
        raise ValueError("give both plane_origin and plane_normal, or neither")
    else:
        if plane_vertices is None:
            plane_vertices = surface_vertices
        plane_vertices = np.asarray(plane_vertices)
        if plane_vertices.size and (
            not np.issubdtype(plane_vertices.dtype, np.integer)
            or plane_vertices.min() < 0 or plane_vertices.max() >= n
        ):
            raise ValueError(f"plane_vertices must be integer indices in [0, {n})")
        vp = _plane_candidates(
            x0, x1, plane_vertices.astype(np.int64).ravel(), plane_origin, plane_normal,
            float(inflation_radius),
        )
    return vf, ee, vp


__all__ = ["candidates"]
