"""Time stepping by Incremental Potential Contact: `Simulation`, a scene of bodies advanced step by
step, and the queries the grasp layer asks of it. Each step minimises the incremental potential
over the free degrees of freedom (docs/physics.md: one time step, the solver, driven motion);
the parts it is made of are in engine.solver (its package docstring maps them and says how a
step puts them together)."""

from __future__ import annotations

import time as _time
import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.affine_body import affine_positions, nearest_rotation
from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground
from ipcgrasp.engine.penetration import PenetrationProbe
from ipcgrasp.engine.solver import queries
from ipcgrasp.engine.solver.barrier_stiffness import BarrierStiffness
from ipcgrasp.engine.solver.contact_model import BarrierContact, PenaltyContact
from ipcgrasp.engine.solver.drive import DrivenBodies
from ipcgrasp.engine.solver.drive_round import DriveRound
from ipcgrasp.engine.solver.line_search import StepLimits
from ipcgrasp.engine.solver.model import Model
from ipcgrasp.engine.solver.newton import Newton
from ipcgrasp.engine.solver.potential import IncrementalPotential
from ipcgrasp.engine.solver.proximity import Proximity
from ipcgrasp.engine.solver.settings import (
    COARSE_ROUND_TOLERANCE,
    MAX_CLUSTER_PASSES,
    MAX_DRIVE_ROUNDS,
    SolverSettings,
    StepFailed,
    StepStats,
)
from ipcgrasp.engine.solver.state import State
from ipcgrasp.engine.solver.warm_start import WarmStart


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
        model = self.model = Model(bodies, poses, ground, friction or {}, default_friction, ignore_pairs, self.settings,
                                   mounts)
        self.bodies, self.index, self.ground = model.bodies, model.index, model.ground
        self.deformables, self.affines, self.kinematics = model.deformables, model.affines, model.kinematics
        self.mounts, self.dofs, self.n_dof, self.contact_map = model.mounts, model.dofs, model.n_dof, model.contact_map
        self.n_collision_vertices = model.n_collision_vertices
        self.state = model.initial_state.copy()
        x = self.collision_positions()
        self.driven = DrivenBodies(self.bodies, self.index, self.deformables, self.kinematics, self.dofs,
                                   model.mount_rotation, model.linked_entries)
        s = self.settings
        lo, hi = x.min(axis=0), x.max(axis=0)
        self.bbox_diagonal = float(np.linalg.norm(hi - lo))
        if s.contact_model == "penalty":
            self.dhat = 2.0 * float(s.penalty_margin)
        else:
            self.dhat = float(s.dhat) if s.dhat is not None else 1e-3 * self.bbox_diagonal
        self.proximity = Proximity(self.mesh, self.dhat, self.bbox_diagonal)
        sc = self.model.scene
        self.step_limits = StepLimits(self.mesh, self.model.plane_arrays, self.proximity, sc["tets"], sc["Dm_inv"],
                                      sc["tet_start"], [body.name for body in self.deformables])
        # the contact model in use (settings.contact_model names it)
        self.contact_law = (PenaltyContact(s, self.proximity.plane_vertices) if s.contact_model == "penalty"
                              else BarrierContact(s, self.dhat, self.proximity, sc["no_friction"]))
        moved_affinely = np.zeros(len(self.bodies), dtype=bool)  # rigid objects, affine bodies, jaws
        for body in self.affines + self.kinematics:
            moved_affinely[self.index[body.name]] = True
        self._penetration = PenetrationProbe.from_collision_mesh(self.mesh, moved_affinely)
        self.stiffness = BarrierStiffness(model, s, self.dhat, self.bbox_diagonal)
        self.potential = IncrementalPotential(model, s, self.contact_law, self.proximity, self.dhat, self.stiffness)
        self._factorisation = self.potential.hessian_assembly.factorisation
        self.newton = Newton(s, model, self.potential, self.proximity, self.step_limits, self._penetration, self.dhat,
                             self.bbox_diagonal)
        self.warm_start = WarmStart(s, model, self.driven, self.potential, self.step_limits, self.dhat,
                                    self.bbox_diagonal)
        self.drive_round = DriveRound(s, model, self.driven, self.potential, self.step_limits, self.dhat,
                                      self.bbox_diagonal)
        self._accepted_contacts = (None, None)  # positions of the last accepted step and their contacts
        x = self.collision_positions()
        if self.potential.min_distance(x) <= 0.0:
            raise ValueError("the initial configuration intersects or touches (distance 0): separate the bodies")

    # ------------------------------------------------------------------------------------ layout
    @property
    def barrier_stiffness(self) -> float | None:
        """The barrier stiffness kappa (solver.barrier_stiffness; None before the first step)."""
        return self.stiffness.kappa

    @barrier_stiffness.setter
    def barrier_stiffness(self, kappa):
        self.stiffness.kappa = kappa

    @property
    def max_barrier_stiffness(self) -> float | None:
        """The upper bound of kappa's growth within a step."""
        return self.stiffness.kappa_max

    @property
    def newton_iterations_run(self) -> int:
        """The Newton iterations of every step attempt so far (the class docstring)."""
        return self.newton.iterations_run

    @property
    def mesh(self) -> contact.CollisionMesh:
        """The collision mesh of every body's contact surface (Model.mesh)."""
        return self.model.mesh

    def set_gravity(self, gravity):
        """Change the gravity vector (m/s^2) from the next step on."""
        self.model.set_gravity(gravity)

    # --------------------------------------------------------------------------- state <-> dofs
    def pack(self, state: State | None = None, velocities: bool = False) -> np.ndarray:
        """The free DOF vector z (or its rate) of a state (default: the current one)."""
        return self.dofs.pack(state or self.state, velocities)

    def collision_positions(self, z=None) -> np.ndarray:
        """Contact-surface vertex positions (N,3) in m for DOF vector z (default: the state's)."""
        return self.contact_map.positions(self.pack() if z is None else z)

    # ------------------------------------------------------------------------------- stepping
    def step(self, drivers=None, dt: float | None = None, give_up=None,
             coarse_rounds: bool = False) -> StepStats | None:
        """Advance one time step. `drivers`: name -> 4x4 target pose at the end of the step for
        deformable bodies with prescribed vertices and for kinematic bodies; dt (s): this step's
        length (default settings.dt; e.g. half of it to retry a step that failed).
        give_up: called after each drive-and-settle round that leaves the drivers short of their
        targets (see `_step`) as give_up(contact_force, strain_energy, driver_lag), as StepStats
        has them, where that round's Newton solve converged; when it returns True the step is
        abandoned: the simulation is left as it was before the step and None returned (a caller
        that would refuse the step's end anyway stops paying for the rounds still to come).
        coarse_rounds: the Newton solves of the drive-and-settle rounds before the step's last one
        stop at COARSE_ROUND_TOLERANCE times newton_tolerance (give_up then sees each round's
        forces to within that); the step itself ends at newton_tolerance either way.
        Raises StepFailed (state unchanged) when Newton does not converge or a NaN appears."""
        if dt is not None and dt != self.settings.dt:
            if not (np.isfinite(dt) and dt > 0):
                raise ValueError(f"dt must be positive and finite, got {dt!r}")
            full, self.settings.dt = self.settings.dt, float(dt)
            self.potential.hessian_assembly.forget_values_without_contact()  # its h^2 terms belong to the old dt
            self._factorisation.carried = False
            try:
                return self._checked_step(drivers, give_up, coarse_rounds)
            finally:
                self.settings.dt = full
                self.potential.hessian_assembly.forget_values_without_contact()
                self._factorisation.carried = False
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
        self.newton.converged = True
        z_t, v_t = self.pack(), self.pack(velocities=True)
        x_t = self.collision_positions(z_t)
        z_tilde = self.potential.predicted(z_t, v_t)
        last_x, last_coll = self._accepted_contacts
        coll_t = last_coll if np.array_equal(last_x, x_t) else self.potential.collisions(x_t)
        if self.contact_law.continuous:
            self.stiffness.start_step(lambda: self.potential.gradient_without_contact(self.state, z_t, z_tilde),
                                      x_t, coll_t)
        friction = self.potential.friction_collisions(x_t, coll_t)
        targets_def, targets_kin = self.driven.targets(drivers)
        x, coll = x_t, coll_t
        alphas, iterations, remaining, warm = [], 0, 1.0, None
        if (targets_def or targets_kin) and self.settings.warm_start:
            warm = self.warm_start(self.state, targets_def, targets_kin, z_t, v_t, x_t, coll_t, friction)
            if warm is not None:
                x, coll = warm
                remaining = 0.0
        # Continuation on the driven motion: drive as far as CCD allows, let Newton settle the free
        # bodies (a pushed object moves out of the way), and drive the rest, until the driven
        # vertices reach their targets. The step's minimiser has them exactly there.
        for _ in range(MAX_DRIVE_ROUNDS):
            if not (targets_def or targets_kin) or remaining == 0.0:
                break
            fraction, coll = self.drive_round(self.state, targets_def, targets_kin, z_tilde, friction, x_t, x, coll)
            remaining *= 1.0 - fraction
            x = self.collision_positions()
            if remaining == 0.0 or self.driven.gap(self.state, targets_def, targets_kin) == 0.0:
                remaining = 0.0
                break
            if fraction == 0.0:
                break
            z, its, a, x, coll = self.newton.solve(self.state, self.pack(), z_tilde, friction, x_t, x, coll,
                                              tolerance=COARSE_ROUND_TOLERANCE if coarse_rounds else 1.0)
            iterations += its
            alphas += a
            self._place(z)
            if give_up is not None and give_up(self.potential.normal_resultants(x, coll),
                                               self.potential.strain_energy(self.state, z),
                                               self.driven.gap(self.state, targets_def, targets_kin)):
                return None
        z = self.pack()
        clustering = self.contact_law.clustering
        passes = max(1 + clustering, self.settings.friction_iterations)
        k = 0
        while True:
            if k:
                friction = self.potential.friction_collisions(x, coll, cluster=clustering)
            z, its, a, x, coll = self.newton.solve(self.state, z, z_tilde, friction, x_t, x, coll, int(warm is not None and not k))
            iterations += its
            alphas += a
            k += 1
            # clusters are lagged: pass again while contacts begin outside them
            if k >= passes and not (clustering and k < passes + MAX_CLUSTER_PASSES
                                    and self.contact_law.has_unclustered_contacts(self.mesh, coll, x)):
                break
        stats = self.newton.accept(self.state, z, z_t, friction, x_t, x, coll, iterations, alphas, 1.0 - remaining,
                                   self.driven.gap(self.state, targets_def, targets_kin))
        self._accepted_contacts = (x, coll)
        return stats

    def _place(self, z):
        """Write the free positions of z into the state (velocities are set when the step is
        accepted)."""
        self.dofs.store_positions(self.state, z)
        self.contact_map.refresh(self.state)  # c of x = P z + c

    def incremental_potential(self):
        """The coming step's incremental potential from the current state, without drivers:
        (energy(z), gradient(z), z_t) (IncrementalPotential.functions_at). For checks and
        diagnostics; `step` does not use it."""
        return self.potential.functions_at(self.state)

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
        j = self.model.kinematic_mount[self.kinematics.index(body)]
        return x if j < 0 else x + self.state.mount_u[j] * self.model.mount_motion[name]

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
        self.model.scale_mass(name, scale)
        self.potential.hessian_assembly.set_pattern(self.potential.hessian_assembly.keys)

    def restore(self, state: State) -> None:
        """Return to an earlier state (e.g. to retry a step with a smaller driver increment)."""
        self.state = state.copy()
        self.contact_map.refresh(self.state)  # c of x = P z + c
        self._factorisation.carried = False

    def contacts_between(self, name, others) -> tuple[contact.Collisions, np.ndarray]:
        """The pairs of primitives of body `name` and of each body in `others` (that the scene lets
        touch it) closer than dhat in the current configuration, as barrier-type collisions (under
        penalty contact too: dhat is then the reach of its force field), and the contact-surface
        positions x (N, 3), m, they index. After a step under barrier contact these are the step's
        own active contacts (solver.queries)."""
        x = self.collision_positions()
        accepted_x, accepted = self._accepted_contacts
        reuse = self.contact_law.continuous and accepted is not None and np.array_equal(accepted_x, x)
        return queries.contacts_between(self.mesh, x, self.index[name], [self.index[o] for o in others], self.dhat,
                                        accepted if reuse else None), x

    def set_friction(self, friction, default_friction: float = 0.0) -> None:
        """Friction coefficients from the next step on, as the constructor's `friction` and
        `default_friction`. A step lags friction at its start, so a pair that was not in contact
        there feels the change only from the next step; the state and the contacts' lagged
        normal forces are kept."""
        self.model.set_friction(friction, default_friction)

    def body_distance(self, name_a, name_b, max_distance) -> float:
        """Smallest distance (m) between the contact surfaces of two bodies, or inf when it is
        larger than max_distance (m). The ground is named "ground" (solver.queries)."""
        a, b = (self.index[n] if n != "ground" else -1 for n in (name_a, name_b))
        return queries.body_distance(self.mesh, self.proximity, self.collision_positions(), a, b, max_distance)
