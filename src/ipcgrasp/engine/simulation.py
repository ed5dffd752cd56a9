"""Time stepping by Incremental Potential Contact (docs/physics.md: the time step and the solver).

Each step minimises, over the free degrees of freedom z (free deformable vertex coordinates
and the 12 affine coordinates of each affine body),

    E(z) = 1/2 (z - z~)^T M (z - z~) + h^2 (Psi(z) + V_ortho(z)) + kappa B(x(z)) + D(x(z))

with z~ = z_t + h v_t + h^2 a_gravity, B the summed log barrier over active contacts, D the
lagged smoothed friction (normal forces and tangent bases from the start of the step), and
x(z) = P z + c the contact-surface vertex positions (P constant, c the driven vertices).
Projected Newton with a sparse direct solve (near convergence with the barrier Hessians
unprojected while the Hessian stays positive definite); the line search clips the step by CCD,
then by tet inversion, then backtracks on E. Every accepted configuration is intersection-free.

With SolverSettings.contact_model = "penalty" the barrier is replaced by the BLEM penalty
potential of `penalty` (h^2 times its energy, lagged friction with penalty normal forces,
optional k-means contact clusters): discrete collision detection only, i.e. no CCD in the line
search or the drive and no adaptive stiffness; the tet non-inversion limit and the energy
backtracking stay (the two models behind one interface: solver.contact_model). Newton uses the
penalty's Gauss-Newton Hessian, and a full step that lowers E by more than 1.5 times its
quadratic model predicts is doubled while E keeps falling (contacts leaving the layers or
sliding round an edge have less curvature than the PSD model). With clustering a step takes at
least two passes (see `penalty`). Either way every step reports the actual interpenetration
(`penetration`) and the largest gap at which a contact force acted.

The Hessian's upper triangle is assembled straight into a CSC pattern that is kept while the
contacts couple no new degrees of freedom (per-entry slots for the fixed parts, contact
Hessians carried into z through per-coordinate maps of P; a pattern that grows carries its fixed
entries' slots and assembled values into the new one), and factored by qdldl's LDL^T
(engine.ldlt: its C routines called from numba), whose ordering and symbolic analysis are
reused while the pattern stays (measured against SciPy's SuperLU: 0.3 ms against 1.8 ms per
solve at 700 DOFs). A contact's Hessian block is contracted onto the degrees of freedom it
depends on before it enters the pattern (an affine body's 12 coordinates rather than 16 z
entries per x-space entry), and a tet's elastic Hessian
is reused while its deformation gradient stays within ELASTIC_HESSIAN_REUSE of where it was
computed (benchmarks/bench_trial.py measures both). A warm start's forced first Newton step is
tried with the factorisation where the last step ended, which then also tests convergence
(CARRIED_MODEL, CARRIED_CONVERGED): a lift step mostly assembles no Hessian; with the drivers at
rest it serves the drive's predictor. A contact's barrier Hessian is projected
to PSD on its column space, 5 of 12 dimensions for most contacts (barrier.py). Broad-phase pairs are kept
while the contact surface stays within PAIR_CACHE_SLACK dhat of where they were found and
re-tested box by box (solver.proximity), and a drive round that starts where the last Newton
solve converged reuses that solve's gradient and factorisation. All three give the same
iterates as the plain computation up to rounding.

Driven motion (prescribed vertices, kinematic bodies) is imposed in one of two ways per step
(`_step`): a warm start (`_warm_start`: drivers at their targets, driven pads moved with them,
affine bodies carried on at their velocity, taken when CCD, tet inversion and a distance floor
admit the straight motion to it), or else the drive-and-settle continuation (`_drive`,
`_move`, `_newton`, up to MAX_DRIVE_ROUNDS rounds). Both start the same Newton solve.

The inner loop calls the kernels of neohookean, broadphase and ccd directly: their inputs are
the simulation's own arrays (validated once, at construction), and per-call validation would
cost about as much as the kernels.
"""

from __future__ import annotations

import time as _time
from dataclasses import fields, replace

import numpy as np
import scipy.sparse as sp

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine import scene
from ipcgrasp.engine.affine_body import affine_jacobian, affine_positions, nearest_rotation
from ipcgrasp.engine.barrier import barrier_stiffness_bounds, initial_barrier_stiffness, update_barrier_stiffness
from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground, KinematicBody
from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.ldlt import Ldlt
from ipcgrasp.engine.mounts import CompliantMount, linked_tet_entries
from ipcgrasp.engine.penetration import PenetrationProbe
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
from ipcgrasp.engine.solver.contact_model import BarrierContact, PenaltyContact, body_pair_resultants
from ipcgrasp.engine.solver.dofs import ContactMap, Dofs
from ipcgrasp.engine.solver.drive import DrivenBodies, pose_parts
from ipcgrasp.engine.solver.line_search import MIN_STEP, StepLimits, backtrack, extrapolate
from ipcgrasp.engine.solver.proximity import Proximity
from ipcgrasp.engine.solver.settings import (
    CARRIED_CONVERGED,
    CARRIED_MODEL,
    COARSE_ROUND_TOLERANCE,
    DRIVER_AT_REST,
    ELASTIC_HESSIAN_REUSE,
    MAX_CLUSTER_PASSES,
    MAX_DRIVE_ROUNDS,
    MIN_DISTANCES_KEPT,
    NEWTON_GAP_FLOOR,
    UNPROJECTED_CONTACTS_NEAR,
    SolverSettings,
    StepFailed,
    StepStats,
)
from ipcgrasp.engine.solver.state import State


class Simulation:
    """A scene of bodies advanced by `step`.

    bodies: DeformableBody, AffineBody and KinematicBody instances (unique names);
    poses: name -> initial 4x4 pose (identity when missing); ground: Ground or None;
    friction: {(name_a, name_b): mu} (use "ground" as a name for the ground; default
    ground.mu); default_friction: mu for unlisted pairs; ignore_pairs: pairs of names that never
    touch (e.g. a pad and the backing it is glued to); mounts: `mounts.CompliantMount`s whose
    driven bodies follow their drivers through a spring (default none: drivers are followed
    exactly).

    newton_iterations_run: the Newton iterations of every step attempt so far, as StepStats
    counts them: of steps taken, abandoned by give_up and failed (StepFailed), and kept through
    `restore` (the work done, where StepStats.newton_iterations is a taken step's).
    """

    def __init__(self, bodies, poses=None, ground: Ground | None = None, friction=None,
                 default_friction: float = 0.0, ignore_pairs=(), settings: SolverSettings | None = None,
                 mounts=()):
        self.settings = settings or SolverSettings()
        self.bodies = list(bodies)
        names = [b.name for b in self.bodies]
        if len(set(names)) != len(names):
            raise ValueError(f"body names must be unique, got {names}")
        self.index = {name: i for i, name in enumerate(names)}
        poses = dict(poses or {})
        unknown = set(poses) - set(names)
        if unknown:
            raise ValueError(f"poses given for unknown bodies {sorted(unknown)}; bodies are {names}")
        self.ground = ground
        self.deformables = [b for b in self.bodies if isinstance(b, DeformableBody)]
        self.affines = [b for b in self.bodies if isinstance(b, AffineBody)]
        self.kinematics = [b for b in self.bodies if isinstance(b, KinematicBody)]
        self._assign_mounts(list(mounts), poses)
        self._build_layout(poses)
        self._build_collision_mesh(friction or {}, default_friction, ignore_pairs)
        self._build_mass()
        self.driven = DrivenBodies(self.bodies, self.index, self.deformables, self.kinematics, self.dofs,
                                   self._mount_rotation, self._linked_entries)
        s = self.settings
        lo, hi = self._x.min(axis=0), self._x.max(axis=0)
        self.bbox_diagonal = float(np.linalg.norm(hi - lo))
        if s.contact_model == "penalty":
            self.dhat = 2.0 * float(s.penalty_margin)
        else:
            self.dhat = float(s.dhat) if s.dhat is not None else 1e-3 * self.bbox_diagonal
        self.proximity = Proximity(self.mesh, self.dhat, self.bbox_diagonal)
        sc = self._scene
        self.step_limits = StepLimits(self.mesh, self._plane_arrays, self.proximity, sc["tets"], sc["Dm_inv"],
                                      sc["tet_start"], [body.name for body in self.deformables])
        self.contact_model = (PenaltyContact(s, self.proximity.plane_vertices) if s.contact_model == "penalty"
                              else BarrierContact(s, self.dhat, self.proximity, sc["no_friction"]))
        moved_affinely = np.zeros(len(self.bodies), dtype=bool)  # rigid objects, affine bodies, jaws
        for body in self.affines + self.kinematics:
            moved_affinely[self.index[body.name]] = True
        self._penetration = PenetrationProbe.from_collision_mesh(self.mesh, moved_affinely)
        self.barrier_stiffness = None
        self.max_barrier_stiffness = None
        self._accepted_contacts = (None, None)  # positions of the last accepted step and their contacts
        self._carried_factorisation = False  # the solver holds the Hessian where the last step ended
        self._factored_contacts = None  # the active contacts (Collisions.vertices) of the last Hessian
        self._min_distances = []  # (contacts, positions, their min_distance), the latest first
        self.newton_iterations_run = 0
        x = self.collision_positions()
        if self._min_distance(x) <= 0.0:
            raise ValueError("the initial configuration intersects or touches (distance 0): separate the bodies")

    # ------------------------------------------------------------------------------------ layout
    def _assign_mounts(self, mounts, poses):
        """Check the mounts and note, per deformable and per kinematic body, the index of the mount
        it rides on (-1: none), each mounted body's initial rotation (drivers may not change it:
        the mount's axis is fixed in the world) and the motion (n,3) of its vertices per metre of
        deflection (mode shape times axis)."""
        self.mounts = mounts
        self._deformable_mount = [-1] * len(self.deformables)
        self._kinematic_mount = [-1] * len(self.kinematics)
        self._mount_rotation = {}
        self._mount_motion = {}
        for j, mount in enumerate(mounts):
            if not isinstance(mount, CompliantMount):
                raise ValueError(f"mounts must be CompliantMount instances, got {type(mount).__name__}")
            for name in mount.bodies:
                if name not in self.index:
                    raise ValueError(f"mount {mount.name!r} holds unknown body {name!r}")
                body = self.bodies[self.index[name]]
                if isinstance(body, DeformableBody) and body.prescribed.size:
                    table, i = self._deformable_mount, self.deformables.index(body)
                elif isinstance(body, KinematicBody):
                    table, i = self._kinematic_mount, self.kinematics.index(body)
                else:
                    raise ValueError(f"mount {mount.name!r}: body {name!r} is not driven (a deformable body "
                                     "with prescribed vertices or a kinematic body)")
                if table[i] >= 0:
                    raise ValueError(f"body {name!r} is on two mounts")
                table[i] = j
                self._mount_rotation[name] = pose_parts(poses.get(name, np.eye(4)))[0].copy()
                self._mount_motion[name] = mount.shape(name, body.n_vertices)[:, None] * mount.axis

    def _build_layout(self, poses):
        """The layout of the unknowns z (solver.dofs) and the initial state at `poses`."""
        self.dofs = Dofs(self.deformables, len(self.affines), len(self.mounts), self._deformable_mount,
                         self._mount_motion)
        self.n_dof = self.dofs.n_dof
        x_def, v_def = [], []
        for body in self.deformables:
            R, t = pose_parts(poses.get(body.name, np.eye(4)))
            x_def.append(body.rest_positions @ R.T + t)
            v_def.append(np.zeros((body.n_vertices, 3)))
        q, qdot = [], []
        for body in self.affines:
            R, t = pose_parts(poses.get(body.name, np.eye(4)))
            q.append(np.concatenate([t, R.ravel()]))
            qdot.append(np.zeros(12))
        x_kin = []
        for body in self.kinematics:
            R, t = pose_parts(poses.get(body.name, np.eye(4)))
            x_kin.append(body.vertices @ R.T + t)
        self.state = State(0.0, x_def, v_def, q, qdot, x_kin, np.zeros(len(self.mounts)), np.zeros(len(self.mounts)))

    def _build_collision_mesh(self, friction, default_friction, ignore_pairs):
        """Stack every body's contact surface into one collision mesh and the map x = P z + c."""
        rows, cols, vals = [], [], []
        faces, vertex_body, self._surface = [], [], []  # per body: (its first row of x, its contact vertices)
        n = 0
        for body in self.bodies:
            b = self.index[body.name]
            if isinstance(body, DeformableBody):
                surf = np.unique(body.faces)
                local = -np.ones(body.n_vertices, dtype=np.int64)
                local[surf] = np.arange(len(surf))
                faces.append(local[body.faces] + n)
                i = self.deformables.index(body)
                dof = self.dofs.vertex_dof[i][surf]
                c = n + np.flatnonzero(dof >= 0)
                for a in range(3):
                    rows.append(3 * c + a)
                    cols.append(dof[dof >= 0] + a)
                    vals.append(np.ones(len(c)))
                self._map_mounted(rows, cols, vals, self._deformable_mount[i], body.name, n, surf[dof < 0],
                                  np.flatnonzero(dof < 0))
            else:
                surf = np.arange(body.n_vertices)
                faces.append(body.faces + n)
                if isinstance(body, KinematicBody):
                    self._map_mounted(rows, cols, vals, self._kinematic_mount[self.kinematics.index(body)],
                                      body.name, n, surf, surf)
                if isinstance(body, AffineBody):
                    off = self.dofs.affine_offset[self.affines.index(body)]
                    J = affine_jacobian(body.vertices)  # (m,3,12)
                    r = (3 * (n + np.arange(body.n_vertices)))[:, None, None] + np.arange(3)[None, :, None]
                    cidx = np.broadcast_to(off + np.arange(12), J.shape)
                    nz_mask = J != 0.0
                    rows.append(np.broadcast_to(r, J.shape)[nz_mask])
                    cols.append(cidx[nz_mask])
                    vals.append(J[nz_mask])
            self._surface.append((n, surf))
            vertex_body.append(np.full(len(surf), b, dtype=np.int64))
            n += len(surf)
        self.n_collision_vertices = n
        driven_deformable = []  # (deformable index, rows of x, its driven contact vertices)
        driven_kinematic = []  # (kinematic index, first row of x, end row)
        for body, (start, surf) in zip(self.bodies, self._surface):
            if isinstance(body, DeformableBody):
                i = self.deformables.index(body)
                driven = self.dofs.vertex_dof[i][surf] < 0
                driven_deformable.append((i, start + np.flatnonzero(driven), surf[driven]))
            elif isinstance(body, KinematicBody):
                driven_kinematic.append((self.kinematics.index(body), start, start + len(surf)))
        self.contact_map = ContactMap(rows, cols, vals, n, self.n_dof, driven_deformable, driven_kinematic)
        B = len(self.bodies)
        can_collide = ~np.eye(B, dtype=bool)
        kin = [self.index[k.name] for k in self.kinematics]
        can_collide[np.ix_(kin, kin)] = False
        for a, b in ignore_pairs:
            i, j = self.index[a], self.index[b]
            can_collide[i, j] = can_collide[j, i] = False
        mu, mu_plane = self._friction_coefficients(friction, default_friction)
        plane = None
        plane_bodies = np.zeros(B, dtype=bool)
        if self.ground is not None:
            plane = (self.ground.origin, self.ground.normal)
            plane_bodies[:] = True
            plane_bodies[kin] = False
        self._x = np.zeros((n, 3))
        self._refresh_driven()
        self.mesh = contact.CollisionMesh.build(self._x, np.concatenate(faces), np.concatenate(vertex_body),
                                                can_collide=can_collide, plane=plane, mu=mu, mu_plane=mu_plane,
                                                plane_body_mask=plane_bodies)
        self._plane_arrays = ((self.mesh.plane_origin, self.mesh.plane_normal) if self.mesh.has_plane
                              else (np.zeros(3), np.array([0.0, 0.0, 1.0])))

    def _map_mounted(self, rows, cols, vals, mount, name, start, vertices, local):
        """Append to the triplets of P the rows of the driven `vertices` (body indices) of body
        `name` on mount `mount` (-1: none), which are collision vertices start + `local`:
        x = c + u phi a."""
        if mount < 0:
            return
        motion = self._mount_motion[name][vertices]
        for a in range(3):
            moving = motion[:, a] != 0.0
            rows.append(3 * (start + local[moving]) + a)
            cols.append(np.full(int(moving.sum()), self.dofs.mount_offset + mount))
            vals.append(motion[moving, a])

    def set_gravity(self, gravity):
        """Change the gravity vector (m/s^2) from the next step on."""
        self.settings.gravity = tuple(float(v) for v in gravity)
        g = np.asarray(self.settings.gravity)
        self._gravity_acc = np.zeros(self.n_dof)
        for dof in self.dofs.vertex_dof:
            free = dof >= 0
            self._gravity_acc[dof[free][:, None] + np.arange(3)] = g
        for off in self.dofs.affine_offset:
            self._gravity_acc[off:off + 3] = g  # M_q (g, 0) is the generalised gravity force

    def _build_mass(self):
        rows, cols, vals = [], [], []
        self.set_gravity(self.settings.gravity)
        for body, dof in zip(self.deformables, self.dofs.vertex_dof):
            free = dof >= 0
            for a in range(3):
                rows.append(dof[free] + a)
                cols.append(dof[free] + a)
                vals.append(body.masses[free])
        if self.mounts:
            rows.append(self.dofs.mount_offset + np.arange(len(self.mounts)))
            cols.append(rows[-1])
            vals.append(np.array([m.mass for m in self.mounts]))
        for body, off in zip(self.affines, self.dofs.affine_offset):
            idx = off + np.arange(12)
            rows.append(np.repeat(idx, 12))
            cols.append(np.tile(idx, 12))
            vals.append(body.mass_matrix.ravel())
        self._mass_entries = (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals))
        self._base_mass_values = self._mass_entries[2].copy()
        self._affine_mass_range = {}  # affine index -> slice of its block in the mass entries
        start = sum(len(v) for v in vals[:len(vals) - len(self.affines)])
        for j in range(len(self.affines)):
            self._affine_mass_range[j] = slice(start + 144 * j, start + 144 * (j + 1))
        self._M = sp.csr_matrix((self._mass_entries[2], self._mass_entries[:2]), shape=(self.n_dof, self.n_dof))
        self._average_mass = float(self._M.diagonal().mean())
        # per deformable, per tet: the last SVD rotation V (the next SVD starts from it: a few Jacobi
        # sweeps fewer), and the deformation gradient and unscaled projected Hessian last computed
        # (all bodies' tets one after the other, as engine.scene)
        n_tets = sum(len(body.tets) for body in self.deformables)
        self._svd_rotations = np.tile(np.eye(3), (n_tets, 1, 1))
        self._tet_hessian_cache = (np.full((n_tets, 3, 3), np.nan), np.zeros((n_tets, 12, 12)))
        self._tet_changed = np.zeros(n_tets, dtype=np.bool_)  # per tet: its Hessian was recomputed by the last call
        self._build_scene()
        self._build_hessian_pattern()

    def _build_scene(self):
        """Every deformable body's vertices, tets and material, the affine bodies' and the mounts'
        constants in the flat arrays of engine.scene (its module docstring)."""
        d = self.dofs

        def flat(parts, shape, dtype):
            return np.ascontiguousarray(np.concatenate(parts), dtype=dtype) if parts else np.zeros(shape, dtype)

        self._scene = dict(
            n_vertices=d.n_vertices,
            free_rows=d.free_rows, free_dofs=d.free_dofs, prescribed_rows=d.prescribed_rows,
            prescribed_mount=d.prescribed_mount, motion=d.motion,
            tets=flat([body.tets + start for body, start in zip(self.deformables, d.vertex_start)], (0, 4), np.int64),
            Dm_inv=flat([body.Dm_inv for body in self.deformables], (0, 3, 3), np.float64),
            volumes=flat([body.volumes for body in self.deformables], 0, np.float64),
            tet_start=np.cumsum([0] + [len(body.tets) for body in self.deformables]).astype(np.int64),
            mu=np.array([float(body.mu) for body in self.deformables]),
            lam=np.array([float(body.lam) for body in self.deformables]),
            affine_offset=np.array(d.affine_offset, dtype=np.int64),
            affine_stiffness=np.array([float(body.stiffness) for body in self.affines]),
            affine_volume=np.array([float(body.volume) for body in self.affines]),
            mount_stiffness=np.array([float(mount.stiffness) for mount in self.mounts]),
            free_start=d.free_start, prescribed_start=d.prescribed_start, body_mount=d.body_mount,
            no_friction=(np.zeros(0, np.int8), np.zeros((0, 4), np.int64), np.zeros((0, 3, 2)), np.zeros((0, 2)),
                         np.zeros(0), np.zeros(0)),
        )

    def _build_hessian_pattern(self):
        """The z-space entries of the Hessian's fixed parts (mass, per-tet elastic blocks with
        prescribed rows/columns dropped, orthogonality blocks) and the initial CSC pattern."""
        rows, cols = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for body, dof in zip(self.deformables, self.dofs.vertex_dof):  # entry 144 t + 12 r + c of tet t, all bodies
            tet_dof = np.where(dof[body.tets][:, :, None] >= 0, dof[body.tets][:, :, None] + np.arange(3), -1)
            tet_dof = tet_dof.reshape(len(body.tets), 12)
            r = np.broadcast_to(tet_dof[:, :, None], (len(body.tets), 12, 12)).ravel()
            c = np.broadcast_to(tet_dof[:, None, :], (len(body.tets), 12, 12)).ravel()
            rows.append(np.where(c >= 0, r, -1))
            cols.append(c)
        self._tet_entries = (np.concatenate(rows), np.concatenate(cols))
        self._tet_entry_groups = _entry_groups(*self._tet_entries, self.n_dof)
        self._tet_group_dirty = np.zeros(len(self._tet_entry_groups[1]) - 1, dtype=np.bool_)
        self._tet_group_touched = np.empty(len(self._tet_group_dirty), dtype=np.int64)  # _assemble_elastic's work
        idx = [off + np.arange(12) for off in self.dofs.affine_offset]  # entry 144 j + 12 r + c of affine body j
        self._ortho_entries = (np.concatenate([np.repeat(i, 12) for i in idx] + [np.zeros(0, dtype=np.int64)]),
                               np.concatenate([np.tile(i, 12) for i in idx] + [np.zeros(0, dtype=np.int64)]))
        # per deformable on a mount: the elastic Hessian entries its prescribed vertices carry onto
        # the mount's degree of freedom (mounts.linked_tet_entries), else None; and all of them
        # (tets numbered over all bodies)
        self._linked_entries = []
        for body, dof, j in zip(self.deformables, self.dofs.vertex_dof, self._deformable_mount):
            self._linked_entries.append(None if j < 0 else linked_tet_entries(
                body.tets, dof, body.prescribed, self.dofs.mount_offset + j, self.mounts[j].axis,
                self.mounts[j].shape(body.name, body.n_vertices)))
        linked = [(e[0] + start, *e[1:]) for e, start in zip(self._linked_entries, self._scene["tet_start"])
                  if e is not None]
        self._linked = tuple(np.concatenate([e[k] for e in linked] + [empty])
                             for k, empty in enumerate((np.zeros(0, np.int64), np.zeros(0, np.int64),
                                                        np.zeros(0, np.int64), np.zeros(0))))
        static = [self._mass_entries[:2], self._tet_entries, self._ortho_entries, self._linked[1:3]]
        keys = [c * self.n_dof + r for r, c in static]
        keys = np.concatenate([k[(r >= 0) & (r <= c)] for k, (r, c) in zip(keys, static)])
        self._set_hessian_pattern(np.unique(keys))

    def _set_hessian_pattern(self, keys, moved=None):
        """Use the upper-triangle CSC pattern of the sorted unique keys col * n_dof + row: place
        the fixed entries in it and start a new factorisation (the ordering is computed once per
        pattern). moved: when keys grow the current pattern, where each of its entries now sits
        (np.searchsorted(keys, old keys)); the fixed entries' slots and the values assembled in the
        old pattern (mass, elastic part, the last Hessian without contact) are carried over to it
        instead of being found and summed again: the same values, bit for bit."""
        n = self.n_dof
        cols = keys // n
        self._hessian_keys = keys
        self._indices = keys - cols * n
        self._indptr = np.searchsorted(cols, np.arange(n + 1))
        if moved is None:
            self._tet_slots = _pattern_slots(self._indptr, self._indices, *self._tet_entries)
            self._ortho_slots = _pattern_slots(self._indptr, self._indices, *self._ortho_entries)
            self._linked_slots = _pattern_slots(self._indptr, self._indices, *self._linked[1:3])
            mount_dofs = self.dofs.mount_offset + np.arange(len(self.mounts))
            self._mount_slots = _pattern_slots(self._indptr, self._indices, mount_dofs, mount_dofs)
            r, c, m = self._mass_entries
            self._mass_data = np.zeros(len(keys))
            _add_scaled(self._mass_data, _pattern_slots(self._indptr, self._indices, r, c), m, 1.0)
            self._last_hessian_without_contact = (None, None, None, None)
            self._elastic = (np.zeros(len(keys)), None)  # mass + h^2 elastic part, and its h^2 (None: not assembled)
        else:
            for name in ("_tet_slots", "_ortho_slots", "_linked_slots", "_mount_slots"):
                setattr(self, name, _moved_slots(getattr(self, name), moved))
            self._mass_data = _moved_values(self._mass_data, moved, len(keys))
            z_last, X_last, keys_last, data = self._last_hessian_without_contact
            if keys_last is not None:
                self._last_hessian_without_contact = (z_last, X_last, keys, _moved_values(data, moved, len(keys)))
            elastic, assembled_h2 = self._elastic
            self._elastic = (_moved_values(elastic, moved, len(keys)), assembled_h2)
        entry_group, group_ptr, group_entries = self._tet_entry_groups
        self._tet_group_slots = self._tet_slots[group_entries[group_ptr[:-1]]]
        self._solver = None
        self._factored = None

    # --------------------------------------------------------------------------- state <-> dofs
    def _refresh_driven(self):
        """Write the driven (prescribed/kinematic) positions of the state into c of x = P z + c."""
        self.contact_map.refresh(self.state)
        self._x = self.collision_positions()

    def pack(self, state: State | None = None, velocities: bool = False) -> np.ndarray:
        """The free DOF vector z (or its rate) of a state (default: the current one)."""
        return self.dofs.pack(state or self.state, velocities)

    def collision_positions(self, z=None) -> np.ndarray:
        """Contact-surface vertex positions (N,3) in m for DOF vector z (default: the state's)."""
        return self.contact_map.positions(self.pack() if z is None else z)

    # ------------------------------------------------------------------------------ potentials
    def _collisions(self, x, candidate_pairs=None):
        """Active contacts at x; `candidate_pairs` from `Proximity.candidates` over a segment containing x
        (default: a broad phase at x alone)."""
        if candidate_pairs is None:
            candidate_pairs = self.proximity.candidates(x, x, self.dhat)
        return self.contact_model.collisions(self.mesh, x, candidate_pairs)

    def _min_distance_of(self, coll, x):
        """contact.min_distance(coll, mesh, x), remembered for the last MIN_DISTANCES_KEPT pairs of
        (contacts, positions): a step asks it of the same contacts at the same positions up to four
        times (the Newton iterate, the step's report, the next step's start and its warm start)."""
        for known, at, value in self._min_distances:
            if known is coll and (at is x or np.array_equal(at, x)):
                return value
        value = contact.min_distance(coll, self.mesh, x)
        self._remember_min_distance(coll, x, value)
        return value

    def _remember_min_distance(self, coll, x, value):
        self._min_distances = [(coll, x, value)] + self._min_distances[:MIN_DISTANCES_KEPT - 1]

    def _min_distance(self, x):
        """Smallest distance (m) over the active contacts at x (the contact model's)."""
        return self.contact_model.min_distance(self.mesh, x, self._collisions(x))

    def _energy(self, z, z_tilde, friction, x_t, candidate_pairs=None, coll=None):
        """(the terms of E(z) for _total_energy, x(z), active contacts at x(z)); coll: those
        contacts if already known, else they are built from candidate_pairs (default: a broad
        phase at x(z)). The terms: inertia + h^2 (elastic + orthogonality + mounts), the contact
        model's term (the barrier sum without kappa: kappa may change before they are summed), the
        friction potential."""
        sc, M = self._scene, self._M
        e = scene._energy_without_contact(z, z_tilde, self.settings.dt ** 2, M.indptr, M.indices, M.data,
                                          self.dofs.scene_positions(self.state, z), sc["tets"], sc["Dm_inv"],
                                          sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"], sc["affine_offset"],
                                          sc["affine_stiffness"], sc["affine_volume"], self.dofs.mount_offset,
                                          sc["mount_stiffness"])
        x = self.collision_positions(z)
        eps_u = self.settings.eps_v * self.settings.dt
        if coll is None:
            if candidate_pairs is None:
                candidate_pairs = self.proximity.candidates(x, x, self.dhat)
            contact_term, fric, coll, min_distance = self.contact_model.terms(self.mesh, x, candidate_pairs,
                                                                              friction, x_t)
            if min_distance is not None:
                self._remember_min_distance(coll, x, min_distance)
            return (e, contact_term, fric), x, coll
        contact_term = self.contact_model.potential(self.mesh, coll, x)
        fric = None
        if friction is not None:
            fric = contact.friction_potential(friction, self.mesh, x - x_t, eps_u)
        return (e, contact_term, fric), x, coll

    def _total_energy(self, terms):
        """E from the terms of _energy at the current barrier stiffness."""
        e, barrier, fric = terms
        e += self.contact_model.weight(self.barrier_stiffness) * barrier
        if fric is not None:
            e += fric
        return e

    def _gradient_without_contact(self, z, z_tilde):
        """Gradient of inertia + h^2 (elastic + orthogonality + mount springs) in z (engine.scene)."""
        sc, M = self._scene, self._M
        return scene._gradient_without_contact(
            z, z_tilde, self.settings.dt ** 2, M.indptr, M.indices, M.data, self.dofs.scene_positions(self.state, z),
            sc["tets"], sc["Dm_inv"], sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"], sc["free_rows"],
            sc["free_dofs"], sc["free_start"], sc["prescribed_rows"], sc["motion"], sc["prescribed_start"],
            sc["body_mount"], sc["affine_offset"], sc["affine_stiffness"], sc["affine_volume"], self.dofs.mount_offset,
            sc["mount_stiffness"])

    def _gradient(self, z, z_tilde, friction, x_t, x, coll):
        """Gradient (n_dof,) of the incremental potential at z; x, coll: the contact positions and
        active contacts at z."""
        g = self._gradient_without_contact(z, z_tilde)
        return self.contact_model.add_gradient(g, self.contact_map.PT, self.mesh, x, coll, self.barrier_stiffness,
                                               friction, x_t)

    def _hessian(self, z, friction, x_t, x, coll, project=True):
        """Upper-triangle CSC values (in the current pattern) of the Hessian of the incremental
        potential at z, its contact blocks PSD-projected with `project` (barrier; the penalty
        model's are always); x, coll: the contact positions and active contacts at z. The pattern
        grows when contacts couple degrees of freedom it lacks."""
        data = self._hessian_without_contact(z)
        self._factored_contacts = coll.vertices  # the contacts of the Hessian about to be factored
        pattern = (self._indptr, self._indices, self.contact_map.z_index, self.contact_map.z_coef, self.dofs.dense_lo)
        missing, terms = self.contact_model.add_hessian(data, pattern, self._add_contact_terms, self.mesh, x, coll,
                                                        self.barrier_stiffness, friction, x_t, project)
        return self._grown(z, terms) if missing else data

    def _grown(self, z, terms):
        """The pattern grown by the entries the x-space Hessian terms (rows, cols, vals, scale,
        offsets) couple and it lacks, and the Hessian values at z in it: the values without contact
        (carried over from the old pattern) plus the terms."""
        old_keys = self._hessian_keys
        missing = [_missing_hessian_keys(r, c, self.contact_map.z_index, self.n_dof, self._indptr, self._indices)
                   for r, c, *_ in terms]
        keys = _union_keys(old_keys, np.concatenate(missing))
        self._set_hessian_pattern(keys, np.searchsorted(keys, old_keys))
        data = self._hessian_without_contact(z)
        self._add_contact_terms(data, terms)
        return data

    def _hessian_without_contact(self, z):
        """Upper-triangle CSC values of M + h^2 (elastic + orthogonality Hessians) at z. The last
        result is kept with its positions: a step's drive needs it where the previous step's
        Newton ended."""
        X = self.dofs.scene_positions(self.state, z)
        z_last, X_last, keys_last, data = self._last_hessian_without_contact
        if keys_last is self._hessian_keys and np.array_equal(z_last, z) and np.array_equal(X_last, X):
            return data.copy()
        sc = self._scene
        h2 = self.settings.dt ** 2
        data = np.empty(len(self._hessian_keys))
        elastic, assembled_h2 = self._elastic
        scene._add_hessian_without_contact(
            data, h2, z, X, sc["tets"], sc["Dm_inv"], sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"],
            self._tet_slots, self._svd_rotations, *self._tet_hessian_cache, ELASTIC_HESSIAN_REUSE, elastic,
            assembled_h2 == h2, self._mass_data, self._tet_changed, *self._tet_entry_groups, self._tet_group_slots,
            self._tet_group_dirty, self._tet_group_touched, self._linked_slots, self._linked[3], self._linked[0],
            self._mount_slots, sc["mount_stiffness"], sc["affine_offset"], sc["affine_stiffness"], sc["affine_volume"],
            self._ortho_slots)
        self._elastic = (elastic, h2)
        self._last_hessian_without_contact = (z.copy(), X, self._hessian_keys, data.copy())
        return data

    def _add_contact_terms(self, data, terms):
        """Add the x-space (rows, cols, vals, scale, offsets) Hessian terms to data through
        x = P z + c (offsets: per-contact block boundaries of the triplets, contracted block by
        block; None: triplet by triplet); returns how many z-space entries the pattern lacks."""
        missing = 0
        z_index, z_coef = self.contact_map.z_index, self.contact_map.z_coef
        for r, c, v, scale, offsets in terms:
            if offsets is None:
                missing += _add_mapped_hessian(data, self._indptr, self._indices, r, c, v, scale, z_index, z_coef)
            else:
                missing += _add_mapped_blocks(data, self._indptr, self._indices, r, v, offsets, scale,
                                              z_index, z_coef, self.dofs.dense_lo)
        return missing

    def _factor(self, data) -> bool:
        """Factor the Hessian with values `data` (LDL^T, engine.ldlt; the fill-reducing ordering
        and symbolic analysis are reused while the pattern stays); False if it is singular."""
        self._factored = None
        if self._solver is None:
            self._solver = Ldlt(self._indptr, self._indices, self.n_dof)
        return self._solver.factor(data)

    def _solve(self, data, rhs):
        """Solve H p = rhs for the Hessian values `data`."""
        if not self._factor(data):
            raise StepFailed(f"the Newton Hessian is singular (a zero pivot in its LDL^T{self._zero_pivot(data)})",
                             self.state.copy())
        return self._solver.solve(rhs)

    def _zero_pivot(self, data) -> str:
        """Where the last factorisation met its zero pivot, in words: the degree of freedom, its
        diagonal entry and the largest entry of the Hessian (values `data`)."""
        zero = np.flatnonzero(self._solver.D == 0.0)
        if not zero.size:
            return ""
        index = int(self._solver.perm[zero[0]])
        diagonal = data[self._indptr[index + 1] - 1]
        return (f" at {self.dofs.describe(index, [b.name for b in self.affines])}: its diagonal entry "
                f"{diagonal:.3g}, the largest entry {np.max(np.abs(data)):.3g}")

    # ------------------------------------------------------------------------------- stepping
    def _drive(self, targets_def, targets_kin, z_tilde, friction, x_t, x, coll):
        """Move prescribed vertices and kinematic bodies from where they are toward their targets,
        with the free degrees of freedom following by one Newton step of the incremental potential
        with the driven motion imposed (dz = -H_zz^-1 (g + H_zc dc): IPC's first iteration with
        Dirichlet conditions, so a body already moving, e.g. pushed by a pad, keeps moving with
        it), as far as CCD and tet inversion allow. Returns the fraction of the remaining driven
        motion taken (1 = all of it) and the active contacts after the move (x, coll: the contact
        positions and active contacts before it)."""
        state = self.state
        z = self.pack()
        dc = []  # per deformable: the prescribed vertices' displacements (zero elsewhere)
        for i, body in enumerate(self.deformables):
            dc.append(np.zeros((body.n_vertices, 3)))
            if i in targets_def:
                dc[i][body.prescribed] = targets_def[i] - state.deformable_x[i][body.prescribed]
        factored = self._factored  # where the last Newton solve converged, if it is here
        reuse = (factored is not None and factored[1] is z_tilde and factored[2] is friction and factored[3] is x_t
                 and factored[4] is coll and factored[5] == self.barrier_stiffness and np.array_equal(factored[0], z))
        rhs = -(factored[6] if reuse else self._gradient(z, z_tilde, friction, x_t, x, coll))
        if any(np.any(d) for d in dc):
            rhs -= self.driven.coupling(self.state, z, dc, self.settings.dt ** 2)
        # with the drivers at rest the step starts where the last one ended: its last factorisation
        # serves the predictor (Newton then converges with fresh Hessians)
        carried = (not reuse and self._carried_factorisation and self._solver is not None
                   and self.driven.gap(self.state, targets_def, targets_kin) <= DRIVER_AT_REST * self.bbox_diagonal
                   and np.array_equal(self._factored_contacts, coll.vertices))
        self._carried_factorisation = False
        dz = (self._solver.solve(rhs) if reuse or carried
              else self._solve(self._hessian(z, friction, x_t, x, coll), rhs))
        if not np.isfinite(dz).all():
            dz = np.zeros(self.n_dof)
        targets = {}
        for i, body in enumerate(self.deformables):
            xi = self.dofs.deformable_positions(self.state, z + dz, deflected=False)[i]  # mount deflections stay
            if i in targets_def:
                xi[body.prescribed] = targets_def[i]
            targets[i] = xi
        targets_affine = [(off, z[off:off + 12] + dz[off:off + 12]) for off in self.dofs.affine_offset]
        return self._move(targets, targets_kin, targets_affine, self._min_distance_of(coll, x))

    def _move(self, targets_def, targets_kin, targets_affine, min_distance):
        """Move deformable bodies (full position targets), kinematic bodies and affine bodies
        ((offset, q) targets) straight toward their targets by the largest fraction that CCD and
        tet inversion allow, halved while the smallest contact distance would fall below half of
        min(its value before, dhat) (CCD alone would let a driven surface stop a hair's breadth
        from contact, where the barrier is all but singular); returns that fraction and the active
        contacts where the bodies end up. min_distance: the smallest contact distance now (m)."""
        state = self.state
        x0 = self.collision_positions()
        floor = 0.5 * min(min_distance, self.dhat)
        old_def = {i: state.deformable_x[i].copy() for i in targets_def}
        old_kin = {i: state.kinematic_x[i].copy() for i in targets_kin}
        old_aff = [q.copy() for q in state.affine_q]
        affine = {self.dofs.affine_offset.index(off): q for off, q in targets_affine}

        def place(alpha):
            for i, target in targets_def.items():
                state.deformable_x[i] = old_def[i] + alpha * (target - old_def[i])
            for i, target in targets_kin.items():
                state.kinematic_x[i] = old_kin[i] + alpha * (target - old_kin[i])
            for j, q in affine.items():
                state.affine_q[j] = old_aff[j] + alpha * (q - old_aff[j])
            self._refresh_driven()

        place(1.0)
        continuous = self.contact_model.continuous
        alpha = self.step_limits.ccd_fraction(x0, self.collision_positions()) if continuous else 1.0
        alpha = min(alpha, self.step_limits.noninverting_fraction(
            np.concatenate([self.dofs.deflected(state, i, old_def.get(i, x))
                            for i, x in enumerate(state.deformable_x)]),
            np.concatenate([targets_def[i] - old_def[i] if i in targets_def else np.zeros_like(x)
                            for i, x in enumerate(state.deformable_x)])) if self.deformables else 1.0)
        if alpha < 1.0:
            place(alpha)
        if not continuous:  # discrete detection: no CCD, no distance floor
            return alpha, self._collisions(self.collision_positions())
        for _ in range(10):
            x = self.collision_positions()
            coll = self._collisions(x)
            if self._min_distance_of(coll, x) >= floor:
                return alpha, coll
            alpha *= 0.5
            place(alpha)
        place(0.0)
        return 0.0, self._collisions(x0)

    def step(self, drivers=None, dt: float | None = None, give_up=None,
             coarse_rounds: bool = False) -> StepStats | None:
        """Advance one time step. `drivers`: name -> 4x4 target pose at the end of the step for
        deformable bodies with prescribed vertices and for kinematic bodies; dt (s): this step's
        length (default settings.dt; e.g. half of it to retry a step that failed).
        give_up: called after each drive-and-settle round that leaves the drivers short of their
        targets (see `_step`) as give_up(contact_force, strain_energy), the normal force resultants
        (as StepStats.contact_force) and the strain energies (as StepStats.strain_energy) where
        that round's Newton solve converged; when it returns True the step is abandoned: the
        simulation is left as it was before the step and None returned (a caller that would refuse
        the step's end anyway stops paying for the rounds still to come).
        coarse_rounds: the Newton solves of the drive-and-settle rounds before the step's last one
        stop at COARSE_ROUND_TOLERANCE times newton_tolerance (give_up then sees each round's
        forces to within that); the step itself ends at newton_tolerance either way.
        Raises StepFailed (state unchanged) when Newton does not converge or a NaN appears."""
        if dt is not None and dt != self.settings.dt:
            if not (np.isfinite(dt) and dt > 0):
                raise ValueError(f"dt must be positive and finite, got {dt!r}")
            full, self.settings.dt = self.settings.dt, float(dt)
            self._last_hessian_without_contact = (None, None, None, None)  # its h^2 terms belong to the old dt
            self._carried_factorisation = False
            try:
                return self._checked_step(drivers, give_up, coarse_rounds)
            finally:
                self.settings.dt = full
                self._last_hessian_without_contact = (None, None, None, None)
                self._carried_factorisation = False
        return self._checked_step(drivers, give_up, coarse_rounds)

    def _checked_step(self, drivers, give_up=None, coarse_rounds=False) -> StepStats | None:
        """`_step` with the state restored and StepFailed raised on any failure (and the state and
        barrier stiffness restored when give_up abandons the step)."""
        started = _time.perf_counter()
        last_good, kappa = self.state.copy(), self.barrier_stiffness
        try:
            stats = self._step(drivers or {}, give_up, coarse_rounds)
            if stats is None:
                self.restore(last_good)
                self.barrier_stiffness = kappa
                return None
        except StepFailed:
            self.restore(last_good)
            raise
        except (FloatingPointError, np.linalg.LinAlgError, RuntimeError, ValueError) as exc:
            self.restore(last_good)
            raise StepFailed(f"{type(exc).__name__}: {exc}", last_good.copy()) from exc
        stats.wall_time = _time.perf_counter() - started
        return stats

    def _step(self, drivers, give_up=None, coarse_rounds=False):
        self._newton_converged = True
        z_t, v_t = self.pack(), self.pack(velocities=True)
        x_t = self.collision_positions(z_t)
        z_tilde = self._predicted(z_t, v_t)
        last_x, last_coll = self._accepted_contacts
        coll_t = last_coll if np.array_equal(last_x, x_t) else self._collisions(x_t)
        if self.contact_model.continuous:
            self._init_barrier_stiffness(z_t, z_tilde, x_t, coll_t)
        friction = self._friction_collisions(x_t, coll_t)
        targets_def, targets_kin = self.driven.targets(drivers)
        x, coll = x_t, coll_t
        alphas, iterations, remaining, warm = [], 0, 1.0, None
        if targets_def or targets_kin:
            warm = self._warm_start(targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction)
            if warm is not None:
                x, coll = warm
                remaining = 0.0
        # Continuation on the driven motion: drive as far as CCD allows, let Newton settle the free
        # bodies (a pushed object moves out of the way), and drive the rest, until the driven
        # vertices reach their targets. The step's minimiser has them exactly there.
        for _ in range(MAX_DRIVE_ROUNDS):
            if not (targets_def or targets_kin) or remaining == 0.0:
                break
            fraction, coll = self._drive(targets_def, targets_kin, z_tilde, friction, x_t, x, coll)
            remaining *= 1.0 - fraction
            x = self.collision_positions()
            if remaining == 0.0 or self.driven.gap(self.state, targets_def, targets_kin) == 0.0:
                remaining = 0.0
                break
            if fraction == 0.0:
                break
            z, its, a, x, coll = self._newton(self.pack(), z_tilde, friction, x_t, x, coll,
                                              tolerance=COARSE_ROUND_TOLERANCE if coarse_rounds else 1.0)
            iterations += its
            alphas += a
            self._place(z)
            if give_up is not None and give_up(self._normal_resultants(x, coll), self._strain_energy(z)):
                return None
        z = self.pack()
        clustering = self.contact_model.clustering
        passes = max(1 + clustering, self.settings.friction_iterations)
        k = 0
        while True:
            if k:
                friction = self._friction_collisions(x, coll, cluster=clustering)
            z, its, a, x, coll = self._newton(z, z_tilde, friction, x_t, x, coll, int(warm is not None and not k))
            iterations += its
            alphas += a
            k += 1
            # clusters are lagged: pass again while contacts begin outside them
            if k >= passes and not (clustering and k < passes + MAX_CLUSTER_PASSES
                                    and self.contact_model.has_unclustered_contacts(self.mesh, coll, x)):
                break
        return self._accept(z, z_t, friction, x_t, x, coll, iterations, alphas, 1.0 - remaining,
                            self.driven.gap(self.state, targets_def, targets_kin))

    def _warm_start(self, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction):
        """When the drivers move this step (by more than DRIVER_AT_REST), start its Newton solve
        from a guess of where the motion ends: the drivers at their targets, each driven
        deformable body's free vertices translated with it (by the mean displacement of its
        prescribed vertices), affine bodies carried on at their velocity, q_t + h qdot_t (a cube
        pushed or lifted by the jaws moves with them; gravity's h^2 g, millimetres, is left to
        Newton), everything else where it is.
        The guess is taken only if the straight motion to it from the start of the step is
        admissible: it slides the step's friction contacts (lagged, `friction`) no more than the
        free bodies' own velocities would, h v_t, give or take the friction smoothing eps_v h
        (force-weighted: D(guess) <= D(P h v_t) + sum mu lambda eps_v h; a guess that slid the
        pads past a cube at rest, at the start of a lift, could leave Newton in a sliding minimum
        where the continuation sticks), CCD finds no collision on it, no
        tet inverts and no contact distance falls below half of min(its value at the start,
        dhat) (the drive's floor, `_move`). Then no
        drive round is needed: returns the contact positions and active contacts there.
        Otherwise the state is left as it was and None returned; the step drives as before.
        Either way Newton minimises the same incremental potential from there.

        Only positions the drivers move are extrapolated: a Newton solve stops within its
        tolerance on the side it started from, so a guess that carried every velocity on would
        keep a creep below the tolerance going from step to step (a held box's pads squeezing it
        ever harder), where starting from rest lets it die out. Barrier contact only (penalty
        contact has no CCD to prove the jump safe)."""
        at_rest = self.driven.gap(self.state, targets_def, targets_kin) <= DRIVER_AT_REST * self.bbox_diagonal
        if not self.contact_model.continuous or at_rest:
            return None
        state = self.state
        before = state.copy()
        z = z_t.copy()
        for off in self.dofs.affine_offset:
            z[off:off + 12] += self.settings.dt * v_t[off:off + 12]
        X0 = self.dofs.scene_positions(self.state, z_t)  # a copy: the state's arrays change below
        for i, target in targets_def.items():
            prescribed = self.deformables[i].prescribed
            z[self.dofs.free_vertex_dofs[i][1]] += (target - state.deformable_x[i][prescribed]).mean(axis=0)
            state.deformable_x[i][prescribed] = target
        for i, target in targets_kin.items():
            state.kinematic_x[i] = target.copy()
        self._place(z)
        x = self.collision_positions(z)
        h = self.settings.dt
        eps_u = self.settings.eps_v * h
        slide = contact.friction_potential(friction, self.mesh, x - x_t, eps_u)
        carried = contact.friction_potential(friction, self.mesh, (self.contact_map.P @ (h * v_t)).reshape(-1, 3),
                                             eps_u)
        admissible = slide <= carried + float(np.sum(friction.mu * friction.normal_force)) * eps_u
        admissible = admissible and self.step_limits.ccd_fraction(x_t, x) == 1.0
        admissible = admissible and self.step_limits.noninverting_fraction(
            X0, self.dofs.scene_positions(state, z) - X0) == 1.0
        if admissible:
            coll = self._collisions(x)
            floor = 0.5 * min(self._min_distance_of(coll_t, x_t), self.dhat)
            if self._min_distance_of(coll, x) >= floor:
                return x, coll
        self.state = before
        self._refresh_driven()
        return None

    def _place(self, z):
        """Write the free positions of z into the state (velocities are set when the step is
        accepted)."""
        self.dofs.store_positions(self.state, z)
        self._refresh_driven()

    def _predicted(self, z_t, v_t):
        """z~ = z_t + h v_t + h^2 a_gravity."""
        h = self.settings.dt
        return z_t + h * v_t + h * h * self._gravity_acc

    def _friction_collisions(self, x_lagged, coll=None, cluster=False):
        """Normal forces, bases and coordinates of the contacts at x_lagged (coll: the active
        contacts there, if known), fixed for a solve. Penalty with clusters: with `cluster` the
        contacts are clustered (the clusters then replace them until the next call), else they
        act one by one (the step's first lagged solve finds the contacts the clusters start from)."""
        coll = self._collisions(x_lagged) if coll is None else coll
        return self.contact_model.friction_collisions(self.mesh, x_lagged, coll, self.barrier_stiffness, cluster)

    def incremental_potential(self):
        """The coming step's incremental potential from the current state, without drivers:
        (energy(z), gradient(z), z_t). For checks and diagnostics; `step` does not use it."""
        z_t = self.pack()
        z_tilde = self._predicted(z_t, self.pack(velocities=True))
        x_t = self.collision_positions(z_t)
        if self.barrier_stiffness is None and self.contact_model.continuous:
            self._init_barrier_stiffness(z_t, z_tilde, x_t, self._collisions(x_t))
        friction = self._friction_collisions(x_t)

        def energy(z):
            return self._total_energy(self._energy(z, z_tilde, friction, x_t)[0])

        def gradient(z):
            x = self.collision_positions(z)
            return self._gradient(z, z_tilde, friction, x_t, x, self._collisions(x))

        return energy, gradient, z_t

    def _init_barrier_stiffness(self, z, z_tilde, x, coll):
        """IPC's balance heuristic; kappa only grows over the simulation so resting gaps stay put."""
        floor = self._barrier_stiffness_floor()
        _, bound = barrier_stiffness_bounds(self.bbox_diagonal, self.dhat, self._average_mass,
                                            self.settings.min_barrier_stiffness_scale)
        if self.barrier_stiffness is not None and self.barrier_stiffness >= max(bound, floor):
            # the heuristic is clamped below max(bound, floor): it cannot raise kappa, and its
            # gradients need not be computed (a kappa at the contact-force floor stays there)
            self.max_barrier_stiffness = max(bound, 100.0 * floor)
            return
        g_e = self._gradient_without_contact(z, z_tilde)
        PT = self.contact_map.PT
        g_b = np.zeros(self.n_dof)  # P^T grad B with kappa = 1
        scene._add_barrier_gradient(g_b, PT.indptr, PT.indices, PT.data, x, coll.kind, coll.vertices,
                                    coll.edge_edge_type, coll.eps_x, coll.weight, *self._plane_arrays, self.dhat,
                                    1.0, False, *self._scene["no_friction"], x, 0.0)
        kappa, kappa_max = initial_barrier_stiffness(self.bbox_diagonal, self.dhat, self._average_mass, g_e, g_b,
                                                     self.settings.min_barrier_stiffness_scale)
        kappa, kappa_max = max(kappa, floor), max(kappa_max, 100.0 * floor)
        if self.barrier_stiffness is None or kappa > self.barrier_stiffness:
            self.barrier_stiffness = kappa
        self.max_barrier_stiffness = kappa_max

    def _barrier_stiffness_floor(self) -> float:
        """kappa at which one contact at distance s dhat (s = 0.1) pushes with contact_force_scale:
        F = kappa / h^2 |b'(d^2, dhat^2)| 2 d = kappa / h^2 dhat^3 2 s (1 - s^2)(1/s^2 - 1 - 4 ln s)."""
        if self.settings.contact_force_scale is None:
            return 0.0
        s = 0.1
        per_kappa = 2 * s * (1 - s * s) * (1 / (s * s) - 1 - 4 * np.log(s)) * self.dhat ** 3 / self.settings.dt ** 2
        return float(self.settings.contact_force_scale) / per_kappa

    def _newton(self, z, z_tilde, friction, x_t, x, coll, min_iterations=0, tolerance=1.0):
        """Projected Newton from z (x, coll: its contact positions and active contacts; the contact
        Hessians unprojected near convergence: _newton_direction); returns
        the converged z, the iterations, the line-search fractions, and x, coll at the result.
        min_iterations: Newton steps taken before the convergence test may end the solve (a
        warm start is a guess, not an iterate of this solve). tolerance: the convergence test's
        multiple of newton_tolerance."""
        s, h = self.settings, self.settings.dt
        tol = tolerance * s.newton_tolerance
        alphas = []
        continuous = self.contact_model.continuous
        prev_min_d2 = self._min_distance_of(coll, x) ** 2 if continuous else None
        # no iterate brings a contact closer than this (m; NEWTON_GAP_FLOOR)
        floor = min(NEWTON_GAP_FLOOR * self.dhat, 0.5 * np.sqrt(prev_min_d2)) if continuous else 0.0
        terms = None  # the energy terms at z, once known
        best = None  # (Newton step norm, z, x, coll) of the iterate with the smallest Newton step
        g = None  # the gradient at z, once known
        iteration = 0
        step_norm = np.inf  # of the last Newton step
        while iteration <= s.max_newton_iterations:
            iteration += 1
            self.newton_iterations_run += 1
            if g is None:
                g = self._gradient(z, z_tilde, friction, x_t, x, coll)
            if not np.isfinite(g).all():
                raise StepFailed("non-finite gradient in Newton", self.state.copy())
            # A warm start's forced step with the contacts where the last step ended is first tried
            # with that step's last factorisation: a lift carries everything up unchanged.
            carried = (iteration <= min_iterations and self._carried_factorisation and self._solver is not None
                       and np.array_equal(self._factored_contacts, coll.vertices))
            self._carried_factorisation = False
            if carried:
                p = self._solver.solve(-g)
                step_norm, dx = self._step_norm(p)
                carried = step_norm <= self.dhat  # longer is no correction of a guess that is right
            if not carried:
                near = step_norm / h <= UNPROJECTED_CONTACTS_NEAR * tol
                p = self._newton_direction(z, g, friction, x_t, x, coll, project_contacts=not continuous or not near)
                if not np.isfinite(p).all():
                    raise StepFailed("linear solve produced NaN/inf", self.state.copy())
                step_norm, dx = self._step_norm(p)
            if step_norm / h < tol and iteration > min_iterations:
                # the solver now holds H(z) factored: the next drive round starts from this z
                self._factored = (z, z_tilde, friction, x_t, coll, self.barrier_stiffness, g)
                self.newton_iterations_run -= 1  # this pass only found the solve converged
                return z, iteration - 1, alphas, x, coll
            if not carried and (best is None or step_norm < best[0]):
                best = (step_norm, z, x, coll)
            if iteration > s.max_newton_iterations:
                self.newton_iterations_run -= 1  # this pass only measured the last step
                break
            # One broad phase per iteration serves the CCD, every line-search energy and the next
            # iterate's contact set: all lie on the segment x -> x + dx.
            pairs = self.proximity.candidates(x, x + dx, self.dhat)
            alpha = min(1.0, self.step_limits.ccd_fraction(x, x + dx, pairs)) if continuous else 1.0
            X, dX = self.dofs.scene_positions(self.state, z), self.dofs.scene_steps(p)
            alpha = min(alpha, self.step_limits.noninverting_fraction(X, dX))
            if terms is None:
                terms = self._energy(z, z_tilde, friction, x_t, coll=coll)[0]
            e0 = self._total_energy(terms)
            alpha, (terms1, x1, coll1) = backtrack(self._trial(z, p, z_tilde, friction, x_t, pairs, floor), e0,
                                                   alpha)
            if carried:
                decrease, predicted = e0 - self._total_energy(terms1), -0.5 * float(g @ p)
                if not (alpha == 1.0 and CARRIED_MODEL[0] * predicted <= decrease <= CARRIED_MODEL[1] * predicted):
                    iteration -= 1  # the carried Hessian does not fit here: take this step with a fresh one
                    self.newton_iterations_run -= 1
                    continue
            if alpha < MIN_STEP:
                raise StepFailed(f"line search failed after {iteration} Newton iterations", self.state.copy())
            if alpha == 1.0 and not carried:
                longer = self._longer_trial(z, p, x, dx, X, dX, z_tilde, friction, x_t, floor)
                alpha, (terms1, x1, coll1) = extrapolate(longer, e0, float(g @ p), self._total_energy(terms1),
                                                         (terms1, x1, coll1))
            alphas.append(alpha)
            z = z + alpha * p
            x, coll, terms, g = x1, coll1, terms1, None
            if not continuous:
                continue
            min_d2 = self._min_distance_of(coll, x) ** 2
            self.barrier_stiffness = update_barrier_stiffness(prev_min_d2, min_d2, self.max_barrier_stiffness,
                                                              self.barrier_stiffness, self.bbox_diagonal)
            prev_min_d2 = min_d2
            if carried and np.array_equal(self._factored_contacts, coll.vertices):
                # the carried factorisation's step from the new gradient estimates the next Newton step
                g = self._gradient(z, z_tilde, friction, x_t, x, coll)
                estimate, _ = self._step_norm(self._solver.solve(-g))
                if estimate / h < CARRIED_CONVERGED * tol:
                    self._factored = None
                    return z, iteration, alphas, x, coll
        if s.newton_fallback_tolerance is not None and best[0] / h < s.newton_fallback_tolerance * self.bbox_diagonal:
            self._newton_converged = False
            return best[1], s.max_newton_iterations, alphas, best[2], best[3]
        raise StepFailed(f"Newton did not converge in {s.max_newton_iterations} iterations", self.state.copy())

    def _newton_direction(self, z, g, friction, x_t, x, coll, project_contacts):
        """The Newton step -H^-1 g at z (g: the gradient there). Without project_contacts, H has
        the barrier Hessians unprojected when it is then positive definite (every LDL^T pivot
        positive); else, and with project_contacts, each is PSD-projected."""
        if not project_contacts:
            unprojected = self._hessian(z, friction, x_t, x, coll, project=False)
            if self._factor(unprojected) and self._solver.positive_definite:
                return self._solver.solve(-g)
        return self._solve(self._hessian(z, friction, x_t, x, coll), -g)

    def _step_norm(self, p):
        """(largest coordinate (m) of a Newton step p over the position DOFs and the contact
        surface, the contact-surface displacements (N,3) under it)."""
        return self.contact_map.step_norm(p, self.dofs.position_dofs)

    def _trial(self, z, p, z_tilde, friction, x_t, pairs, floor=0.0):
        """The line search's trial at z + alpha p: alpha -> (E there, (its terms for _total_energy,
        the contact positions, the active contacts)); pairs: Proximity.candidates over the
        contact surface's motion under p. E is inf where a contact is closer than `floor` (m;
        NEWTON_GAP_FLOOR), so that backtracking shortens the step."""

        def trial_at(alpha):
            found = self._energy(z + alpha * p, z_tilde, friction, x_t, pairs)
            if floor > 0.0 and self._min_distance_of(found[2], found[1]) < floor:
                return np.inf, found
            return self._total_energy(found[0]), found

        return trial_at

    def _longer_trial(self, z, p, x, dx, X, dX, z_tilde, friction, x_t, floor=0.0):
        """The extrapolation's trial at z + alpha p (alpha > 1), as _trial, or None when the
        longer step inverts a tet, (barrier) CCD finds a collision on it or it puts a contact
        closer than `floor` (m); x, dx: the contact positions at z and their displacements under
        p; X, dX: the deformable vertices at z and their displacements under p
        (Dofs.scene_positions, Dofs.scene_steps)."""

        def trial_at(alpha):
            if self.step_limits.noninverting_fraction(X, alpha * dX) < 1.0:
                return None
            pairs = self.proximity.candidates(x, x + alpha * dx, self.dhat)
            if self.contact_model.continuous and self.step_limits.ccd_fraction(x, x + alpha * dx, pairs) < 1.0:
                return None
            found = self._energy(z + alpha * p, z_tilde, friction, x_t, pairs)
            if floor > 0.0 and self._min_distance_of(found[2], found[1]) < floor:
                return None
            return self._total_energy(found[0]), found

        return trial_at

    def _accept(self, z, z_t, friction, x_t, x, coll, iterations, alphas, driver_fraction, driver_lag):
        """Store the converged z (x, coll: its contact positions and active contacts) and report."""
        self._carried_factorisation = True
        h = self.settings.dt
        v = (z - z_t) / h
        state = self.state
        strain = self._strain_energy(z)
        self.dofs.store_positions(state, z)
        self.dofs.store_velocities(state, v)
        state.time += h
        self._x = x
        self._accepted_contacts = (x, coll)
        B = len(self.bodies)
        normal, min_distance, n_contacts, force_gap, kappa = self.contact_model.report(
            self.mesh, x, coll, self.barrier_stiffness, B, self._min_distance_of)
        forces = contact.friction_forces(friction, self.mesh, x - x_t, self.settings.eps_v * h) / h ** 2
        fric = body_pair_resultants(self.mesh, friction.vertices, friction.bodies, forces, B)
        return StepStats(time=state.time, newton_iterations=iterations, line_search_alphas=alphas,
                         driver_fraction=driver_fraction, driver_lag=driver_lag, min_distance=min_distance,
                         n_contacts=n_contacts, barrier_stiffness=kappa,
                         energies={"strain": sum(strain.values())}, contact_force=normal, friction_force=fric,
                         strain_energy=strain, max_penetration=self._penetration.max_depth(x),
                         max_force_gap=max(force_gap, 0.0), newton_converged=self._newton_converged)

    def _strain_energy(self, z) -> dict:
        """{deformable name: strain energy (J)} at z."""
        sc = self._scene
        energies = scene._strain_energies(self.dofs.scene_positions(self.state, z), sc["tets"], sc["Dm_inv"],
                                          sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"])
        return {body.name: float(energy) for body, energy in zip(self.deformables, energies)}

    def _normal_resultants(self, x, coll) -> np.ndarray:
        """The normal contact forces (N) between the bodies at contact positions x (coll: the
        active contacts there) as body-pair resultants (B+1, B+1, 3) (StepStats.contact_force)."""
        return self.contact_model.normal_resultants(self.mesh, x, coll, self.barrier_stiffness, len(self.bodies))

    # --------------------------------------------------------------------------------- queries
    def affine_pose(self, name) -> np.ndarray:
        """4x4 pose (translation p, nearest rotation of A) of an affine body."""
        q = self.state.affine_q[self.affines.index(self.bodies[self.index[name]])]
        pose = np.eye(4)
        pose[:3, :3] = nearest_rotation(q[3:].reshape(3, 3))
        pose[:3, 3] = q[:3]
        return pose

    def vertices(self, name) -> np.ndarray:
        """World positions (n,3) m of all vertices of a body."""
        body = self.bodies[self.index[name]]
        if isinstance(body, DeformableBody):
            i = self.deformables.index(body)
            return self.dofs.deflected(self.state, i, self.state.deformable_x[i]).copy()
        if isinstance(body, AffineBody):
            return affine_positions(self.state.affine_q[self.affines.index(body)], body.vertices)
        x = self.state.kinematic_x[self.kinematics.index(body)].copy()
        j = self._kinematic_mount[self.kinematics.index(body)]
        return x if j < 0 else x + self.state.mount_u[j] * self._mount_motion[name]

    def mount_deflection(self, name) -> float:
        """Deflection u (m) of the compliant mount `name` along its axis where its mode shape is 1
        (the spring pushes back with -k u)."""
        for j, mount in enumerate(self.mounts):
            if mount.name == name:
                return float(self.state.mount_u[j])
        raise ValueError(f"no mount named {name!r}; mounts are {[m.name for m in self.mounts]}")

    def set_affine_velocity(self, name, linear=(0.0, 0.0, 0.0)):
        """Give an affine body a linear velocity (m/s) and no rotation rate."""
        j = self.affines.index(self.bodies[self.index[name]])
        self.state.affine_qdot[j][:] = 0.0
        self.state.affine_qdot[j][:3] = linear

    def set_mass_scale(self, name, scale: float) -> None:
        """Scale an affine body's mass and inertia by `scale` (> 0) from the next step on; gravity
        on it scales with it. The barrier stiffness is not re-tuned."""
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"mass scale must be positive and finite, got {scale!r}")
        body = self.bodies[self.index[name]]
        if not isinstance(body, AffineBody):
            raise ValueError(f"set_mass_scale: {name!r} is not an affine (rigid) body")
        block = self._affine_mass_range[self.affines.index(body)]
        values = self._mass_entries[2]
        values[block] = scale * self._base_mass_values[block]
        self._M = sp.csr_matrix((values, self._mass_entries[:2]), shape=(self.n_dof, self.n_dof))
        self._set_hessian_pattern(self._hessian_keys)

    def restore(self, state: State) -> None:
        """Return to an earlier state (e.g. to retry a step with a smaller driver increment)."""
        self.state = state.copy()
        self._refresh_driven()
        self._carried_factorisation = False

    def contacts_between(self, name, others) -> tuple[contact.Collisions, np.ndarray]:
        """The pairs of primitives of body `name` and of each body in `others` (that the scene lets
        touch it) closer than dhat in the current configuration, as barrier-type collisions (under
        penalty contact too: dhat is then the reach of its force field), and the contact-surface
        positions x (N, 3), m, they index. After a step under barrier contact these are the step's
        own active contacts."""
        x = self.collision_positions()
        m = self.mesh
        pair = np.zeros_like(m.can_collide)
        for other in others:
            a, b = self.index[name], self.index[other]
            pair[a, b] = pair[b, a] = m.can_collide[a, b]
        accepted_x, accepted = self._accepted_contacts
        if self.contact_model.continuous and accepted is not None and np.array_equal(accepted_x, x):
            # a body pair's collisions come from its own candidates alone: selecting them from all
            # of the step's gives what a broad phase over the pair would (same order and weights)
            a, b = accepted.bodies[:, 0], accepted.bodies[:, 1]
            rows = (a >= 0) & (b >= 0)
            rows[rows] = pair[a[rows], b[rows]]
            return contact.Collisions(**{f.name: getattr(accepted, f.name)[rows] for f in fields(accepted)}), x
        vf, ee, _ = candidates(x, x, m.edges, m.faces, m.vertex_body, self.dhat, can_collide=pair)
        return contact.build_collisions(m, x, self.dhat, candidates=(vf, ee, np.zeros(0, dtype=np.int64))), x

    def _friction_coefficients(self, friction, default_friction) -> tuple[np.ndarray, np.ndarray]:
        """(B, B) friction coefficients per body pair and (B,) each body's with the ground, from
        `friction` and `default_friction` as the constructor takes them."""
        B = len(self.bodies)
        mu = np.full((B, B), float(default_friction))
        mu_plane = np.full(B, self.ground.mu if self.ground is not None else 0.0)
        for (a, b), value in friction.items():
            if "ground" in (a, b):
                other = b if a == "ground" else a
                mu_plane[self.index[other]] = value
            else:
                mu[self.index[a], self.index[b]] = mu[self.index[b], self.index[a]] = value
        return mu, mu_plane

    def set_friction(self, friction, default_friction: float = 0.0) -> None:
        """Friction coefficients from the next step on, as the constructor's `friction` and
        `default_friction`. A step lags friction at its start, so a pair that was not in contact
        there feels the change only from the next step; the state and the contacts' lagged
        normal forces are kept."""
        mu, mu_plane = self._friction_coefficients(friction, default_friction)
        if not (np.isfinite(mu).all() and np.isfinite(mu_plane).all() and mu.min() >= 0.0 and mu_plane.min() >= 0.0):
            raise ValueError(f"friction coefficients must be finite and >= 0, got {dict(friction)} and default "
                             f"{default_friction}")
        self.mesh = replace(self.mesh, mu=mu, mu_plane=mu_plane)

    def body_distance(self, name_a, name_b, max_distance) -> float:
        """Smallest distance (m) between the contact surfaces of two bodies, or inf when it is
        larger than max_distance (m). The ground is named "ground"."""
        x = self.collision_positions()
        m = self.mesh
        a = self.index[name_a] if name_a != "ground" else -1
        b = self.index[name_b] if name_b != "ground" else -1
        if a < 0 and b < 0:
            raise ValueError("body_distance needs at least one body other than the ground")
        if a < 0 or b < 0:
            body = max(a, b)
            heights = (x[m.vertex_body == body] - m.plane_origin) @ m.plane_normal
            d = float(heights.min())
            return d if d <= max_distance else np.inf
        pair = np.zeros_like(m.can_collide)
        pair[a, b] = pair[b, a] = True
        pairs = self.proximity.candidates(x, x, float(max_distance), can_collide=pair)
        coll = contact.build_collisions(m, x, max_distance, candidates=pairs)
        d = contact.min_distance(coll, m, x)
        return d if d <= max_distance else np.inf
