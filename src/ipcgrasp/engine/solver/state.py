"""What evolves over a simulation: positions, velocities, time and mount deflections (State)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class State:
    """Everything that evolves: deformable positions/velocities (per body, world frame, m, m/s),
    affine coordinates q and their rates (per body), kinematic vertex positions, time (s), and
    the deflections u (m) and their rates (m/s) of the compliant mounts (`mounts`). Driven
    vertices on a mount are stored where their driver put them; they sit u along its axis from
    there (`Simulation.vertices`)."""

    time: float
    deformable_x: list
    deformable_v: list
    affine_q: list
    affine_qdot: list
    kinematic_x: list
    mount_u: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mount_udot: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def copy(self) -> "State":
        return State(self.time, [a.copy() for a in self.deformable_x], [a.copy() for a in self.deformable_v],
                     [a.copy() for a in self.affine_q], [a.copy() for a in self.affine_qdot],
                     [a.copy() for a in self.kinematic_x], self.mount_u.copy(), self.mount_udot.copy())
