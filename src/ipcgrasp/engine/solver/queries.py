"""What the grasp layer asks of a configuration between steps: the contacts between given bodies
(contacts_between) and the distance between two bodies' contact surfaces (body_distance). Both
read the collision mesh and the contact-surface positions and change nothing."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.broadphase import candidates


def contacts_between(mesh, x, a, others, dhat, accepted=None) -> contact.Collisions:
    """The pairs of primitives of body index `a` and of each body index in `others` (that the
    mesh lets touch it) closer than dhat (m) at contact-surface positions x (N, 3), m, as
    barrier-type collisions. accepted: the active contacts of a step that ended at x, or None;
    given, the answer is selected from them (a body pair's collisions come from its own
    candidates alone, so this is what a broad phase over the pair gives, in the same order and
    with the same weights)."""
    pair = np.zeros_like(mesh.can_collide)
    for b in others:
        pair[a, b] = pair[b, a] = mesh.can_collide[a, b]
    if accepted is not None:
        a, b = accepted.bodies[:, 0], accepted.bodies[:, 1]
        rows = (a >= 0) & (b >= 0)
        rows[rows] = pair[a[rows], b[rows]]
        return contact.Collisions(**{f.name: getattr(accepted, f.name)[rows] for f in fields(accepted)})
    vf, ee, _ = candidates(x, x, mesh.edges, mesh.faces, mesh.vertex_body, dhat, can_collide=pair)
    return contact.build_collisions(mesh, x, dhat, candidates=(vf, ee, np.zeros(0, dtype=np.int64)))


def body_distance(mesh, proximity, x, a, b, max_distance) -> float:
    """Smallest distance (m) between the contact surfaces of body indices a and b at positions
    x (N, 3), m, or inf when it is larger than max_distance (m); index -1 is the ground.
    proximity: solver.proximity.Proximity over `mesh`."""
    if a < 0 and b < 0:
        raise ValueError("body_distance needs at least one body other than the ground")
    if a < 0 or b < 0:
        body = max(a, b)
        heights = (x[mesh.vertex_body == body] - mesh.plane_origin) @ mesh.plane_normal
        d = float(heights.min())
        return d if d <= max_distance else np.inf
    pair = np.zeros_like(mesh.can_collide)
    pair[a, b] = pair[b, a] = True
    pairs = proximity.candidates(x, x, float(max_distance), can_collide=pair)
    coll = contact.build_collisions(mesh, x, max_distance, candidates=pairs)
    d = contact.min_distance(coll, mesh, x)
    return d if d <= max_distance else np.inf
