"""The simulation's fast paths against plain references: the fixed-pattern sparse Hessian and its
LDL^T solve (scipy assembly and spsolve), the drive's Hessian-vector product (dense per-tet
Hessians), warm-started SVDs (cold start) and the culled and reused broad phase (the full one)."""

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ipcgrasp.engine import ccd
from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.affine_body import orthogonality_potential_hessian
from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.neohookean import _hessian_workspace, _rotation_svd, _tet_hessian, elastic_hessians

from .scenes import box_between_pads, box_pad_scene


def step_inputs(sim, rng):
    """A perturbed iterate z of the coming step with its contacts and lagged friction."""
    z_t = sim.pack()
    z_tilde = sim.potential.predicted(z_t, sim.pack(velocities=True))
    x_t = sim.collision_positions(z_t)
    sim.stiffness.start_step(lambda: sim.potential.gradient_without_contact(sim.state, z_t, z_tilde),
                             x_t, sim.potential.collisions(x_t))
    friction = sim.potential.friction_collisions(x_t)
    z = z_t + 1e-5 * rng.standard_normal(z_t.size) * (np.abs(z_t) > 0)
    x = sim.collision_positions(z)
    return z, friction, x_t, x, sim.potential.collisions(x)


def reference_hessian(sim, z, friction, x_t, x, coll, project_contacts=True):
    """M + h^2 (elastic + orthogonality) + P^T (kappa B'' + D'') P, assembled by scipy from
    dense per-element Hessians (B'': each contact's PSD-projected with project_contacts)."""
    h2 = sim.settings.dt ** 2
    n = sim.n_dof
    H = sim.model.M.toarray()
    for body, x_def, dof in zip(sim.deformables, sim.dofs.deformable_positions(sim.state, z), sim.dofs.vertex_dof):
        blocks = elastic_hessians(x_def, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam, project=True)
        index = np.where(dof[body.tets][:, :, None] >= 0, dof[body.tets][:, :, None] + np.arange(3), -1)
        index = index.reshape(len(body.tets), 12)
        for block, idx in zip(blocks, index):
            keep = idx >= 0
            H[np.ix_(idx[keep], idx[keep])] += h2 * block[np.ix_(keep, keep)]
    for body, off in zip(sim.affines, sim.dofs.affine_offset):
        H[off:off + 12, off:off + 12] += h2 * orthogonality_potential_hessian(z[off:off + 12], body.stiffness,
                                                                            body.volume)
    n3 = 3 * sim.n_collision_vertices
    r, c, v = contact.barrier_potential_hessian(coll, sim.mesh, x, sim.dhat, project_to_psd=project_contacts)
    Hx = sp.coo_matrix((sim.barrier_stiffness * v, (r, c)), shape=(n3, n3)).toarray()
    r, c, v = contact.friction_potential_hessian(friction, sim.mesh, x - x_t, sim.settings.eps_v * sim.settings.dt)
    Hx += sp.coo_matrix((v, (r, c)), shape=(n3, n3)).toarray()
    P = sim.contact_map.P.toarray()
    return H + P.T @ Hx @ P, n


def full_from_upper(sim, data):
    assembly = sim.potential.hessian_assembly
    U = sp.csc_matrix((data, assembly.indices, assembly.indptr), shape=(sim.n_dof, sim.n_dof)).toarray()
    return U + np.triu(U, 1).T


def test_assembled_hessian_and_solve_match_scipy():
    rng = np.random.default_rng(0)
    sim = box_pad_scene()
    z, friction, x_t, x, coll = step_inputs(sim, rng)
    kinds = set(coll.kind.tolist())
    assert contact.VERTEX_PLANE in kinds and len(kinds) >= 2  # ground and box-pad contacts
    nnz_before = len(sim.potential.hessian_assembly.keys)
    data = sim.potential.hessian(sim.state, z, friction, x_t, x, coll)
    assert len(sim.potential.hessian_assembly.keys) > nnz_before  # the box-pad contacts grew the pattern
    H = full_from_upper(sim, data)
    H_ref, n = reference_hessian(sim, z, friction, x_t, x, coll)
    scale = np.abs(H_ref).max()
    np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-12 * scale)
    assert np.linalg.eigvalsh(H_ref)[0] > 0.0
    # The same pattern is reused: a second assembly at another z adds no entries.
    z2 = z + 1e-6 * rng.standard_normal(n) * (np.abs(z) > 0)
    x2 = sim.collision_positions(z2)
    data2 = sim.potential.hessian(sim.state, z2, friction, x_t, x2, coll)
    assert len(data2) == len(data)
    for d, zz, xx in ((data, z, x), (data2, z2, x2)):
        rhs = rng.standard_normal(n)
        p = sim.potential.hessian_assembly.factorisation.factor_and_solve(d, rhs, sim.state)
        H_ref = reference_hessian(sim, zz, friction, x_t, xx, coll)[0]
        p_ref = spla.spsolve(sp.csc_matrix(H_ref), rhs)
        np.testing.assert_allclose(p, p_ref, rtol=0, atol=1e-9 * np.abs(p_ref).max())


def test_unprojected_contact_hessian_and_the_newton_direction_it_gives():
    """IncrementalPotential.hessian(project=False) is the reference with each barrier Hessian
    unprojected, and Newton.direction with project_contacts=False solves with it exactly when it is positive
    definite (numpy's eigenvalues decide), else with the projected Hessian."""
    rng = np.random.default_rng(7)
    sim = box_pad_scene()
    z, friction, x_t, x, coll = step_inputs(sim, rng)
    z_tilde = sim.potential.predicted(sim.pack(), sim.pack(velocities=True))
    g = sim.potential.gradient(sim.state, z, z_tilde, friction, x_t, x, coll)
    seen = set()
    for kappa_scale in (1.0, 1e4):  # a stiff barrier makes the contacts' negative curvature win
        sim.barrier_stiffness *= kappa_scale
        H_proj = reference_hessian(sim, z, friction, x_t, x, coll)[0]
        H_exact = reference_hessian(sim, z, friction, x_t, x, coll, project_contacts=False)[0]
        assert not np.allclose(H_exact, H_proj)
        data = sim.potential.hessian(sim.state, z, friction, x_t, x, coll, project=False)
        np.testing.assert_allclose(full_from_upper(sim, data), H_exact, rtol=0, atol=1e-12 * np.abs(H_exact).max())
        definite = np.linalg.eigvalsh(H_exact)[0] > 0.0
        seen.add(definite)
        p = sim.newton.direction(sim.state, z, g, friction, x_t, x, coll, project_contacts=False)
        expected = np.linalg.solve(H_exact if definite else H_proj, -g)
        np.testing.assert_allclose(p, expected, rtol=0, atol=1e-8 * np.abs(expected).max())
        np.testing.assert_allclose(sim.newton.direction(sim.state, z, g, friction, x_t, x, coll, project_contacts=True),
                                   np.linalg.solve(H_proj, -g), rtol=0, atol=1e-8 * np.abs(expected).max())
    assert seen == {True, False}  # both branches ran


def test_drive_coupling_is_the_exact_hessian_product():
    """H_zc dc from the closed-form differential of the first Piola stress equals the dense
    exact (unprojected) element Hessians applied to the prescribed displacements."""
    rng = np.random.default_rng(1)
    sim = box_pad_scene()
    body, dof = sim.deformables[0], sim.dofs.vertex_dof[0]
    h2 = sim.settings.dt ** 2
    for trial in range(3):
        F = np.eye(3) + 0.2 * rng.standard_normal((3, 3))
        if np.linalg.det(F) < 0.3:
            F = np.eye(3) + 0.05 * rng.standard_normal((3, 3))
        x_def = sim.state.deformable_x[0] @ F.T + 1e-5 * rng.standard_normal((body.n_vertices, 3))
        sim.state.deformable_x[0] = x_def
        dx = np.zeros_like(x_def)
        dx[body.prescribed] = 1e-4 * rng.standard_normal((len(body.prescribed), 3))
        out = sim.driven.coupling(sim.state, sim.pack(), [dx], sim.settings.dt ** 2)
        blocks = elastic_hessians(x_def, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam, project=False)
        ref = np.zeros(sim.n_dof)
        for block, tet in zip(blocks, body.tets):
            force = block @ dx[tet].ravel()
            for m, v in enumerate(tet):
                if dof[v] >= 0:
                    ref[dof[v]:dof[v] + 3] += h2 * force[3 * m:3 * m + 3]
        assert np.abs(ref).max() > 0
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_warm_started_tet_hessian_matches_cold_start():
    """Starting the SVD from the rotation of a nearby F gives the same projected and exact
    Hessians, and hands back an orthonormal rotation for the next start."""
    rng = np.random.default_rng(2)
    D = np.vstack([-np.ones(3), np.eye(3)]) * 100.0
    mu, lam = 3.4e5, 3.1e6
    workspace = _hessian_workspace()
    for _ in range(200):
        F0 = np.linalg.qr(rng.standard_normal((3, 3)))[0] @ np.diag(np.exp(0.3 * rng.standard_normal(3)))
        if np.linalg.det(F0) < 0:
            F0[:, 0] *= -1
        F = F0 + 1e-3 * rng.standard_normal((3, 3))
        warm = np.ascontiguousarray(_rotation_svd(F0)[2])
        for project in (True, False):
            cold_H, warm_H = np.empty((12, 12)), np.empty((12, 12))
            _tet_hessian(F, D, 1e-6, mu, lam, project, cold_H, workspace, np.eye(3))
            _tet_hessian(F, D, 1e-6, mu, lam, project, warm_H, workspace, warm.copy())
            np.testing.assert_allclose(warm_H, cold_H, rtol=0, atol=1e-11 * np.abs(cold_H).max())
        _tet_hessian(F, D, 1e-6, mu, lam, True, warm_H, workspace, warm)
        np.testing.assert_allclose(warm.T @ warm, np.eye(3), atol=1e-14)
        assert np.linalg.det(warm) > 0.0
    # A start that is not a rotation is not handed on: the next SVD starts from the identity.
    for start in (np.full((3, 3), np.nan), np.diag([1.0, 1.0, 1.0 + 1e-6])):
        _tet_hessian(F, D, 1e-6, mu, lam, True, warm_H, workspace, start)
        assert np.array_equal(start, np.eye(3))


def assert_same_candidates(got, ref):
    """Two (vertex-face, edge-edge, vertex-plane) candidate sets are the same pairs."""
    vf, ee, vp = got
    assert sorted(map(tuple, vf.tolist())) == sorted(map(tuple, ref[0].tolist()))
    assert sorted(map(tuple, np.sort(ee, axis=1).tolist())) == sorted(map(tuple, np.sort(ref[1], axis=1).tolist()))
    assert sorted(vp.tolist()) == sorted(ref[2].tolist())


def test_culled_candidates_match_the_full_broad_phase():
    rng = np.random.default_rng(3)
    sim = box_pad_scene()
    m = sim.mesh
    x0 = sim.collision_positions()
    for radius, motion in ((0.0, 1e-3), (sim.dhat, 1e-3), (sim.dhat, 0.0), (5e-3, 2e-3)):
        x1 = x0 + motion * rng.standard_normal(x0.shape)
        ref = candidates(x0, x1, m.edges, m.faces, m.vertex_body, radius, can_collide=m.can_collide,
                         plane_origin=m.plane_origin, plane_normal=m.plane_normal,
                         plane_vertices=sim.proximity.plane_vertices)
        assert len(ref[0]) + len(ref[1]) > 0
        assert_same_candidates(sim.proximity.candidates(x0, x1, radius), ref)
    # motions within PAIR_CACHE_SLACK dhat of a reference reuse its pairs: the same sets
    from ipcgrasp.engine.solver.settings import PAIR_CACHE_SLACK

    slack = PAIR_CACHE_SLACK * sim.dhat
    sim.proximity.candidates(x0, x0, sim.dhat)
    reference = sim.proximity.pair_cache
    for radius in (0.0, 0.5 * sim.dhat, sim.dhat):
        for _ in range(5):
            a = x0 + rng.uniform(-slack, slack, x0.shape)
            b = x0 + rng.uniform(-slack, slack, x0.shape)
            got = sim.proximity.candidates(a, b, radius)
            assert sim.proximity.pair_cache is reference
            assert_same_candidates(got, candidates(a, b, m.edges, m.faces, m.vertex_body, radius,
                                                   can_collide=m.can_collide, plane_origin=m.plane_origin,
                                                   plane_normal=m.plane_normal,
                                                   plane_vertices=sim.proximity.plane_vertices))
    # ... and so do motions within it of the reference carried 10 slacks along (a lift)
    carried = np.array([0.3, -0.4, 10.0]) * slack
    for _ in range(5):
        a = x0 + carried + rng.uniform(-0.5 * slack, 0.5 * slack, x0.shape)
        b = x0 + carried + rng.uniform(-0.5 * slack, 0.5 * slack, x0.shape)
        got = sim.proximity.candidates(a, b, sim.dhat)
        assert sim.proximity.pair_cache is reference
        ref = candidates(a, b, m.edges, m.faces, m.vertex_body, sim.dhat, can_collide=m.can_collide,
                         plane_origin=m.plane_origin, plane_normal=m.plane_normal,
                         plane_vertices=sim.proximity.plane_vertices)
        assert len(ref[0]) + len(ref[1]) > 0
        assert_same_candidates(got, ref)
    # ... and motions from one carried reference to another farther on (a lift step longer than
    # the slack): the cached pairs are among the broad phase's, and everything the broad phase's
    # pairs decide (the contacts along the motion, its time of impact) they decide alike
    for _ in range(5):
        a = x0 + carried + rng.uniform(-0.25 * slack, 0.25 * slack, x0.shape)
        b = x0 + 5.0 * carried + rng.uniform(-0.25 * slack, 0.25 * slack, x0.shape)
        for radius in (0.0, sim.dhat):
            broad_phases = sim.proximity.broad_phases
            got = sim.proximity.candidates(a, b, radius)
            assert sim.proximity.pair_cache is reference and sim.proximity.broad_phases == broad_phases
            ref = candidates(a, b, m.edges, m.faces, m.vertex_body, radius, can_collide=m.can_collide,
                             plane_origin=m.plane_origin, plane_normal=m.plane_normal,
                             plane_vertices=sim.proximity.plane_vertices)
            assert set(map(tuple, got[0].tolist())) <= set(map(tuple, ref[0].tolist()))
            assert set(map(tuple, np.sort(got[1], axis=1).tolist())) <= set(map(tuple, np.sort(ref[1], axis=1).tolist()))
            assert len(got[0]) + len(got[1]) > 0
            toi = [ccd.collision_free_stepsize(a, b, *pairs, m.edges, m.faces, m.plane_origin, m.plane_normal)
                   for pairs in (got, ref)]
            assert toi[0] == toi[1]
            for s_ in (0.0, 0.5, 1.0):
                y = a + s_ * (b - a)
                found = [contact.build_collisions(m, y, sim.dhat, candidates=pairs) for pairs in (got, ref)]
                assert np.array_equal(found[0].vertices, found[1].vertices)
    # one pair of bodies (as body_distance asks), without the ground
    pair = np.zeros_like(m.can_collide)
    pair[0, 1] = pair[1, 0] = True
    for radius in (sim.dhat, 5e-3, 0.05):
        vf, ee, vp = sim.proximity.candidates(x0, x0, radius, can_collide=pair)
        ref = candidates(x0, x0, m.edges, m.faces, m.vertex_body, radius, can_collide=pair)
        assert sorted(map(tuple, vf.tolist())) == sorted(map(tuple, ref[0].tolist()))
        assert sorted(map(tuple, np.sort(ee, axis=1).tolist())) == sorted(map(tuple, np.sort(ref[1], axis=1).tolist()))
        assert len(vp) == 0
        coll = contact.build_collisions(m, x0, radius, candidates=ref)
        d = contact.min_distance(coll, m, x0)
        expected = d if d <= radius else np.inf
        assert sim.body_distance(sim.bodies[0].name, sim.bodies[1].name, radius) == expected


def test_reused_tet_hessians_are_those_of_a_nearby_deformation():
    """A tet's projected Hessian is recomputed only when its deformation gradient moved by more
    than ELASTIC_HESSIAN_REUSE: after the free vertices translate (F unchanged up to rounding
    except in the tets that also hold prescribed vertices) only those tets are recomputed and
    the assembly equals the fresh one to the reuse tolerance; after a real deformation it equals
    the reference."""
    from ipcgrasp.engine.solver.settings import ELASTIC_HESSIAN_REUSE

    rng = np.random.default_rng(3)
    sim = box_pad_scene()
    z, friction, x_t, x, coll = step_inputs(sim, rng)
    sim.potential.hessian(sim.state, z, friction, x_t, x, coll)
    F_cached = sim.potential.hessian_assembly.tet_hessian_cache[0].copy()
    shifted = z.copy()
    free, z_index = sim.dofs.free_vertex_dofs[0]
    shifted[z_index] += np.array([1e-4, -2e-4, 3e-4])  # the pad's free vertices translated
    data = sim.potential.hessian(sim.state, shifted, friction, x_t, sim.collision_positions(shifted), coll)
    recomputed = np.flatnonzero(np.any(sim.potential.hessian_assembly.tet_hessian_cache[0] != F_cached, axis=(1, 2)))
    np.testing.assert_array_equal(recomputed, sim.driven.coupling_tets[0][0])
    H = full_from_upper(sim, data)
    H_ref = reference_hessian(sim, shifted, friction, x_t, sim.collision_positions(shifted), coll)[0]
    np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e3 * ELASTIC_HESSIAN_REUSE * np.abs(H_ref).max())
    z2 = z + 1e-5 * rng.standard_normal(z.size) * (np.abs(z) > 0)
    x2 = sim.collision_positions(z2)
    H2 = full_from_upper(sim, sim.potential.hessian(sim.state, z2, friction, x_t, x2, coll))
    H2_ref = reference_hessian(sim, z2, friction, x_t, x2, coll)[0]
    np.testing.assert_allclose(H2, H2_ref, rtol=0, atol=1e-12 * np.abs(H2_ref).max())


def test_mapped_blocks_match_a_dense_contraction():
    """Contact blocks carried into z by _add_mapped_blocks (per-block contraction, the columns
    from dense_lo on summed over blocks first) equal the upper triangle of P^T H P assembled
    densely; entries missing from the pattern are counted, not added."""
    from ipcgrasp.engine.solver.assembly import _add_mapped_blocks

    rng = np.random.default_rng(7)
    n_x, n_dof, dense_lo = 30, 22, 9  # coordinates 0-8 on own dofs, the rest through 13 shared ones
    P = np.zeros((n_x, n_dof))
    for i in range(n_x):
        if i < 9:
            P[i, i] = 1.0
        else:  # an affine-like row: 4 of the shared dofs
            P[i, dense_lo + rng.choice(n_dof - dense_lo, 4, replace=False)] = rng.normal(size=4)
    z_index = -np.ones((n_x, 4), dtype=np.int64)
    z_coef = np.zeros((n_x, 4))
    for i in range(n_x):
        nz = np.flatnonzero(P[i])
        z_index[i, :len(nz)] = nz
        z_coef[i, :len(nz)] = P[i, nz]
    rows, vals, offsets, H = [], [], [0], np.zeros((n_x, n_x))
    for _ in range(12):  # contacts of 2 to 4 points, each point 3 consecutive coordinates
        points = rng.choice(n_x // 3, rng.integers(2, 5), replace=False)
        coords = (3 * points[:, None] + np.arange(3)).ravel()
        A = rng.normal(size=(coords.size, coords.size))
        block = A + A.T
        H[np.ix_(coords, coords)] += block
        rows.append(np.repeat(coords, coords.size))
        vals.append(block.ravel())
        offsets.append(offsets[-1] + coords.size ** 2)
    rows, vals = np.concatenate(rows), np.concatenate(vals)
    offsets = np.array(offsets, dtype=np.int64)
    expected = np.triu(P.T @ H @ P) * 2.5
    full = sp.csc_matrix(np.triu(np.ones((n_dof, n_dof))))
    full.sort_indices()
    data = np.zeros(full.nnz)
    assert _add_mapped_blocks(data, full.indptr, full.indices, rows, vals, offsets, 2.5, z_index, z_coef,
                              dense_lo) == 0
    got = sp.csc_matrix((data, full.indices, full.indptr), shape=(n_dof, n_dof)).toarray()
    np.testing.assert_allclose(got, expected, rtol=0.0, atol=1e-12 * np.abs(expected).max())
    # a pattern without the last column (a shared one) and without one own-dof column
    keep = np.triu(np.ones((n_dof, n_dof)), 0)
    keep[:, -1] = 0.0
    keep[:, 3] = 0.0
    partial = sp.csc_matrix(keep)
    partial.sort_indices()
    data = np.zeros(partial.nnz)
    missing = _add_mapped_blocks(data, partial.indptr, partial.indices, rows, vals, offsets, 2.5, z_index,
                                 z_coef, dense_lo)
    assert missing >= np.count_nonzero(expected[:, [3, n_dof - 1]])
    got = sp.csc_matrix((data, partial.indices, partial.indptr), shape=(n_dof, n_dof)).toarray()
    np.testing.assert_allclose(got, expected * keep, rtol=0.0, atol=1e-12 * np.abs(expected).max())


def test_grown_pattern_keys_are_numpys_unique_union():
    """A pattern's sorted keys grown by new keys (any order, repeated, overlapping the old ones,
    either side empty) are np.unique of both."""
    from ipcgrasp.engine.solver.assembly import _union_keys

    rng = np.random.default_rng(3)
    for _ in range(500):
        old = np.unique(rng.integers(0, 60, rng.integers(0, 30)))
        new = rng.integers(0, 80, rng.integers(0, 30))
        np.testing.assert_array_equal(_union_keys(old, new), np.unique(np.concatenate([old, new])))


def test_grown_pattern_carries_what_a_fresh_pattern_assembles():
    """When contacts grow the Hessian pattern, the fixed entries' slots, the mass and elastic
    values and the last Hessian without contact are carried over into it: the Hessians at the
    growing z and at a nearby z (assembled incrementally from the carried values) equal, to the
    bit, those of a simulation given the grown pattern from the start."""
    grown, fresh = box_pad_scene(), box_pad_scene()
    z, friction, x_t, x, coll = step_inputs(grown, np.random.default_rng(5))
    fresh_z, _, fresh_x_t, fresh_x, _ = step_inputs(fresh, np.random.default_rng(5))
    assert np.array_equal(fresh_z, z) and np.array_equal(fresh_x_t, x_t) and np.array_equal(fresh_x, x)
    z2 = z + 1e-6 * np.random.default_rng(6).standard_normal(len(z)) * (np.abs(z) > 0)
    first = grown.potential.hessian(grown.state, z, friction, x_t, x, coll)
    fresh.potential.hessian_assembly.set_pattern(grown.potential.hessian_assembly.keys.copy())
    for name in ("tet_slots", "tet_group_slots", "ortho_slots", "linked_slots", "mount_slots", "mass_data"):
        np.testing.assert_array_equal(getattr(grown.potential.hessian_assembly, name),
                                      getattr(fresh.potential.hessian_assembly, name), err_msg=name)
    np.testing.assert_array_equal(first, fresh.potential.hessian(fresh.state, z, friction, x_t, x, coll))
    x2 = grown.collision_positions(z2)
    np.testing.assert_array_equal(grown.potential.hessian(grown.state, z2, friction, x_t, x2, coll),
                                  fresh.potential.hessian(fresh.state, z2, friction, x_t, x2, coll))


def test_remembered_min_distances_are_those_of_their_contacts():
    """Every smallest contact distance a Simulation remembers over a squeeze (those the line
    search's energy evaluations leave and those computed on first asking) is, to the bit,
    contact.min_distance of its contacts at its positions; a changed position is not taken for
    a remembered one."""
    seen = []

    def check(sim):
        for coll, x, value in sim.potential.known_min_distances:
            assert value == contact.min_distance(coll, sim.mesh, x)
            seen.append(len(coll))
        if sim.potential.known_min_distances:
            coll, x, value = sim.potential.known_min_distances[0]
            moved = x.copy()
            moved[coll.vertices[0, 0] if len(coll) else 0] += 1e-4
            assert sim.potential.min_distance_of(coll, moved) == contact.min_distance(coll, sim.mesh, moved)

    box_between_pads(mu=0.5, pad_E=1e5, contact_force_scale=None, on_step=check)
    assert max(seen) > 0  # contacts were active
