"""What a scene is made of and never changes shape after construction (Model): its bodies and
mounts, the layout of the unknowns z, the collision mesh and the map x = P z + c to its
positions, the mass matrix, gravity, and engine.scene's flat arrays of the deformable and affine
bodies. Friction coefficients and affine mass scales may be replaced between steps."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.affine_body import affine_jacobian
from ipcgrasp.engine.bodies import AffineBody, DeformableBody, KinematicBody
from ipcgrasp.engine.mounts import CompliantMount, linked_tet_entries
from ipcgrasp.engine.solver.balance import Balance
from ipcgrasp.engine.solver.dofs import ContactMap, Dofs
from ipcgrasp.engine.solver.drive import pose_parts
from ipcgrasp.engine.solver.state import State


class Model:
    """The fixed description of a scene (Simulation's constructor arguments, which it checks).

    bodies, index (name -> position in bodies), ground, deformables, affines, kinematics, mounts;
    deformable_mount, kinematic_mount: per deformable and kinematic body, the index of the mount it
    rides on (-1: none); mount_rotation, mount_motion: per mounted body, its initial rotation and
    the motion (n,3) of its vertices per metre of deflection; dofs (solver.dofs.Dofs), n_dof;
    initial_state (State at the poses); surface: per body, (its first row of x, its contact
    vertices); contact_map (x = P z + c), mesh (engine.collisions.CollisionMesh), plane_arrays
    ((origin, normal) of the ground, or a placeholder); mass_entries (rows, cols, values of M),
    M (CSR, kg and kg m^2), average_mass, gravity_acc (n_dof,) m/s^2; scene: engine.scene's flat
    arrays; balance (solver.balance.Balance) of the affine bodies; linked_entries: per deformable on a mount, mounts.linked_tet_entries, else None."""

    def __init__(self, bodies, poses, ground, friction, default_friction, ignore_pairs, settings, mounts):
        self.settings = settings
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
        self._build_collision_mesh(friction, default_friction, ignore_pairs)
        self._build_mass()
        self._build_scene()
        self._link_mounted_tets()

    def _assign_mounts(self, mounts, poses):
        """Check the mounts and note, per deformable and per kinematic body, the index of the mount
        it rides on (-1: none), each mounted body's initial rotation (drivers may not change it:
        the mount's axis is fixed in the world) and the motion (n,3) of its vertices per metre of
        deflection (mode shape times axis)."""
        self.mounts = mounts
        self.deformable_mount = [-1] * len(self.deformables)
        self.kinematic_mount = [-1] * len(self.kinematics)
        self.mount_rotation = {}
        self.mount_motion = {}
        for j, mount in enumerate(mounts):
            if not isinstance(mount, CompliantMount):
                raise ValueError(f"mounts must be CompliantMount instances, got {type(mount).__name__}")
            for name in mount.bodies:
                if name not in self.index:
                    raise ValueError(f"mount {mount.name!r} holds unknown body {name!r}")
                body = self.bodies[self.index[name]]
                if isinstance(body, DeformableBody) and body.prescribed.size:
                    table, i = self.deformable_mount, self.deformables.index(body)
                elif isinstance(body, KinematicBody):
                    table, i = self.kinematic_mount, self.kinematics.index(body)
                else:
                    raise ValueError(f"mount {mount.name!r}: body {name!r} is not driven (a deformable body "
                                     "with prescribed vertices or a kinematic body)")
                if table[i] >= 0:
                    raise ValueError(f"body {name!r} is on two mounts")
                table[i] = j
                self.mount_rotation[name] = pose_parts(poses.get(name, np.eye(4)))[0].copy()
                self.mount_motion[name] = mount.shape(name, body.n_vertices)[:, None] * mount.axis

    def _build_layout(self, poses):
        """The layout of the unknowns z (solver.dofs) and the initial state at `poses`."""
        self.dofs = Dofs(self.deformables, len(self.affines), len(self.mounts), self.deformable_mount,
                         self.mount_motion)
        self.n_dof = self.dofs.n_dof
        self.balance = Balance(self.dofs.affine_offset, [b.center_of_mass for b in self.affines],
                               [np.linalg.norm(b.vertices - b.center_of_mass, axis=1).max() for b in self.affines])
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
        n_mounts = len(self.mounts)
        self.initial_state = State(0.0, x_def, v_def, q, qdot, x_kin, np.zeros(n_mounts), np.zeros(n_mounts))

    def _build_collision_mesh(self, friction, default_friction, ignore_pairs):
        """Stack every body's contact surface into one collision mesh and the map x = P z + c."""
        rows, cols, vals = [], [], []
        faces, vertex_body, self.surface = [], [], []  # per body: (its first row of x, its contact vertices)
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
                self._map_mounted(rows, cols, vals, self.deformable_mount[i], body.name, n, surf[dof < 0],
                                  np.flatnonzero(dof < 0))
            else:
                surf = np.arange(body.n_vertices)
                faces.append(body.faces + n)
                if isinstance(body, KinematicBody):
                    self._map_mounted(rows, cols, vals, self.kinematic_mount[self.kinematics.index(body)],
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
            self.surface.append((n, surf))
            vertex_body.append(np.full(len(surf), b, dtype=np.int64))
            n += len(surf)
        self.n_collision_vertices = n
        driven_deformable = []  # (deformable index, rows of x, its driven contact vertices)
        driven_kinematic = []  # (kinematic index, first row of x, end row)
        for body, (start, surf) in zip(self.bodies, self.surface):
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
        mu, mu_plane = self.friction_coefficients(friction, default_friction)
        plane = None
        plane_bodies = np.zeros(B, dtype=bool)
        if self.ground is not None:
            plane = (self.ground.origin, self.ground.normal)
            plane_bodies[:] = True
            plane_bodies[kin] = False
        self.contact_map.refresh(self.initial_state)
        x = self.contact_map.positions(self.dofs.pack(self.initial_state))
        self.mesh = contact.CollisionMesh.build(x, np.concatenate(faces), np.concatenate(vertex_body),
                                                can_collide=can_collide, plane=plane, mu=mu, mu_plane=mu_plane,
                                                plane_body_mask=plane_bodies)
        self.plane_arrays = ((self.mesh.plane_origin, self.mesh.plane_normal) if self.mesh.has_plane
                              else (np.zeros(3), np.array([0.0, 0.0, 1.0])))

    def _map_mounted(self, rows, cols, vals, mount, name, start, vertices, local):
        """Append to the triplets of P the rows of the driven `vertices` (body indices) of body
        `name` on mount `mount` (-1: none), which are collision vertices start + `local`:
        x = c + u phi a."""
        if mount < 0:
            return
        motion = self.mount_motion[name][vertices]
        for a in range(3):
            moving = motion[:, a] != 0.0
            rows.append(3 * (start + local[moving]) + a)
            cols.append(np.full(int(moving.sum()), self.dofs.mount_offset + mount))
            vals.append(motion[moving, a])

    def describe_unknown(self, index: int) -> str:
        """Words for the unknown z[index] (Dofs.describe, with the affine bodies' names)."""
        return self.dofs.describe(index, [b.name for b in self.affines])

    def set_gravity(self, gravity):
        """Change the gravity vector (m/s^2) from the next step on."""
        self.settings.gravity = tuple(float(v) for v in gravity)
        g = np.asarray(self.settings.gravity)
        self.gravity_acc = np.zeros(self.n_dof)
        for dof in self.dofs.vertex_dof:
            free = dof >= 0
            self.gravity_acc[dof[free][:, None] + np.arange(3)] = g
        for off in self.dofs.affine_offset:
            self.gravity_acc[off:off + 3] = g  # M_q (g, 0) is the generalised gravity force

    def _build_mass(self):
        """The mass matrix M over z (its triplets and CSR form) and the gravity acceleration."""
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
        self.mass_entries = (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals))
        self.base_mass_values = self.mass_entries[2].copy()
        self.affine_mass_range = {}  # affine index -> slice of its block in the mass entries
        start = sum(len(v) for v in vals[:len(vals) - len(self.affines)])
        for j in range(len(self.affines)):
            self.affine_mass_range[j] = slice(start + 144 * j, start + 144 * (j + 1))
        self.M = sp.csr_matrix((self.mass_entries[2], self.mass_entries[:2]), shape=(self.n_dof, self.n_dof))
        self.average_mass = float(self.M.diagonal().mean())

    def _build_scene(self):
        """Every deformable body's vertices, tets and material, the affine bodies' and the mounts'
        constants in the flat arrays of engine.scene (its module docstring)."""
        d = self.dofs

        def flat(parts, shape, dtype):
            return np.ascontiguousarray(np.concatenate(parts), dtype=dtype) if parts else np.zeros(shape, dtype)

        self.scene = dict(
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


    def friction_coefficients(self, friction, default_friction) -> tuple[np.ndarray, np.ndarray]:
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
        """Replace the mesh's friction coefficients by those of `friction` and `default_friction`
        (as the constructor takes them; finite and >= 0)."""
        mu, mu_plane = self.friction_coefficients(friction, default_friction)
        if not (np.isfinite(mu).all() and np.isfinite(mu_plane).all() and mu.min() >= 0.0 and mu_plane.min() >= 0.0):
            raise ValueError(f"friction coefficients must be finite and >= 0, got {dict(friction)} and default "
                             f"{default_friction}")
        self.mesh = replace(self.mesh, mu=mu, mu_plane=mu_plane)

    def _link_mounted_tets(self):
        """Per deformable on a mount: the elastic Hessian entries its prescribed vertices carry
        onto the mount's degree of freedom (mounts.linked_tet_entries), else None."""
        self.linked_entries = []
        for body, dof, j in zip(self.deformables, self.dofs.vertex_dof, self.deformable_mount):
            self.linked_entries.append(None if j < 0 else linked_tet_entries(
                body.tets, dof, body.prescribed, self.dofs.mount_offset + j, self.mounts[j].axis,
                self.mounts[j].shape(body.name, body.n_vertices)))

    def scale_mass(self, name, scale: float) -> None:
        """Scale the mass block of affine body `name` to `scale` times its own (M is rebuilt)."""
        block = self.affine_mass_range[self.affines.index(self.bodies[self.index[name]])]
        values = self.mass_entries[2]
        values[block] = scale * self.base_mass_values[block]
        self.M = sp.csr_matrix((values, self.mass_entries[:2]), shape=(self.n_dof, self.n_dof))
