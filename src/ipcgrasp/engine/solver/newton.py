"""The Newton solve of a time step's incremental potential (Newton): projected Newton with the
contact Hessians unprojected near convergence (UNPROJECTED_CONTACTS_NEAR), a sparse LDL^T solve,
a warm start's forced first step tried with the factorisation where the last step ended
(CARRIED_MODEL, CARRIED_CONVERGED), a line search clipped by CCD (barrier contact) and tet
inversion then backtracking on E and extrapolating a full step that lowers E by more than its
quadratic model predicts (solver.line_search), the convergence test on the largest coordinate of
the Newton step over dt and on the net force and torque left on each affine body (solver.balance), the fallback acceptance of a stalled solve; and the acceptance of the
converged configuration with the report of the step (StepStats)."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.solver.contact_model import body_pair_resultants
from ipcgrasp.engine.solver.line_search import MIN_STEP, backtrack, extrapolate
from ipcgrasp.engine.solver.settings import (
    CARRIED_CONVERGED,
    CARRIED_MODEL,
    NEWTON_GAP_FLOOR,
    UNPROJECTED_CONTACTS_NEAR,
    StepFailed,
    StepStats,
)


class Newton:
    """The Newton solves of a simulation (settings: SolverSettings; model: solver.model.Model;
    potential: solver.potential.IncrementalPotential; proximity: solver.proximity.Proximity;
    step_limits: solver.line_search.StepLimits; penetration: engine.penetration.PenetrationProbe
    for the report; dhat, bbox_diagonal (m): the activation distance and the scene's size).

    iterations_run: the Newton iterations of every solve so far, as StepStats counts them;
    converged: False once a solve of the current step was accepted by
    SolverSettings.newton_fallback_tolerance (the step sets it True when it starts). `state`
    arguments give the driven positions and are copied into StepFailed, not changed (but by
    `accept`)."""

    def __init__(self, settings, model, potential, proximity, step_limits, penetration, dhat, bbox_diagonal):
        self.settings, self.model, self.potential = settings, model, potential
        self.contact_model, self.stiffness = potential.contact_model, potential.stiffness
        self._factorisation = potential.hessian_assembly.factorisation
        self.proximity, self.step_limits, self.penetration = proximity, step_limits, penetration
        self.dhat, self.bbox_diagonal = dhat, bbox_diagonal
        self.iterations_run = 0
        self.converged = True

    def solve(self, state, z, z_tilde, friction, x_t, x, coll, min_iterations=0, tolerance=1.0):
        """Projected Newton from z (x, coll: its contact positions and active contacts; the contact
        Hessians unprojected near convergence: direction); returns
        the converged z, the iterations, the line-search fractions, and x, coll at the result.
        min_iterations: Newton steps taken before the convergence test may end the solve (a
        warm start is a guess, not an iterate of this solve). tolerance: the convergence test's
        multiple of newton_tolerance."""
        s, h = self.settings, self.settings.dt
        tol = tolerance * s.newton_tolerance
        alphas = []
        continuous = self.contact_model.continuous
        prev_min_d2 = self.potential.min_distance_of(coll, x) ** 2 if continuous else None
        # no iterate brings a contact closer than this (m; NEWTON_GAP_FLOOR)
        floor = (min(NEWTON_GAP_FLOOR * self.dhat, 0.5 * np.sqrt(prev_min_d2))
                 if continuous and s.newton_gap_floor else 0.0)
        terms = None  # the energy terms at z, once known
        best = None  # (Newton step norm, z, x, coll) of the iterate with the smallest Newton step
        g = None  # the gradient at z, once known
        iteration = 0
        step_norm = np.inf  # of the last Newton step
        while iteration <= s.max_newton_iterations:
            iteration += 1
            self.iterations_run += 1
            if g is None:
                g = self.potential.gradient(state, z, z_tilde, friction, x_t, x, coll)
            if not np.isfinite(g).all():
                raise StepFailed("non-finite gradient in Newton", state.copy())
            # A warm start's forced step with the contacts where the last step ended is first tried
            # with that step's last factorisation: a lift carries everything up unchanged.
            carried = (iteration <= min_iterations and self._factorisation.carried and self._factorisation.holds_factors
                       and np.array_equal(self._factorisation.contacts, coll.vertices))
            self._factorisation.carried = False
            if carried:
                p = self._factorisation.solve(-g)
                step_norm, dx = self.step_norm(p)
                carried = step_norm <= self.dhat  # longer is no correction of a guess that is right
            if not carried:
                near = s.unprojected_contacts and step_norm / h <= UNPROJECTED_CONTACTS_NEAR * tol
                p = self.direction(state, z, g, friction, x_t, x, coll, project_contacts=not continuous or not near)
                if not np.isfinite(p).all():
                    raise StepFailed("linear solve produced NaN/inf", state.copy())
                step_norm, dx = self.step_norm(p)
            small = step_norm / h < tol and iteration > min_iterations
            if small and self.balanced(g, z, tolerance):
                # the solver now holds H(z) factored: the next drive round starts from this z
                self._factorisation.converged = (z, z_tilde, friction, x_t, coll, self.stiffness.kappa, g)
                self.iterations_run -= 1  # this pass only found the solve converged
                return z, iteration - 1, alphas, x, coll
            if not carried and (best is None or step_norm < best[0]):
                best = (step_norm, z, x, coll)
            if iteration > s.max_newton_iterations:
                self.iterations_run -= 1  # this pass only measured the last step
                break
            # One broad phase per iteration serves the CCD, every line-search energy and the next
            # iterate's contact set: all lie on the segment x -> x + dx.
            pairs = self.proximity.candidates(x, x + dx, self.dhat)
            alpha = min(1.0, self.step_limits.ccd_fraction(x, x + dx, pairs)) if continuous else 1.0
            X, dX = self.model.dofs.scene_positions(state, z), self.model.dofs.scene_steps(p)
            alpha = min(alpha, self.step_limits.noninverting_fraction(X, dX))
            if terms is None:
                terms = self.potential.energy(state, z, z_tilde, friction, x_t, coll=coll)[0]
            e0 = self.potential.total(terms)
            alpha, (terms1, x1, coll1) = backtrack(self._trial(state, z, p, z_tilde, friction, x_t, pairs, floor),
                                                   e0, alpha)
            if carried:
                decrease, predicted = e0 - self.potential.total(terms1), -0.5 * float(g @ p)
                if not (alpha == 1.0 and CARRIED_MODEL[0] * predicted <= decrease <= CARRIED_MODEL[1] * predicted):
                    iteration -= 1  # the carried Hessian does not fit here: take this step with a fresh one
                    self.iterations_run -= 1
                    continue
            if alpha < MIN_STEP and small:
                # a step below the tolerance that lowers E by less than its rounding: z is as balanced as E can tell
                self._factorisation.converged = None
                self.iterations_run -= 1
                return z, iteration - 1, alphas, x, coll
            if alpha < MIN_STEP:
                raise StepFailed(f"line search failed after {iteration} Newton iterations", state.copy())
            if alpha == 1.0 and not carried:
                longer = self._longer_trial(state, z, p, x, dx, X, dX, z_tilde, friction, x_t, floor)
                alpha, (terms1, x1, coll1) = extrapolate(longer, e0, float(g @ p), self.potential.total(terms1),
                                                         (terms1, x1, coll1))
            alphas.append(alpha)
            z = z + alpha * p
            x, coll, terms, g = x1, coll1, terms1, None
            if not continuous:
                continue
            min_d2 = self.potential.min_distance_of(coll, x) ** 2
            self.stiffness.update(prev_min_d2, min_d2)
            prev_min_d2 = min_d2
            if carried and np.array_equal(self._factorisation.contacts, coll.vertices):
                # the carried factorisation's step from the new gradient estimates the next Newton step
                g = self.potential.gradient(state, z, z_tilde, friction, x_t, x, coll)
                estimate, _ = self.step_norm(self._factorisation.solve(-g))
                if estimate / h < CARRIED_CONVERGED * tol and self.balanced(g, z, tolerance):
                    self._factorisation.converged = None
                    return z, iteration, alphas, x, coll
        if s.newton_fallback_tolerance is not None and best[0] / h < s.newton_fallback_tolerance * self.bbox_diagonal:
            self.converged = False
            return best[1], s.max_newton_iterations, alphas, best[2], best[3]
        raise StepFailed(f"Newton did not converge in {s.max_newton_iterations} iterations", state.copy())

    def balanced(self, g, z, tolerance=1.0) -> bool:
        """Whether the net force and torque on every affine body at z (g: the gradient there) are
        within tolerance x newton_force_tolerance (solver.balance; always, without one)."""
        limit = self.settings.newton_force_tolerance
        return limit is None or self.model.balance.largest(g, z, self.settings.dt) <= tolerance * limit

    def direction(self, state, z, g, friction, x_t, x, coll, project_contacts):
        """The Newton step -H^-1 g at z (g: the gradient there). Without project_contacts, H has
        the barrier Hessians unprojected when it is then positive definite (every LDL^T pivot
        positive); else, and with project_contacts, each is PSD-projected."""
        if not project_contacts:
            unprojected = self.potential.hessian(state, z, friction, x_t, x, coll, project=False)
            if self._factorisation.factor(unprojected) and self._factorisation.positive_definite:
                return self._factorisation.solve(-g)
        return self._factorisation.factor_and_solve(self.potential.hessian(state, z, friction, x_t, x, coll), -g,
                                                    state, self.model.describe_unknown)

    def step_norm(self, p):
        """(largest coordinate (m) of a Newton step p over the position DOFs and the contact
        surface, the contact-surface displacements (N,3) under it)."""
        return self.model.contact_map.step_norm(p, self.model.dofs.position_dofs)

    def _trial(self, state, z, p, z_tilde, friction, x_t, pairs, floor=0.0):
        """The line search's trial at z + alpha p: alpha -> (E there, (its terms for _total_energy,
        the contact positions, the active contacts)); pairs: Proximity.candidates over the
        contact surface's motion under p. E is inf where a contact is closer than `floor` (m;
        NEWTON_GAP_FLOOR), so that backtracking shortens the step."""

        def trial_at(alpha):
            found = self.potential.energy(state, z + alpha * p, z_tilde, friction, x_t, pairs)
            if floor > 0.0 and self.potential.min_distance_of(found[2], found[1]) < floor:
                return np.inf, found
            return self.potential.total(found[0]), found

        return trial_at

    def _longer_trial(self, state, z, p, x, dx, X, dX, z_tilde, friction, x_t, floor=0.0):
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
            found = self.potential.energy(state, z + alpha * p, z_tilde, friction, x_t, pairs)
            if floor > 0.0 and self.potential.min_distance_of(found[2], found[1]) < floor:
                return None
            return self.potential.total(found[0]), found

        return trial_at

    def accept(self, state, z, z_t, friction, x_t, x, coll, iterations, alphas, driver_fraction, driver_lag):
        """Store the converged z in `state` (its velocities (z - z_t) / h and time too; x, coll:
        its contact positions and active contacts; the factorisation then holds the Hessian where
        the step ended) and report the step (StepStats)."""
        self._factorisation.carried = self.settings.carry_factorisation
        h = self.settings.dt
        v = (z - z_t) / h
        strain = self.potential.strain_energy(state, z)
        self.model.dofs.store_positions(state, z)
        self.model.dofs.store_velocities(state, v)
        state.time += h
        mesh = self.model.mesh
        B = len(self.model.bodies)
        normal, min_distance, n_contacts, force_gap, kappa = self.contact_model.report(
            mesh, x, coll, self.stiffness.kappa, B, self.potential.min_distance_of)
        forces = contact.friction_forces(friction, mesh, x - x_t, self.settings.eps_v * h) / h ** 2
        fric = body_pair_resultants(mesh, friction.vertices, friction.bodies, forces, B)
        return StepStats(time=state.time, newton_iterations=iterations, line_search_alphas=alphas,
                         driver_fraction=driver_fraction, driver_lag=driver_lag, min_distance=min_distance,
                         n_contacts=n_contacts, barrier_stiffness=kappa,
                         energies={"strain": sum(strain.values())}, contact_force=normal, friction_force=fric,
                         strain_energy=strain, max_penetration=self.penetration.max_depth(x),
                         max_force_gap=max(force_gap, 0.0), newton_converged=self.converged)
