"""The adaptive barrier stiffness kappa (BarrierStiffness): IPC's balance heuristic at the start
of a step, a floor from a known contact force scale, and the growth within a Newton solve while
the smallest contact distance keeps shrinking (engine.barrier). Barrier contact only."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import scene
from ipcgrasp.engine.barrier import barrier_stiffness_bounds, initial_barrier_stiffness, update_barrier_stiffness


class BarrierStiffness:
    """kappa (None before the first step) and its upper bound kappa_max for a Model (settings:
    the solver's SolverSettings; dhat (m): the activation distance; bbox_diagonal (m): the
    scene's size). kappa only grows over the simulation, so resting gaps stay put."""

    def __init__(self, model, settings, dhat: float, bbox_diagonal: float):
        self.model, self.settings = model, settings
        self.dhat, self.bbox_diagonal = dhat, bbox_diagonal
        self.kappa = None
        self.kappa_max = None

    def start_step(self, gradient_without_contact, x, coll):
        """IPC's balance heuristic at the start of a step, contact positions x (N,3) with active
        contacts coll; gradient_without_contact() -> the gradient (n_dof,) of the incremental
        potential without contact there, asked only when the heuristic can raise kappa."""
        model = self.model
        floor = self.floor()
        _, bound = barrier_stiffness_bounds(self.bbox_diagonal, self.dhat, model.average_mass,
                                            self.settings.min_barrier_stiffness_scale)
        if self.kappa is not None and self.kappa >= max(bound, floor):
            # the heuristic is clamped below max(bound, floor): it cannot raise kappa, and its
            # gradients need not be computed (a kappa at the contact-force floor stays there)
            self.kappa_max = max(bound, 100.0 * floor)
            return
        g_e = gradient_without_contact()
        PT = model.contact_map.PT
        g_b = np.zeros(model.n_dof)  # P^T grad B with kappa = 1
        scene._add_barrier_gradient(g_b, PT.indptr, PT.indices, PT.data, x, coll.kind, coll.vertices,
                                    coll.edge_edge_type, coll.eps_x, coll.weight, *model.plane_arrays, self.dhat,
                                    1.0, False, *model.scene["no_friction"], x, 0.0)
        kappa, kappa_max = initial_barrier_stiffness(self.bbox_diagonal, self.dhat, model.average_mass, g_e, g_b,
                                                     self.settings.min_barrier_stiffness_scale)
        kappa, kappa_max = max(kappa, floor), max(kappa_max, 100.0 * floor)
        if self.kappa is None or kappa > self.kappa:
            self.kappa = kappa
        self.kappa_max = kappa_max

    def floor(self) -> float:
        """kappa at which one contact at distance s dhat (s = 0.1) pushes with contact_force_scale:
        F = kappa / h^2 |b'(d^2, dhat^2)| 2 d = kappa / h^2 dhat^3 2 s (1 - s^2)(1/s^2 - 1 - 4 ln s)."""
        if self.settings.contact_force_scale is None:
            return 0.0
        s = 0.1
        per_kappa = 2 * s * (1 - s * s) * (1 / (s * s) - 1 - 4 * np.log(s)) * self.dhat ** 3 / self.settings.dt ** 2
        return float(self.settings.contact_force_scale) / per_kappa

    def update(self, prev_min_d2, min_d2):
        """Grow kappa after a Newton iterate whose smallest squared contact distance went from
        prev_min_d2 to min_d2 (m^2) (engine.barrier.update_barrier_stiffness)."""
        self.kappa = update_barrier_stiffness(prev_min_d2, min_d2, self.kappa_max, self.kappa, self.bbox_diagonal)
