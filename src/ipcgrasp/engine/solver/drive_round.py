"""One round of the drive-and-settle continuation (DriveRound): the driven bodies move toward
their targets with the free degrees of freedom following by one Newton step of the incremental
potential with the driven motion imposed, as far as CCD, tet inversion and a distance floor
allow. The step alternates such rounds with Newton solves until the drivers reach their targets
(Simulation.step)."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine.solver.settings import DRIVE_DISTANCE_FLOOR, DRIVER_AT_REST, KINEMATIC_PROBE, NEWTON_GAP_FLOOR


def distance_floor(min_distance: float, dhat: float) -> float:
    """The smallest contact distance (m) a drive round or a warm start may leave, from the
    smallest one before it, min_distance (m): DRIVE_DISTANCE_FLOOR times min(it, dhat), and never
    below what a Newton iterate may come to from there (NEWTON_GAP_FLOOR)."""
    return max(DRIVE_DISTANCE_FLOOR * min(min_distance, dhat), min(NEWTON_GAP_FLOOR * dhat, 0.5 * min_distance))


class DriveRound:
    """settings: SolverSettings; model: solver.model.Model; driven: solver.drive.DrivenBodies;
    potential: solver.potential.IncrementalPotential (its Hessian's factorisation serves the
    round's Newton step); step_limits: solver.line_search.StepLimits; dhat, bbox_diagonal (m):
    the activation distance and the scene's size. `state` arguments are moved in place.
    rounds: how many rounds it has driven (calls; a count for tests and benchmarks)."""

    def __init__(self, settings, model, driven, potential, step_limits, dhat, bbox_diagonal):
        self.settings, self.model, self.driven, self.potential = settings, model, driven, potential
        self.factorisation = potential.hessian_assembly.factorisation
        self.step_limits, self.dhat, self.bbox_diagonal = step_limits, dhat, bbox_diagonal
        self.rounds = 0

    def __call__(self, state, targets_def, targets_kin, z_tilde, friction, x_t, x, coll):
        """Move prescribed vertices and kinematic bodies from where they are toward their targets,
        with the free degrees of freedom following by one Newton step of the incremental potential
        with the driven motion imposed (dz = -H_zz^-1 (g + H_zc dc): IPC's first iteration with
        Dirichlet conditions, so a body already moving, e.g. pushed by a pad, keeps moving with
        it), as far as CCD and tet inversion allow. Returns the fraction of the remaining driven
        motion taken (1 = all of it) and the active contacts after the move (x, coll: the contact
        positions and active contacts before it)."""
        self.rounds += 1
        dofs = self.model.dofs
        z = dofs.pack(state)
        dc = []  # per deformable: the prescribed vertices' displacements (zero elsewhere)
        for i, body in enumerate(self.model.deformables):
            dc.append(np.zeros((body.n_vertices, 3)))
            if i in targets_def:
                dc[i][body.prescribed] = targets_def[i] - state.deformable_x[i][body.prescribed]
        factored = self.factorisation.converged  # where the last Newton solve converged, if it is here
        reuse = (factored is not None and factored[1] is z_tilde and factored[2] is friction and factored[3] is x_t
                 and factored[4] is coll and factored[5] == self.potential.stiffness.kappa
                 and np.array_equal(factored[0], z))
        rhs = -(factored[6] if reuse else self.potential.gradient(state, z, z_tilde, friction, x_t, x, coll))
        if any(np.any(d) for d in dc):
            rhs -= self.driven.coupling(state, z, dc, self.settings.dt ** 2)
        if targets_kin:
            rhs -= self.contact_coupling(state, targets_kin, friction, x_t, x, coll)
        # with the drivers at rest the step starts where the last one ended: its last factorisation
        # serves the predictor (Newton then converges with fresh Hessians)
        carried = (not reuse and self.factorisation.carried and self.factorisation.holds_factors
                   and self.driven.gap(state, targets_def, targets_kin) <= DRIVER_AT_REST * self.bbox_diagonal
                   and np.array_equal(self.factorisation.contacts, coll.vertices))
        self.factorisation.carried = False
        if reuse or carried:
            dz = self.factorisation.solve(rhs)
        else:
            H = self.potential.hessian(state, z, friction, x_t, x, coll)
            dz = self.factorisation.factor_and_solve(H, rhs, state, self.model.describe_unknown)
        if not np.isfinite(dz).all():
            dz = np.zeros(self.model.n_dof)
        targets = {}
        for i, body in enumerate(self.model.deformables):
            xi = dofs.deformable_positions(state, z + dz, deflected=False)[i]  # mount deflections stay
            if i in targets_def:
                xi[body.prescribed] = targets_def[i]
            targets[i] = xi
        targets_affine = [(off, z[off:off + 12] + dz[off:off + 12]) for off in dofs.affine_offset]
        return self.move(state, targets, targets_kin, targets_affine, self.potential.min_distance_of(coll, x))

    def contact_coupling(self, state, targets_kin, friction, x_t, x, coll) -> np.ndarray | float:
        """H_zk dk (n_dof,): how the kinematic bodies' remaining motion dk (to `targets_kin`)
        pulls the free unknowns through the contacts it touches (the contact model's terms, barrier
        and lagged friction, differentiated once in z and once in the kinematic vertices' positions),
        so that the round's Newton step carries a body that a kinematic body pushes or drags along
        with it. A central difference of the contact gradient along dk with a displacement of
        KINEMATIC_PROBE times the smallest contact distance, which keeps every active contact
        well clear of zero distance. 0.0 when no contact at x (coll) or lagged one (friction)
        has a moving kinematic vertex."""
        contact_map = self.model.contact_map
        dk = np.zeros_like(x)
        for k, lo, hi in contact_map.driven_kinematic:
            if k in targets_kin:
                dk[lo:hi] = targets_kin[k] - state.kinematic_x[k]
        motion = np.abs(dk).max(axis=1)  # per contact-surface vertex, m
        touched = [c.vertices[c.vertices >= 0] for c in (coll, friction) if c is not None]
        if not any((motion[v] > 0.0).any() for v in touched):
            return 0.0
        step = KINEMATIC_PROBE * min(self.potential.min_distance_of(coll, x), self.dhat) / motion.max()
        g = [self.potential.contact_gradient(x + sign * step * dk, coll, friction, x_t) for sign in (1.0, -1.0)]
        return (g[0] - g[1]) / (2.0 * step)

    def move(self, state, targets_def, targets_kin, targets_affine, min_distance):
        """Move deformable bodies (full position targets), kinematic bodies and affine bodies
        ((offset, q) targets) straight toward their targets by the largest fraction that CCD and
        tet inversion allow, halved while the smallest contact distance would fall below
        `distance_floor` of its value before; returns that fraction and the active
        contacts where the bodies end up. min_distance: the smallest contact distance now (m)."""
        x0 = self._positions(state)
        floor = distance_floor(min_distance, self.dhat)
        old_def = {i: state.deformable_x[i].copy() for i in targets_def}
        old_kin = {i: state.kinematic_x[i].copy() for i in targets_kin}
        old_aff = [q.copy() for q in state.affine_q]
        affine = {self.model.dofs.affine_offset.index(off): q for off, q in targets_affine}

        def place(alpha):
            for i, target in targets_def.items():
                state.deformable_x[i] = old_def[i] + alpha * (target - old_def[i])
            for i, target in targets_kin.items():
                state.kinematic_x[i] = old_kin[i] + alpha * (target - old_kin[i])
            for j, q in affine.items():
                state.affine_q[j] = old_aff[j] + alpha * (q - old_aff[j])
            self.model.contact_map.refresh(state)

        place(1.0)
        continuous = self.potential.contact_model.continuous
        alpha = self.step_limits.ccd_fraction(x0, self._positions(state)) if continuous else 1.0
        alpha = min(alpha, self.step_limits.noninverting_fraction(
            np.concatenate([self.model.dofs.deflected(state, i, old_def.get(i, x))
                            for i, x in enumerate(state.deformable_x)]),
            np.concatenate([targets_def[i] - old_def[i] if i in targets_def else np.zeros_like(x)
                            for i, x in enumerate(state.deformable_x)])) if self.model.deformables else 1.0)
        if alpha < 1.0:
            place(alpha)
        if not continuous:  # discrete detection: no CCD, no distance floor
            return alpha, self.potential.collisions(self._positions(state))
        for _ in range(10):
            x = self._positions(state)
            coll = self.potential.collisions(x)
            if self.potential.min_distance_of(coll, x) >= floor:
                return alpha, coll
            alpha *= 0.5
            place(alpha)
        place(0.0)
        return 0.0, self.potential.collisions(x0)

    def _positions(self, state):
        """The contact-surface positions (N,3), m, of `state`."""
        return self.model.contact_map.positions(self.model.dofs.pack(state))
