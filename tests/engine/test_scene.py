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
    from ipcgrasp.engine.simulation import _entry_groups

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
    from ipcgrasp.engine.simulation import _entry_groups, _pattern_slots

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
        _assemble_elastic(out, False, mass, slots, H, scale, np.ones(n_tets, np.bool_), *groups, group_slot, dirty, touched)
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
    _assemble_elastic(kept, True, mass, slots, H, scale, np.zeros(n_tets, np.bool_), *groups, group_slot, dirty, touched)
    assert not np.array_equal(kept, full())
