"""Parameters of one grasp trial: pad material, friction, closing rule, timing, noise.

Every rule about a valid SimParams lives here: the range of each field (`FIELD_RANGES`), the
choices of the string fields (`FIELD_CHOICES`), the flags (`FLAGS`) and the rules that tie two
fields together (`SimParams.__post_init__`). The study's config schema
(workflow/schemas/config.schema.yaml) repeats the ranges of the fields it exposes; a test holds
the two against each other.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import asdict, dataclass, fields

from ipcgrasp.engine.solver.settings import CONTACT_MODELS, SolverSettings

CLOSE_RULES = ("psi", "force")
GRIPS = ("force", "position")
"""How the jaws hold the object after the close (docs/grasp_procedure.md, "Grip")."""
JAWS = ("rounded", "rectangular")
"""The pad variants every shipped gripper description offers (the study's jaw sweep)."""
PAD_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
"""What a pad variant's name looks like (a gripper description's `pads` keys)."""
CONTACTS_PER_PAD = 10
"""The closing force is expected to spread over at least this many contacts per pad: the engine's
barrier stiffness is floored so one contact carries close_force / CONTACTS_PER_PAD at a tenth of
dhat."""
STATIC_SPEED_FACTOR = 10
"""Relative speed (x eps_v) below which the object still counts as held by static friction."""
MAX_EXTRA_LIFT = 5e-3
"""How far (m) beyond lift_height the jaws may rise while the object lags behind them."""
MIN_SHAKE_STEPS = 8
"""Time steps per shake cycle below which the shake's sinusoid is not resolved."""
FINGER_EFFECTIVE_MASS = 5e-3
"""Mass (kg) that moves with a compliant finger's tip deflection (docs/compliant_fingers.md): a
uniform cantilever's bending shape puts 33/140 of its mass at the tip, about 5 g for a 20 g
aluminium finger. Its only effect is the finger's vibration period, 2 pi sqrt(m / k) (14 ms at
1000 N/m), which implicit Euler damps at the study's 20 ms step."""


class SimParamsError(ValueError):
    """A SimParams field has a wrong type or value; `field` names it, the message gives the fix."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Interval:
    """Allowed values of a numeric field: a real (or `integer`) number between `low` and `high`
    in the field's `unit`, each end included unless `open_low` / `open_high`; `optional` fields
    may also be None (a default computed elsewhere)."""

    low: float
    high: float
    unit: str
    open_low: bool = False
    open_high: bool = False
    integer: bool = False
    optional: bool = False

    def contains(self, value: float) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        return above and below

    def describe(self) -> str:
        """E.g. "a real number in (0, 0.1] s"; "or None" for optional fields."""
        kind = "an integer" if self.integer else "a real number"
        ends = f"{'(' if self.open_low else '['}{self.low:g}, {self.high:g}{')' if self.open_high else ']'}"
        unit = f" {self.unit}" if self.unit else ""
        return f"{kind} in {ends}{unit}" + (" or None" if self.optional else "")


def _positive(high: float, unit: str, **kw) -> Interval:
    """(0, high] in `unit`."""
    return Interval(0.0, high, unit, open_low=True, **kw)


def _closed(low: float, high: float, unit: str = "", **kw) -> Interval:
    """[low, high] in `unit`."""
    return Interval(low, high, unit, **kw)


FIELD_RANGES: dict[str, Interval] = {
    "E": _closed(1e5, 1e12, "Pa"),
    "nu": Interval(0.0, 0.5, "", open_high=True),
    "density": _positive(1e5, "kg/m^3"),
    "pad_resolution": _closed(2e-4, 0.02, "m"),
    "finger_stiffness": _positive(1e9, "N/m", optional=True),
    "mu": _closed(0.0, 5.0),
    "mu_ground": _closed(0.0, 5.0),
    "psi_th": _positive(1.0, "J"),
    "psi_tol": _closed(0.0, 1.0),
    "close_force": _positive(1000.0, "N"),
    "max_grip_force": _positive(10000.0, "N", optional=True),
    "closing_speed": _positive(1.0, "m/s", optional=True),
    "close_duration": _positive(60.0, "s"),
    "lift_speed": _positive(1.0, "m/s", optional=True),
    "lift_height": _positive(0.5, "m"),
    "hold_time": _closed(0.0, 10.0, "s"),
    "settle_time": _closed(0.0, 10.0, "s"),
    "clearance": _positive(0.01, "m"),
    "max_extra_opening": _closed(0.0, 0.1, "m"),
    "noise_translation": _closed(0.0, 0.01, "m"),
    "noise_rotation": _closed(0.0, 0.1, "rad"),
    "contact_tol": _positive(0.01, "m"),
    "pushed_out_translation": _closed(0.0, 0.1, "m"),
    "pushed_out_rotation": _closed(0.0, math.pi, "rad"),
    "dt": _positive(0.1, "s"),
    "dhat": _positive(0.01, "m", optional=True),
    "eps_v": _positive(0.1, "m/s"),
    "newton_tolerance": _positive(0.01, "m/s"),
    "balance_tolerance": _positive(1.0, "of the object's weight", optional=True),
    "newton_budget": _closed(1, 10_000_000, "iterations", integer=True),
    "penalty_stiffness": _positive(1e12, "N/m"),
    "penalty_margin": _positive(0.005, "m"),
    "penalty_clusters": _closed(0, 1000, "contacts", integer=True),
    "shake_amplitude": _closed(0.0, 0.1, "m"),
    "shake_frequency": _positive(100.0, "Hz"),
    "shake_cycles": _closed(0.0, 100.0, "cycles"),
    "mass_rate": _positive(100.0, "kg/s"),
    "slip_speed": _positive(1.0, "m/s"),
    "max_mass": _positive(1000.0, "kg"),
}
"""Range of every numeric SimParams field (the physically meaningful values, SI units)."""
FIELD_CHOICES: dict[str, tuple[str, ...]] = {"close_rule": CLOSE_RULES, "grip": GRIPS, "contact_model": CONTACT_MODELS}
"""Allowed values of the string SimParams fields with a fixed set of values."""
NAME_FIELDS: dict[str, re.Pattern] = {"jaw": PAD_NAME}
"""String SimParams fields that name something the gripper description defines (checked there)."""
FLAGS = ("critical_mass",)
"""Boolean SimParams fields."""


@dataclass(frozen=True)
class SimParams:
    """Every field has a default (docs/data.md, "Conventions the simulation follows"); SI units throughout.

    Pads: E (Pa), nu, density (kg/m^3), jaw (the name of one of the gripper description's pad
    variants; every shipped gripper has "rounded" and "rectangular"), pad_resolution (m, target
    tet edge). finger_stiffness (N/m, None: rigid fingers): each jaw's backing and the back face
    of its pad ride on a spring of this tip bending stiffness along the jaw's closing direction
    (compliant fingers, docs/compliant_fingers.md; the IPC engine only).
    Friction: mu (pad-object), mu_ground (object-ground).
    Close rule (docs/grasp_procedure.md): "psi" (the paper's) fires when A) each pad's strain
    energy >= psi_th (J) while that pad touches the object, and B) both jaws make equal effort:
    their normal forces on the object agree, |F_1 - F_2| <= psi_tol * max(F_1, F_2); "force"
    when each pad's normal force on the object >= close_force (N). psi_th defaults to 7.2e-6 J,
    what `study.calibration` measures for the rounded pad at E = 1e8 Pa and 20 N at the default
    contact layer (the study's calibration stage recomputes it per E, and the study uses its own
    values). max_grip_force (N; None: the gripper's force_limit, 100 N
    for the YuMi): the gripper stalls when a pad pushes the object this hard; a squeeze that
    reaches it without the rule firing ends "stall" (a stiff pad under a fixed psi_th may need
    more than the gripper can give).
    Grip after the close (docs/grasp_procedure.md, "Grip"): "force" (the default, as the YuMi,
    Franka Hand and Robotiq 2F-85 hold a set force): through lift, hold, shake and mass ramp the
    jaws move, no faster than closing_speed, to keep the pads' mean normal force on the object at
    the force the close rule fired at (never above max_grip_force); "position" (the paper's): the
    jaws stay where the close left them, and the grip force is whatever the contact makes of it.
    Motion: closing_speed (m/s per jaw; None: opening / 2 / close_duration clipped to the
    gripper's closing speeds, for the YuMi max(10 mm/s, ...), the original's rule), lift_speed
    (m/s; None: the gripper's), lift_height (m, of the object's lowest point; success
    requires reaching it), hold_time (s).
    Start of a trial: settle_time (s the object rests on the ground, jaws still, before the
    squeeze), clearance (m between each jaw and the object when the squeeze starts),
    max_extra_opening (m the jaws may open beyond the gripper's widest to clear the object, as
    the original study).
    Noise: noise_translation (m) and noise_rotation (rad) standard deviations, gripper frame.
    Outcome: contact_tol (m) for "pad touches object"; pushed_out_translation (m, across the
    closing direction) and pushed_out_rotation (rad) for the object moving out of the grasp
    during the squeeze.
    Solver: dt (s), dhat (m, the contact layer; None: 1e-3 x the scene diagonal), eps_v (m/s),
    newton_tolerance (m/s, scaled to dhat: 0.11/s x dhat),
    balance_tolerance (a fraction of the object's weight m g; None: no such test): Newton's solve
    of a step also ends only when the net force left unbalanced on the object is below it (its
    step size bounds that force only through the contacts' stiffness, which grows as the contact
    layer thins; docs/physics.md, "The Newton tolerance shrinks with d̂"),
    newton_budget (Newton iterations a whole trial may take, every step attempt of every phase
    counted, retried, abandoned and failed ones included, at least one each; past it the phase
    ends, before the verdict as a `solver` failure naming the phase and the budget: a cube trial
    takes 300-2500, while very stiff pads squeezed to a fixed Psi_th can take hours;
    docs/grasp_procedure.md, "Work bound").
    eps_v is the sliding speed below which friction is static: at 1e-3 m/s (20 um per step)
    the squeezed pads creep, the grip force sags from 20 N to about 10 N during lift and hold,
    and 5 of 125 cube trials slip out that physically held; 1e-4 m/s keeps it near 20 N.
    Contact model: "ipc" (barrier, CCD; the product) or "penalty" (the BLEM baseline):
    penalty_stiffness (N/m per contact), penalty_margin (m, boundary layer around each mesh),
    penalty_clusters (max contacts per body pair after k-means clustering; 0 = no clustering).
    After the hold: shake_amplitude (m, 0 = no shake; below lift_height),
    shake_frequency (Hz; at least MIN_SHAKE_STEPS time steps per cycle when shaking),
    shake_cycles; critical_mass (ramp the object's mass until it slips), mass_rate (kg/s),
    slip_speed (m/s, object speed relative to the pads that counts as slipping), max_mass (kg,
    the ramp's cap).

    Construction checks every field against FIELD_RANGES / FIELD_CHOICES / NAME_FIELDS / FLAGS (no NaN or
    infinity, no bool or string where a number is expected) and the cross-field rules, and
    raises `SimParamsError` (a ValueError) naming the field, its allowed values and the fix.
    """

    E: float = 1e8
    nu: float = 0.45
    density: float = 2300.0
    jaw: str = "rounded"
    pad_resolution: float = 3e-3
    finger_stiffness: float | None = None
    mu: float = 0.4
    mu_ground: float = 0.1
    close_rule: str = "force"
    psi_th: float = 7.2e-6
    psi_tol: float = 0.5
    close_force: float = 20.0
    max_grip_force: float | None = None
    grip: str = "force"
    closing_speed: float | None = None
    close_duration: float = 2.0
    lift_speed: float | None = None
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
    dt: float = SolverSettings.dt
    dhat: float | None = SolverSettings.dhat
    eps_v: float = SolverSettings.eps_v
    newton_tolerance: float = SolverSettings.newton_tolerance
    balance_tolerance: float | None = 0.1
    newton_budget: int = 10000
    contact_model: str = SolverSettings.contact_model
    penalty_stiffness: float = SolverSettings.penalty_stiffness
    penalty_margin: float = SolverSettings.penalty_margin
    penalty_clusters: int = SolverSettings.penalty_clusters
    shake_amplitude: float = 0.0
    shake_frequency: float = 2.0
    shake_cycles: float = 2.0
    critical_mass: bool = False
    mass_rate: float = 1.2
    slip_speed: float = 0.025
    max_mass: float = 5.0

    def __post_init__(self):
        for f in fields(self):
            _check_field(f.name, getattr(self, f.name))
        if self.max_grip_force is not None and self.max_grip_force < self.close_force:
            raise SimParamsError("max_grip_force", f"SimParams.max_grip_force = {self.max_grip_force} N is below "
                                                   f"close_force = {self.close_force} N: the force rule could never "
                                                   "fire; fix: raise max_grip_force")
        if self.shake_amplitude > 0:
            _check_shake(self)

    def to_dict(self) -> dict:
        return asdict(self)

    def solver_settings(self, **scene) -> SolverSettings:
        """The engine's settings for a scene simulated with these parameters: the solver fields
        (dt, dhat, eps_v, newton_tolerance, contact_model, penalty_*) and `scene`, the settings
        that depend on the scene (gravity, newton_force_tolerance, contact_force_scale)."""
        return SolverSettings(dt=self.dt, dhat=self.dhat, eps_v=self.eps_v, newton_tolerance=self.newton_tolerance,
                              contact_model=self.contact_model, penalty_stiffness=self.penalty_stiffness,
                              penalty_margin=self.penalty_margin, penalty_clusters=self.penalty_clusters, **scene)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


def _check_field(name: str, value) -> None:
    """Raise SimParamsError unless `value` is allowed for the field `name`."""
    if name in FIELD_RANGES:
        _check_number(name, value, FIELD_RANGES[name])
    elif name in NAME_FIELDS:
        if not (isinstance(value, str) and NAME_FIELDS[name].match(value)):
            raise SimParamsError(name, f"SimParams.jaw must name a pad variant of the gripper (lowercase letters, "
                                       f"digits, underscores; e.g. {' or '.join(JAWS)}), got {value!r}; fix: use one "
                                       "of the gripper's pads (`ipcgrasp grippers` lists them)")
    elif name in FIELD_CHOICES:
        if not (isinstance(value, str) and value in FIELD_CHOICES[name]):
            raise SimParamsError(name, f"SimParams.{name} must be one of {FIELD_CHOICES[name]}, got {value!r}; "
                                       "fix: use one of these names")
    elif name in FLAGS:
        if not isinstance(value, bool):
            raise SimParamsError(name, f"SimParams.{name} must be true or false, got {value!r}; "
                                       "fix: give a boolean")
    else:
        raise SimParamsError(name, f"SimParams.{name} has no rule: add it to FIELD_RANGES, FIELD_CHOICES, NAME_FIELDS or FLAGS "
                                   "in ipcgrasp/grasp/params.py")


def _check_number(name: str, value, interval: Interval) -> None:
    """Raise SimParamsError unless `value` is a finite number (not a bool) inside `interval`."""
    if value is None and interval.optional:
        return
    kind = numbers.Integral if interval.integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise SimParamsError(name, f"SimParams.{name} must be {interval.describe()}, got {value!r} "
                                   f"({type(value).__name__}); fix: give a number, not text or true/false")
    if not (math.isfinite(value) and interval.contains(value)):
        raise SimParamsError(name, f"SimParams.{name} must be {interval.describe()}, got {value!r}; "
                                   "fix: give a finite value in that range")


def _check_shake(params: SimParams) -> None:
    """The shake test's rules: it stays clear of the ground and its sinusoid is resolved."""
    if params.shake_amplitude >= params.lift_height:
        raise SimParamsError("shake_amplitude", f"SimParams.shake_amplitude = {params.shake_amplitude} m would shake "
                                                f"the object back onto the ground; fix: keep it below lift_height = "
                                                f"{params.lift_height} m")
    if params.shake_frequency * params.dt * MIN_SHAKE_STEPS > 1.0:
        raise SimParamsError("shake_frequency", f"SimParams.shake_frequency = {params.shake_frequency} Hz leaves fewer "
                                                f"than {MIN_SHAKE_STEPS} time steps (dt = {params.dt} s) per shake "
                                                f"cycle; fix: shake_frequency <= {1 / (MIN_SHAKE_STEPS * params.dt):g} "
                                                "Hz or a smaller dt")


def trial_count(n_trials) -> int:
    """`n_trials` checked to be a positive integer (trials of one grasp); ValueError otherwise."""
    if isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral) or n_trials < 1:
        raise ValueError(f"n_trials must be a positive integer (trials per grasp), got {n_trials!r}")
    return int(n_trials)
