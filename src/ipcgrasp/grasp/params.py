"""Parameters of one grasp trial: pad material, friction, closing rule, timing, noise."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

CLOSE_RULES = ("psi", "force")
CONTACT_MODELS = ("ipc", "penalty")
JAWS = ("rounded", "rectangular")
CONTACTS_PER_PAD = 10
"""The closing force is expected to spread over at least this many contacts per pad: the engine's
barrier stiffness is floored so one contact carries close_force / CONTACTS_PER_PAD at a tenth of
dhat."""
STATIC_SPEED_FACTOR = 10
"""Relative speed (x eps_v) below which the object still counts as held by static friction."""
MIN_SHAKE_STEPS = 8
"""Time steps per shake cycle below which the sinusoid is not resolved."""
MAX_EXTRA_LIFT = 5e-3
"""How far (m) beyond lift_height the jaws may rise while the object lags behind them."""


@dataclass(frozen=True)
class SimParams:
    """Every field has a default (DATA.md sections 3-4); SI units throughout.

    Pads: E (Pa), nu, density (kg/m^3), jaw ("rounded" | "rectangular"), pad_resolution (m,
    target tet edge). Friction: mu (pad-object), mu_ground (object-ground).
    Close rule (docs/grasp_procedure.md): "psi" (the paper's) fires when A) each pad's strain
    energy >= psi_th (J) while that pad touches the object, and B) both jaws make equal effort:
    their normal forces on the object agree, |F_1 - F_2| <= psi_tol * max(F_1, F_2); "force"
    when each pad's normal force on the object >= close_force (N). psi_th defaults to 9.3e-6 J,
    what `study.calibration` measures for the rounded pad at E = 1e8 Pa and 20 N (the study's
    calibration stage recomputes it). max_grip_force (N): the gripper stalls when a pad pushes
    the object this hard; a squeeze that reaches it without the rule firing ends "no_close" (a
    stiff pad under a fixed psi_th may need more than the gripper can give).
    Motion: closing_speed (m/s per jaw; None: max(10 mm/s, opening / 2 / close_duration), the
    original's rule), lift_speed (m/s), lift_height (m, of the object's lowest point; success
    requires reaching it), hold_time (s).
    Start of a trial: settle_time (s the object rests on the ground, jaws still, before the
    squeeze), clearance (m between each jaw and the object when the squeeze starts),
    max_extra_opening (m the jaws may open beyond the gripper's widest to clear the object, as
    the original study).
    Noise: noise_translation (m) and noise_rotation (rad) standard deviations, gripper frame.
    Outcome: contact_tol (m) for "pad touches object"; pushed_out_translation (m, across the
    closing direction) and pushed_out_rotation (rad) for the object moving out of the grasp
    during the squeeze.
    Solver: dt (s), dhat (m, None: 1e-3 x scene size), eps_v (m/s), newton_tolerance (m/s),
    newton_budget (Newton iterations a whole trial may take; past it the trial ends as a
    `solver` failure: a cube trial takes 300-2500, while very stiff pads squeezed to a fixed
    Psi_th can take hours).
    eps_v is the sliding speed below which friction is static: at 1e-3 m/s (20 um per step)
    the squeezed pads creep, the grip force sags from 20 N to about 10 N during lift and hold,
    and 5 of 125 cube trials slip out that physically held; 1e-4 m/s keeps it near 20 N.
    Contact model: "ipc" (barrier, CCD; the product) or "penalty" (the BLEM baseline, issue 7):
    penalty_stiffness (N/m per contact), penalty_margin (m, boundary layer around each mesh),
    penalty_clusters (max contacts per body pair after k-means clustering; 0 = no clustering).
    After the hold (issues 7, 8): shake_amplitude (m, 0 = no shake), shake_frequency (Hz),
    shake_cycles; critical_mass (ramp the object's mass until it slips), mass_rate (kg/s),
    slip_speed (m/s, object speed relative to the pads that counts as slipping), max_mass (kg,
    the ramp's cap).
    """

    E: float = 1e8
    nu: float = 0.45
    density: float = 2300.0
    jaw: str = "rounded"
    pad_resolution: float = 3e-3
    mu: float = 0.4
    mu_ground: float = 0.1
    close_rule: str = "force"
    psi_th: float = 9.3e-6
    psi_tol: float = 0.5
    close_force: float = 20.0
    max_grip_force: float = 100.0
    closing_speed: float | None = None
    close_duration: float = 2.0
    lift_speed: float = 0.025
    lift_height: float = 0.02
    hold_time: float = 0.2
    settle_time: float = 0.06
    clearance: float = 1e-3
    max_extra_opening: float = 0.01
    noise_translation: float = 1e-3
    noise_rotation: float = 3e-3
    contact_tol: float = 5e-4
    pushed_out_translation: float = 0.01
    pushed_out_rotation: float = 0.5
    dt: float = 0.02
    dhat: float | None = None
    eps_v: float = 1e-4
    newton_tolerance: float = 1e-5
    newton_budget: int = 10000
    contact_model: str = "ipc"
    penalty_stiffness: float = 1e5
    penalty_margin: float = 5e-4
    penalty_clusters: int = 0
    shake_amplitude: float = 0.0
    shake_frequency: float = 2.0
    shake_cycles: float = 2.0
    critical_mass: bool = False
    mass_rate: float = 1.2
    slip_speed: float = 0.025
    max_mass: float = 5.0

    def __post_init__(self):
        if self.close_rule not in CLOSE_RULES:
            raise ValueError(f"SimParams.close_rule must be one of {CLOSE_RULES}, got {self.close_rule!r}")
        if self.contact_model not in CONTACT_MODELS:
            raise ValueError(f"SimParams.contact_model must be one of {CONTACT_MODELS}, got {self.contact_model!r}")
        if self.jaw not in JAWS:
            raise ValueError(f"SimParams.jaw must be one of {JAWS}, got {self.jaw!r}")
        positive = ("E", "density", "pad_resolution", "close_force", "max_grip_force", "psi_th", "close_duration", "lift_speed",
                    "lift_height", "contact_tol", "clearance", "dt", "eps_v", "newton_tolerance", "penalty_stiffness",
                    "penalty_margin", "shake_frequency", "mass_rate", "slip_speed", "max_mass")
        optional_positive = ("closing_speed", "dhat")
        for name in positive + tuple(n for n in optional_positive if getattr(self, n) is not None):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"SimParams.{name} must be positive and finite, got {getattr(self, name)!r}")
        for name in ("mu", "mu_ground", "noise_translation", "noise_rotation", "hold_time", "psi_tol", "settle_time",
                 "max_extra_opening",
                     "pushed_out_translation", "pushed_out_rotation", "shake_amplitude", "shake_cycles"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise ValueError(f"SimParams.{name} must be >= 0 and finite, got {getattr(self, name)!r}")
        if isinstance(self.newton_budget, bool) or not (isinstance(self.newton_budget, int) and self.newton_budget > 0):
            raise ValueError(f"SimParams.newton_budget must be a positive integer, got {self.newton_budget!r}")
        if not (isinstance(self.penalty_clusters, int) and self.penalty_clusters >= 0):
            raise ValueError(f"SimParams.penalty_clusters must be an integer >= 0, got {self.penalty_clusters!r}")
        if self.max_grip_force < self.close_force:
            raise ValueError(f"SimParams.max_grip_force = {self.max_grip_force} N is below close_force = "
                             f"{self.close_force} N: the force rule could never fire; raise it")
        if self.shake_amplitude > 0:
            if self.shake_frequency * self.dt * MIN_SHAKE_STEPS > 1.0:
                raise ValueError(f"SimParams.shake_frequency = {self.shake_frequency} Hz leaves fewer than "
                                 f"{MIN_SHAKE_STEPS} steps of dt = {self.dt} s per cycle: lower it or dt")
            if self.shake_amplitude >= self.lift_height:
                raise ValueError(f"SimParams.shake_amplitude = {self.shake_amplitude} m would shake the object "
                                 f"back onto the ground: keep it below lift_height = {self.lift_height} m")
        if not 0 <= self.nu < 0.5:
            raise ValueError(f"SimParams.nu must lie in [0, 0.5), got {self.nu!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
