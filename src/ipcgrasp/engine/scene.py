"""Kernels over a whole scene's unknowns z, one call per evaluation of the incremental potential.

At a few hundred unknowns a Newton iteration's arithmetic takes about as long as the Python
between its kernels, so the simulation also keeps every deformable body's vertices and tets in
flat arrays (`solver.model.Model.scene`: body b's vertices are rows vertex_start[b]:vertex_start[b+1]
of one (n, 3) array, its tets rows tet_start[b]:tet_start[b+1] of one (T, 4) array of those
row indices) and evaluates a term over all bodies in one call. Each kernel does the same
floating-point operations in the same order as the per-body code it replaces (one body's sum
after the other, the same kernels on each body's rows), so results are bit for bit the same.
"""

import numpy as np

from ipcgrasp.engine._numba import _copy_into, njit
from ipcgrasp.engine.affine_body import (
    _orthogonality_potential,
    _orthogonality_potential_gradient,
    _orthogonality_potential_hessian,
)
from ipcgrasp.engine.collisions import (
    _barrier_gradients,
    _barrier_values,
    _classify_candidates,
    _collision_bodies,
    _friction_gradients,
    _friction_values,
    _merged,
    _sorted_unique_keys,
    _sorted_unique_pairs,
    _sum_per_vertex,
)
from ipcgrasp.engine.mounts import _add_linked_hessians
from ipcgrasp.engine.neohookean import (
    _deformation_gradient_into,
    _elastic_energy,
    _elastic_gradient,
    _hessian_workspace,
    _shape_derivatives_into,
    _tet_energies,
    _tet_hessian,
)


@njit
def _csr_product(indptr, indices, data, v):
    """A v for a CSR matrix A (indptr, indices, data): each row summed in stored order from 0, as
    SciPy's csr_matvec does."""
    out = np.empty(indptr.shape[0] - 1)
    for i in range(out.shape[0]):
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            total += data[k] * v[indices[k]]
        out[i] = total
    return out


@njit
def _collision_positions(P_indptr, P_indices, P_data, z, c):
    """x = P z + c as (N, 3) contact-surface positions (m), as SciPy's `P @ z + c` computes it."""
    out = _csr_product(P_indptr, P_indices, P_data, z)
    for i in range(out.shape[0]):
        out[i] += c[i]
    return out.reshape(-1, 3)


@njit
def _body_pair_resultants(vertices, bodies, vertex_body, forces, n_bodies):
    """Per-contact vertex forces (K, m, 3) summed onto body pairs (B + 1, B + 1, 3): force on a
    contact's vertex vertices[k, i] (-1: padding) counts for (its body, the contact's other body)
    of bodies[k] (-1: the ground, index B); contacts and vertices in order, as np.add.at sums."""
    out = np.zeros((n_bodies + 1, n_bodies + 1, 3))
    for k in range(vertices.shape[0]):
        a = bodies[k, 0]
        b = n_bodies if bodies[k, 1] < 0 else bodies[k, 1]
        for i in range(vertices.shape[1]):
            v = vertices[k, i]
            if v < 0:
                continue
            owner = vertex_body[v]
            partner = b if owner == a else a
            for d in range(3):
                out[owner, partner, d] += forces[k, i, d]
    return out


@njit
def _step_norm(p, P_indptr, P_indices, P_data, position_dofs):
    """(largest |coordinate| (m) of a Newton step p over the position unknowns position_dofs and
    over the contact surface's displacements dx = P p, NaN if one is NaN; dx as (N, 3))."""
    dx = _csr_product(P_indptr, P_indices, P_data, p)
    norm, nan = 0.0, False
    for i in position_dofs:
        norm = max(norm, abs(p[i]))
        nan = nan or np.isnan(p[i])
    for i in range(dx.shape[0]):
        norm = max(norm, abs(dx[i]))
        nan = nan or np.isnan(dx[i])
    return (np.nan if nan else norm), dx.reshape((-1, 3))


@njit
def _pairwise_sum(a):
    """NumPy's sum of a 1-D float64 array, to the bit: NumPy's pairwise summation (a segment of
    more than 128 values is the sum of its halves, the first half's length a multiple of 8; a
    shorter one is summed by `_block_sum`). The barrier's sum is compared across line-search
    trials, so it must not depend on whether NumPy or a kernel added it up. Iterative (a stack
    of segments): numba cannot cache a recursive kernel."""
    lo_stack = np.empty(64, dtype=np.int64)
    n_stack = np.empty(64, dtype=np.int64)
    phase = np.zeros(64, dtype=np.int64)
    values = np.empty(64)
    depth, top = 0, 0  # segments pending, partial sums pending
    lo_stack[0], n_stack[0], phase[0] = 0, a.shape[0], 0
    depth = 1
    while depth > 0:
        f = depth - 1
        lo, n = lo_stack[f], n_stack[f]
        half = n // 2
        half -= half % 8
        if n <= 128:
            values[top] = _block_sum(a, lo, n)
            top += 1
            depth -= 1
        elif phase[f] == 0:
            phase[f] = 1
            lo_stack[depth], n_stack[depth], phase[depth] = lo, half, 0
            depth += 1
        elif phase[f] == 1:
            phase[f] = 2
            lo_stack[depth], n_stack[depth], phase[depth] = lo + half, n - half, 0
            depth += 1
        else:
            top -= 1
            values[top - 1] = values[top - 1] + values[top]
            depth -= 1
    return 0.0 + values[0]


@njit
def _block_sum(a, lo, n):
    """NumPy's sum of a[lo:lo + n] for n <= 128: in order below 8 values, else 8 interleaved
    partial sums added pairwise, then the rest in order."""
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += a[i]
        return total
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += a[lo + i]
        i += 1
    return total


@njit
def _deformable_positions(X0, z, free_rows, free_dofs, prescribed_rows, prescribed_mount, motion, mount_offset):
    """All deformable vertices (n, 3), m: X0 (the state's positions) with the free rows taken from
    z (free_dofs (F, 3): their z indices) and the prescribed rows of mounted bodies moved by their
    mount's deflection u = z[mount_offset + prescribed_mount[k]] along motion[k] (m per m). With
    X0 zero and z a step of the unknowns: the vertices' displacements under that step."""
    X = X0.copy()
    for k in range(free_rows.shape[0]):
        for a in range(3):
            X[free_rows[k], a] = z[free_dofs[k, a]]
    for k in range(prescribed_rows.shape[0]):
        u = z[mount_offset + prescribed_mount[k]]
        for a in range(3):
            X[prescribed_rows[k], a] += u * motion[k, a]
    return X


@njit
def _strain_energies(X, tets, Dm_inv, volumes, tet_start, mu, lam):
    """Each deformable body's Neo-Hookean energy (J) at the positions X (`_deformable_positions`):
    its tets' energies (neohookean._tet_energies) summed as NumPy's sum adds them up."""
    out = np.empty(tet_start.shape[0] - 1)
    for b in range(out.shape[0]):
        lo, hi = tet_start[b], tet_start[b + 1]
        energies = np.empty(hi - lo)
        _tet_energies(X, tets[lo:hi], Dm_inv[lo:hi], volumes[lo:hi], mu[b], lam[b], energies)
        out[b] = _pairwise_sum(energies)
    return out


@njit
def _energy_without_contact(z, z_tilde, h2, M_indptr, M_indices, M_data, X, tets, Dm_inv, volumes, tet_start, mu,
                            lam, affine_offset, affine_stiffness, affine_volume, mount_offset, mount_stiffness):
    """Inertia + h^2 (elastic + orthogonality + mount springs k u^2 / 2) at z, in the incremental
    potential's units (J s^2); X: the deformable positions at z (`_deformable_positions`)."""
    dz = z - z_tilde
    e = 0.5 * np.dot(dz, _csr_product(M_indptr, M_indices, M_data, dz))
    for b in range(tet_start.shape[0] - 1):
        lo, hi = tet_start[b], tet_start[b + 1]
        e += h2 * _elastic_energy(X, tets[lo:hi], Dm_inv[lo:hi], volumes[lo:hi], mu[b], lam[b])
    for j in range(affine_offset.shape[0]):
        off = affine_offset[j]
        e += h2 * _orthogonality_potential(z[off:off + 12], affine_stiffness[j], affine_volume[j])
    for j in range(mount_stiffness.shape[0]):
        u = z[mount_offset + j]
        e += 0.5 * h2 * mount_stiffness[j] * u * u
    return e


@njit
def _barrier_terms(x, vf, ee, vp, has_plane, rest_positions, edges, faces, face_edges, vertex_body, can_collide,
                   plane_body_mask, origin, normal, dhat, friction, f_kind, f_vertices, f_basis, f_coords, f_mu,
                   f_force, x_t, eps_u):
    """The barrier sum without kappa (m^4) of the active contacts at contact positions x from
    broad-phase candidates, with `friction` the lagged friction potential of the displacements
    x - x_t (collisions.friction_potential), the smallest squared distance (m^2, inf without
    contacts) and the contacts (as collisions._collisions_from_candidates builds them: kind,
    vertices, weight, eps_x, edge_edge_type, bodies)."""
    vf = _sorted_unique_pairs(vf, faces.shape[0], np.False_)
    ee = _sorted_unique_pairs(ee, edges.shape[0], np.True_)
    vp = _sorted_unique_keys(vp) if has_plane else vp[:0]
    dhat_sq = dhat * dhat
    kind, vertices, key, eps_x, ee_type = _classify_candidates(
        x, rest_positions, edges, faces, face_edges, vertex_body, can_collide, plane_body_mask, vf, ee, vp, origin,
        normal, dhat_sq)
    base = max(x.shape[0], edges.shape[0], faces.shape[0]) + 1
    first, weight = _merged(kind, key, base)
    kind, vertices, eps_x, ee_type = kind[first], vertices[first], eps_x[first], ee_type[first]
    bodies = _collision_bodies(kind, vertices, vertex_body)
    d, values, _ = _barrier_values(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat_sq)
    barrier = _pairwise_sum(values)
    fric = _friction_values(f_kind, f_vertices, f_basis, f_coords, f_mu, f_force, x - x_t, eps_u) if friction else 0.0
    min_d = d.min() if d.shape[0] > 0 else np.inf
    return barrier, fric, min_d, kind, vertices, weight, eps_x, ee_type, bodies


@njit
def _gradient_without_contact(z, z_tilde, h2, M_indptr, M_indices, M_data, X, tets, Dm_inv, volumes, tet_start, mu,
                              lam, free_rows, free_dofs, free_start, prescribed_rows, motion, prescribed_start,
                              body_mount, affine_offset, affine_stiffness, affine_volume, mount_offset,
                              mount_stiffness):
    """Gradient (n_dof,) of inertia + h^2 (elastic + orthogonality + mount springs) at z; X: the
    deformable positions at z. Body b's free rows are free_start[b]:free_start[b+1] of
    free_rows, its prescribed rows (if it rides on mount body_mount[b] >= 0: they move with the
    deflection) prescribed_start[b]:prescribed_start[b+1] of prescribed_rows."""
    g = _csr_product(M_indptr, M_indices, M_data, z - z_tilde)
    grad = np.empty_like(X)
    for b in range(tet_start.shape[0] - 1):
        lo, hi = tet_start[b], tet_start[b + 1]
        _elastic_gradient(X, tets[lo:hi], Dm_inv[lo:hi], volumes[lo:hi], mu[b], lam[b], grad)
        for k in range(free_start[b], free_start[b + 1]):
            for a in range(3):
                g[free_dofs[k, a]] += h2 * grad[free_rows[k], a]
        if body_mount[b] >= 0:
            p_lo, p_hi = prescribed_start[b], prescribed_start[b + 1]
            work = np.empty(3 * (p_hi - p_lo))
            for k in range(p_lo, p_hi):
                for a in range(3):
                    work[3 * (k - p_lo) + a] = grad[prescribed_rows[k], a] * motion[k, a]
            g[mount_offset + body_mount[b]] += h2 * _pairwise_sum(work)
    out = np.empty(12)
    for j in range(affine_offset.shape[0]):
        off = affine_offset[j]
        _orthogonality_potential_gradient(z[off:off + 12], affine_stiffness[j], affine_volume[j], out)
        for i in range(12):
            g[off + i] += h2 * out[i]
    for j in range(mount_stiffness.shape[0]):
        g[mount_offset + j] += h2 * mount_stiffness[j] * z[mount_offset + j]
    return g


@njit
def _add_barrier_gradient(g, PT_indptr, PT_indices, PT_data, x, kind, vertices, ee_type, eps_x, weight, origin,
                          normal, dhat, kappa, friction, f_kind, f_vertices, f_basis, f_coords, f_mu, f_force, x_t,
                          eps_u):
    """g += P^T (kappa dB/dx [+ dD/dx with `friction`]): the barrier's (and the lagged friction's)
    part of the gradient, carried from the contact positions x (N, 3) into z."""
    local = _barrier_gradients(kind, vertices, ee_type, eps_x, weight, x, origin, normal, dhat * dhat)
    gx = kappa * _sum_per_vertex(local, vertices, x.shape[0]).ravel()
    if friction:
        local = _friction_gradients(f_kind, f_vertices, f_basis, f_coords, f_mu, f_force, x - x_t, eps_u)
        gx = gx + _sum_per_vertex(local, f_vertices, x.shape[0]).ravel()
    gz = _csr_product(PT_indptr, PT_indices, PT_data, gx)
    for i in range(g.shape[0]):
        g[i] += gz[i]


@njit
def _refresh_elastic_hessians(x, tets, Dm_inv, volumes, mu, lam, rotations, F_cached, H_cached, reuse, changed):
    """Recompute the unscaled PSD-projected Neo-Hookean Hessians H_cached (T,12,12) of the tets
    at positions x whose deformation gradient F (dimensionless) has an entry more than `reuse`
    from F_cached[t], the F of H_cached[t] (a NaN in F_cached forces the computation); set
    changed[t] for those. rotations (T,3,3): each tet's last SVD rotation V, the start of the
    next SVD (updated)."""
    F = np.empty((3, 3))
    D = np.empty((4, 3))
    workspace = _hessian_workspace()
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        moved = False
        for a in range(3):
            for b in range(3):
                if not abs(F[a, b] - F_cached[t, a, b]) <= reuse:
                    moved = True
        changed[t] = moved
        if moved:
            _shape_derivatives_into(Dm_inv[t], D)
            _tet_hessian(F, D, volumes[t], mu, lam, np.True_, H_cached[t], workspace, rotations[t])
            for a in range(3):
                for b in range(3):
                    F_cached[t, a, b] = F[a, b]


@njit
def _assemble_elastic(elastic, valid, mass, slots, H_cached, scale, changed, entry_group, group_ptr, group_entries,
                      group_slot, dirty, touched):
    """elastic = mass + scale sum_t H_cached[t] in the upper-triangle CSC values: entry e = 144 t +
    12 r + c of tet t goes to slot slots[e] (-1: not stored), each slot summed in the order of e.

    With `valid` (elastic holds that sum for the same mass, slots and scale, and H_cached differs
    from it only in the tets flagged `changed`) only the slots those tets touch are summed again,
    each from its mass value through all of its entries in the same order (group g: the entries
    group_entries[group_ptr[g]:group_ptr[g+1]] of one slot, group_slot[g]; entry_group[e]: the
    group of entry e, -1 if not stored; dirty: a zeroed flag per group, left zeroed; touched: an
    int64 work array with an entry per group), so the values are bit for bit those of the full
    sum."""
    H = H_cached.reshape(-1)
    if not valid:
        _copy_into(elastic, mass)
        for e in range(slots.shape[0]):
            if slots[e] >= 0:
                elastic[slots[e]] += scale * H[e]
        return
    n = 0
    for t in range(changed.shape[0]):
        if not changed[t]:
            continue
        for e in range(144 * t, 144 * t + 144):
            g = entry_group[e]
            if g >= 0 and not dirty[g]:
                dirty[g] = True
                touched[n] = g
                n += 1
    for k in range(n):
        g = touched[k]
        dirty[g] = False
        slot = group_slot[g]
        value = mass[slot]
        for i in range(group_ptr[g], group_ptr[g + 1]):
            value += scale * H[group_entries[i]]
        elastic[slot] = value


@njit
def _add_hessian_without_contact(data, h2, z, X, tets, Dm_inv, volumes, tet_start, mu, lam, slots, rotations,
                                 F_cached, H_cached, reuse, elastic, elastic_valid, mass, changed, entry_group,
                                 group_ptr, group_entries, group_slot, dirty, touched, linked_slots, linked_coefs,
                                 linked_tets, mount_slots, mount_stiffness, affine_offset, affine_stiffness,
                                 affine_volume, ortho_slots):
    """data = mass + h^2 (PSD-projected elastic Hessians of every body's tets (refreshed where F
    moved by more than `reuse`, _refresh_elastic_hessians; slots, rotations and caches over all
    tets) + the linked entries that carry tets with prescribed vertices onto their mount
    (mounts._add_linked_hessians) + the mount springs + the PSD-projected orthogonality Hessians
    (ortho_slots: entry 144 j + 12 r + c of affine body j)), in the upper-triangle CSC values
    `data`. `elastic` keeps mass + the elastic part between calls (_assemble_elastic; elastic_valid:
    it was assembled for these mass values, slots and h2)."""
    for b in range(tet_start.shape[0] - 1):
        lo, hi = tet_start[b], tet_start[b + 1]
        _refresh_elastic_hessians(X, tets[lo:hi], Dm_inv[lo:hi], volumes[lo:hi], mu[b], lam[b], rotations[lo:hi],
                                  F_cached[lo:hi], H_cached[lo:hi], reuse, changed[lo:hi])
    _assemble_elastic(elastic, elastic_valid, mass, slots, H_cached, h2, changed, entry_group, group_ptr,
                      group_entries, group_slot, dirty, touched)
    _copy_into(data, elastic)
    _add_linked_hessians(data, linked_slots, linked_coefs, linked_tets, H_cached, h2)
    for j in range(mount_stiffness.shape[0]):
        data[mount_slots[j]] += h2 * mount_stiffness[j]
    H = np.empty((12, 12))
    for j in range(affine_offset.shape[0]):
        off = affine_offset[j]
        _orthogonality_potential_hessian(z[off:off + 12], affine_stiffness[j], affine_volume[j], np.True_, H)
        for r in range(12):
            for c in range(12):
                slot = ortho_slots[144 * j + 12 * r + c]
                if slot >= 0:
                    data[slot] += h2 * H[r, c]
