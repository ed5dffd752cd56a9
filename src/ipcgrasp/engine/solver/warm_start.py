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
        # body index -> DOF offset of each affine body, and -> position among the deformable bodies
        self._affine_offset = {model.index[body.name]: off for body, off in zip(model.affines, model.dofs.affine_offset)}
        self._deformable_order = {model.index[body.name]: i for i, body in enumerate(model.deformables)}

    def __call__(self, state, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction):
        """When the drivers move this step (by more than DRIVER_AT_REST), start its Newton solve
        from a guess of where the motion ends: the drivers at their targets, each driven
        deformable body's free vertices translated with it (by the mean displacement of its
        prescribed vertices), affine bodies carried on at their velocity, q_t + h qdot_t (a cube
        pushed or lifted by the jaws moves with them; gravity's h^2 g, millimetres, is left to
        Newton), everything else where it is; failing that, the same with each affine body that
        presses driven bodies translated with them instead (`_pressed_translations`: a body the
        jaws hold, at rest when they start to lift it), and the free vertices of a driven body
        that presses it moved with it where its drivers move within dhat of it (`_pressed_guess`:
        a jaw the force grip moves a few microns closer squeezes its pad instead of pushing the
        pad's surface into the body).
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
        model = self.model
        own = self._driver_translations(state, targets_def, targets_kin)
        with_own = {i: own[model.index[model.deformables[i].name]] for i in targets_def}
        carried_on = z_t.copy()
        for off in model.dofs.affine_offset:
            carried_on[off:off + 12] += self.settings.dt * v_t[off:off + 12]
        guesses = [(carried_on, with_own)]
        pressed = self._pressed_translations(own, friction)
        if pressed:
            guesses.append(self._pressed_guess(z_t, pressed, with_own))
        h = self.settings.dt
        eps_u = self.settings.eps_v * h
        own_velocities = (model.contact_map.P @ (h * v_t)).reshape(-1, 3)
        allowed_slide = (contact.friction_potential(friction, model.mesh, own_velocities, eps_u)
                         + float(np.sum(friction.mu * friction.normal_force)) * eps_u)
        for z, free in guesses:
            found = self._admitted(state, z, free, allowed_slide, targets_def, targets_kin, z_t, x_t, coll_t, friction)
            if found is not None:
                return found
        return None

    def _pressed_guess(self, z_t, pressed, with_own) -> tuple:
        """The second guess (z, free-vertex translations as `_admitted` takes them): each pressed
        affine body translated (`pressed`, `_pressed_translations`), and the free vertices of
        each driven deformable body that presses one moved with it where its own drivers move
        within dhat of it (a jaw adjusting its grip squeezes its pad), else with its drivers
        (`with_own`: a jaw closing farther on the body is left to the drive rounds)."""
        z, free = z_t.copy(), dict(with_own)
        for body, translation in pressed.items():
            if body in self._affine_offset:
                off = self._affine_offset[body]
                z[off:off + 3] += translation
            elif self._deformable_order.get(body) in with_own:
                i = self._deformable_order[body]
                if np.linalg.norm(translation - with_own[i]) <= self.dhat:
                    free[i] = translation
        return z, free

    def _driver_translations(self, state, targets_def, targets_kin) -> dict:
        """Per driven body (body index), the mean translation (m, (3,)) of its driven vertices
        this step: a deformable body's prescribed vertices, a kinematic body's vertices."""
        model, shift = self.model, {}
        for i, target in targets_def.items():
            body = model.deformables[i]
            shift[model.index[body.name]] = (target - state.deformable_x[i][body.prescribed]).mean(axis=0)
        for i, target in targets_kin.items():
            shift[model.index[model.kinematics[i].name]] = (target - state.kinematic_x[i]).mean(axis=0)
        return shift

    def _pressed_translations(self, own: dict, friction) -> dict:
        """How the bodies that press driven ones at the step's start move with them (body index
        -> translation, m, (3,)): each affine body in lagged friction contact with driven bodies
        (`friction`) by the mean of their translations (`own`, `_driver_translations`) weighted
        by the contacts' normal forces (a body the jaws hold moves with them); and each driven
        deformable body's free vertices with the affine body it presses (weighted alike over
        several), so that a jaw closing on the body it holds squeezes its pad instead of pushing
        the pad's surface into the body."""
        bodies, forces = friction.bodies, friction.normal_force
        n = max([*own, *self._affine_offset, int(bodies.max(initial=-1))]) + 1
        moves, driven = np.zeros((n, 3)), np.zeros(n, dtype=bool)
        for body, translation in own.items():
            moves[body], driven[body] = translation, True
        affine = np.zeros(n, dtype=bool)
        affine[list(self._affine_offset)] = True
        carried = self._force_weighted(bodies, forces, affine, driven, moves)
        deformable = np.zeros(n, dtype=bool)
        deformable[[b for b in self._deformable_order if b in own]] = True
        held = np.zeros(n, dtype=bool)
        held[list(carried)] = True
        for body, translation in carried.items():
            moves[body] = translation
        carried.update(self._force_weighted(bodies, forces, deformable, held, moves))
        return carried

    @staticmethod
    def _force_weighted(bodies, forces, movers, moved, moves) -> dict:
        """Per body marked in `movers` (bool per body index) in friction contact (`bodies`, (C, 2)
        body indices; `forces`, (C,) normal forces, N) with bodies marked in `moved`: the mean of
        their translations `moves` ((n, 3), m) over those contacts, weighted by normal force."""
        total, weight = np.zeros_like(moves), np.zeros(len(moves))
        for this, other in ((bodies[:, 0], bodies[:, 1]), (bodies[:, 1], bodies[:, 0])):
            touching = movers[this] & moved[other]
            np.add.at(total, this[touching], forces[touching, None] * moves[other[touching]])
            np.add.at(weight, this[touching], forces[touching])
        return {int(b): total[b] / weight[b] for b in np.flatnonzero(weight > 0.0)}

    def _admitted(self, state, z, free, allowed_slide, targets_def, targets_kin, z_t, x_t, coll_t, friction):
        """The guess z (affine bodies placed, deformables where they were) with the drivers at
        their targets and each driven deformable body i's free vertices translated by free[i]
        (m, (3,)), when its straight motion is admissible (`__call__`; allowed_slide, J: the
        friction potential it may slide the step's friction contacts by): its contact positions
        and active contacts; else None with the state left as it was."""
        before = state.copy()
        z = z.copy()
        X0 = self.model.dofs.scene_positions(state, z_t)  # a copy: the state's arrays change below
        for i, target in targets_def.items():
            z[self.model.dofs.free_vertex_dofs[i][1]] += free[i]
            state.deformable_x[i][self.model.deformables[i].prescribed] = target
        for i, target in targets_kin.items():
            state.kinematic_x[i] = target.copy()
        self.model.dofs.store_positions(state, z)
        self.model.contact_map.refresh(state)
        x = self.model.contact_map.positions(z)
        eps_u = self.settings.eps_v * self.settings.dt
        admissible = contact.friction_potential(friction, self.model.mesh, x - x_t, eps_u) <= allowed_slide
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
