"""The line search of a Newton step p: how far along p the iterate may move (no collision on the
way, by CCD; no tet inverted), backtracking on the incremental potential E from there, and
extrapolation of a full step that lowers E by more than its quadratic model predicts."""

from __future__ import annotations

from typing import Callable

from ipcgrasp.engine.ccd import DEFAULT_CONSERVATIVE_RESCALING, DEFAULT_MAX_ITERATIONS, _collision_free_stepsize
from ipcgrasp.engine.neohookean import _max_noninverting_step
from ipcgrasp.engine.solver.settings import MAX_EXTRAPOLATIONS

MIN_STEP = 1e-12  # backtracking gives up below this fraction of the Newton step


class StepLimits:
    """The largest fractions of a straight motion that keep a configuration admissible.

    mesh: the collision mesh (engine.collisions.CollisionMesh; its edges and faces are read);
    plane: (origin, normal) of the ground, or a placeholder the CCD kernel accepts without one;
    proximity: a solver.proximity.Proximity over the mesh; tets, Dm_inv, tet_start: the
    deformable bodies' tets, rest-shape inverses and per-body first tet (engine.scene's flat
    arrays); body_names: the deformable bodies' names (for the error when a tet is inverted)."""

    def __init__(self, mesh, plane, proximity, tets, Dm_inv, tet_start, body_names):
        self.edges, self.faces = mesh.edges, mesh.faces
        self.plane = plane
        self.proximity = proximity
        self.tets, self.Dm_inv, self.tet_start = tets, Dm_inv, tet_start
        self.body_names = list(body_names)

    def ccd_fraction(self, x0, x1, candidate_pairs=None) -> float:
        """Largest fraction of the straight motion x0 -> x1 (contact-surface positions (N,3), m)
        that CCD proves collision-free; candidate_pairs: Proximity.candidates over the motion
        (default: found here with radius 0)."""
        vf, ee, vp = candidate_pairs if candidate_pairs is not None else self.proximity.candidates(x0, x1, 0.0)
        return float(_collision_free_stepsize(x0, x1, vf, ee, vp, self.edges, self.faces, *self.plane, 0.0,
                                              DEFAULT_MAX_ITERATIONS, DEFAULT_CONSERVATIVE_RESCALING))

    def noninverting_fraction(self, X, dX) -> float:
        """Largest fraction (<= 1) of the deformable motion X -> X + dX (all bodies' vertices, m,
        as Dofs.scene_positions) keeping every tet's J > 0, with
        neohookean.max_noninverting_step's safety factor. Raises ValueError when a tet is
        inverted at X."""
        fraction = _max_noninverting_step(X, dX, self.tets, self.Dm_inv, 0.9)
        if fraction < 0.0:
            for name, lo, hi in zip(self.body_names, self.tet_start, self.tet_start[1:]):
                if _max_noninverting_step(X, dX, self.tets[lo:hi], self.Dm_inv[lo:hi], 0.9) < 0.0:
                    raise ValueError(f"{name} has an inverted tet (J <= 0)")
        return min(1.0, fraction)


def backtrack(trial_at: Callable, e0: float, alpha: float):
    """Halve the step fraction alpha until E there is at most e0 (J) or alpha falls below
    MIN_STEP. trial_at(alpha) -> (E, what the caller keeps of the trial). Returns alpha and what
    trial_at gave there."""
    while True:
        energy, trial = trial_at(alpha)
        if energy <= e0 or alpha < MIN_STEP:
            return alpha, trial
        alpha *= 0.5


def extrapolate(trial_at: Callable, e0: float, slope: float, energy: float, accepted):
    """After a full Newton step p that lowered E from e0 to `energy` (J) by more than 1.5 times
    what its quadratic model predicts (-slope / 2, slope = g . p), the model overestimates the
    curvature along p (directions of zero or negative curvature the PSD-projected Hessian cannot
    show: the object sliding or rolling on the pads under the clamped contact Hessians, contacts
    leaving the boundary layer), so try doubling the step, up to MAX_EXTRAPOLATIONS times, while
    E keeps falling. trial_at(alpha) -> (E, what the caller keeps) at alpha p, or None when alpha
    p is not admissible; accepted: what the caller keeps of the full step. Returns the fraction
    taken and what the caller keeps there."""
    alpha = 1.0
    if not e0 - energy > -0.75 * slope:
        return alpha, accepted
    for _ in range(MAX_EXTRAPOLATIONS):
        trial = 2.0 * alpha
        found = trial_at(trial)
        if found is None:
            break
        trial_energy, trial_kept = found
        if not trial_energy < energy:
            break
        alpha, energy, accepted = trial, trial_energy, trial_kept
    return alpha, accepted
