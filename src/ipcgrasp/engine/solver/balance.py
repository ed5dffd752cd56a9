"""How far a Newton iterate is from balance: the net force and torque left on each affine body.

For an affine body with coordinates q = (p, A) at offset `off` of z, the incremental potential's
gradient g there is minus the body's net generalised force times dt^2 (inertia included). Its
translational entries g_p give the net force, F = -g_p / dt^2 (N). A small rotation w about the
centre of mass c = p + A X_c moves q by dp = -[w]x A X_c, dA = [w]x A, so the net torque about c
is tau_k = -(g_p . dp_k + g_A : dA_k) / dt^2 for w = e_k (N m). The orthogonality potential that
keeps A a rotation is invariant under such a rotation and adds nothing to tau.
"""

from __future__ import annotations

import numpy as np

_SKEW = np.array([[[0, 0, 0], [0, 0, -1], [0, 1, 0]],
                  [[0, 0, 1], [0, 0, 0], [-1, 0, 0]],
                  [[0, -1, 0], [1, 0, 0], [0, 0, 0]]], dtype=np.float64)  # [e_k]x


class Balance:
    """The net wrench on each affine body at a gradient of the incremental potential.

    affine_offset: per affine body, the z index of its first coordinate; centers: (n, 3) their
    centres of mass in the body frame (m); radii: (n,) the largest distance (m) of a body's
    vertex from its centre of mass, the lever arm that turns a torque into a force."""

    def __init__(self, affine_offset, centers, radii):
        self.affine_offset = list(affine_offset)
        self.centers = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        self.radii = np.asarray(radii, dtype=np.float64).reshape(-1)

    def wrenches(self, g, z, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(forces (n, 3) N, torques (n, 3) N m about each centre of mass) left unbalanced at the
        iterate z, whose incremental-potential gradient is g, for the time step dt (s)."""
        n = len(self.affine_offset)
        forces, torques = np.zeros((n, 3)), np.zeros((n, 3))
        for b, off in enumerate(self.affine_offset):
            g_p, g_a = g[off:off + 3], g[off + 3:off + 12].reshape(3, 3)
            a = z[off + 3:off + 12].reshape(3, 3)
            arm = a @ self.centers[b]
            for k in range(3):
                dp, da = -_SKEW[k] @ arm, _SKEW[k] @ a
                torques[b, k] = -(g_p @ dp + np.sum(g_a * da))
            forces[b] = -g_p
        return forces / dt ** 2, torques / dt ** 2

    def largest(self, g, z, dt: float) -> float:
        """The largest net force (N) on any affine body at z, a torque counted as the force at
        the body's radius that makes it (0 without affine bodies)."""
        if not self.affine_offset:
            return 0.0
        forces, torques = self.wrenches(g, z, dt)
        return float(max(np.linalg.norm(forces, axis=1).max(),
                         (np.linalg.norm(torques, axis=1) / self.radii).max()))
