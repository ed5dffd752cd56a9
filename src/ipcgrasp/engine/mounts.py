"""Compliant mounts: driven vertices attached to their driver through a spring along one axis.

A driven body (the prescribed vertices of a deformable body, or a kinematic body) normally
follows its driver exactly (a Dirichlet condition). On a compliant mount its vertices sit at

    x = driver(X) + u phi(X) a

with `a` the mount's unit axis (world frame), u (m) one extra degree of freedom of the
simulation shared by every body on the mount, and phi a fixed mode shape per vertex (1 where the
mount moves rigidly along a; a cantilever's bending shape makes the tip tilt as it deflects).
The mount adds to the incremental potential

    1/2 m (u - u~)^2 + h^2 1/2 k u^2

(inertia of an effective mass m (kg) and a spring of stiffness k (N/m) that pulls u back to 0,
u~ = u_t + h u'_t: no gravity acts on u, the driver holds the mount's own weight). Because u is a
degree of freedom like any other, Newton, the line search and CCD see the driven vertices move
with it, and every accepted configuration stays intersection-free. A steady load F along the
axis at a point where phi = 1 deflects the mount by u = F / k; loads elsewhere count with their
phi (virtual work: the generalised force on u is sum_v phi_v f_v . a).

The engine knows nothing of what a mount is for (the grasp layer puts each finger of a gripper
on one: a cantilever with tip stiffness k, see docs/compliant_fingers.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine._numba import njit


@dataclass
class CompliantMount:
    """Bodies (names) whose driven vertices ride on one spring: `axis` (3,) the direction of the
    deflection in the world (normalised here; it stays fixed, so a driver may translate but not
    rotate a mounted body), `stiffness` (N/m) and `mass` (kg, effective mass moving with u).
    `shapes`: body name -> mode shape phi (n,) per vertex of that body (dimensionless; only the
    driven vertices' entries are used); a body without one moves rigidly (phi = 1)."""

    name: str
    bodies: tuple
    axis: np.ndarray
    stiffness: float
    mass: float
    shapes: dict = None

    def __post_init__(self):
        self.bodies = tuple(self.bodies)
        if not self.bodies:
            raise ValueError(f"mount {self.name!r} holds no bodies")
        axis = np.asarray(self.axis, dtype=np.float64)
        norm = float(np.linalg.norm(axis)) if axis.shape == (3,) else 0.0
        if not (np.isfinite(axis).all() and norm > 0):
            raise ValueError(f"mount {self.name!r}: axis must be a finite nonzero 3-vector, got {self.axis!r}")
        self.axis = axis / norm
        for field, value, unit in (("stiffness", self.stiffness, "N/m"), ("mass", self.mass, "kg")):
            if isinstance(value, bool) or not (np.isfinite(value) and value > 0):
                raise ValueError(f"mount {self.name!r}: {field} must be a positive finite number ({unit}), "
                                 f"got {value!r}")
        self.stiffness, self.mass = float(self.stiffness), float(self.mass)
        shapes = dict(self.shapes or {})
        unknown = sorted(set(shapes) - set(self.bodies))
        if unknown:
            raise ValueError(f"mount {self.name!r}: shapes given for bodies {unknown} it does not hold")
        for name, phi in shapes.items():
            phi = np.ascontiguousarray(phi, dtype=np.float64)
            if phi.ndim != 1 or not np.isfinite(phi).all():
                raise ValueError(f"mount {self.name!r}: the shape of {name!r} must be a finite (n,) array")
            shapes[name] = phi
        self.shapes = shapes

    def shape(self, body: str, n_vertices: int) -> np.ndarray:
        """The mode shape phi (n_vertices,) of one of the mount's bodies (ones when none was given)."""
        phi = self.shapes.get(body)
        if phi is None:
            return np.ones(n_vertices)
        if len(phi) != n_vertices:
            raise ValueError(f"mount {self.name!r}: the shape of {body!r} has {len(phi)} values for "
                             f"{n_vertices} vertices")
        return phi


def linked_tet_entries(tets, dof, prescribed, mount_dof, axis, shape):
    """The Hessian entries that tets with prescribed vertices add once those vertices ride on the
    mount degree of freedom `mount_dof` (z index) along `axis` with mode shape `shape` (n,): a
    prescribed coordinate a of vertex v maps to (mount_dof, shape[v] axis[a]), a free one to (its
    z index, 1). Returns (coupled tets (T,),
    rows, cols, coefficients (T * 144,)): entry 144 t + 12 r + c of coupled tet t carries
    coefficient coef_r coef_c of its element Hessian into (rows, cols); entries between two free
    coordinates (already assembled) and the mount's own spring get row -1."""
    is_prescribed = np.zeros(len(dof), dtype=bool)
    is_prescribed[prescribed] = True
    coupled = np.flatnonzero(is_prescribed[tets].any(axis=1))
    corners = tets[coupled]  # (T, 4)
    z = np.where(is_prescribed[corners][:, :, None], mount_dof, dof[corners][:, :, None] + np.arange(3))
    coef = np.where(is_prescribed[corners][:, :, None], shape[corners][:, :, None] * axis[None, None, :], 1.0)
    z, coef = z.reshape(len(coupled), 12), coef.reshape(len(coupled), 12)
    linked = np.repeat(is_prescribed[corners], 3, axis=1)  # (T, 12)
    rows = np.broadcast_to(z[:, :, None], (len(coupled), 12, 12)).copy()
    cols = np.broadcast_to(z[:, None, :], (len(coupled), 12, 12)).copy()
    both_free = ~linked[:, :, None] & ~linked[:, None, :]
    rows[both_free] = -1
    coefs = coef[:, :, None] * coef[:, None, :]
    return coupled, rows.ravel(), cols.ravel(), coefs.ravel()


@njit
def _add_linked_hessians(data, slots, coefs, coupled, H_cached, scale):
    """data[slots[144 k + 12 r + c]] += scale coefs[...] H_cached[coupled[k], r, c] (slot -1:
    skipped): the element Hessians (unscaled, already computed for the positions) carried onto
    the mount degree of freedom."""
    for k in range(coupled.shape[0]):
        t = coupled[k]
        for r in range(12):
            for c in range(12):
                e = 144 * k + 12 * r + c
                if slots[e] >= 0:
                    data[slots[e]] += scale * coefs[e] * H_cached[t, r, c]
