"""The contact models behind one interface: IPC's log barrier (BarrierContact) and the BLEM penalty
of engine/penalty/ (PenaltyContact).

Each gives the active contacts at contact-surface positions x (N,3), m; their term of the
incremental potential E with its gradient and Hessian carried into the unknowns z through
x = P z + c; the lagged friction contacts of a solve; and the contact forces a step reports.
`continuous` says whether the model needs every motion proven collision-free (the barrier: CCD
in the line search and the drive, distance floors, the warm start, an adaptive stiffness) or
detects contact discretely (the penalty). Barrier terms are scaled by the stiffness kappa
(Simulation.barrier_stiffness), which the caller passes and may change between the terms'
evaluation and their sum; penalty terms ignore it. Forces are in N, energies in J (the
incremental potential's h^2-scaled units where said).
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine import penalty, scene
from ipcgrasp.engine.solver.assembly import _add_contact_hessians


def body_pair_resultants(mesh, vertices, bodies, forces, n_bodies) -> np.ndarray:
    """Sum per-contact vertex forces (K,m,3) on the contacts' vertices (K,m) (-1: padding)
    between the bodies (K,2) (-1: the ground) into body-pair resultants (B+1, B+1, 3)."""
    return scene._body_pair_resultants(vertices, bodies, mesh.vertex_body, forces, n_bodies)


def friction_arrays(friction, no_friction):
    """The arrays engine.scene's kernels take for lagged friction (no_friction, empty ones, for None)."""
    if friction is None:
        return no_friction
    return (friction.kind, friction.vertices, friction.tangent_basis, friction.closest_point, friction.mu,
            friction.normal_force)


class BarrierContact:
    """IPC's log barrier with activation distance dhat (m), kappa-scaled, and its lagged
    friction (settings: the solver's SolverSettings, read at each call; proximity: the
    solver.proximity.Proximity of the scene; no_friction: engine.scene's empty friction arrays)."""

    continuous = True
    clustering = False

    def __init__(self, settings, dhat, proximity, no_friction):
        self.settings = settings
        self.dhat = dhat
        self.proximity = proximity
        self.no_friction = no_friction

    def collisions(self, mesh, x, candidate_pairs):
        """Active contacts at x among candidate_pairs (Proximity.candidates)."""
        return contact._collisions_from_candidates(mesh, x, self.dhat, *candidate_pairs)

    def min_distance(self, mesh, x, coll) -> float:
        """Smallest distance (m) over the active contacts coll at x (inf without any)."""
        return contact.min_distance(coll, mesh, x)

    def friction_collisions(self, mesh, x_lagged, coll, kappa, cluster=False):
        """Normal forces, bases and coordinates of the contacts coll at x_lagged, fixed for a solve."""
        return contact.build_friction_collisions(coll, mesh, x_lagged, self.dhat, kappa)

    def terms(self, mesh, x, candidate_pairs, friction, x_t):
        """At x, with the contacts found among candidate_pairs: (the barrier sum without kappa,
        the friction potential (None without friction), the active contacts, their smallest
        distance (m)), in one pass (engine.scene._barrier_terms)."""
        s = self.settings
        m = mesh
        barrier, fric, min_d2, *found = scene._barrier_terms(
            x, *candidate_pairs, m.has_plane, m.rest_positions, m.edges, m.faces, m.face_edges, m.vertex_body,
            m.can_collide, m.plane_body_mask, *contact._plane_arrays(m), self.dhat, friction is not None,
            *friction_arrays(friction, self.no_friction), x if x_t is None else x_t, s.eps_v * s.dt)
        coll = contact.Collisions(*found)
        # as contact.min_distance computes it from the same squared distances
        min_distance = float(np.sqrt(max(min_d2, 0.0))) if len(coll) else np.inf
        return barrier, None if friction is None else fric, coll, min_distance

    def potential(self, mesh, coll, x):
        """The barrier sum over the contacts coll at x, without kappa."""
        return contact.barrier_potential(coll, mesh, x, self.dhat)

    def weight(self, kappa):
        """The factor of `potential` in E: kappa."""
        return kappa

    def add_gradient(self, g, PT, mesh, x, coll, kappa, friction, x_t):
        """g += P^T (kappa grad B + grad D) at x (coll: the active contacts there)."""
        s = self.settings
        scene._add_barrier_gradient(g, PT.indptr, PT.indices, PT.data, x, coll.kind, coll.vertices,
                                    coll.edge_edge_type, coll.eps_x, coll.weight, *contact._plane_arrays(mesh),
                                    self.dhat, kappa, friction is not None,
                                    *friction_arrays(friction, self.no_friction), x if x_t is None else x_t,
                                    s.eps_v * s.dt)
        return g

    def add_hessian(self, data, pattern, add_terms, mesh, x, coll, kappa, friction, x_t, project):
        """Add P^T (kappa barrier Hessians, each PSD-projected with `project`, + friction
        Hessians) P to the upper-triangle CSC values `data` of `pattern` (indptr, indices, z_index,
        z_coef, dense_lo: assembly's arguments). Returns how many z-space entries the pattern
        lacks and the x-space terms (rows, cols, vals, scale, offsets) to grow it from.
        add_terms: unused (the terms are assembled as they are computed)."""
        s = self.settings
        missing, *terms = _add_contact_hessians(
            data, *pattern, x, coll.kind, coll.vertices, coll.edge_edge_type, coll.eps_x, coll.weight,
            *contact._plane_arrays(mesh), self.dhat, kappa, friction is not None,
            *friction_arrays(friction, self.no_friction), x if x_t is None else x_t, s.eps_v * s.dt, project)
        if friction is None:
            terms.pop()
        return missing, terms

    def normal_resultants(self, mesh, x, coll, kappa, n_bodies) -> np.ndarray:
        """The normal contact forces (N) between the bodies at x (coll: the active contacts
        there) as body-pair resultants (B+1, B+1, 3)."""
        forces = contact.contact_forces(coll, mesh, x, self.dhat, kappa / self.settings.dt ** 2)
        return body_pair_resultants(mesh, coll.vertices, coll.bodies, forces, n_bodies)

    def report(self, mesh, x, coll, kappa, n_bodies, min_distance_of):
        """At an accepted x (coll: its contacts): (normal force resultants, smallest contact
        distance (m), active contacts, largest distance (m) at which a force acts, the stiffness
        to report); min_distance_of(coll, x): the solver's remembered smallest distance."""
        normal = self.normal_resultants(mesh, x, coll, kappa, n_bodies)
        min_distance, n_contacts = min_distance_of(coll, x), len(coll.kind)
        force_gap = float(penalty.contact_distances(coll, mesh, x).max(initial=0.0))  # every one pushes
        return normal, min_distance, n_contacts, force_gap, kappa


class PenaltyContact:
    """The BLEM penalty of engine/penalty/ (stiffness, margin and clusters from settings, read
    at each call; h^2 times its energy in E) with lagged friction under penalty normal forces,
    optionally through k-means contact clusters (`clusters`: those of the current friction pass,
    None when contacts act one by one). plane_vertices: the contact-surface vertices that may
    touch the ground."""

    continuous = False

    def __init__(self, settings, plane_vertices):
        self.settings = settings
        self.plane_vertices = plane_vertices
        self.clusters = None

    @property
    def clustering(self) -> bool:
        """Whether a step's contacts are clustered (a step then takes at least two passes)."""
        return self.settings.penalty_clusters > 0

    def collisions(self, mesh, x, candidate_pairs):
        """Contacts at x among candidate_pairs (Proximity.candidates) within the layers."""
        return penalty.build_contacts(mesh, x, self.settings.penalty_margin, candidate_pairs, self.plane_vertices)

    def min_distance(self, mesh, x, coll) -> float:
        """Smallest signed distance (m) over the contacts coll at x (inf without any)."""
        return float(penalty.contact_distances(coll, mesh, x).min(initial=np.inf))

    def friction_collisions(self, mesh, x_lagged, coll, kappa, cluster=False):
        """Normal forces, bases and coordinates of the contacts coll at x_lagged, fixed for a
        solve. With clustering and `cluster` the contacts are clustered (the clusters then replace
        them until the next call), else they act one by one (the step's first lagged solve finds the
        contacts the clusters start from)."""
        s = self.settings
        stiffness = s.dt ** 2 * s.penalty_stiffness  # lambda in the incremental potential's units
        if cluster:
            self.clusters = penalty.cluster_contacts(coll, mesh, x_lagged, s.penalty_margin, s.penalty_clusters,
                                                     stiffness)
            return self.clusters.members
        self.clusters = None
        return penalty.build_friction_collisions(coll, mesh, x_lagged, s.penalty_margin, stiffness)

    def has_unclustered_contacts(self, mesh, coll, x) -> bool:
        """Whether some of the contacts coll at x begin outside the current clusters."""
        return penalty.has_unclustered_contacts(self.clusters, coll, mesh, x, self.settings.penalty_margin)

    def terms(self, mesh, x, candidate_pairs, friction, x_t):
        """As BarrierContact.terms: (h^2 times the penalty energy, the friction potential (None
        without friction), the contacts, None: no smallest distance found on the way)."""
        coll = self.collisions(mesh, x, candidate_pairs)
        energy = self.potential(mesh, coll, x)
        fric = None
        if friction is not None:
            fric = contact.friction_potential(friction, mesh, x - x_t, self.settings.eps_v * self.settings.dt)
        return energy, fric, coll, None

    def potential(self, mesh, coll, x):
        """h^2 times the penalty energy (J) of the contacts coll (or the clusters) at x."""
        s = self.settings
        if self.clusters is not None:
            return s.dt ** 2 * penalty.cluster_potential(self.clusters, x, s.penalty_stiffness)
        return s.dt ** 2 * penalty.penalty_potential(coll, mesh, x, s.penalty_margin, s.penalty_stiffness)

    def weight(self, kappa):
        """The factor of `potential` in E: 1."""
        return 1.0

    def add_gradient(self, g, PT, mesh, x, coll, kappa, friction, x_t):
        """g += P^T (h^2 grad penalty + grad D) at x (coll: the contacts there)."""
        s = self.settings
        if self.clusters is not None:
            gx = penalty.cluster_potential_gradient(self.clusters, x, s.penalty_stiffness)
        else:
            gx = penalty.penalty_potential_gradient(coll, mesh, x, s.penalty_margin, s.penalty_stiffness)
        gx = s.dt ** 2 * gx.ravel()
        if friction is not None:
            u, eps = x - x_t, s.eps_v * s.dt
            gx = gx + contact.friction_potential_gradient(friction, mesh, u, eps).ravel()
        g += PT @ gx
        return g

    def add_hessian(self, data, pattern, add_terms, mesh, x, coll, kappa, friction, x_t, project):
        """As BarrierContact.add_hessian with the penalty's Gauss-Newton Hessian (PSD whatever
        `project` says); add_terms(data, terms) adds x-space terms to data and returns how many
        z-space entries the pattern lacks."""
        s = self.settings
        if self.clusters is not None:
            terms = [(*penalty.cluster_potential_hessian(self.clusters, x, s.penalty_stiffness), s.dt ** 2, None)]
        else:
            terms = [(*penalty.penalty_potential_hessian(coll, mesh, x, s.penalty_margin, s.penalty_stiffness),
                      s.dt ** 2, contact._triplet_offsets(coll.kind))]
        if friction is not None:
            u, eps = x - x_t, s.eps_v * s.dt
            terms.append((*contact.friction_potential_hessian(friction, mesh, u, eps), 1.0,
                          contact._triplet_offsets(friction.kind)))
        return add_terms(data, terms), terms

    def normal_resultants(self, mesh, x, coll, kappa, n_bodies) -> np.ndarray:
        """As BarrierContact.normal_resultants."""
        return self._forces(mesh, x, coll, n_bodies)[0]

    def report(self, mesh, x, coll, kappa, n_bodies, min_distance_of):
        """As BarrierContact.report (the stiffness reported: nan; contacts: clusters when clustering)."""
        return (*self._forces(mesh, x, coll, n_bodies), float("nan"))

    def _forces(self, mesh, x, coll, n_bodies):
        """At the accepted x (coll: its contacts): the normal force resultants, the smallest
        contact distance, the number of active contacts (or clusters) and the largest distance
        at which a force acts (m)."""
        s = self.settings
        distances = penalty.contact_distances(coll, mesh, x)
        min_distance = float(distances.min(initial=np.inf))
        clusters = self.clusters
        if clusters is None:
            active = distances < np.where(coll.kind == contact.VERTEX_PLANE, s.penalty_margin, 2.0 * s.penalty_margin)
            forces = penalty.contact_forces(coll, mesh, x, s.penalty_margin, s.penalty_stiffness)
            return (body_pair_resultants(mesh, coll.vertices, coll.bodies, forces, n_bodies), min_distance,
                    int(active.sum()), float(distances[active].max(initial=0.0)))
        active = penalty.cluster_depths(clusters, x) > 0.0
        forces = penalty.cluster_forces(clusters, x, s.penalty_stiffness)
        gaps = penalty.cluster_member_gaps(clusters, x)[active[clusters.member_cluster]]
        return (body_pair_resultants(mesh, clusters.vertices[:, None], clusters.bodies[clusters.vertex_cluster],
                                     forces[:, None, :], n_bodies), min_distance, int(active.sum()),
                float(gaps.max(initial=0.0)))
