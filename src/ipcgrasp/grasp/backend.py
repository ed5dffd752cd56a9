"""What the grasp procedure needs from a dynamic model: the backend interface.

The procedure (`grasp.procedure`) owns every phase and every failure rule; a backend only
simulates. It holds the object, two pads on their backings and the ground, and moves the jaws
where the procedure says: each jaw `closed` metres along its own closing direction from its pose
at the start of the squeeze, both raised `lifted` metres along world z. The IPC engine (with
barrier or penalty contact, `grasp.ipc_backend`) and MuJoCo (`baselines.mujoco_flex`) implement
it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


class BackendFailed(RuntimeError):
    """A step the model could not take (Newton did not converge, MuJoCo went unstable); the
    backend is left at its last good state."""


@dataclass(frozen=True)
class StepReport:
    """One step of a backend. time (s, simulated, after the step); pad_forces (N): each pad's
    normal contact force on the object (norm of the resultant); pad_energies (J): each pad's
    strain energy (nan where the model has none); pads_touch: the pads exert a contact force on
    each other; jaw_lag (m): how far a driven jaw point is still from where it was sent (0 when it
    got there). pad_frictions (N): the norm of each pad's friction force on the object;
    ground_reaction (N, (3,) world): the ground's normal + friction force on the object;
    n_contacts: active contacts in the whole scene (NaN where the model does not report them).
    Solver statistics (0 / inf / True where the model has none): newton_iterations,
    newton_converged (False: accepted at the engine's fallback tolerance), min_distance (m, the
    smallest contact distance), max_penetration (m, deepest interpenetration), max_force_gap (m,
    largest distance at which a contact force acted). jaw_forces (N): each jaw's normal contact
    force on the object, its pad's and its backing plate's together (norm of the resultant: the
    force its drive works against, which the gripper's force limit bounds); None: the pads'
    alone, for a model whose backing plates never touch the object (`limit_forces`)."""

    time: float
    pad_forces: tuple
    pad_energies: tuple = (math.nan, math.nan)
    pads_touch: bool = False
    jaw_lag: float = 0.0
    pad_frictions: tuple = (math.nan, math.nan)
    ground_reaction: tuple = (math.nan, math.nan, math.nan)
    n_contacts: float = math.nan
    newton_iterations: int = 0
    newton_converged: bool = True
    min_distance: float = math.inf
    max_penetration: float = 0.0
    max_force_gap: float = 0.0
    jaw_forces: tuple | None = None

    @property
    def limit_forces(self) -> tuple:
        """What the gripper's force limit bounds (N): jaw_forces, or pad_forces without them."""
        return self.pad_forces if self.jaw_forces is None else self.jaw_forces


class Backend(ABC):
    """A dynamic grasp model driven by `grasp.procedure.GraspProcedure`.

    dt (s): the time step. approach_distance (m): the distance scale below which contact forces
    act (IPC's dhat); the procedure slows the jaws to fractions of it near contact. has_strain_energy:
    whether `StepReport.pad_energies` is measured (the psi close rule needs it).
    """

    dt: float
    approach_distance: float
    has_strain_energy: bool = False

    @abstractmethod
    def step(self, closed: float, lifted: float, give_up=None, coarse_rounds: bool = False) -> StepReport | None:
        """Advance one step with the jaws moved to (closed, lifted) (m) at its end. Raises
        BackendFailed when the step cannot be taken. give_up(pad_forces, pad_energies, jaw_forces,
        jaw_lag) (as in StepReport): a model that reaches the end of a step through intermediate equilibria with
        the jaws short of it (IPC's drive-and-settle rounds) may ask it at each; when it returns
        True the step is abandoned, the state left as it was and None returned. coarse_rounds:
        such a model may settle those intermediate equilibria to a coarser tolerance (the step's
        end keeps the full one). A model without such stages ignores both."""

    @property
    def newton_iterations_run(self) -> int | None:
        """The Newton iterations of every step attempt so far: of steps taken, abandoned by
        give_up, failed (BackendFailed) and undone by `restore`, which leaves this count as it is.
        None (the default) for a model that counts only the steps it takes
        (StepReport.newton_iterations)."""
        return None

    def set_pad_friction(self, mu: float) -> None:
        """The pads' friction coefficient with the object from the next step on (the procedure
        changes it only before a pad has touched the object, `GraspProcedure.run_variants`). A
        model that cannot change it raises NotImplementedError."""
        raise NotImplementedError(f"{type(self).__name__} cannot change friction during a trial; fix: run trials "
                                  "with different mu separately")

    @abstractmethod
    def save(self):
        """An opaque snapshot of the whole state, for `restore`."""

    @abstractmethod
    def restore(self, snapshot) -> None:
        """Return to a snapshot taken by `save`."""

    @abstractmethod
    def object_pose(self) -> np.ndarray:
        """The object's pose (4x4, m, world)."""

    @abstractmethod
    def object_vertices(self) -> np.ndarray:
        """The object's surface vertices (n, 3) in the world (m)."""

    @abstractmethod
    def pad_object_distance(self, pad: int, cutoff: float) -> float:
        """Distance (m) between pad `pad` and the object's surfaces; inf beyond `cutoff` (m)."""

    @abstractmethod
    def pad_pad_distance(self, cutoff: float) -> float:
        """Distance (m) between the two pads; inf beyond `cutoff` (m)."""

    def finger_deflections(self) -> tuple:
        """Each finger's deflection (m) at its tooltip along its closing direction (negative:
        pushed open); zeros for rigid fingers, the default."""
        return (0.0, 0.0)

    def object_height(self) -> float:
        """Height (m) of the object's lowest point above the ground."""
        return float(self.object_vertices()[:, 2].min())

    @abstractmethod
    def object_centre(self) -> np.ndarray:
        """The object's centre of mass in the world (m)."""

    @abstractmethod
    def pads_centre(self) -> np.ndarray:
        """Mean position of all pad vertices in the world (m)."""

    @abstractmethod
    def set_object_mass(self, mass: float) -> None:
        """Give the object `mass` (kg; its inertia scaled with it) from the next step on."""

    @property
    @abstractmethod
    def object_mass(self) -> float:
        """The object's current mass (kg)."""

    @property
    @abstractmethod
    def static_speed(self) -> float:
        """Relative speed (m/s) of the object against the pads below which it still sticks (the
        critical-mass ramp reads the normal force only while it does)."""

    def hold_signals(self, report: StepReport):
        """Per pad (force on the object (3,) N, normal + friction; mean contact point (3,) m;
        mean contact normal (3,)) for the contact-stability metrics, or None where the model does
        not provide them (the metrics are then NaN)."""
        return None

    def pad_contacts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pads' point contacts on the object after the last step, for trajectories: points
        (K, 3) m (world), the contact force of each on the object (K, 3) N (NaN where the model
        cannot attribute forces to points) and the pad of each (K,) int. Default: none (K = 0)."""
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=np.int64)

    def frame(self) -> dict:
        """{"time": s, body name: (n, 3) world vertices} for rendering."""
        return {}

    def faces(self) -> dict:
        """{body name: (F, 3) surface triangles} indexing the vertices of `frame`."""
        return {}
