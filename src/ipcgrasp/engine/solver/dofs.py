"""The unknowns z of a time step and their maps to and from the bodies' positions.

z holds, in this order, the coordinates (m) of each deformable body's free (not prescribed)
vertices, 3 per vertex, body after body; the 12 affine coordinates q = (p, A) of each affine
body (p in m, A's entries dimensionless); and the deflection u (m) of each compliant mount.
Prescribed vertices and kinematic bodies are not unknowns: the state holds where their drivers
put them, and a mounted one sits u along its mount's axis from there. The contact surface's
vertices x (N,3), m, follow z through the affine map x = P z + c (ContactMap).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ipcgrasp.engine import scene
from ipcgrasp.engine.solver.state import State


class Dofs:
    """The layout of z for the deformable bodies `deformables` (in order), `n_affines` affine
    bodies and `n_mounts` compliant mounts. deformable_mount: per deformable, the index of the
    mount its prescribed vertices ride on (-1: none); mount_motion: body name -> the motion (n,3)
    of its vertices per metre of its mount's deflection.

    vertex_dof: per deformable, (n,) the first z index of each vertex, -1 if prescribed;
    free_vertex_dofs: per deformable, its free vertices and their (n_free, 3) indices into z;
    affine_offset: per affine body, the z index of its first coordinate; mount_offset: the z index
    of the first mount's deflection; dense_lo: the first z index of the affine coordinates and
    mount deflections (few columns that most contact Hessian blocks share); position_dofs: the z
    indices that are coordinates in metres (all but the affine A entries). The flat maps of
    engine.scene (all deformable bodies' vertices one after the other, n_vertices of them):
    free_rows, free_dofs (the free vertices and their z indices), prescribed_rows,
    prescribed_mount, motion (the prescribed vertices on a mount, the mount, their motion per
    metre), free_start, prescribed_start (per body, where its entries start), body_mount."""

    def __init__(self, deformables, n_affines: int, n_mounts: int, deformable_mount, mount_motion):
        self.deformables = list(deformables)
        self.deformable_mount = list(deformable_mount)
        self.mount_motion = mount_motion
        nz = 0
        self.vertex_dof = []
        for body in self.deformables:
            dof = -np.ones(body.n_vertices, dtype=np.int64)
            free = np.setdiff1d(np.arange(body.n_vertices), body.prescribed)
            dof[free] = nz + 3 * np.arange(len(free))
            nz += 3 * len(free)
            self.vertex_dof.append(dof)
        self.affine_offset = []
        for _ in range(n_affines):
            self.affine_offset.append(nz)
            nz += 12
        self.mount_offset = nz  # the mounts' deflections are the last degrees of freedom
        nz += n_mounts
        self.dense_lo = self.affine_offset[0] if n_affines else self.mount_offset
        self.n_dof = nz
        self.free_vertex_dofs = [(np.flatnonzero(dof >= 0), dof[dof >= 0][:, None] + np.arange(3))
                                 for dof in self.vertex_dof]
        mask = np.ones(self.n_dof, dtype=bool)
        for off in self.affine_offset:
            mask[off + 3:off + 12] = False
        self.position_dofs = np.flatnonzero(mask)
        self._build_flat_maps()

    def _build_flat_maps(self):
        starts = np.cumsum([0] + [body.n_vertices for body in self.deformables])
        free_rows, free_dofs, prescribed_rows, prescribed_mount, motion = [], [], [], [], []
        free_start, prescribed_start = [0], [0]
        for i, (body, start, (free, z_index)) in enumerate(zip(self.deformables, starts, self.free_vertex_dofs)):
            free_rows.append(start + free)
            free_dofs.append(z_index)
            if self.deformable_mount[i] >= 0:
                prescribed_rows.append(start + body.prescribed)
                prescribed_mount.append(np.full(len(body.prescribed), self.deformable_mount[i]))
                motion.append(self.mount_motion[body.name][body.prescribed])
            free_start.append(free_start[-1] + len(free))
            prescribed_start.append(prescribed_start[-1] + (len(body.prescribed) if self.deformable_mount[i] >= 0
                                                            else 0))

        def flat(parts, shape, dtype):
            return np.ascontiguousarray(np.concatenate(parts), dtype=dtype) if parts else np.zeros(shape, dtype)

        self.vertex_start = starts
        self.n_vertices = int(starts[-1])
        self.free_rows = flat(free_rows, 0, np.int64)
        self.free_dofs = flat(free_dofs, (0, 3), np.int64)
        self.prescribed_rows = flat(prescribed_rows, 0, np.int64)
        self.prescribed_mount = flat(prescribed_mount, 0, np.int64)
        self.motion = flat(motion, (0, 3), np.float64)
        self.free_start = np.array(free_start, dtype=np.int64)
        self.prescribed_start = np.array(prescribed_start, dtype=np.int64)
        self.body_mount = np.array(self.deformable_mount, dtype=np.int64)

    def describe(self, index: int, affine_names) -> str:
        """Words for z[index]: a free vertex's coordinate of a deformable body, an affine body's
        coordinate (p_i or A_ij, affine_names: the affine bodies' names in order) or a mount's
        deflection."""
        for body, dof in zip(self.deformables, self.vertex_dof):
            hit = np.flatnonzero((dof >= 0) & (dof <= index) & (index < dof + 3))
            if hit.size:
                return f"{body.name} vertex {int(hit[0])} {'xyz'[index - dof[hit[0]]]}"
        for name, off in zip(affine_names, self.affine_offset):
            if off <= index < off + 12:
                k = index - off
                return f"{name} affine coordinate {'p_' + 'xyz'[k] if k < 3 else f'A_{(k - 3) // 3}{(k - 3) % 3}'}"
        return f"mount {index - self.mount_offset} deflection"

    def pack(self, state: State, velocities: bool = False) -> np.ndarray:
        """The vector z of a state's positions (or, with `velocities`, its rate)."""
        z = np.empty(self.n_dof)
        xs = state.deformable_v if velocities else state.deformable_x
        qs = state.affine_qdot if velocities else state.affine_q
        for x, (free, z_index) in zip(xs, self.free_vertex_dofs):
            z[z_index] = x[free]
        for q, off in zip(qs, self.affine_offset):
            z[off:off + 12] = q
        z[self.mount_offset:] = state.mount_udot if velocities else state.mount_u
        return z

    def deformable_positions(self, state: State, z, deflected=True) -> list:
        """Vertex positions (n,3) m of each deformable body: free vertices from z, prescribed
        ones from the state, moved by their mount's deflection in z unless `deflected` is False
        (the form the state stores)."""
        out = []
        for i, (x, (free, z_index)) in enumerate(zip(state.deformable_x, self.free_vertex_dofs)):
            x = x.copy()
            x[free] = z[z_index]
            if deflected:
                x = self.deflected(state, i, x, z)
            out.append(x)
        return out

    def deflected(self, state: State, i, x, z=None) -> np.ndarray:
        """Positions x (n,3) m of deformable i as stored, with its prescribed vertices moved by
        its mount's deflection (from z, default the state's); x itself when it has no mount."""
        j = self.deformable_mount[i]
        if j < 0:
            return x
        u = state.mount_u[j] if z is None else z[self.mount_offset + j]
        body = self.deformables[i]
        x = x.copy()
        x[body.prescribed] += u * self.mount_motion[body.name][body.prescribed]
        return x

    def store_positions(self, state: State, z) -> None:
        """Write the free positions, affine coordinates and mount deflections of z into `state`."""
        for i, x in enumerate(self.deformable_positions(state, z, deflected=False)):
            state.deformable_x[i] = x
        for j, off in enumerate(self.affine_offset):
            state.affine_q[j] = z[off:off + 12].copy()
        state.mount_u = z[self.mount_offset:].copy()

    def store_velocities(self, state: State, v) -> None:
        """Write the rates v (of z) of the free vertices, affine coordinates and mount
        deflections into `state`."""
        for i, (free, z_index) in enumerate(self.free_vertex_dofs):
            state.deformable_v[i][free] = v[z_index]
        for j, off in enumerate(self.affine_offset):
            state.affine_qdot[j] = v[off:off + 12].copy()
        state.mount_udot = v[self.mount_offset:].copy()

    def scene_positions(self, state: State, z) -> np.ndarray:
        """Every deformable vertex (n, 3), m, at z (as deformable_positions, deflected), all
        bodies' rows one after the other (engine.scene)."""
        X0 = np.concatenate(state.deformable_x) if self.deformables else np.zeros((0, 3))
        return scene._deformable_positions(X0, z, self.free_rows, self.free_dofs, self.prescribed_rows,
                                           self.prescribed_mount, self.motion, self.mount_offset)

    def scene_steps(self, p) -> np.ndarray:
        """The displacements (n, 3), m, of every deformable vertex under a step p of z, all bodies'
        rows one after the other (engine.scene)."""
        return scene._deformable_positions(np.zeros((self.n_vertices, 3)), p, self.free_rows, self.free_dofs,
                                           self.prescribed_rows, self.prescribed_mount, self.motion,
                                           self.mount_offset)


class ContactMap:
    """x = P z + c: the contact-surface vertex positions (N,3), m, at the unknowns z.

    P (3N, n_dof), sparse CSR (row 3 v + a: coordinate a of vertex v), from the triplets rows,
    cols, vals (lists of arrays, summed where they repeat); PT its transpose; z_index, z_coef
    (3N, 4): row i of P as up to 4 (z index, coefficient) pairs, indices ascending, -1 after the
    last; c (3N,): the driven vertices' positions (prescribed and kinematic, m; 0 elsewhere), set
    by `refresh`. driven_deformable: per deformable, (its index, its rows of x, its driven
    vertices); driven_kinematic: per kinematic body, (its index, its first row of x, end row)."""

    def __init__(self, rows, cols, vals, n_vertices, n_dof, driven_deformable, driven_kinematic):
        self.n_vertices = n_vertices
        self.P = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(3 * n_vertices, n_dof))
        self.PT = self.P.T.tocsr()
        self.driven_deformable = driven_deformable
        self.driven_kinematic = driven_kinematic
        self.c = np.zeros(3 * n_vertices)
        P = self.P
        per_row = np.diff(P.indptr)
        if per_row.max(initial=0) > 4:
            raise ValueError("a contact coordinate depends on more than 4 degrees of freedom")
        self.z_index = -np.ones((P.shape[0], 4), dtype=np.int64)
        self.z_coef = np.zeros((P.shape[0], 4))
        P = P.sorted_indices()
        slot = np.arange(P.nnz) - np.repeat(P.indptr[:-1], per_row)
        row = np.repeat(np.arange(P.shape[0]), per_row)
        self.z_index[row, slot] = P.indices
        self.z_coef[row, slot] = P.data

    def refresh(self, state: State) -> None:
        """Set c to the driven (prescribed and kinematic) vertices' positions in `state`."""
        c = np.zeros((self.n_vertices, 3))
        for i, rows, vertices in self.driven_deformable:
            c[rows] = state.deformable_x[i][vertices]
        for k, lo, hi in self.driven_kinematic:
            c[lo:hi] = state.kinematic_x[k]
        self.c = c.ravel()

    def positions(self, z) -> np.ndarray:
        """The contact-surface vertex positions x (N,3), m, at z."""
        P = self.P
        return scene._collision_positions(P.indptr, P.indices, P.data, z, self.c)

    def step_norm(self, p, position_dofs):
        """(largest coordinate (m) of a step p of z over the position DOFs `position_dofs`
        (Dofs.position_dofs) and the contact surface, the contact-surface displacements (N,3)
        under it)."""
        P = self.P
        return scene._step_norm(p, P.indptr, P.indices, P.data, position_dofs)
