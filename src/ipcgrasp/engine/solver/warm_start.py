"""The warm start of a step whose drivers move (WarmStart): a guess of where the step's motion
ends, taken when the straight motion to it is admissible, so that Newton starts there and no
drive round is needed. Barrier contact only (penalty contact has no CCD to prove the jump safe)."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.solver.drive_round import distance_floor
from ipcgrasp.engine.solver.settings import DRIVER_AT_REST
from ipcgrasp.engine.solver.state import State


def restore_into(state: State, earlier: State) -> None:
    """Give `state` the contents of `earlier` (the same object stays the simulation's state)."""
    for f in fields(State):
        setattr(state, f.name, getattr(earlier, f.name))


class WarmStart:
    """settings: SolverSettings; model: solver.model.Model; driven: solver.drive.DrivenBodies;
    potential: solver.potential.IncrementalPotential; step_limits: solver.line_search.StepLimits;
    dhat, bbox_diagonal (m): the activation distance and the scene's size."""

    def __init__(self, settings, model, driven, potential, step_limits, dhat, bbox_diagonal):
        self.settings, self.model, self.driven, self.potential = settings, model, driven, potential
        self.step_limits, self.dhat, self.bbox_diagonal = step_limits, dhat, bbox_diagonal

    def __call__(self, state, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction):
        """When the drivers move this step (by more than DRIVER_AT_REST), start its Newton solve
        from a guess of where the motion ends: the drivers at their targets, each driven
        deformable body's free vertices translated with it (by the mean displacement of its
        prescribed vertices), affine bodies carried on at their velocity, q_t + h qdot_t (a cube
        pushed or lifted by the jaws moves with them; gravity's h^2 g, millimetres, is left to
        Newton), everything else where it is; failing that, the same with each affine body that
        presses driven bodies translated with them instead (`_pressed_translations`: a body the
        jaws hold, at rest when they start to lift it).
        A guess is taken only if the straight motion to it from the start of the step is
        admissible: it slides the step's friction contacts (lagged, `friction`) no more than the
        free bodies' own velocities would, h v_t, give or take the friction smoothing eps_v h
        (force-weighted: D(guess) <= D(P h v_t) + sum mu lambda eps_v h; a guess that slid the
        pads past a cube at rest, at the start of a lift, could leave Newton in a sliding minimum
        where the continuation sticks), CCD finds no collision on it, no
        tet inverts and no contact distance falls below the drive's floor
        (`drive_round.distance_floor`) of its value at the start. Then no
        drive round is needed: returns the contact positions and active contacts there.
        Otherwise the state is left as it was and None returned; the step drives as before.
        Either way Newton minimises the same incremental potential from there.

        Only positions the drivers move are extrapolated: a Newton solve stops within its
        tolerance on the side it started from, so a guess that carried every velocity on would
        keep a creep below the tolerance going from step to step (a held box's pads squeezing it
        ever harder), where starting from rest lets it die out. Barrier contact only (penalty
        contact has no CCD to prove the jump safe)."""
        at_rest = self.driven.gap(state, targets_def, targets_kin) <= DRIVER_AT_REST * self.bbox_diagonal
        if not self.potential.contact_model.continuous or at_rest:
            return None
        carried_on = z_t.copy()
        for off in self.model.dofs.affine_offset:
            carried_on[off:off + 12] += self.settings.dt * v_t[off:off + 12]
        guesses = [carried_on]
        pressed = self._pressed_translations(state, targets_def, targets_kin, friction)
        if pressed:
            with_drivers = z_t.copy()
            for off, translation in pressed.items():
                with_drivers[off:off + 3] += translation
            guesses.append(with_drivers)
        for z in guesses:
            found = self._admitted(state, z, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction)
            if found is not None:
                return found
        return None

    def _pressed_translations(self, state, targets_def, targets_kin, friction) -> dict:
        """Per affine body that presses driven bodies at the step's start (its lagged friction
        contacts with them; `friction`), its DOF offset -> the mean of those drivers' translations
        this step (m, (3,); each driver's mean prescribed displacement, weighted by the contacts'
        normal forces): a body the jaws hold moves with them."""
        model, shift = self.model, {}
        for i, target in targets_def.items():
            body = model.deformables[i]
            shift[model.index[body.name]] = (target - state.deformable_x[i][body.prescribed]).mean(axis=0)
        for i, target in targets_kin.items():
            shift[model.index[model.kinematics[i].name]] = (target - state.kinematic_x[i]).mean(axis=0)
        affine = {model.index[body.name]: off for body, off in zip(model.affines, model.dofs.affine_offset)}
        total, weight = {}, {}
        for (a, b), force in zip(friction.bodies, friction.normal_force):
            for body, driver in ((a, b), (b, a)):
                if body in affine and driver in shift:
                    total[body] = total.get(body, 0.0) + force * shift[driver]
                    weight[body] = weight.get(body, 0.0) + force
        return {affine[b]: total[b] / weight[b] for b in total if weight[b] > 0.0}

    def _admitted(self, state, z, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction):
        """The guess z (affine bodies placed, deformables where they were) with the drivers at
        their targets and each driven deformable body's free vertices translated with it, when
        its straight motion is admissible (`__call__`): its contact positions and active
        contacts; else None with the state left as it was."""
        before = state.copy()
        z = z.copy()
        X0 = self.model.dofs.scene_positions(state, z_t)  # a copy: the state's arrays change below
        for i, target in targets_def.items():
            prescribed = self.model.deformables[i].prescribed
            z[self.model.dofs.free_vertex_dofs[i][1]] += (target - state.deformable_x[i][prescribed]).mean(axis=0)
            state.deformable_x[i][prescribed] = target
        for i, target in targets_kin.items():
            state.kinematic_x[i] = target.copy()
        self.model.dofs.store_positions(state, z)
        self.model.contact_map.refresh(state)
        x = self.model.contact_map.positions(z)
        h = self.settings.dt
        eps_u = self.settings.eps_v * h
        mesh, P = self.model.mesh, self.model.contact_map.P
        slide = contact.friction_potential(friction, mesh, x - x_t, eps_u)
        carried = contact.friction_potential(friction, mesh, (P @ (h * v_t)).reshape(-1, 3), eps_u)
        admissible = slide <= carried + float(np.sum(friction.mu * friction.normal_force)) * eps_u
        admissible = admissible and self.step_limits.ccd_fraction(x_t, x) == 1.0
        admissible = admissible and self.step_limits.noninverting_fraction(
            X0, self.model.dofs.scene_positions(state, z) - X0) == 1.0
        if admissible:
            coll = self.potential.collisions(x)
            floor = distance_floor(self.potential.min_distance_of(coll_t, x_t), self.dhat)
            if self.potential.min_distance_of(coll, x) >= floor:
                return x, coll
        restore_into(state, before)
        self.model.contact_map.refresh(state)
        return None
