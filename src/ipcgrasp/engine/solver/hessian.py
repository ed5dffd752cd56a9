"""The Hessian of the incremental potential in its persistent sparse pattern (HessianAssembly):
the upper triangle of a CSC pattern over the unknowns z, kept while the contacts couple no new
degrees of freedom and grown when they do; the slots of its fixed parts; their values, M + h^2
(elastic + orthogonality + mount springs), with a tet's elastic Hessian reused while its
deformation gradient stays within ELASTIC_HESSIAN_REUSE of where it was computed; contact Hessian
terms carried in through x = P z + c (solver.assembly's kernels); and the LDL^T factorisation of
the pattern (solver.factorisation)."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import scene
from ipcgrasp.engine.solver.assembly import (
    _add_mapped_blocks,
    _add_mapped_hessian,
    _add_scaled,
    _entry_groups,
    _missing_hessian_keys,
    _moved_slots,
    _moved_values,
    _pattern_slots,
    _union_keys,
)
from ipcgrasp.engine.solver.factorisation import Factorisation
from ipcgrasp.engine.solver.settings import ELASTIC_HESSIAN_REUSE


class HessianAssembly:
    """The Hessian's pattern and values over a Model's unknowns (settings: the solver's
    SolverSettings, whose dt is read at each assembly).

    keys: the pattern's sorted entries col * n_dof + row; indptr, indices: its CSC form;
    tet_slots, ortho_slots, linked_slots, mount_slots, tet_group_slots: where the fixed entries
    sit in it (-1: below the diagonal or dropped); mass_data: M in it; tet_hessian_cache: per tet,
    the deformation gradient and the unscaled projected Hessian last computed; factorisation:
    the LDL^T of the pattern."""

    def __init__(self, model, settings):
        self.model, self.settings = model, settings
        self.n_dof = model.n_dof
        # per tet of every deformable body (one after the other, as engine.scene): the last SVD
        # rotation V (the next SVD starts from it: a few Jacobi sweeps fewer), and the deformation
        # gradient and unscaled projected Hessian last computed
        n_tets = sum(len(body.tets) for body in model.deformables)
        self._svd_rotations = np.tile(np.eye(3), (n_tets, 1, 1))
        self.tet_hessian_cache = (np.full((n_tets, 3, 3), np.nan), np.zeros((n_tets, 12, 12)))
        self._tet_changed = np.zeros(n_tets, dtype=np.bool_)  # per tet: its Hessian was recomputed by the last call
        self.factorisation = Factorisation()
        self._build_pattern()

    def _build_pattern(self):
        """The z-space entries of the Hessian's fixed parts (mass, per-tet elastic blocks with
        prescribed rows/columns dropped, orthogonality blocks, the mounts' linked entries) and the
        initial pattern."""
        model, dofs = self.model, self.model.dofs
        rows, cols = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for body, dof in zip(model.deformables, dofs.vertex_dof):  # entry 144 t + 12 r + c of tet t, all bodies
            tet_dof = np.where(dof[body.tets][:, :, None] >= 0, dof[body.tets][:, :, None] + np.arange(3), -1)
            tet_dof = tet_dof.reshape(len(body.tets), 12)
            r = np.broadcast_to(tet_dof[:, :, None], (len(body.tets), 12, 12)).ravel()
            c = np.broadcast_to(tet_dof[:, None, :], (len(body.tets), 12, 12)).ravel()
            rows.append(np.where(c >= 0, r, -1))
            cols.append(c)
        self._tet_entries = (np.concatenate(rows), np.concatenate(cols))
        self._tet_entry_groups = _entry_groups(*self._tet_entries, self.n_dof)
        self._tet_group_dirty = np.zeros(len(self._tet_entry_groups[1]) - 1, dtype=np.bool_)
        # the groups scene._add_hessian_without_contact recomputed (its work array)
        self._tet_group_touched = np.empty(len(self._tet_group_dirty), dtype=np.int64)
        idx = [off + np.arange(12) for off in dofs.affine_offset]  # entry 144 j + 12 r + c of affine body j
        self._ortho_entries = (np.concatenate([np.repeat(i, 12) for i in idx] + [np.zeros(0, dtype=np.int64)]),
                               np.concatenate([np.tile(i, 12) for i in idx] + [np.zeros(0, dtype=np.int64)]))
        # the elastic Hessian entries that prescribed vertices on a mount carry onto its degree of
        # freedom (Model.linked_entries), tets numbered over all bodies
        linked = [(e[0] + start, *e[1:]) for e, start in zip(model.linked_entries, model.scene["tet_start"])
                  if e is not None]
        self._linked = tuple(np.concatenate([e[k] for e in linked] + [empty])
                             for k, empty in enumerate((np.zeros(0, np.int64), np.zeros(0, np.int64),
                                                        np.zeros(0, np.int64), np.zeros(0))))
        static = [model.mass_entries[:2], self._tet_entries, self._ortho_entries, self._linked[1:3]]
        keys = [c * self.n_dof + r for r, c in static]
        keys = np.concatenate([k[(r >= 0) & (r <= c)] for k, (r, c) in zip(keys, static)])
        self.set_pattern(np.unique(keys))

    def set_pattern(self, keys, moved=None):
        """Use the upper-triangle CSC pattern of the sorted unique keys col * n_dof + row: place
        the fixed entries in it and start a new factorisation (the ordering is computed once per
        pattern). moved: when keys grow the current pattern, where each of its entries now sits
        (np.searchsorted(keys, old keys)); the fixed entries' slots and the values assembled in the
        old pattern (mass, elastic part, the last Hessian without contact) are carried over to it
        instead of being found and summed again: the same values, bit for bit. Without moved, M
        is placed anew from Model.mass_entries."""
        n = self.n_dof
        cols = keys // n
        self.keys = keys
        self.indices = keys - cols * n
        self.indptr = np.searchsorted(cols, np.arange(n + 1))
        if moved is None:
            self.tet_slots = _pattern_slots(self.indptr, self.indices, *self._tet_entries)
            self.ortho_slots = _pattern_slots(self.indptr, self.indices, *self._ortho_entries)
            self.linked_slots = _pattern_slots(self.indptr, self.indices, *self._linked[1:3])
            mount_dofs = self.model.dofs.mount_offset + np.arange(len(self.model.mounts))
            self.mount_slots = _pattern_slots(self.indptr, self.indices, mount_dofs, mount_dofs)
            r, c, m = self.model.mass_entries
            self.mass_data = np.zeros(len(keys))
            _add_scaled(self.mass_data, _pattern_slots(self.indptr, self.indices, r, c), m, 1.0)
            self.forget_values_without_contact()
            self._elastic = (np.zeros(len(keys)), None)  # mass + h^2 elastic part, and its h^2 (None: not assembled)
        else:
            for name in ("tet_slots", "ortho_slots", "linked_slots", "mount_slots"):
                setattr(self, name, _moved_slots(getattr(self, name), moved))
            self.mass_data = _moved_values(self.mass_data, moved, len(keys))
            z_last, X_last, keys_last, data = self._last_without_contact
            if keys_last is not None:
                self._last_without_contact = (z_last, X_last, keys, _moved_values(data, moved, len(keys)))
            elastic, assembled_h2 = self._elastic
            self._elastic = (_moved_values(elastic, moved, len(keys)), assembled_h2)
        entry_group, group_ptr, group_entries = self._tet_entry_groups
        self.tet_group_slots = self.tet_slots[group_entries[group_ptr[:-1]]]
        self.factorisation.use_pattern(self.indptr, self.indices, n)

    @property
    def pattern(self):
        """(indptr, indices, z_index, z_coef, dense_lo): the arguments of solver.assembly's
        kernels for the current pattern and the map x = P z + c."""
        cm = self.model.contact_map
        return self.indptr, self.indices, cm.z_index, cm.z_coef, self.model.dofs.dense_lo

    def forget_values_without_contact(self):
        """Drop the last Hessian without contact kept for reuse (its h^2 terms belong to a dt)."""
        self._last_without_contact = (None, None, None, None)

    def without_contact(self, z, X):
        """Upper-triangle CSC values of M + h^2 (elastic + orthogonality Hessians) at z (X: the
        deformable vertices there, Dofs.scene_positions). The last result is kept with its
        positions: a step's drive needs it where the previous step's Newton ended."""
        z_last, X_last, keys_last, data = self._last_without_contact
        if keys_last is self.keys and np.array_equal(z_last, z) and np.array_equal(X_last, X):
            return data.copy()
        sc = self.model.scene
        h2 = self.settings.dt ** 2
        data = np.empty(len(self.keys))
        elastic, assembled_h2 = self._elastic
        scene._add_hessian_without_contact(
            data, h2, z, X, sc["tets"], sc["Dm_inv"], sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"],
            self.tet_slots, self._svd_rotations, *self.tet_hessian_cache, ELASTIC_HESSIAN_REUSE, elastic,
            assembled_h2 == h2, self.mass_data, self._tet_changed, *self._tet_entry_groups, self.tet_group_slots,
            self._tet_group_dirty, self._tet_group_touched, self.linked_slots, self._linked[3], self._linked[0],
            self.mount_slots, sc["mount_stiffness"], sc["affine_offset"], sc["affine_stiffness"], sc["affine_volume"],
            self.ortho_slots)
        self._elastic = (elastic, h2)
        self._last_without_contact = (z.copy(), X, self.keys, data.copy())
        return data

    def add_contact_terms(self, data, terms):
        """Add the x-space (rows, cols, vals, scale, offsets) Hessian terms to data through
        x = P z + c (offsets: per-contact block boundaries of the triplets, contracted block by
        block; None: triplet by triplet); returns how many z-space entries the pattern lacks."""
        missing = 0
        z_index, z_coef = self.model.contact_map.z_index, self.model.contact_map.z_coef
        for r, c, v, scale, offsets in terms:
            if offsets is None:
                missing += _add_mapped_hessian(data, self.indptr, self.indices, r, c, v, scale, z_index, z_coef)
            else:
                missing += _add_mapped_blocks(data, self.indptr, self.indices, r, v, offsets, scale,
                                              z_index, z_coef, self.model.dofs.dense_lo)
        return missing

    def grown(self, z, X, terms):
        """The pattern grown by the entries the x-space Hessian terms (rows, cols, vals, scale,
        offsets) couple and it lacks, and the Hessian values at z (X: as in without_contact) in
        it: the values without contact (carried over from the old pattern) plus the terms."""
        old_keys = self.keys
        missing = [_missing_hessian_keys(r, c, self.model.contact_map.z_index, self.n_dof, self.indptr, self.indices)
                   for r, c, *_ in terms]
        keys = _union_keys(old_keys, np.concatenate(missing))
        self.set_pattern(keys, np.searchsorted(keys, old_keys))
        data = self.without_contact(z, X)
        self.add_contact_terms(data, terms)
        return data
