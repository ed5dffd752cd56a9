"""engine.scene: whole-scene kernels. Their sums must be NumPy's and SciPy's to the bit (the line
search compares energies evaluated both ways). Positions and steps over all bodies at once:
tests/physics/test_compliant_mount.py."""

import numpy as np
import pytest
import scipy.sparse as sp

from ipcgrasp.engine.scene import _csr_product, _pairwise_sum


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 4099, 20000])
def test_pairwise_sum_is_numpys_sum_to_the_bit(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
        assert _pairwise_sum(a) == a.sum()


def test_csr_product_is_scipys_to_the_bit():
    rng = np.random.default_rng(4)
    for density in (0.01, 0.1, 0.5):
        A = sp.random(300, 200, density=density, random_state=rng, format="csr")
        v = rng.standard_normal(200) * 10.0 ** rng.uniform(-6, 6, 200)
        np.testing.assert_array_equal(_csr_product(A.indptr, A.indices, A.data, v), A @ v)



def test_collision_positions_are_scipys_product_plus_the_driven_part_to_the_bit():
    from ipcgrasp.engine.scene import _collision_positions

    rng = np.random.default_rng(5)
    P = sp.random(90, 40, density=0.1, random_state=rng, format="csr")
    z = rng.standard_normal(40) * 10.0 ** rng.uniform(-6, 2, 40)
    c = rng.standard_normal(90) * 10.0 ** rng.uniform(-6, 2, 90)
    x = _collision_positions(P.indptr, P.indices, P.data, z, c)
    assert x.shape == (30, 3)
    np.testing.assert_array_equal(x, (P @ z + c).reshape(-1, 3))


def test_body_pair_resultants_sum_each_vertex_force_onto_its_body_and_the_other_body_of_its_contact():
    from ipcgrasp.engine.scene import _body_pair_resultants

    rng = np.random.default_rng(7)
    n_bodies, n_vertices, n_contacts = 3, 50, 200
    vertex_body = rng.integers(0, n_bodies, n_vertices)
    vertices = rng.integers(0, n_vertices, (n_contacts, 4))
    vertices[rng.random((n_contacts, 4)) < 0.2] = -1  # padding
    first = vertex_body[np.maximum(vertices[:, 0], 0)]
    other = np.where(rng.random(n_contacts) < 0.3, -1, (first + 1) % n_bodies)  # -1: the ground
    bodies = np.stack([first, other], axis=1)
    forces = rng.standard_normal((n_contacts, 4, 3)) * 10.0 ** rng.uniform(-6, 3, (n_contacts, 4, 1))
    expected = np.zeros((n_bodies + 1, n_bodies + 1, 3))  # the np.add.at the kernel replaced
    valid = vertices >= 0
    owner = vertex_body[np.where(valid, vertices, 0)]
    a, b = bodies[:, :1], np.where(bodies[:, 1] < 0, n_bodies, bodies[:, 1])[:, None]
    np.add.at(expected, (owner[valid], np.where(owner == a, b, a)[valid]), forces[valid])
    np.testing.assert_array_equal(_body_pair_resultants(vertices, bodies, vertex_body, forces, n_bodies), expected)
    assert np.any(expected[:, n_bodies] != 0.0)  # the ground column is used


def test_strain_energies_are_each_bodys_tet_energies_summed_by_numpy_to_the_bit():
    from ipcgrasp.engine.neohookean import rest_shape_inverse, tet_energies
    from ipcgrasp.engine.scene import _strain_energies

    rng = np.random.default_rng(11)
    bodies = []
    for n_tets in (3, 130, 700):  # below, at and above NumPy's pairwise block of 128
        rest = rng.standard_normal((4 * n_tets, 3))
        tets = np.arange(4 * n_tets).reshape(n_tets, 4)
        inverted = np.linalg.det(rest[tets[:, 1:]] - rest[tets[:, :1]]) < 0
        tets[inverted] = tets[inverted][:, [0, 2, 1, 3]]  # positive rest volumes
        Dm_inv, volumes = rest_shape_inverse(rest, tets)
        x = rest + 1e-2 * rng.standard_normal(rest.shape)
        bodies.append((x, tets, Dm_inv, volumes, rng.uniform(1e5, 1e7), rng.uniform(1e5, 1e8)))
    starts = np.cumsum([0] + [len(b[0]) for b in bodies])
    X = np.concatenate([b[0] for b in bodies])
    tets = np.concatenate([b[1] + s for b, s in zip(bodies, starts)])
    energies = _strain_energies(X, tets, np.concatenate([b[2] for b in bodies]), np.concatenate([b[3] for b in bodies]),
                                np.cumsum([0] + [len(b[1]) for b in bodies]), np.array([b[4] for b in bodies]),
                                np.array([b[5] for b in bodies]))
    for energy, (x, t, Dm_inv, volumes, mu, lam) in zip(energies, bodies):
        assert energy == tet_energies(x, t, Dm_inv, volumes, mu, lam).sum()


def test_step_norm_is_the_largest_position_or_contact_displacement_and_nan_stays_nan():
    from ipcgrasp.engine.scene import _step_norm

    rng = np.random.default_rng(6)
    P = sp.random(30, 20, density=0.2, random_state=rng, format="csr")
    p = rng.standard_normal(20)
    positions = np.arange(0, 20, 2)
    norm, dx = _step_norm(p, P.indptr, P.indices, P.data, positions)
    np.testing.assert_array_equal(dx, (P @ p).reshape(-1, 3))
    assert norm == max(np.abs(p[positions]).max(), np.abs(P @ p).max())
    p[positions[3]] = np.nan
    assert np.isnan(_step_norm(p, P.indptr, P.indices, P.data, positions)[0])


def _tet_entries(rng, n_tets, n_dof):
    """Entry 144 t + 12 r + c of tet t as the simulation lays them out: z indices of its 4
    vertices (-1: a prescribed vertex), rows -1 where either index is."""
    vertices = rng.integers(0, n_dof // 3, (n_tets, 4))
    dof = np.where(rng.random((n_tets, 4)) < 0.1, -1, 3 * vertices)
    tet_dof = np.where(dof[:, :, None] >= 0, dof[:, :, None] + np.arange(3), -1).reshape(n_tets, 12)
    rows = np.broadcast_to(tet_dof[:, :, None], (n_tets, 12, 12)).ravel()
    cols = np.broadcast_to(tet_dof[:, None, :], (n_tets, 12, 12)).ravel()
    return np.ascontiguousarray(np.where(cols >= 0, rows, -1)), np.ascontiguousarray(cols)


def test_entry_groups_are_the_upper_triangle_positions_in_ascending_entry_order():
    from ipcgrasp.engine.solver.assembly import _entry_groups

    rng = np.random.default_rng(8)
    rows, cols = _tet_entries(rng, 200, 90)
    entry_group, group_ptr, group_entries = _entry_groups(rows, cols, 90)
    upper = np.flatnonzero((rows >= 0) & (rows <= cols))
    np.testing.assert_array_equal(np.flatnonzero(entry_group >= 0), upper)
    order = np.lexsort((upper, rows[upper], cols[upper]))  # by column, row, then entry
    np.testing.assert_array_equal(group_entries, upper[order])
    keys = cols[group_entries] * 90 + rows[group_entries]
    np.testing.assert_array_equal(group_ptr, np.r_[np.flatnonzero(np.diff(keys, prepend=-1)), len(keys)])
    assert np.all(np.diff(keys[group_ptr[:-1]]) > 0)
    np.testing.assert_array_equal(entry_group[group_entries], np.repeat(np.arange(len(group_ptr) - 1),
                                                                       np.diff(group_ptr)))


def test_elastic_assembly_of_changed_tets_only_is_the_full_sum_to_the_bit():
    from ipcgrasp.engine.scene import _assemble_elastic
    from ipcgrasp.engine.solver.assembly import _entry_groups, _pattern_slots

    rng = np.random.default_rng(9)
    n_tets, n_dof = 300, 120
    rows, cols = _tet_entries(rng, n_tets, n_dof)
    upper = (rows >= 0) & (rows <= cols)
    keys = np.unique(cols[upper] * n_dof + rows[upper])
    indices, indptr = keys % n_dof, np.searchsorted(keys // n_dof, np.arange(n_dof + 1))
    slots = _pattern_slots(indptr, indices, rows, cols)
    groups = _entry_groups(rows, cols, n_dof)
    group_slot = slots[groups[2][groups[1][:-1]]]
    dirty = np.zeros(len(group_slot), dtype=np.bool_)
    touched = np.empty(len(group_slot), dtype=np.int64)
    mass = rng.standard_normal(len(keys)) * 10.0 ** rng.uniform(-3, 3, len(keys))
    H = rng.standard_normal((n_tets, 12, 12)) * 10.0 ** rng.uniform(-6, 6, (n_tets, 1, 1))
    scale = 1e-4 / 3.0

    def full():
        out = np.empty(len(keys))
        _assemble_elastic(out, False, mass, slots, H, scale, np.ones(n_tets, np.bool_), *groups, group_slot, dirty,
                          touched)
        return out

    kept = full()
    reference = mass.copy()  # the loop the kernel replaces: every tet in turn
    for t in range(n_tets):
        for e in range(144 * t, 144 * t + 144):
            if slots[e] >= 0:
                reference[slots[e]] += scale * H.flat[e]
    np.testing.assert_array_equal(kept, reference)
    for fraction in (0.0, 0.02, 0.3, 1.0):
        changed = rng.random(n_tets) < fraction
        H[changed] *= 1.0 + 1e-3 * rng.standard_normal((int(changed.sum()), 12, 12))
        _assemble_elastic(kept, True, mass, slots, H, scale, changed, *groups, group_slot, dirty, touched)
        np.testing.assert_array_equal(kept, full())
        assert not dirty.any()
    # a tet changed without being flagged is not seen: the flags are what the kernel trusts
    H[0] += 1.0
    _assemble_elastic(kept, True, mass, slots, H, scale, np.zeros(n_tets, np.bool_), *groups, group_slot, dirty,
                      touched)
    assert not np.array_equal(kept, full())
