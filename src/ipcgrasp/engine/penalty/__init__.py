"""Penalty contact with a boundary layer (BLEM), the contact model of the penalty baseline.

What is implemented
-------------------
Boundary Layer Expanded Meshes (Hauser 2013; Rocchi, Ames, Li and Hauser, "Stable Simulation of
Underactuated Compliant Hands", ICRA 2016, sec. III-C): every body's surface mesh M carries a
margin r (m), i.e. the body is M dilated by a ball of radius r. Two surface primitives of
different bodies closer than the sum of the margins, 2 r, are in contact with penetration depth
delta = 2 r - d and normal along their closest points; a vertex closer than r to the ground plane
(which has no margin) is in contact with delta = r - h, h its signed height (so a vertex that
sank below the plane is still pushed up). Each contact stores the energy

    P_k = 1/2 k w_k m_k delta_k^2,      force magnitude k w_k m_k delta_k (N),

k the penalty stiffness (N/m per contact), along the closest-point normal. The primitive pairs,
their reduction to closest features and their weights w_k are exactly IPC's collision set
(`collisions.build_collisions` with activation distance 2 r: point-triangle and edge-edge
candidates reduced to vertex-vertex, edge-vertex, face-vertex and edge-edge contacts, duplicates
merged into a weight), m_k is IPC's edge-edge mollifier (1 except for nearly parallel edges), and
the distances, their gradients and Hessians are those of `distance` (squared distances d_k;
with s = sqrt(d): dP/dd = -k delta / (2 s), d2P/dd2 = k (2 r) / (4 s^3)).

Newton uses the Gauss-Newton part of each contact's Hessian, k w m grad(s) grad(s)^T (PSD by
construction; the exact Hessian is available and tested). The rest, -k w m delta Hess(s), is
negative around convex edges and vertices and indefinite for face-vertex and edge-edge contacts
(triangle and edge rotations, 1 / sin of the edge angle); clamping it per contact, as the
barrier's projection does, made the model curvature 5 to 10^5 times the true one along the
Newton direction on a cube grasp and Newton stalled (measured), while Gauss-Newton converges.

Friction: IPC's lagged smoothed Coulomb friction (`friction`, `collisions.friction_potential`)
over the same contacts, with the lagged normal force lambda_k = k w_k m_k delta_k (N).

Clustering (optional, at most K contacts per body pair): the lagged contacts of each body pair
(the ground counts as a body) are grouped by k-means (`scipy.cluster.vq.kmeans2`, k-means++
seeding from a fixed seed, so deterministic) in the 7-D space of Rocchi et al.: contact position,
contact normal and friction coefficient. Features are scaled to be comparable: positions are
divided by the pair's patch size (RMS distance of its contact points from their centroid, at
least the margin r), normals are unit vectors, friction coefficients enter as they are. Each
cluster becomes one representative contact with the weighted mean position, the normalised
weighted mean normal n_c and the weighted mean depth measured along n_c, carrying the summed
weight W_c = sum w_k, so its force k W_c delta_c equals the members' total force when their
normals agree.

Departures from Rocchi et al. and Klamp't
----------------------------------------
- Time integration is ours (implicit Euler as an incremental potential, projected Newton, no
  CCD), not an explicit step with an LCP for contact forces: contact forces here are penalty
  forces, so the simulated bodies interpenetrate by about force / (k x contacts), which is what
  this baseline exists to show (with the "force field" at gaps up to 2 r).
- Klamp't generates one contact point per close triangle pair; we use IPC's per-primitive
  collision set, so the number of contacts on a flat patch depends on the meshes (and so does
  the total stiffness of the patch).
- Distances are unsigned between meshes (as in BLEM): once primitives cross, the depth shrinks
  again and the force flips, i.e. a body driven deeper than 2 r through another loses contact.
  Against the ground the signed height is used.
- Clusters are lagged like friction, and a step is solved in passes: the first with every
  contact on its own (which finds the contacts of the step, discrete detection at each Newton
  iterate), then the contacts at that solution are clustered and the step is solved again from
  there with the clusters fixed; further passes (at most 2) re-cluster while contacts begin at
  vertices no cluster holds (`has_unclustered_contacts`). While fixed, each cluster's depth is
  linear in the positions, delta_c(x) = D_c - (1/W_c) sum_k w_k n_c . (p_k(x) - q_k(x)) + const,
  with p_k, q_k the members' closest points at their lagged barycentric coordinates; its energy
  1/2 k W_c max(delta_c, 0)^2 has the exact PSD Hessian k W_c grad(delta_c) grad(delta_c)^T.
  (Rocchi et al. step explicitly and cluster each step's contacts once; clustering the contacts
  of the start of the step instead let a 3 g cube fall 3 mm into the ground at dt = 20 ms before
  its contacts were seen, and re-clustering inside Newton did not converge: a contact joining a
  cluster changes its stiffness k W_c at once.) Nearly parallel edge-edge contacts (no defined
  normal) are left out of clusters, as ipctk leaves them out of friction. Each member keeps its
  own friction contact with normal force k w_k delta_c (the cluster's force shared by weight).
- Contact weights w_k are not used as k-means weights (kmeans2 has none); they weight the means.

One module per job: contacts (the contact set and its lagged friction contacts), potential (the
penalty energy, its gradient and Hessian, distances and forces), clusters (ContactClusters and
their energy, forces and Hessian while fixed) and clustering (grouping contacts into clusters).
"""

from ipcgrasp.engine.penalty.clustering import (
    cluster_contacts,
    has_unclustered_contacts,
)
from ipcgrasp.engine.penalty.clusters import (
    ContactClusters,
    cluster_depths,
    cluster_forces,
    cluster_member_gaps,
    cluster_potential,
    cluster_potential_gradient,
    cluster_potential_hessian,
)
from ipcgrasp.engine.penalty.contacts import (
    build_contacts,
    build_friction_collisions,
)
from ipcgrasp.engine.penalty.potential import (
    contact_distances,
    contact_forces,
    normal_force_magnitudes,
    penalty_potential,
    penalty_potential_gradient,
    penalty_potential_hessian,
)

__all__ = [
    "ContactClusters",
    "build_contacts",
    "build_friction_collisions",
    "cluster_contacts",
    "cluster_depths",
    "cluster_forces",
    "cluster_member_gaps",
    "cluster_potential",
    "cluster_potential_gradient",
    "cluster_potential_hessian",
    "contact_distances",
    "contact_forces",
    "has_unclustered_contacts",
    "normal_force_magnitudes",
    "penalty_potential",
    "penalty_potential_gradient",
    "penalty_potential_hessian",
]
