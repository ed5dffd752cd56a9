"""The solver's options (SolverSettings), its report of a step (StepStats), its failure (StepFailed),
the contact models it knows, and the tuning constants of its drive, Newton loop, line search and
caches."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ipcgrasp.engine.solver.state import State

CONTACT_MODELS = ("ipc", "penalty")
GRAVITY = 9.81
"""Standard gravity (m/s^2): the magnitude of `SolverSettings.gravity` unless a scene sets its own."""
"""The contact models a step knows: "ipc" (log barrier, CCD, adaptive kappa) and "penalty" (BLEM)."""
MIN_DISTANCES_KEPT = 4  # (contacts, positions) pairs whose smallest distance a Simulation remembers
MAX_EXTRAPOLATIONS = 8  # line search: a full Newton step may grow up to 2^8 times
MAX_CLUSTER_PASSES = 2  # extra lagged passes of a step while contacts begin outside the penalty clusters
# A tet's projected Hessian is reused while no entry of its deformation gradient F has moved more
# than this since it was computed. Most of a pad only translates with its jaw or strains by less;
# a Hessian off by about this relatively changes Newton's direction, not the minimiser it converges
# to: over cube grasps 0-9 the Newton iterations stay the same to within 0.1 %, 14 % of the tets are
# recomputed instead of 56 % at 1e-8, and no cube verdict changes (docs/performance.md, "Elastic
# Hessian reuse").
# Looser values save no more time.
ELASTIC_HESSIAN_REUSE = 1e-5
# Broad-phase pairs are reused while every contact-surface vertex stays within this many dhat of
# where they were found (solver.proximity); the pairs are the same, only found faster. With the
# 10 um layer a squeeze or lift iteration moves the surface farther than one dhat, and the grid
# was rebuilt almost every Newton iteration (3,168 times in a 968-iteration trial of a 971-vertex
# object, 28 % of its CPU). At 10 the cached pairs serve most iterations: CPU per trial 12-20 %
# less on the real objects (random_008, duck), 4-6 % on the cube, 2 % on the 1538-vertex cube;
# 3 saves about half of that, and 100 is slower again than 10-30 (more cached pairs to re-test;
# docs/performance.md, "Real objects").
PAIR_CACHE_SLACK = 10.0
# Drivers within this fraction of the scene's size of their targets are at rest (rounding: a
# driver held still is re-placed at old + (target - old)); the warm start leaves such steps alone.
DRIVER_AT_REST = 1e-12
# A drive round or a warm start may bring a contact no closer than this fraction of min(its distance
# before, dhat), nor closer than a Newton iterate may (NEWTON_GAP_FLOOR): CCD alone would let a
# driven surface stop a hair's breadth from contact, where the barrier is all but singular. A pad
# squeezed hard sits a hundredth of dhat from the object; a floor of half that distance cut the
# rounds of a lift to a few percent of the jaws' motion each, and the jaws fell behind their
# targets step after step (`drive_round.distance_floor`).
DRIVE_DISTANCE_FLOOR = 0.1
# A drive round differentiates the contact gradient along a kinematic body's motion by moving it
# this fraction of the smallest contact distance (min(it, dhat)) each way (DriveRound.contact_coupling).
KINEMATIC_PROBE = 1e-3
# A warm start's forced Newton step is first tried with the factorisation where the last step ended
# (solver.newton) and kept when it is no longer than dhat, the line search takes all of it and
# E falls by CARRIED_MODEL times what the step's quadratic model predicts; else the step is taken
# with a fresh Hessian. With the same contacts after it, that factorisation's next step ends the
# solve when it is below CARRIED_CONVERGED times the Newton tolerance.
CARRIED_MODEL = (0.5, 2.0)
CARRIED_CONVERGED = 0.5
# Once a Newton step is within this many times the tolerance (newton_tolerance x dt), the next one
# is tried with the barrier Hessians unprojected and kept when the whole Hessian is still positive
# definite; else, and further out, each contact's barrier Hessian is PSD-projected. Near a minimiser
# the projection overestimates the curvature where a contact's Hessian is indefinite (an object
# rolling or sliding between pads: the true curvature along the Newton step was 5-15 % of the
# projected one), so projected Newton converges there linearly, by about 10 % an iteration, and
# unprojected it converges quadratically. Further out the unprojected step can carry an object
# across a tipping edge the projected solve does not: from 5 times the tolerance on, one tipping
# event of the noisy cube trials ended the other way (docs/performance.md, "Unprojected contact
# Hessians near convergence").
UNPROJECTED_CONTACTS_NEAR = 2.5
# No Newton iterate brings a contact closer than min(NEWTON_GAP_FLOOR x dhat, half the smallest
# contact distance where the solve starts): the line search treats a trial below that as
# infeasible and halves the step. CCD alone lets each iteration close a gap by 90 %, and the log
# barrier's energy grows only with log(1/d), so iterates could put a contact at 1e-6 dhat and
# below; the barrier's Hessian there, 2 kappa dhat^4 / d^2, outgrows the object's inertia by more
# than double precision holds (a 50 g bunny's rotational inertia, about 1e-6 in the affine
# coordinates, against contact blocks of 1e7 at d = 2e-10 m, kappa 3.6e7, dhat 0.1 mm), and the
# LDL^T of a Hessian positive definite by construction meets a zero pivot. At the floor a contact
# pushes with about 1e4 times SolverSettings.contact_force_scale (the force it carries at a tenth
# of dhat), far beyond any grip: an equilibrium never lies below it.
NEWTON_GAP_FLOOR = 1e-5
# With coarse_rounds (Simulation.step) the Newton solves of a step's drive-and-settle rounds stop at
# this many times the tolerance, the step's last solve at the tolerance itself: a round's end only
# makes room for the next drive and is where give_up looks. About 9 % fewer Newton iterations on the
# cube trials, with the same verdicts when the grasp procedure asks for it only once both pads touch
# the object (docs/performance.md, "Coarse drive-and-settle rounds").
COARSE_ROUND_TOLERANCE = 10.0
MAX_DRIVE_ROUNDS = 12  # drive-and-settle rounds per step before the rest of the driven motion waits for the next step


@dataclass
class SolverSettings:
    """dt (s); gravity (m/s^2); dhat (m, None: 1e-3 x initial scene bounding-box diagonal);
    eps_v (m/s) friction smoothing speed; newton_tolerance (m/s) on ||dx||_inf / dt.
    The defaults of dt, dhat, eps_v, newton_tolerance, contact_model and the penalty fields are
    the grasp procedure's (grasp.params.SimParams takes them from here): a 10 um contact layer,
    static friction below 0.1 mm/s, Newton to 0.11/s x dhat (docs/physics.md);
    newton_force_tolerance (N, None: no such test): Newton also requires the net force left
    unbalanced on each affine body, and its net torque about its centre of mass over its radius,
    to be at most this (solver.balance: contact, friction, gravity and inertia together). A small
    Newton step bounds that residual only through the Hessian, and a thin contact layer is stiff:
    a step of 0.2 um can leave 100 N unbalanced on a 3 g body;
    newton_fallback_tolerance (1/s): when Newton reaches max_newton_iterations without meeting
    newton_tolerance, the step is still accepted at its iterate with the smallest Newton step if
    that step over dt is below newton_fallback_tolerance x the scene's bounding-box diagonal (IPC's
    own convergence criterion, 1e-2 l per second; StepStats.newton_converged is then False).
    Projected Newton can stall there (PSD-projected contact Hessians, a light body sliding under
    friction), moving the iterate by microns per iteration; None: such a step fails.
    friction_iterations: lagged friction passes per step (1 = IPC's default lagging);
    contact_force_scale (N, optional): the force one contact should carry at a tenth of dhat.
    IPC's stiffness heuristic balances the barrier against inertia and gravity, which for light
    bodies squeezed hard leaves contact forces to be carried at vanishing distances; this sets a
    floor on kappa so that a known force scale (e.g. a gripper's closing force) is carried at a
    resolvable gap.
    contact_model: "ipc" (log barrier, CCD, adaptive kappa) or "penalty" (BLEM penalty
    contact of engine/penalty/, discrete detection, no CCD). Penalty only: penalty_stiffness k
    (N/m per contact), penalty_margin r (m, boundary layer of every mesh: meshes touch below 2 r,
    the ground below r; the activation distance `Simulation.dhat` becomes 2 r and `dhat` is not
    used), penalty_clusters K (at most K k-means representative contacts per body pair, lagged
    per friction pass; 0 = every contact).
    warm_start: a step with moving drivers first tries solver.warm_start's guess of where it ends
    (False: every such step takes the drive-and-settle continuation); carry_factorisation: a
    step may start from the factorisation where the last step ended (solver.newton; False: every
    step starts with fresh Hessians); unprojected_contacts: near convergence a Newton step is
    tried with the barrier Hessians unprojected (UNPROJECTED_CONTACTS_NEAR; False: always
    PSD-projected). All three give the same minimiser within the Newton tolerance; they are
    switches for checking that. newton_gap_floor: no Newton iterate brings a contact closer than
    NEWTON_GAP_FLOOR dhat (False: CCD alone bounds the iterates), the switch for checking that
    the floor changes nothing where the iterates stay clear of it."""

    dt: float = 0.02
    gravity: tuple = (0.0, 0.0, -GRAVITY)
    dhat: float | None = 1e-5
    eps_v: float = 1e-4
    newton_tolerance: float = 1.1e-6
    newton_force_tolerance: float | None = None
    newton_fallback_tolerance: float | None = 1e-2
    max_newton_iterations: int = 100
    friction_iterations: int = 1
    min_barrier_stiffness_scale: float = 1e11
    contact_force_scale: float | None = None
    contact_model: str = "ipc"
    penalty_stiffness: float = 1e5
    penalty_margin: float = 5e-4
    penalty_clusters: int = 0
    warm_start: bool = True
    carry_factorisation: bool = True
    unprojected_contacts: bool = True
    newton_gap_floor: bool = True

    def __post_init__(self):
        if self.contact_model not in CONTACT_MODELS:
            raise ValueError(f"SolverSettings.contact_model must be one of {CONTACT_MODELS}, "
                             f"got {self.contact_model!r}")
        for name in ("penalty_stiffness", "penalty_margin"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
                raise ValueError(f"SolverSettings.{name} must be a positive finite number, got {value!r}")
        fallback = self.newton_fallback_tolerance
        if fallback is not None and not (math.isfinite(fallback) and fallback > 0):
            raise ValueError(f"SolverSettings.newton_fallback_tolerance must be positive and finite or None, "
                             f"got {fallback!r}")
        force = self.newton_force_tolerance
        if force is not None and not (math.isfinite(force) and force > 0):
            raise ValueError(f"SolverSettings.newton_force_tolerance must be positive and finite or None, "
                             f"got {force!r}")
        clusters = self.penalty_clusters
        if isinstance(clusters, bool) or not isinstance(clusters, numbers.Integral) or clusters < 0:
            raise ValueError(f"SolverSettings.penalty_clusters must be an integer >= 0 (0: no clustering), "
                             f"got {clusters!r}")


@dataclass
class StepStats:
    """What one step did. Forces in N: contact_force[i, j] is the normal (barrier or penalty)
    force on body i from body j, friction_force[i, j] the friction force; index n_bodies is the
    ground. min_distance (m): smallest distance over the active contacts (penalty: the ground's
    is the signed height); n_contacts: active contacts (clusters when clustering);
    barrier_stiffness: kappa (nan under penalty); max_penetration (m): deepest surface vertex
    inside another body or below the ground (`penetration`; 0 for the barrier); max_force_gap
    (m): largest distance between primitives at which a nonzero contact force acted (< dhat for
    the barrier, up to 2 r under penalty: the "force field"); newton_converged: False when the
    step was accepted by SolverSettings.newton_fallback_tolerance. driver_fraction: the part of
    the step's driven motion taken (1 = the drivers reached their targets); driver_lag (m): the
    largest distance of a driven vertex from its target after the step (0 when reached)."""

    time: float
    newton_iterations: int
    line_search_alphas: list
    driver_fraction: float
    driver_lag: float
    min_distance: float
    n_contacts: int
    barrier_stiffness: float
    energies: dict
    contact_force: np.ndarray
    friction_force: np.ndarray
    strain_energy: dict
    max_penetration: float = 0.0
    max_force_gap: float = 0.0
    newton_converged: bool = True
    wall_time: float = 0.0
    extra: dict = field(default_factory=dict)


class StepFailed(RuntimeError):
    """A step could not be completed; `state` is the last good (intersection-free) state."""

    def __init__(self, reason: str, state: State):
        super().__init__(reason)
        self.reason = reason
        self.state = state
