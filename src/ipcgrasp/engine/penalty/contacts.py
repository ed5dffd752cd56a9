"""The BLEM contact set of a configuration (IPC's collisions within 2 r plus vertices below r over the
ground; margin r in m) and its lagged friction contacts.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine.collisions import (
    VERTEX_PLANE,
    Collisions,
    FrictionCollisions,
    _lagged_friction_geometry,
    _plane_arrays,
    _positions,
    _positive,
    build_collisions,
)
from ipcgrasp.engine.penalty.potential import normal_force_magnitudes


def build_contacts(mesh, x, margin, candidates=None, plane_vertices=None) -> Collisions:
    """Active BLEM contacts of positions x (N, 3): IPC's collisions closer than 2 r between
    bodies (margin r in m) plus a vertex-plane contact for every vertex of a ground-touching
    body whose signed height is below r (even far below the plane).

    candidates: (vf, ee, vp) from `broadphase.candidates` with inflation radius >= 2 r (the vp
    part is not used); default: a broad phase at x. plane_vertices: the vertices tested against
    the plane (default: every face vertex of a body in mesh.plane_body_mask)."""
    x = _positions(x, mesh)
    margin = _positive(margin, "margin")
    reach = 2.0 * margin
    if candidates is None:
        coll = build_collisions(mesh, x, reach)
        keep = coll.kind != VERTEX_PLANE
        coll = Collisions(*(getattr(coll, f)[keep] for f in Collisions.__dataclass_fields__))
    else:
        vf, ee = candidates[0], candidates[1]
        coll = build_collisions(mesh, x, reach, candidates=(vf, ee, np.zeros(0, dtype=np.int64)))
    if not mesh.has_plane:
        return coll
    if plane_vertices is None:
        surface = np.unique(mesh.faces)
        plane_vertices = surface[mesh.plane_body_mask[mesh.vertex_body[surface]]]
    heights = (x[plane_vertices] - mesh.plane_origin) @ mesh.plane_normal
    below = np.asarray(plane_vertices)[heights < margin]
    n = len(below)
    vertices = np.full((n, 4), -1, dtype=np.int64)
    vertices[:, 0] = below
    bodies = np.stack([mesh.vertex_body[below], np.full(n, -1, dtype=np.int64)], axis=1)
    return Collisions(
        kind=np.concatenate([coll.kind, np.full(n, VERTEX_PLANE, dtype=coll.kind.dtype)]),
        vertices=np.concatenate([coll.vertices, vertices]),
        weight=np.concatenate([coll.weight, np.ones(n)]),
        eps_x=np.concatenate([coll.eps_x, np.zeros(n)]),
        edge_edge_type=np.concatenate([coll.edge_edge_type, np.full(n, -1, dtype=coll.edge_edge_type.dtype)]),
        bodies=np.concatenate([coll.bodies, bodies]),
    )


def _friction_contacts(kind, vertices, bodies, keep, basis, coords, force, mesh):
    """FrictionCollisions of the kept rows, mu from mesh.mu (mesh.mu_plane for the plane)."""
    kind, bodies = kind[keep], bodies[keep]
    plane = kind == VERTEX_PLANE
    other = np.where(plane, bodies[:, 0], bodies[:, 1])
    mu = np.where(plane, mesh.mu_plane[bodies[:, 0]], mesh.mu[bodies[:, 0], other])
    return FrictionCollisions(
        kind=np.ascontiguousarray(kind), vertices=np.ascontiguousarray(vertices[keep]),
        bodies=np.ascontiguousarray(bodies), normal_force=np.ascontiguousarray(force[keep], dtype=np.float64),
        tangent_basis=np.ascontiguousarray(basis[keep]), closest_point=np.ascontiguousarray(coords[keep]),
        mu=np.ascontiguousarray(mu, dtype=np.float64))


def build_friction_collisions(contacts, mesh, x_lagged, margin, stiffness) -> FrictionCollisions:
    """Lagged friction contacts (IPC sec. 5) of the penalty contacts at x_lagged: tangent bases
    and closest points there and normal forces lambda_k = k w_k m_k delta_k in the units of
    `stiffness` x m (N for k in N/m; pass h^2 k for the incremental potential's units). Nearly
    parallel edge-edge contacts and contacts without force (beyond the layers) are left out, as
    in `collisions.build_friction_collisions`."""
    force = normal_force_magnitudes(contacts, mesh, x_lagged, margin, stiffness)
    x = _positions(x_lagged, mesh, "x_lagged")
    keep, basis, coords = _lagged_friction_geometry(contacts.kind, contacts.vertices, contacts.eps_x, x,
                                                    _plane_arrays(mesh)[1])
    keep &= force > 0.0  # contacts beyond the layers at x_lagged carry no friction
    return _friction_contacts(contacts.kind, contacts.vertices, contacts.bodies, keep, basis, coords, force, mesh)
