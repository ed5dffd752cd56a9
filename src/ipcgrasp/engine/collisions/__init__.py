"""The active contact set of a configuration and the potentials summed over it.

IPC (Li et al. 2020, "Incremental Potential Contact", sec. 4) sums a log barrier over every
pair of surface primitives closer than dhat. This package holds that set as flat arrays
(`Collisions`) built from broad-phase candidates, evaluates the summed barrier potential
with its gradient and (PSD-projected) Hessian triplets, the contact forces, and IPC's lagged
friction (sec. 5) over the same set (`FrictionCollisions`). Loops over contacts are `@njit`
kernels; the per-contact formulas come from `distance`, `barrier` and `friction`.

Semantics follow ipctk 1.6.1 (`NormalCollisions.build`, `BarrierPotential`,
`TangentialCollisions.build`, `FrictionPotential`), so totals match it one to one:

- A face-vertex candidate whose closest triangle feature is an edge becomes an edge-vertex
  collision, a vertex a vertex-vertex collision; an edge-edge candidate likewise reduces to
  edge-vertex or vertex-vertex unless its edges are nearly parallel (|ea x eb|^2 < eps_x, with
  eps_x = 1e-3 |ea|^2 |eb|^2 at rest), in which case it stays a mollified edge-edge collision.
- Equal collisions found from several candidates are merged into one whose `weight` counts
  them (ipctk increases the weight instead of adding a duplicate): the potential is
  sum_k w_k m_k(x) b(d_k(x), dhat^2), with m_k the edge-edge mollifier (1 for other kinds).
- Each collision is a smooth function of x once built (ipctk's known distance types): an
  edge-vertex collision measures the point-line distance, a face-vertex collision the
  point-plane distance to the triangle's plane, and an edge-edge collision the sub-case of
  the closest-feature type it had when built (line-line unless mollified as near-parallel).
  At the build positions these equal the true primitive distances.

Distances d are squared (m^2); dhat and every returned distance are unsquared (m).
Vertex degrees of freedom are flattened as 3 * vertex + axis.

One module per job: collision_set (the collision kinds and the Collisions and
FrictionCollisions arrays), collision_mesh (CollisionMesh and the checks of positions against
it), build (candidates reduced and merged into a Collisions), pair_distance (one collision's
distance, its derivatives and mollifier, by kind), local_blocks (per-collision rows and blocks
summed per vertex or scattered to COO triplets), barrier_sum (the barrier potential over a
set, its derivatives and the contact forces) and lagged_friction (IPC's lagged friction over
a set).
"""

from ipcgrasp.engine.collisions.barrier_sum import (
    _barrier_gradients,
    _barrier_hessians,
    _barrier_values,
    barrier_potential,
    barrier_potential_gradient,
    barrier_potential_hessian,
    contact_forces,
    min_distance,
    normal_force_magnitudes,
)
from ipcgrasp.engine.collisions.build import (
    _classify_candidates,
    _collision_bodies,
    _collisions_from_candidates,
    _merged,
    _sorted_unique_keys,
    _sorted_unique_pairs,
    build_collisions,
)
from ipcgrasp.engine.collisions.collision_mesh import (
    CollisionMesh,
    _plane_arrays,
    _positions,
    _positive,
)
from ipcgrasp.engine.collisions.collision_set import (
    EDGE_EDGE,
    EDGE_VERTEX,
    FACE_VERTEX,
    NUM_KIND_VERTICES,
    VERTEX_PLANE,
    VERTEX_VERTEX,
    Collisions,
    FrictionCollisions,
)
from ipcgrasp.engine.collisions.lagged_friction import (
    _friction_gradients,
    _friction_hessians,
    _friction_values,
    _lagged_friction_geometry,
    _relative_displacement_matrix,
    build_friction_collisions,
    friction_forces,
    friction_potential,
    friction_potential_gradient,
    friction_potential_hessian,
)
from ipcgrasp.engine.collisions.local_blocks import (
    _outer,
    _scatter_hessian,
    _sum_per_vertex,
    _triplet_offsets,
)
from ipcgrasp.engine.collisions.pair_distance import (
    _distance,
    _distance_gradient,
    _distance_hessian,
    _mollifier,
)

__all__ = [
    "VERTEX_VERTEX",
    "EDGE_VERTEX",
    "EDGE_EDGE",
    "FACE_VERTEX",
    "VERTEX_PLANE",
    "NUM_KIND_VERTICES",
    "CollisionMesh",
    "Collisions",
    "FrictionCollisions",
    "build_collisions",
    "barrier_potential",
    "barrier_potential_gradient",
    "barrier_potential_hessian",
    "min_distance",
    "contact_forces",
    "normal_force_magnitudes",
    "build_friction_collisions",
    "friction_potential",
    "friction_potential_gradient",
    "friction_potential_hessian",
    "friction_forces",
]

# Private kernels and helpers that other engine modules (and tests) import
__all__ += [
    "_barrier_gradients",
    "_barrier_hessians",
    "_barrier_values",
    "_classify_candidates",
    "_collision_bodies",
    "_collisions_from_candidates",
    "_distance",
    "_distance_gradient",
    "_distance_hessian",
    "_friction_gradients",
    "_friction_hessians",
    "_friction_values",
    "_lagged_friction_geometry",
    "_merged",
    "_mollifier",
    "_outer",
    "_plane_arrays",
    "_positions",
    "_positive",
    "_relative_displacement_matrix",
    "_scatter_hessian",
    "_sorted_unique_keys",
    "_sorted_unique_pairs",
    "_sum_per_vertex",
    "_triplet_offsets",
]
