"""How driven motion enters a step: the drivers' targets for the prescribed vertices of deformable
bodies and for kinematic bodies, how far the driven vertices are from them, and the elastic
coupling H_zc dc through which a driven displacement dc pulls the free unknowns z."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.bodies import DeformableBody, KinematicBody
from ipcgrasp.engine.neohookean import (
    _cofactor_into,
    _deformation_gradient_into,
    _det3,
    _shape_derivatives_into,
)
from ipcgrasp.engine.solver.state import State


@njit
def _add_coupling_product(out, x, dx, tets, Dm_inv, volumes, mu, lam, coupled, free, scale):
    """out[free[k, 3 m + a]] += scale (H_t dx_t)[3 m + a] for the tets t = coupled[k]: the exact
    Neo-Hookean Hessian of tet t at positions x applied to the displacements dx (n,3), without
    forming H_t. With dF the deformation gradient of dx,
    dP = mu dF + (mu - lam ln J) F^-T dF^T F^-T + lam (F^-T : dF) F^-T and vertex m gets
    volume dP D_m (D the shape derivatives); free index -1: not a free DOF."""
    F = np.empty((3, 3))
    dF = np.empty((3, 3))
    C = np.empty((3, 3))
    M = np.empty((3, 3))
    dP = np.empty((3, 3))
    D = np.empty((4, 3))
    for k in range(coupled.shape[0]):
        t = coupled[k]
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _deformation_gradient_into(dx, tets[t], Dm_inv[t], dF)
        _shape_derivatives_into(Dm_inv[t], D)
        J = _det3(F)
        lnJ = np.log(J)
        _cofactor_into(F, C)  # F^-T = C / J
        trace = 0.0
        for a in range(3):
            for b in range(3):
                trace += C[a, b] * dF[a, b]
        trace /= J
        for a in range(3):  # M = dF^T F^-T
            for b in range(3):
                M[a, b] = (dF[0, a] * C[0, b] + dF[1, a] * C[1, b] + dF[2, a] * C[2, b]) / J
        for a in range(3):
            for b in range(3):
                FMF = (C[a, 0] * M[0, b] + C[a, 1] * M[1, b] + C[a, 2] * M[2, b]) / J
                dP[a, b] = mu * dF[a, b] + (mu - lam * lnJ) * FMF + lam * trace * C[a, b] / J
        for m in range(4):
            for a in range(3):
                r = free[k, 3 * m + a]
                if r >= 0:
                    out[r] += scale * volumes[t] * (dP[a, 0] * D[m, 0] + dP[a, 1] * D[m, 1] + dP[a, 2] * D[m, 2])


def pose_parts(pose):
    """(rotation (3,3), translation (3,) in m) of a 4x4 pose, checked to be finite and 4x4."""
    pose = np.asarray(pose, dtype=np.float64)
    if pose.shape != (4, 4) or not np.isfinite(pose).all():
        raise ValueError(f"a pose must be a finite 4x4 matrix, got shape {pose.shape}")
    return pose[:3, :3], pose[:3, 3]


class DrivenBodies:
    """The driven bodies of a scene: `bodies` (index: name -> position in bodies), its
    deformables and kinematic bodies in the order of the state, dofs (solver.dofs.Dofs),
    mount_rotation (name -> the initial rotation of a body on a compliant mount, which its
    driver may not change), linked_entries (per deformable: mounts.linked_tet_entries of the
    mount its prescribed vertices ride on, else None). coupling_tets: per deformable, the tets
    with both free and prescribed vertices and those tets' z indices (-1: prescribed)."""

    def __init__(self, bodies, index, deformables, kinematics, dofs, mount_rotation, linked_entries):
        self.bodies, self.index = bodies, index
        self.deformables, self.kinematics = deformables, kinematics
        self.dofs = dofs
        self.mount_rotation = mount_rotation
        self.linked_entries = linked_entries
        self.coupling_tets = []
        for body, dof in zip(deformables, dofs.vertex_dof):
            tet_free = np.where(dof[body.tets][:, :, None] >= 0, dof[body.tets][:, :, None] + np.arange(3), -1)
            tet_free = tet_free.reshape(len(body.tets), 12)
            n_free = (dof[body.tets] >= 0).sum(axis=1)
            coupled = np.flatnonzero((n_free > 0) & (n_free < 4))
            self.coupling_tets.append((coupled, tet_free[coupled]))

    def targets(self, drivers):
        """The targets at the end of the step of `drivers` (name -> 4x4 pose): ({deformable
        index: (p,3) positions (m) of its prescribed vertices}, {kinematic index: (n,3) vertex
        positions (m)})."""
        targets_def, targets_kin = {}, {}
        for name, pose in drivers.items():
            if name not in self.index:
                raise ValueError(f"driver for unknown body {name!r}")
            body = self.bodies[self.index[name]]
            R, t = pose_parts(pose)
            if name in self.mount_rotation and not np.allclose(R, self.mount_rotation[name], rtol=0, atol=1e-9):
                raise ValueError(f"body {name!r} is on a compliant mount, whose axis is fixed in the world: its "
                                 "driver may translate it but not rotate it")
            if isinstance(body, DeformableBody):
                if not body.prescribed.size:
                    raise ValueError(f"body {name!r} has no prescribed vertices to drive")
                targets_def[self.deformables.index(body)] = body.rest_positions[body.prescribed] @ R.T + t
            elif isinstance(body, KinematicBody):
                targets_kin[self.kinematics.index(body)] = body.vertices @ R.T + t
            else:
                raise ValueError(f"body {name!r} is dynamic (affine) and cannot be driven")
        return targets_def, targets_kin

    def gap(self, state: State, targets_def, targets_kin) -> float:
        """Largest distance (m) of a driven vertex in `state` from its target."""
        gap = 0.0
        for i, target in targets_def.items():
            prescribed = self.deformables[i].prescribed
            gap = max(gap, float(np.abs(target - state.deformable_x[i][prescribed]).max(initial=0.0)))
        for i, target in targets_kin.items():
            gap = max(gap, float(np.abs(target - state.kinematic_x[i]).max(initial=0.0)))
        return gap

    def coupling(self, state: State, z, dc, scale) -> np.ndarray:
        """scale H_zc dc (n_dof,), with H_zc = d^2 E / dz dc between free DOFs and prescribed
        coordinates (elastic terms only; prescribed vertices touch nothing else) at z, the
        prescribed vertices where `state` has them; dc: per deformable, the (n,3) displacements
        (m) of its prescribed vertices; scale: h^2 (s^2) in the incremental potential."""
        dofs = self.dofs
        out = np.zeros(dofs.n_dof)
        for body, x_def, dx, (coupled, free) in zip(self.deformables, dofs.deformable_positions(state, z), dc,
                                                    self.coupling_tets):
            _add_coupling_product(out, x_def, dx, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam, coupled,
                                  free, scale)
        for i, (body, x_def, dx) in enumerate(zip(self.deformables, dofs.deformable_positions(state, z), dc)):
            j = dofs.deformable_mount[i]
            if j < 0:
                continue
            # a mount's deflection feels the driven vertices it carries: sum_v phi_v a . (H_pc dc)_v
            tets = self.linked_entries[i][0]
            coordinates = (3 * body.tets[tets][:, :, None] + np.arange(3)).reshape(len(tets), 12)
            forces = np.zeros(3 * body.n_vertices)
            _add_coupling_product(forces, x_def, dx, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam, tets,
                                  coordinates, scale)
            out[dofs.mount_offset + j] += float(np.sum(forces.reshape(-1, 3)[body.prescribed]
                                                       * dofs.mount_motion[body.name][body.prescribed]))
        return out
