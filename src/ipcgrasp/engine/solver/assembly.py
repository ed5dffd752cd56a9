"""Kernels that assemble the Hessian of the incremental potential into the upper triangle of a
CSC pattern over the unknowns z: where entries sit in a pattern (slots), how a pattern grows
by the entries contact Hessians couple, and how x-space contact Hessians are carried into z
through x = P z + c (row i of P given by up to 4 (z_index[i, s], z_coef[i, s]) pairs, indices
ascending, -1 after the last)."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine._numba import _stable_argsort, njit


@njit
def _row_position(indices, lo, end, i):
    """Position of row i among the sorted row indices[lo:end] of a CSC column (where it would be
    inserted if absent), searching from lo: rows arrive in ascending order, so the last position
    found is checked first."""
    if lo < end and indices[lo] == i:
        return lo
    hi = end
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < i:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def _pattern_slots(indptr, indices, rows, cols):
    """Position of each entry (rows[k], cols[k]) in an upper-triangle CSC pattern (row indices
    sorted within each column); -1 for entries below the diagonal, with a negative index, or
    missing from the pattern."""
    slots = np.full(rows.shape[0], -1, dtype=np.int64)
    for k in range(rows.shape[0]):
        r = rows[k]
        c = cols[k]
        if r < 0 or r > c:
            continue
        lo = _row_position(indices, indptr[c], indptr[c + 1], r)
        if lo < indptr[c + 1] and indices[lo] == r:
            slots[k] = lo
    return slots


@njit
def _moved_slots(slots, moved):
    """Slots of a pattern carried into a pattern grown from it: moved[slot] for each slot >= 0
    (moved: where each entry of the old pattern sits in the new one), -1 stays -1."""
    out = np.empty_like(slots)
    for k in range(slots.shape[0]):
        out[k] = moved[slots[k]] if slots[k] >= 0 else -1
    return out


def _moved_values(values, moved, n):
    """Values of an old pattern's entries placed at their slots in a grown pattern of n entries
    (moved as in _moved_slots); 0 in the new entries. (A NumPy scatter: as fast as a kernel here,
    with nothing to compile; _moved_slots is a kernel because NumPy's masked gather of a tet's
    144 slots is 15 times slower.)"""
    out = np.zeros(n)
    out[moved] = values
    return out


@njit
def _entry_groups(rows, cols, n_dof):
    """The entries (rows[e], cols[e]) of the upper triangle (0 <= row <= col), grouped by
    position: (entry_group (E,): each entry's group, -1 for the others; group_ptr, group_entries:
    group g's entries are group_entries[group_ptr[g]:group_ptr[g+1]], in ascending e). Groups
    follow column-major order; two stable counting sorts (by row, then by column)."""
    n = rows.shape[0]
    kept = np.empty(n, dtype=np.int64)
    m = 0
    for e in range(n):
        if 0 <= rows[e] <= cols[e]:
            kept[m] = e
            m += 1
    order = kept[:m]
    for key in (rows, cols):
        start = np.zeros(n_dof + 1, dtype=np.int64)
        for e in order:
            start[key[e] + 1] += 1
        for i in range(n_dof):
            start[i + 1] += start[i]
        sorted_order = np.empty(m, dtype=np.int64)
        for e in order:
            sorted_order[start[key[e]]] = e
            start[key[e]] += 1
        order = sorted_order
    entry_group = np.full(n, -1, dtype=np.int64)
    group_ptr = np.empty(m + 1, dtype=np.int64)
    g = -1
    for i in range(m):
        e = order[i]
        if i == 0 or rows[e] != rows[order[i - 1]] or cols[e] != cols[order[i - 1]]:
            g += 1
            group_ptr[g] = i
        entry_group[e] = g
    group_ptr[g + 1] = m
    return entry_group, group_ptr[:g + 2].copy(), order


@njit
def _add_scaled(data, slots, vals, scale):
    """data[slots[k]] += scale * vals[k] for every slot >= 0."""
    for k in range(slots.shape[0]):
        if slots[k] >= 0:
            data[slots[k]] += scale * vals[k]


@njit
def _add_mapped_hessian(data, indptr, indices, rows, cols, vals, scale, z_index, z_coef):
    """Add scale * P^T H P to the upper-triangle CSC values `data`, where H is given by x-space
    triplets and row i of P by up to 4 (z_index[i, s], z_coef[i, s]) pairs, indices ascending
    (-1 after the last). Returns how many z-space entries the pattern lacks (nothing is added for
    those)."""
    missing = 0
    for k in range(rows.shape[0]):
        r = rows[k]
        c = cols[k]
        v = scale * vals[k]
        for t in range(4):
            j = z_index[c, t]
            if j < 0:
                break
            # the rows i of column j come in ascending order: search on from the last one found
            lo = indptr[j]
            end = indptr[j + 1]
            for s in range(4):
                i = z_index[r, s]
                if i < 0 or i > j:
                    break
                lo = _row_position(indices, lo, end, i)
                if lo < end and indices[lo] == i:
                    data[lo] += z_coef[r, s] * z_coef[c, t] * v
                    lo += 1
                else:
                    missing += 1
    return missing


@njit
def _add_mapped_blocks(data, indptr, indices, rows, vals, offsets, scale, z_index, z_coef, dense_lo):
    """As _add_mapped_hessian for x-space triplets that come in dense square blocks, one per
    contact: block k is triplets offsets[k] to offsets[k + 1], s x s of them row-major over the
    contact's s coordinates (collisions._scatter_hessian), so a block's columns are the
    coordinates of its rows and only `rows` is read. Each block is first contracted into a
    dense matrix over the z-space degrees of freedom its coordinates depend on (e.g. 15 for a pad
    vertex on a face of an affine body instead of 16 z entries per triplet). Its upper-triangle
    entries in the columns z >= dense_lo (the affine bodies' 12 coordinates and the mounts: few
    columns that most contacts share) are summed over all blocks in a dense (n_dof, n_dof -
    dense_lo) buffer and enter the pattern once each at the end; the others enter it block by
    block. Returns how many z-space entries the pattern lacks (0: none)."""
    missing = 0
    n_dof = indptr.shape[0] - 1
    dense = np.zeros((n_dof, n_dof - dense_lo))  # column j - dense_lo, summed over blocks
    dense_used = np.zeros((n_dof, n_dof - dense_lo), dtype=np.bool_)
    zs = np.empty(48, dtype=np.int64)  # the block's z indices, ascending (12 coordinates x 4)
    local = np.empty((12, 4), dtype=np.int64)  # position in zs of each coordinate's z index
    position = np.full(indptr.shape[0] - 1, -1, dtype=np.int64)  # per z index: its position in zs, or -1
    T = np.empty((12, 48))
    L = np.empty((48, 48))
    for k in range(offsets.shape[0] - 1):
        off = offsets[k]
        size = int(np.sqrt(offsets[k + 1] - off) + 0.5)
        # the block's z indices, once each: local holds each coordinate's z indices (-1 after the
        # last) until they are sorted, then their positions in zs
        n = 0
        for a in range(size):
            r = rows[off + a * size]
            for t in range(4):
                j = z_index[r, t]
                local[a, t] = j
                if j < 0:
                    break
                if position[j] < 0:
                    position[j] = n
                    zs[n] = j
                    n += 1
        if n == 0:
            continue
        for i in range(1, n):  # insertion sort: the pattern is filled column by column, rows ascending
            j = zs[i]
            q = i
            while q > 0 and zs[q - 1] > j:
                zs[q] = zs[q - 1]
                q -= 1
            zs[q] = j
        for i in range(n):
            position[zs[i]] = i
        for a in range(size):
            for t in range(4):
                j = local[a, t]
                if j < 0:
                    break
                local[a, t] = position[j]
        for i in range(n):
            position[zs[i]] = -1
        # contract the columns, then the rows: T = H P_block, L = P_block^T T
        for a in range(size):
            for lj in range(n):
                T[a, lj] = 0.0
            for b in range(size):
                c = rows[off + b * size]
                v = scale * vals[off + a * size + b]
                for t in range(4):
                    lj = local[b, t]
                    if lj < 0:
                        break
                    T[a, lj] += v * z_coef[c, t]
        for i in range(n):
            for j in range(n):
                L[i, j] = 0.0
        for a in range(size):
            r = rows[off + a * size]
            for s in range(4):
                li = local[a, s]
                if li < 0:
                    break
                coef = z_coef[r, s]
                for lj in range(n):
                    L[li, lj] += coef * T[a, lj]
        for lj in range(n):
            j = zs[lj]
            if j >= dense_lo:
                for li in range(lj + 1):
                    dense[zs[li], j - dense_lo] += L[li, lj]
                    dense_used[zs[li], j - dense_lo] = True
                continue
            lo = indptr[j]
            end = indptr[j + 1]
            for li in range(lj + 1):
                i = zs[li]
                lo = _row_position(indices, lo, end, i)
                if lo < end and indices[lo] == i:
                    data[lo] += L[li, lj]
                    lo += 1
                else:
                    missing += 1
    for j in range(dense_lo, n_dof):
        lo = indptr[j]
        end = indptr[j + 1]
        for i in range(j + 1):
            if dense_used[i, j - dense_lo]:
                lo = _row_position(indices, lo, end, i)
                if lo < end and indices[lo] == i:
                    data[lo] += dense[i, j - dense_lo]
                    lo += 1
                else:
                    missing += 1
    return missing


@njit
def _add_contact_hessians(data, indptr, indices, z_index, z_coef, dense_lo, x, kind, vertices, ee_type, eps_x,
                          weight, origin, normal, dhat, kappa, friction, f_kind, f_vertices, f_basis, f_coords, f_mu,
                          f_force, x_t, eps_u, project):
    """data += P^T (kappa barrier Hessians, each PSD-projected with `project` [+ friction
    Hessians with `friction`]) P,
    block by block (_add_mapped_blocks). Returns how many z-space entries the pattern lacks and
    the x-space terms, ((rows, cols, vals, scale, offsets) of the barrier, then of friction), to
    grow the pattern from when it lacks some."""
    offsets = contact._triplet_offsets(kind)
    rows, cols, vals = contact._barrier_hessians(kind, vertices, ee_type, eps_x, weight, x, origin, normal,
                                                 dhat * dhat, project, offsets)
    missing = _add_mapped_blocks(data, indptr, indices, rows, vals, offsets, kappa, z_index, z_coef, dense_lo)
    f_offsets = contact._triplet_offsets(f_kind)
    if friction:
        f_rows, f_cols, f_vals = contact._friction_hessians(f_kind, f_vertices, f_basis, f_coords, f_mu, f_force,
                                                            x - x_t, eps_u, f_offsets)
        missing += _add_mapped_blocks(data, indptr, indices, f_rows, f_vals, f_offsets, 1.0, z_index, z_coef,
                                      dense_lo)
    else:
        f_rows, f_cols, f_vals = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return missing, (rows, cols, vals, kappa, offsets), (f_rows, f_cols, f_vals, 1.0, f_offsets)


@njit
def _union_keys(sorted_keys, keys):
    """Sorted unique values of sorted_keys (sorted, unique) together with keys (any order): a
    pattern's keys grown by new entries (np.unique of both, without hashing the large set)."""
    order = _stable_argsort(keys)
    out = np.empty(sorted_keys.shape[0] + keys.shape[0], dtype=np.int64)
    n = i = j = 0
    while i < sorted_keys.shape[0] or j < keys.shape[0]:
        if j == keys.shape[0] or (i < sorted_keys.shape[0] and sorted_keys[i] <= keys[order[j]]):
            key = sorted_keys[i]
            i += 1
        else:
            key = keys[order[j]]
            j += 1
        if n == 0 or out[n - 1] != key:
            out[n] = key
            n += 1
    return out[:n]


@njit
def _missing_hessian_keys(rows, cols, z_index, n_dof, indptr, indices):
    """Keys col * n_dof + row of the upper-triangle z-space entries that x-space triplets
    (rows, cols) touch through z_index (see _add_mapped_hessian) and the upper-triangle CSC
    pattern (indptr, indices) lacks, with repeats."""
    keys = np.empty(16 * rows.shape[0], dtype=np.int64)
    count = 0
    for k in range(rows.shape[0]):
        for s in range(4):
            i = z_index[rows[k], s]
            if i < 0:
                break
            for t in range(4):
                j = z_index[cols[k], t]
                if j < 0:
                    break
                if i <= j:
                    lo = _row_position(indices, indptr[j], indptr[j + 1], i)
                    if not (lo < indptr[j + 1] and indices[lo] == i):
                        keys[count] = j * n_dof + i
                        count += 1
    return keys[:count]
