"""The incremental potential of a time step (IncrementalPotential),

    E(z) = 1/2 (z - z~)^T M (z - z~) + h^2 (Psi(z) + V_ortho(z)) + w C(x(z)) + D(x(z)),

with z~ = z_t + h v_t + h^2 a_gravity, C the contact model's term (the summed log barrier with
weight w = kappa, or h^2 times the penalty energy with w = 1), D the lagged smoothed friction and
x(z) = P z + c the contact-surface positions: its value, gradient and Hessian (in the persistent
pattern of solver.hessian), the active contacts at a configuration and their smallest distance.
Energies in J, lengths in m; `state` arguments give the driven positions (c and the prescribed
vertices) and are not changed."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine import scene
from ipcgrasp.engine.solver.hessian import HessianAssembly
from ipcgrasp.engine.solver.settings import MIN_DISTANCES_KEPT


class IncrementalPotential:
    """E and its derivatives for a Model (settings: the solver's SolverSettings, read at each
    call; contact_model: solver.contact_model's BarrierContact or PenaltyContact; proximity:
    solver.proximity.Proximity; dhat (m): the activation distance; stiffness:
    solver.barrier_stiffness.BarrierStiffness, whose current kappa weighs the barrier).

    hessian_assembly: the HessianAssembly of its Hessian; hessians_assembled: how many times
    `hessian` has been called (a count for tests and benchmarks); known_min_distances: (contacts, positions, their
    smallest distance) of the last MIN_DISTANCES_KEPT evaluations, the latest first."""

    def __init__(self, model, settings, contact_model, proximity, dhat, stiffness):
        self.model, self.settings = model, settings
        self.contact_model, self.proximity = contact_model, proximity
        self.dhat, self.stiffness = dhat, stiffness
        self.hessian_assembly = HessianAssembly(model, settings)
        self.hessians_assembled = 0
        self.known_min_distances = []

    def predicted(self, z_t, v_t):
        """z~ = z_t + h v_t + h^2 a_gravity."""
        h = self.settings.dt
        return z_t + h * v_t + h * h * self.model.gravity_acc

    def functions_at(self, state):
        """The coming step's E from `state`, without drivers, and its gradient: (energy(z),
        gradient(z), z_t), with kappa set by the stiffness heuristic when it is not yet. For checks
        and diagnostics; a step does not use it."""
        dofs, contact_map = self.model.dofs, self.model.contact_map
        z_t = dofs.pack(state)
        z_tilde = self.predicted(z_t, dofs.pack(state, True))
        x_t = contact_map.positions(z_t)
        if self.stiffness.kappa is None and self.contact_model.continuous:
            self.stiffness.start_step(lambda: self.gradient_without_contact(state, z_t, z_tilde), x_t,
                                      self.collisions(x_t))
        friction = self.friction_collisions(x_t)

        def energy(z):
            return self.total(self.energy(state, z, z_tilde, friction, x_t)[0])

        def gradient(z):
            x = contact_map.positions(z)
            return self.gradient(state, z, z_tilde, friction, x_t, x, self.collisions(x))

        return energy, gradient, z_t

    def collisions(self, x, candidate_pairs=None):
        """Active contacts at x; `candidate_pairs` from `Proximity.candidates` over a segment
        containing x (default: a broad phase at x alone)."""
        if candidate_pairs is None:
            candidate_pairs = self.proximity.candidates(x, x, self.dhat)
        return self.contact_model.collisions(self.model.mesh, x, candidate_pairs)

    def min_distance_of(self, coll, x):
        """contact.min_distance(coll, mesh, x), remembered for the last MIN_DISTANCES_KEPT pairs of
        (contacts, positions): a step asks it of the same contacts at the same positions up to four
        times (the Newton iterate, the step's report, the next step's start and its warm start)."""
        for known, at, value in self.known_min_distances:
            if known is coll and (at is x or np.array_equal(at, x)):
                return value
        value = contact.min_distance(coll, self.model.mesh, x)
        self._remember_min_distance(coll, x, value)
        return value

    def _remember_min_distance(self, coll, x, value):
        self.known_min_distances = [(coll, x, value)] + self.known_min_distances[:MIN_DISTANCES_KEPT - 1]

    def min_distance(self, x):
        """Smallest distance (m) over the active contacts at x (the contact model's)."""
        return self.contact_model.min_distance(self.model.mesh, x, self.collisions(x))

    def friction_collisions(self, x_lagged, coll=None, cluster=False):
        """Normal forces, bases and coordinates of the contacts at x_lagged (coll: the active
        contacts there, if known), fixed for a solve. Penalty with clusters: with `cluster` the
        contacts are clustered (the clusters then replace them until the next call), else they
        act one by one (the step's first lagged solve finds the contacts the clusters start from)."""
        coll = self.collisions(x_lagged) if coll is None else coll
        return self.contact_model.friction_collisions(self.model.mesh, x_lagged, coll, self.stiffness.kappa, cluster)

    def energy(self, state, z, z_tilde, friction, x_t, candidate_pairs=None, coll=None):
        """(the terms of E(z) for `total`, x(z), active contacts at x(z)); coll: those
        contacts if already known, else they are built from candidate_pairs (default: a broad
        phase at x(z)). The terms: inertia + h^2 (elastic + orthogonality + mounts), the contact
        model's term (the barrier sum without kappa: kappa may change before they are summed), the
        friction potential."""
        model = self.model
        sc, M, mesh = model.scene, model.M, model.mesh
        e = scene._energy_without_contact(z, z_tilde, self.settings.dt ** 2, M.indptr, M.indices, M.data,
                                          model.dofs.scene_positions(state, z), sc["tets"], sc["Dm_inv"],
                                          sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"], sc["affine_offset"],
                                          sc["affine_stiffness"], sc["affine_volume"], model.dofs.mount_offset,
                                          sc["mount_stiffness"])
        x = model.contact_map.positions(z)
        eps_u = self.settings.eps_v * self.settings.dt
        if coll is None:
            if candidate_pairs is None:
                candidate_pairs = self.proximity.candidates(x, x, self.dhat)
            contact_term, fric, coll, min_distance = self.contact_model.terms(mesh, x, candidate_pairs, friction, x_t)
            if min_distance is not None:
                self._remember_min_distance(coll, x, min_distance)
            return (e, contact_term, fric), x, coll
        contact_term = self.contact_model.potential(mesh, coll, x)
        fric = None
        if friction is not None:
            fric = contact.friction_potential(friction, mesh, x - x_t, eps_u)
        return (e, contact_term, fric), x, coll

    def total(self, terms):
        """E from the terms of `energy` at the current barrier stiffness."""
        e, barrier, fric = terms
        e += self.contact_model.weight(self.stiffness.kappa) * barrier
        if fric is not None:
            e += fric
        return e

    def gradient_without_contact(self, state, z, z_tilde):
        """Gradient of inertia + h^2 (elastic + orthogonality + mount springs) in z (engine.scene)."""
        model = self.model
        sc, M, d = model.scene, model.M, model.dofs
        return scene._gradient_without_contact(
            z, z_tilde, self.settings.dt ** 2, M.indptr, M.indices, M.data, d.scene_positions(state, z),
            sc["tets"], sc["Dm_inv"], sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"], sc["free_rows"],
            sc["free_dofs"], sc["free_start"], sc["prescribed_rows"], sc["motion"], sc["prescribed_start"],
            sc["body_mount"], sc["affine_offset"], sc["affine_stiffness"], sc["affine_volume"], d.mount_offset,
            sc["mount_stiffness"])

    def gradient(self, state, z, z_tilde, friction, x_t, x, coll):
        """Gradient (n_dof,) of the incremental potential at z; x, coll: the contact positions and
        active contacts at z."""
        g = self.gradient_without_contact(state, z, z_tilde)
        return self.contact_model.add_gradient(g, self.model.contact_map.PT, self.model.mesh, x, coll,
                                               self.stiffness.kappa, friction, x_t)

    def contact_gradient(self, x, coll, friction, x_t):
        """The contact model's part of the gradient (n_dof,) at contact positions x (coll: the
        active contacts taken, whether or not they are all active there)."""
        return self.contact_model.add_gradient(np.zeros(self.model.n_dof), self.model.contact_map.PT, self.model.mesh,
                                               x, coll, self.stiffness.kappa, friction, x_t)

    def hessian(self, state, z, friction, x_t, x, coll, project=True):
        """Upper-triangle CSC values (in the current pattern) of the Hessian of the incremental
        potential at z, its contact blocks PSD-projected with `project` (barrier; the penalty
        model's are always); x, coll: the contact positions and active contacts at z. The pattern
        grows when contacts couple degrees of freedom it lacks. Records coll's contacts as those
        of the Hessian about to be factored (Factorisation.contacts)."""
        self.hessians_assembled += 1
        assembly = self.hessian_assembly
        X = self.model.dofs.scene_positions(state, z)
        data = assembly.without_contact(z, X)
        assembly.factorisation.contacts = coll.vertices
        missing, terms = self.contact_model.add_hessian(data, assembly.pattern, assembly.add_contact_terms,
                                                        self.model.mesh, x, coll, self.stiffness.kappa, friction, x_t,
                                                        project)
        return assembly.grown(z, X, terms) if missing else data

    def strain_energy(self, state, z) -> dict:
        """{deformable name: strain energy (J)} at z."""
        model = self.model
        sc = model.scene
        energies = scene._strain_energies(model.dofs.scene_positions(state, z), sc["tets"], sc["Dm_inv"],
                                          sc["volumes"], sc["tet_start"], sc["mu"], sc["lam"])
        return {body.name: float(energy) for body, energy in zip(model.deformables, energies)}

    def normal_resultants(self, x, coll) -> np.ndarray:
        """The normal contact forces (N) between the bodies at contact positions x (coll: the
        active contacts there) as body-pair resultants (B+1, B+1, 3) (StepStats.contact_force)."""
        return self.contact_model.normal_resultants(self.model.mesh, x, coll, self.stiffness.kappa,
                                                    len(self.model.bodies))
