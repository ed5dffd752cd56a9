"""The grasp procedure: one trial of a grasp on any dynamic model (`grasp.backend`), and the one
place where phases and failure rules are written (docs/grasp_procedure.md).

Initialise (open the jaws clear of the object, close them to the narrowest clear opening, let
the object settle), squeeze with the close rule, lift, hold, judge; after a successful hold,
optionally a shake test and a critical-mass ramp. Failure labels (`outcome.FAILURE_MODES`):

- miss: no pad ever touched the object (the pads met beside it, the jaws start below the
  ground, or the jaws opened widest are farther from the object than that opening: nothing is
  simulated);
- graze: only one pad ever touched the object, then the pads met or the jaws ran out of travel;
- pushed_out: the object left the grasp before the rule fired: moved more than
  pushed_out_translation across the closing direction or turned more than pushed_out_rotation;
- no_clearance: the jaws cannot open wide enough to start clear of the object;
- stall: a jaw (its pad and backing plate together) pushes the object with the gripper's force
  limit and the rule has not fired;
- end_of_travel: both pads reached the object, the jaws are at the end of their travel and the
  rule has not fired;
- unequal_effort: the psi rule's energies (A) were reached, its force balance (B) never, by the
  stall or the end of travel;
- jaws_meet: both pads touched the object, then the pads touched each other without the rule
  firing;
- slip: the rule fired, then the object was lost during the lift or hold: it did not reach the
  lift height, rests on the ground, or a pad lost it (a drop that makes the solver fail is
  still a slip, judged from the object's state);
- solver: a step the backend could not take while the object was still held (or before it was
  grasped), or the trial past its Newton budget (`GraspProcedure._step`: every step attempt of
  every phase counts, retried, abandoned and failed ones included);
- error (`grasp.simulate.run_trial`): any other exception.

During the hold each pad's contact signals are recorded and reduced to Rocchi et al.'s S_cf,
S_cp, S_cn (grasp.stability). After the trial is judged, and only when it succeeded:
- shake (shake_amplitude > 0): the wrist (both jaws together, gripping as SimParams.grip
  says) moves vertically by A sin(2 pi f t) for shake_cycles cycles, rests for hold_time and is
  judged again: "held" or "dropped";
- critical mass (PrendoSim section 3.2; `critical_mass_ramp`): from the state after the hold (the
  shake undone when both run), the object's mass grows at mass_rate, the jaws gripping, until it
  slips relative to the pads.

Variants of one trial that differ only in the pads' friction and the close rule share the
simulation while those are not read (`GraspProcedure.run_variants`; docs/grasp_procedure.md,
"Variants of one trial").
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np

from ipcgrasp.grasp.backend import Backend, BackendFailed, StepReport
from ipcgrasp.grasp.grip_motion import (GRAVITY, GripReference, contact_tilt, grasp_centre, grip_motion,
                                        gravity_torque, lever_arm, torsional_capacity)
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult, HoldCheck, judge_hold
from ipcgrasp.grasp.params import MAX_EXTRA_LIFT, SimParams
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.stability import contact_force_variation, contact_normal_variation, contact_position_variation
from ipcgrasp.grasp.trajectory import step_record

FORCE_TOLERANCE = 0.02
"""Relative resolution of the gripper's force control: the close rule fires within this fraction
above its threshold, and the force grip holds the pads' force within it of its target."""
MAX_REFINEMENTS = 16
"""Retries of a closing step that overshot the close rule or the force limit: shorter increments
down to MIN_CONTACT_STEP approach distances, then the jaws backing off (`_refined_increment`); the
last retry stands, overshoot or not."""
MAX_CREEP_STEPS = 50
"""Closing steps in a row, each starting with both pads pressing the object, that may bring the
jaws less than MIN_CONTACT_STEP approach distances closer (or back them off); after them a step
whose retry ends short of the close window takes instead its shortest try that passed the window
within the force limit, which then stands, and a step with a try past the force limit ends the
squeeze as a stall. On a stiff pad whose forces rock between steps (the
object settling between unequal pads) every shorter try can end short of the window while a
longer one passes it, and the squeeze would creep on until the Newton budget."""
MAX_SQUEEZE_DURATION = 10.0
"""The longest a squeeze may take, in multiples of the time its jaws need to close their whole
travel at the closing speed; past it the jaws creep without the close rule, the force limit or
the end of travel ending the squeeze, and the trial is a "solver" failure. The Newton budget ends
such a creep first in a model with Newton iterations; a model without them (MuJoCo) has only
this bound."""
TARGET_LEVEL = 1.0 + 0.5 * FORCE_TOLERANCE  # once both pads touch, the approach aims inside the window
MAX_GRIP_TRIES = 6  # jaw positions tried per step for the force grip to land within FORCE_TOLERANCE
FIRST_CONTACT_STEP = 0.25  # x the backend's approach distance: the closing step once both pads touch
MIN_CONTACT_STEP = 0.01  # x the approach distance: the smallest secant step
STEP_GROWTH = 2.0  # a secant step is at most this x the last one (a secant from near-zero forces overshoots)
CARRIED_CLOSING = 2.0
"""How much faster than one jaw a free pad's gap to the object closes while the other pad touches
the object and carries it along: both jaws close on it."""
GIVE_WAY_LEVEL = 0.05
"""Below this close level (a twentieth of the close rule's threshold) a squeeze step without a
rise means the pads push the object along rather than a force lagging its jaws: the next step
grows as after two steps without a rise."""
FRICTION_FIELDS = ("mu",)
"""The SimParams fields first read when a pad touches the object: trials that differ in nothing
else (and the close rule) share their initialisation and settling (`GraspProcedure.run_variants`)."""
RULE_FIELDS = ("close_rule", "psi_th", "psi_tol")
"""The SimParams fields only the close rule reads: trials that differ in nothing else share their
simulation until both pads touch the object (`GraspProcedure.run_variants`)."""
RECORDS = ("frames", "trajectory")
"""What a trial may record (`record=`): frames, per step the bodies' world vertices and the pads'
contact points, for pictures (GraspResult.frames, .faces); trajectory, per step the quantities of
`grasp.trajectory.StepRecord` (GraspResult.trajectory). Both: the trajectory file also holds the
vertex positions."""


def recordings(record) -> frozenset:
    """`record` (None, one name of RECORDS or several) as a set; ValueError naming an unknown one."""
    names = frozenset([record] if isinstance(record, str) else record or ())
    unknown = sorted(names - set(RECORDS))
    if unknown:
        raise ValueError(f"unknown recordings {unknown}; record= takes {RECORDS}")
    return names


@dataclass(frozen=True)
class CriticalMass:
    """Outcome of a mass ramp: mass (kg; inf: no slip up to the cap; NaN: the solver failed),
    force (N, the pads' mean normal force on the object at the last step it still stuck, relative
    speed <= the backend's static_speed: once it slides the squeezed pads relax within a step,
    while friction still uses the lagged force; NaN if it slipped at once), ramp_time (s
    simulated), reason (words)."""

    mass: float
    force: float
    ramp_time: float
    reason: str


def critical_mass_ramp(backend: Backend, step, rate: float, slip_speed: float, max_mass: float,
                       start_mass: float | None = None) -> CriticalMass:
    """PrendoSim's critical mass (section 3.2): from the backend's current state, grow the object's
    mass (and inertia, and so its weight) linearly at `rate` kg/s from `start_mass` (kg; default
    its current mass), once per step, with the jaws held by `step()` (advances one step, returns
    its StepReport), until the speed of its centre of mass relative to the pads (the mean position
    of all their vertices) exceeds `slip_speed` (m/s) over a step. The mass used in that step is
    the critical mass.

    Rules: the mass stops at `max_mass` (kg); no slip by the end of the step taken at max_mass
    gives inf. A failed step (BackendFailed) ends the ramp with NaN (the reason names the mass
    reached, a lower bound) and leaves the backend at its last good state."""
    dt = backend.dt
    start = backend.object_mass if start_mass is None else float(start_mass)
    mass, elapsed, held_force = start, 0.0, float("nan")
    com, pads = backend.object_centre(), backend.pads_centre()
    while mass < max_mass:
        elapsed += dt
        mass = min(start + rate * elapsed, max_mass)
        backend.set_object_mass(mass)
        try:
            report = step()
        except BackendFailed as exc:
            return CriticalMass(float("nan"), held_force, elapsed,
                                f"solver failed at {mass:.4g} kg, still held until then: {exc}")
        new_com, new_pads = backend.object_centre(), backend.pads_centre()
        speed = float(np.linalg.norm((new_com - com) - (new_pads - pads))) / dt
        if speed > slip_speed:
            return CriticalMass(mass, held_force, elapsed,
                                f"slipped at {mass:.4g} kg ({speed * 100:.2g} cm/s relative to the pads)")
        if speed <= backend.static_speed:  # still static: the pads have not relaxed
            held_force = float(np.mean(report.pad_forces))
        com, pads = new_com, new_pads
    return CriticalMass(float("inf"), held_force, elapsed, f"no slip up to max_mass = {max_mass:.4g} kg")


def _grouped(variants: list, names: tuple) -> list[list]:
    """(position, SimParams) pairs grouped by their values of the fields `names`, in order of
    first appearance."""
    groups = {}
    for variant in variants:
        groups.setdefault(tuple(getattr(variant[1], name) for name in names), []).append(variant)
    return list(groups.values())


def _figure(value: float) -> str:
    """A figure for a reason: one decimal from 1 on, two significant digits below (0.041)."""
    return f"{value:.1f}" if abs(value) >= 1.0 else f"{value:.2g}"


class _Over(Exception):
    """The trial is decided (the result holds its verdict)."""


class _Fork(Exception):
    """The variants of `run_variants` part here: at the start of the squeeze those with other
    friction, once both pads touch the object those with other close rules (`fields`)."""

    def __init__(self, names: tuple):
        super().__init__(names)
        self.fields = names


class _Diverged(Exception):
    """The close rules of `run_variants` judged the step that brought both pads on the object
    differently, before the procedure could part them (or a pad touched the object during the
    settling, before variants with other friction could part)."""


@dataclass
class _Squeeze:
    """Where the squeeze stands at the start of a closing step (what a branch resumes from)."""

    start_pose: np.ndarray  # the object's pose when the squeeze began
    travel: float  # each jaw's travel until the pads' front faces meet (m)
    touched: list = field(default_factory=lambda: [False, False])  # each pad has touched the object
    reached: float = 0.0  # where the jaws got (m; self.closed: where they are sent)
    history: list = field(default_factory=list)  # (reached, pad forces, pad energies) once both pads touch
    before: tuple | None = None  # (pad forces, pad energies, jaw forces) at the end of the last closing step
    backed_off_at: float | None = None  # `reached` at the start of the last step whose jaws backed off (m)
    creeping: int = 0  # closing steps in a row that started pressed and gained < MIN_CONTACT_STEP (MAX_CREEP_STEPS)

    @property
    def pressed(self) -> bool:
        """Both pads pressed the object at the end of the last closing step."""
        return self.before is not None and min(self.before[0]) > 0.0


class _Round(NamedTuple):
    """A drive round the backend asked give_up about: the fields of StepReport it was given."""

    pad_forces: tuple
    pad_energies: tuple
    limit_forces: tuple
    jaw_lag: float


@dataclass
class _Tries:
    """The tries of one closing step so far: what its refinement compares with and keeps."""

    previous: tuple | None = None  # the first finished try to compare the next with (`_refined_increment`)
    passed: float | None = None  # after a long creep: the shortest increment past the close window
    limit_passed: bool = False  # after a long creep: a try passed the force limit
    stands: bool = False  # the next try stands, overshoot or not
    abandoned: _Round | None = None  # the round the backend gave the last try up at (Backend.step's give_up)


_PHASES = ("_initialise", "_squeeze", "_lift", "_judge")
"""The phases up to the verdict, in order (what `GraspProcedure._advance` runs)."""


class GraspProcedure:
    """One trial of a (perturbed) grasp on the backend `make_backend(obj, object_pose,
    tooltip_poses, params, gripper)` builds; `run()` fills and returns a GraspResult. `record`:
    see RECORDS (recording never changes a decision)."""

    def __init__(self, obj: GraspObject, object_pose, grasp_pose, params: SimParams, make_backend,
                 gripper: Gripper | None = None, record=(), progress=None):
        self._arguments = (obj, object_pose, grasp_pose, make_backend, gripper, record, progress)
        self.obj, self.params, self.make_backend = obj, params, make_backend
        self.gripper = gripper or Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
        if self.gripper.pad_kind != params.jaw:
            raise ValueError(f"SimParams.jaw = {params.jaw!r} but the gripper {self.gripper.name!r} carries the pad "
                             f"{self.gripper.pad_kind!r}; fix: build it with Gripper.from_description(..., "
                             "pad=params.jaw)")
        self.max_grip_force = params.max_grip_force or self.gripper.force_limit
        self.lift_speed = params.lift_speed or self.gripper.lift_speed
        self._variants = list(enumerate(self._checked_variants([params])))  # (position, SimParams)
        self.object_pose, self.grasp_pose = place_scene(obj.mesh, object_pose, grasp_pose)
        record = recordings(record)
        self.record_frames, self.record_trajectory = "frames" in record, "trajectory" in record
        self.progress = progress
        self.phase = "settle"  # the phase the steps belong to (trajectory.PHASES)
        self.result = GraspResult(grasp_pose=self.grasp_pose)
        self.backend: Backend | None = None
        self.closed = 0.0  # m each jaw is sent along its closing direction
        self.lifted = 0.0  # m both jaws moved up
        self._time = 0.0  # s simulated
        self._phase_index = 0  # the next of _PHASES to run
        self._squeezing: _Squeeze | None = None
        self._checkpoint: GraspProcedure | None = None  # where close rules that diverge part (run_variants)
        self._settle_touched = False  # a pad touched the object while it settled
        self.grip_force = float("nan")  # N the force grip keeps (the pads' mean force at the close)
        self._grip_drift = 0.0  # m the force grip moved the jaws in its last step (its next first guess)
        self._grip_slope = 0.0  # N/m the force grip's last secant slope of force over jaw position (0: none yet)
        self._grip_errors = (0.0, 0.0)  # N the pads' mean force less grip_force at the end of the last two grip steps
        self._spent = 0  # Newton iterations of every step attempt so far (what newton_budget bounds)
        self._jaw_lag = 0.0  # m, how far a jaw ended the last step from where it was sent (StepReport.jaw_lag)
        self._grip: GripReference | None = None  # the grip at the close (grip_motion measures from it)

    def run(self) -> GraspResult:
        return self.run_variants([self.params])[0]

    def run_variants(self, variants: Sequence[SimParams]) -> list[GraspResult]:
        """This trial under each of `variants`, in that order: SimParams equal to this procedure's
        but in FRICTION_FIELDS (the pads' friction with the object) and RULE_FIELDS (the close
        rule, Psi_th, the psi rule's force balance). Nothing reads the friction with the object
        before a pad touches it, nor the close rule before both pads do, so the variants share one
        initialisation and settling; at the start of the squeeze those with other friction part
        (each continuing from a copy of the whole trial, engine state included, with its friction
        set), and within those the close rules share the squeeze up to the closing step that
        starts with both pads on the object, where they part. Each result is, to the bit, what
        `run()` gives with that variant alone. When the close rules judge the very step that
        brought both pads on the object differently (one would refine or close it, another not),
        they part at the last checkpoint before it instead: a copy of the trial taken at the
        start of the squeeze and at the first closing step that starts with one pad on the object
        and the other near it.
        A result's wall_time counts the shared parts; `progress` sees each branch's simulated
        time from its fork on."""
        self._variants = list(enumerate(self._checked_variants(variants)))
        results = [None] * len(self._variants)
        pending = [(self, 0.0)]  # trials to go on with, and the wall time (s) of what they share
        while pending:
            trial, shared = pending.pop()
            started = time.perf_counter()
            try:
                fork, parting = trial, trial._advance()
            except _Diverged:
                fork, parting = trial._checkpoint, None
            if fork is None:  # nothing to part from: each variant from the start
                for i, variant in trial._variants:
                    results[i] = GraspProcedure(*self._arguments[:3], variant, *self._arguments[3:]).run()
                continue
            spent = shared + time.perf_counter() - started
            if parting == ():  # over or judged: the result is every variant's
                finishing = time.perf_counter()
                trial._after_hold()
                trial.result.wall_time = spent + time.perf_counter() - finishing
                for k, (i, _) in enumerate(trial._variants):
                    results[i] = trial.result if k == 0 else copy.deepcopy(trial.result)
                continue
            parts = _grouped(trial._variants, parting) if parting else [[v] for v in trial._variants]
            for k, part in enumerate(parts):
                branch = fork if k == len(parts) - 1 else fork._copy()
                branch._take(part)
                pending.append((branch, spent))
        return results

    def _checked_variants(self, variants: Sequence[SimParams]) -> list[SimParams]:
        variants = list(variants)
        if not variants:
            raise ValueError("run_variants needs at least one SimParams")
        for variant in variants:
            differ = [f.name for f in fields(SimParams) if f.name not in FRICTION_FIELDS + RULE_FIELDS
                      and getattr(variant, f.name) != getattr(self.params, f.name)]
            if differ:
                raise ValueError(f"variants of one trial run together must differ only in "
                                 f"{FRICTION_FIELDS + RULE_FIELDS}, not in {differ}; fix: run trials with other "
                                 "parameters separately")
            if variant.close_rule == "force" and self.max_grip_force < variant.close_force:
                raise ValueError(f"the gripper {self.gripper.name!r} stalls at {self.max_grip_force:g} N, below "
                                 f"SimParams.close_force = {variant.close_force:g} N: the force rule could never fire; "
                                 "fix: lower close_force or raise SimParams.max_grip_force")
        return variants

    def _take(self, part: list) -> None:
        """Go on with the variants `part` ((position, SimParams) pairs of one friction) alone."""
        mu = part[0][1].mu
        if mu != self.params.mu:
            self.backend.set_pad_friction(mu)
        self._variants, self.params, self._checkpoint = part, part[0][1], None

    def _differ(self, names: tuple) -> bool:
        """The variants this trial runs differ in the SimParams fields `names`."""
        return len({tuple(getattr(v, name) for name in names) for _, v in self._variants}) > 1

    def _copy(self) -> GraspProcedure:
        """A deep copy of the trial as it stands (backend included; the object and the gripper,
        which no step changes, shared; no checkpoint)."""
        checkpoint, self._checkpoint = self._checkpoint, None
        try:
            return copy.deepcopy(self, {id(self.obj): self.obj, id(self.gripper): self.gripper})
        finally:
            self._checkpoint = checkpoint

    def _advance(self) -> tuple:
        """Run the phases from where the trial stands. Returns () when it is over or judged, and
        at a fork point (`run_variants`) the SimParams fields its variants part on."""
        try:
            while self._phase_index < len(_PHASES):
                self._timed(getattr(self, _PHASES[self._phase_index]))
                self._phase_index += 1
        except _Fork as fork:
            return fork.fields
        except _Over:
            self._phase_index = len(_PHASES)
        return ()

    def _timed(self, phase):
        t0 = time.perf_counter()
        try:
            phase()
        finally:
            name = phase.__name__.strip("_")
            wall = self.result.phase_wall_time
            wall[name] = wall.get(name, 0.0) + time.perf_counter() - t0

    # ------------------------------------------------------------------ phases (raise _Over when decided)
    def _initialise(self) -> None:
        p, gripper = self.params, self.gripper
        world_mesh = self.obj.mesh.copy().apply_transform(self.object_pose)
        self._check_reach(world_mesh)
        clearance = gripper.clearance_opening(self.grasp_pose, world_mesh, clearance=p.clearance,
                                              max_extra=p.max_extra_opening)
        if not clearance.clear:
            self._fail("no_clearance", f"the jaws cannot open wide enough to clear the object (at "
                                   f"{clearance.opening * 1e3:.0f} mm a jaw is {min(clearance.distances) * 1e3:.2f} mm "
                                   "from it)")
        self.closing_speed = p.closing_speed or gripper.closing_speed(clearance.opening, p.close_duration)
        start = gripper.narrowest_opening(self.grasp_pose, world_mesh, clearance.opening, clearance=p.clearance)
        self.result.start_opening = start.opening
        tooltips = gripper.tooltip_poses(self.grasp_pose, start.opening)
        self.start_tooltips = tooltips
        self.axis = tooltips[0][:3, 2]  # jaw 0's closing direction
        lowest = gripper.lowest_point(tooltips)
        if lowest <= 0.0:
            self._fail("miss", f"the jaws start {-lowest * 1e3:.2f} mm below the ground: the gripper cannot reach "
                               "this grasp")
        self.backend = self.make_backend(self.obj, self.object_pose, tooltips, p, self.gripper)
        if self.record_frames:
            self.result.faces = self.backend.faces()
            self.result.frames.append(self.backend.frame())
        self._guarded(self._settle, phase="settle")

    def _check_reach(self, world_mesh) -> None:
        """A "miss" before anything is simulated when the jaws, opened to the gripper's widest,
        are farther from the object than that opening (their bounding boxes are): the object is
        nowhere between them, so no pad can reach it (a grasp pose in millimetres or in another
        frame). Simulating such a scene costs more the farther apart they are (the engine's
        contact distance grows with the scene)."""
        gripper = self.gripper
        reach = gripper.max_opening
        if gripper.jaw_box_gap(self.grasp_pose, world_mesh.vertices, reach) >= reach:
            far = float(np.linalg.norm(self.grasp_pose[:3, 3] - self.object_pose[:3, 3]))
            self._fail("miss", f"the jaws, opened to the gripper's widest ({reach * 1e3:.0f} mm), are farther than "
                               f"that from the object (the gripper frame is {far:.3g} m from the object's): no pad "
                               "can reach it; check the grasp pose is in metres and in the object's world frame")

    def _settle(self) -> None:
        """settle_time with the jaws still: the object comes to rest on the ground."""
        for _ in range(int(round(self.params.settle_time / self.backend.dt))):
            self._step()

    def _squeeze(self) -> None:
        r, backend = self.result, self.backend
        if self._squeezing is None:
            self.phase = "squeeze"
            r.squeeze_time = self._time
            self._squeezing = _Squeeze(start_pose=backend.object_pose(), travel=0.5 * r.start_opening)
            if self._differ(FRICTION_FIELDS):
                if self._settle_touched:  # friction acted already
                    raise _Diverged
                raise _Fork(FRICTION_FIELDS)
        s = self._squeezing
        while True:
            if self._differ(RULE_FIELDS):
                if all(s.touched):
                    raise _Fork(RULE_FIELDS)
                # a checkpoint at the start of the squeeze, then one as the second pad comes near
                if self._checkpoint is None or (not any(self._checkpoint._squeezing.touched)
                                                and self._second_pad_near(s.touched)):
                    self._checkpoint = self._copy()
            saved, counters = backend.save(), self._counters()
            increment = self._closing_increment(s.before, s.history)
            tries = _Tries()
            for refinement in range(MAX_REFINEMENTS + 1):
                # A retry sends the jaws the shorter increment from where they are: after a step whose
                # drive lagged, the rest of that lag would otherwise be in every retry's motion.
                target = min((self.closed if refinement == 0 else s.reached) + increment, s.travel)
                last = tries.stands or refinement == MAX_REFINEMENTS  # the last increment stands, overshoot or not
                # The backend may stop a step that overshoots on the way (an equilibrium with the jaws
                # short of the target): a shorter increment is due even if the object then shifts
                # and the step would end below the bound.
                give_up = None if last else (
                    lambda forces, energies, jaws, lag: self._gives_up(tries, _Round(forces, energies, jaws, lag), s))
                # Once both pads hold the object its rounds are settled coarsely (Backend.step); while a
                # pad pushes it alone, stick and slip on the ground decide its path at full tolerance.
                tries.abandoned = None
                report = self._guarded(lambda: self._step(target, give_up, coarse_rounds=all(s.touched)),
                                       phase="squeeze")
                if report is not None and (last or not self._overshoots(report.pad_forces, report.pad_energies,
                                                                        s.touched, s.before, report.limit_forces)):
                    if last or tries.passed is None:
                        break
                    # a long creep, and this try ended short of the window after a longer one passed
                    # it within the force limit: the shortest such try stands (MAX_CREEP_STEPS)
                    increment, tries.stands = tries.passed, True
                    backend.restore(saved)
                    self._restore_counters(counters)
                    continue
                if report is not None and s.creeping >= MAX_CREEP_STEPS:
                    if max(report.limit_forces) <= self.max_grip_force:
                        tries.passed = increment
                    else:
                        tries.limit_passed = True
                backend.restore(saved)  # overshot the close rule or the force limit: a shorter increment
                self._restore_counters(counters)
                retry, tries.previous = self._refined_increment(increment, report, s, target, tries.previous,
                                                                tries.abandoned)
                if retry < 0.0 < increment:  # the jaws back off from a forward try (`_refined_increment`)
                    s.backed_off_at = s.reached
                increment = retry
            on_object = [f > 0.0 for f in report.pad_forces]
            started = s.before  # (pad forces, pad energies, jaw forces) where this step began
            self.closed, progress = target, target - report.jaw_lag - s.reached
            creeping = s.pressed and progress < MIN_CONTACT_STEP * backend.approach_distance
            s.creeping = s.creeping + 1 if creeping else 0
            s.reached += progress
            s.touched = [t or o for t, o in zip(s.touched, on_object)]
            s.before = (report.pad_forces, report.pad_energies, report.limit_forces)
            if all(on_object):
                s.history.append((s.reached, report.pad_forces, report.pad_energies))
            self._track_object(s.start_pose, backend.object_pose())
            if report.pads_touch:
                self._fail(*self._pads_met(s.touched))
            # at the force limit, or creeping below it with every longer try past it
            stalled = max(report.limit_forces) >= (1.0 - FORCE_TOLERANCE) * self.max_grip_force or tries.limit_passed
            if max(report.limit_forces) <= self.max_grip_force and self._closed(report, on_object):
                r.close_time, r.close_forces, r.psi = report.time, report.pad_forces, report.pad_energies
                r.close_opening = r.start_opening - 2 * s.reached - sum(backend.finger_deflections())
                self.grip_force = float(np.mean(report.pad_forces))
                self._fix_grip()
                return
            if reason := self._pushed_out():
                self._fail("pushed_out", reason)
            if stalled:
                plates = ("" if report.limit_forces == report.pad_forces else
                          f"; a backing plate presses the object too, the pads only "
                          f"{' and '.join(f'{f:.1f}' for f in report.pad_forces)} N")
                past = ("" if max(report.limit_forces) <= self.max_grip_force or started is None else
                        f"; the step's last try, {increment * 1e9:.1f} nm, took the jaws past it from "
                        f"{max(started[2]):.1f} N: a contact stiffer than a closing step's refinement resolves")
                where = (f"the jaws stalled at the gripper's force limit ({max(report.limit_forces):.1f} N, "
                         f"max_grip_force = {self.max_grip_force:.1f} N"
                         f"{'; every longer step passed it' if tries.limit_passed else ''}{past}{plates})")
                self._fail(*self._not_closed("stall", where, report, s.touched))
            if self.closed >= s.travel and (report.jaw_lag == 0.0 or progress <= 0.0):
                where = "the jaws reached the end of their travel"
                if not any(s.touched):
                    self._fail("miss", f"{where} without touching the object")
                if not all(s.touched):
                    self._fail("graze", f"{where} with only pad {s.touched.index(True)} having touched the object")
                self._fail(*self._not_closed("end_of_travel", where, report, s.touched))

    @staticmethod
    def _pads_met(touched) -> tuple[str, str]:
        """The label and reason of a squeeze whose pads met (`touched`: each pad touched the object)."""
        if not any(touched):
            return "miss", "the pads met beside the object: neither touched it"
        if not all(touched):
            return "graze", f"the pads met with only pad {touched.index(True)} having touched the object"
        return "jaws_meet", "both pads touched the object, then they met without the close rule firing"

    def _not_closed(self, mode: str, where: str, report: StepReport, touched) -> tuple[str, str]:
        """The label and reason of a squeeze that ends `where` without the rule firing: `mode`
        ("stall" or "end_of_travel"), or "unequal_effort" when both pads are on the object and the
        psi rule's energies are reached (its force balance is what never held)."""
        energies, forces = report.pad_energies, report.pad_forces

        def unequal(rule: SimParams) -> bool:
            return all(touched) and rule.close_rule == "psi" and min(energies) >= rule.psi_th

        if self._agreed(unequal):
            return "unequal_effort", (f"{where}: both pads store psi_th, but their forces never balanced "
                                      f"({forces[0]:.1f} and {forces[1]:.1f} N, psi_tol = {self.params.psi_tol:g})")
        return mode, f"{where} without the close rule firing"

    def _second_pad_near(self, touched) -> bool:
        """One pad is on the object and the other within CARRIED_CLOSING closing steps of it (the
        object pushed towards it closes the gap that much faster than one jaw)."""
        if not any(touched):
            return False
        reach = CARRIED_CLOSING * self.closing_speed * self.backend.dt
        return min(self.backend.pad_object_distance(i, reach) for i in range(2) if not touched[i]) <= reach

    def _closing_increment(self, before, history) -> float:
        """How far each jaw is sent this step (m): the closing speed, shortened to land a free pad
        (one not on the object at the end of the last step, `before`; None: no step yet) just
        short of the object, whose gap closes CARRIED_CLOSING times as fast while the other pad
        touches it and carries it along;
        while both pads touch it, a secant step on the close level towards TARGET_LEVEL (a
        force-limited gripper slowing down at contact), never longer than the closing speed
        allows or STEP_GROWTH times the last step, and never shorter than MIN_CONTACT_STEP
        approach distances; when the level rose over neither of the last two steps, or not over
        the last one while below GIVE_WAY_LEVEL (the object gives way), STEP_GROWTH times the
        last step, up to the closing speed, and after a single step without a rise above it (a
        model whose force rises unevenly, as MuJoCo's with its lagging jaws) FIRST_CONTACT_STEP
        approach distances. A pad the object has
        moved away from is free again: the secant of the last steps both pads pressed would
        otherwise keep the jaws creeping at the shortest step while one pad nudges the object
        along with almost no force."""
        nominal = self.closing_speed * self.backend.dt
        near = self.backend.approach_distance
        touched = [False, False] if before is None else [f > 0.0 for f in before[0]]
        if all(touched):
            first = min(FIRST_CONTACT_STEP * near, nominal)
            if len(history) < 2:
                return first
            (c0, l0), (c1, l1) = ((c, self._close_level(self.params, f, e)) for c, f, e in history[-2:])
            if l1 >= TARGET_LEVEL or c1 <= c0:  # past the target without the rule firing (B of psi), or no advance
                return first
            growth = min(nominal, STEP_GROWTH * (c1 - c0))  # the force rises steeply: a bounded step
            if l1 > l0:
                return float(np.clip((TARGET_LEVEL - l1) * (c1 - c0) / (l1 - l0), MIN_CONTACT_STEP * near, growth))
            # no rise over the last step: the object gives way, unless the force lags the jaws
            gives_way = l1 < GIVE_WAY_LEVEL or (
                len(history) >= 3 and l0 <= self._close_level(self.params, *history[-3][1:]))
            return growth if gives_way else first
        if nominal <= FIRST_CONTACT_STEP * near:  # steps already short of the contact scale
            return nominal
        closing = CARRIED_CLOSING if any(touched) else 1.0
        gap = min(self.backend.pad_object_distance(i, closing * nominal) for i in range(2) if not touched[i]) / closing
        return nominal if gap > nominal else max(gap - 0.5 * near, FIRST_CONTACT_STEP * near)

    def _lift(self) -> None:
        p, r = self.params, self.result
        top = p.lift_height + MAX_EXTRA_LIFT
        self.phase = "lift"
        while self.lifted < top:
            self.lifted = min(self.lifted + self.lift_speed * self.backend.dt, top)
            self._guarded(self._grip_step, phase="lift")
            self._track_grip()
            height = self.backend.object_height()
            r.lift_height = max(r.lift_height, height)
            if height >= p.lift_height:
                break
        self._hold()

    def _hold(self) -> None:
        """Hold still for hold_time, recording per pad and step its contact force on the object
        (normal + friction resultant) and the mean position and normal of its point contacts;
        then S_cf, S_cp, S_cn over the pads that touched the object (set C)."""
        p, r = self.params, self.result
        series = [([], [], []), ([], [], [])]  # per pad: force, mean position, mean normal
        self.phase = "hold"
        for _ in range(int(round(p.hold_time / self.backend.dt))):
            report = self._guarded(self._grip_step, phase="hold")
            self._track_grip()
            signals = self.backend.hold_signals(report)
            if signals is None:
                return
            for recorded, signal in zip(series, signals):
                for values, value in zip(recorded, signal):
                    values.append(value)
        touching = [s for s in series if any(np.all(np.isfinite(x)) for x in s[1])]
        r.s_cf = contact_force_variation([s[0] for s in touching])
        r.s_cp = contact_position_variation([s[1] for s in touching])
        r.s_cn = contact_normal_variation([s[2] for s in touching])

    def _judge(self) -> None:
        held, reason = self._held()
        if not held:
            reason = f"{reason}; {self._slip_account()}"
        self.result.success, self.result.reason = held, reason
        self.result.failure_mode = None if held else "slip"

    # ------------------------------------------------------------------------- the object in the grip
    def _fix_grip(self) -> None:
        """At the close: fix the grip (`grip_motion.GripReference`: the gripper frame, the object's
        pose, the grasp centre between the pads' pressure centres, the grasp axis) and record both
        sides of the pivot condition, the pads' torsional friction capacity about the grasp axis
        and the weight's torque about it (GraspResult.torsional_capacity, contact_radius,
        lever_arm, gravity_torque), and how far the pads' contact normals lean from the grasp axis
        (contact_tilt)."""
        r, backend = self.result, self.backend
        wrist, jaws = self._sent_poses(self.closed)
        points, forces, pads = backend.pad_contacts()
        capacity = torsional_capacity(points, forces, pads, self.params.mu, self.axis)
        r.contact_tilt = contact_tilt(forces, pads, self.axis)
        centre = grasp_centre(capacity, jaws[:, :3, 3].mean(axis=0))
        self._grip = GripReference(wrist, backend.object_pose(), centre, self.axis.copy())
        self._grip_closed = self.closed
        offset = backend.object_vertices() - centre
        self._grip_reach = float(np.max(np.linalg.norm(offset - np.outer(offset @ self.axis, self.axis), axis=1)))
        r.torsional_capacity, r.contact_radius = capacity.capacity, capacity.radius
        r.lever_arm = lever_arm(backend.object_centre(), centre, self.axis)
        r.gravity_torque = gravity_torque(backend.object_mass, backend.object_centre(), centre, self.axis)

    def _grip_motion(self) -> tuple[float, float, float]:
        """(slide m, pivot rad, roll rad) of the object relative to the gripper since the close
        (`grip_motion.grip_motion`); NaN before the close."""
        if self._grip is None:
            return float("nan"), float("nan"), float("nan")
        return grip_motion(self._grip, self._sent_poses(self.closed)[0], self.backend.object_pose())

    def _track_grip(self) -> None:
        """After an accepted lift or hold step: the largest slide, pivot and roll so far."""
        slide, pivot, roll = self._grip_motion()
        r = self.result
        r.grip_slide, r.grip_pivot, r.grip_roll = max(r.grip_slide, slide), max(r.grip_pivot, abs(pivot)), max(
            r.grip_roll, roll)

    def _slip_account(self) -> str:
        """How a slip left the grip, in words with its figures, and GraspResult.slip_kind: of the
        slide along the pads, the pivot about the grasp axis and the roll over the pads, the one
        that moved the object's farthest point (from the grasp axis) most ("slid", "pivoted" or
        "rolled"; a rotation's arc is its angle times that distance). A pivot is set against the
        weight's torque about the axis and the pads' torsional friction capacity; a slide or a
        roll against the weight and the pads' friction 2 mu F and the lean of the contact normals
        from the grasp axis against the friction cone (a wedge the squeeze pushes out). Jaws that
        ended the last step more than contact_tol short of where they were sent are named: the
        grip's motion is measured from where they were sent, so their lag counts as the object's
        motion."""
        return self._slip_motion() + self._lag_note()

    def _lag_note(self) -> str:
        """The jaws' lag at the end of the last step in words, when beyond contact_tol; else empty."""
        if not self._jaw_lag > self.params.contact_tol:
            return ""
        return (f"; the jaws ended {self._jaw_lag * 1e3:.1f} mm short of where they were sent (the model did not "
                "drive them there), and the motion above is measured from where they were sent")

    def _slip_motion(self) -> str:
        """`_slip_account` without the jaws' lag."""
        self._track_grip()
        r, mu = self.result, self.params.mu
        arcs = {"slid": r.grip_slide, "pivoted": r.grip_pivot * self._grip_reach,
                "rolled": r.grip_roll * self._grip_reach}
        r.slip_kind = max(arcs, key=arcs.get)
        torque = (f"gravity torque m g d = {_figure(r.gravity_torque * 1e3)} N mm (d = {_figure(r.lever_arm * 1e3)} "
                  "mm)")
        if np.isfinite(r.torsional_capacity):
            torque += (f" vs the pads' torsional friction capacity ~ {_figure(r.torsional_capacity * 1e3)} N mm "
                       f"(2/3 mu F a per pad, a = {_figure(r.contact_radius * 1e3)} mm)")
        if r.slip_kind == "pivoted":
            return (f"it pivoted {np.degrees(r.grip_pivot):.0f} deg about the grasp axis (slid "
                    f"{r.grip_slide * 1e3:.1f} mm along the pads, rolled {np.degrees(r.grip_roll):.1f} deg over "
                    f"them): {torque}")
        force = (f"weight m g = {self.backend.object_mass * GRAVITY:.2f} N vs the pads' friction 2 mu F = "
                 f"{mu * float(np.sum(r.close_forces)):.1f} N")
        if np.isfinite(r.contact_tilt):
            force += (f"; the pads' contact normals lean up to {np.degrees(r.contact_tilt):.0f} deg from the grasp "
                      f"axis (friction cone atan mu = {np.degrees(np.arctan(mu)):.0f} deg)")
        if r.slip_kind == "rolled":
            closed = 2 * (self.closed - self._grip_closed)
            return (f"it rolled {np.degrees(r.grip_roll):.1f} deg over the pads, about an axis across the grasp "
                    f"axis, the jaws closing {closed * 1e3:.1f} mm after it (slid {r.grip_slide * 1e3:.1f} mm "
                    f"along the pads, pivoted {np.degrees(r.grip_pivot):.1f} deg about the grasp axis): {force}; "
                    f"{torque}")
        return (f"it slid {r.grip_slide * 1e3:.1f} mm along the pads (pivoted {np.degrees(r.grip_pivot):.1f} deg "
                f"about the grasp axis, rolled {np.degrees(r.grip_roll):.1f} deg over the pads): {force}; {torque}")

    def _held(self) -> tuple[bool, str]:
        p, backend = self.params, self.backend
        check = HoldCheck(object_height=backend.object_height(), lift_height=self.result.lift_height,
                          pad_object=tuple(backend.pad_object_distance(i, p.contact_tol) for i in range(2)),
                          pad_pad=backend.pad_pad_distance(2 * backend.approach_distance))
        return judge_hold(check, p.lift_height, p.contact_tol, backend.approach_distance)

    # ------------------------------------------------------------------------------ after the hold
    def _after_hold(self) -> None:
        p, r = self.params, self.result
        shake, ramp = p.shake_amplitude > 0, p.critical_mass
        if not r.success:
            if shake:
                r.shake_reason = "not run: the trial did not hold the object"
            if ramp:
                r.critical_mass_reason = "the trial did not hold the object: nothing to ramp"
            return
        held = (self.backend.save(), self.lifted) if shake and ramp else None
        if shake:
            self._timed(self._shake)
        if ramp:
            if held is not None:
                self.backend.restore(held[0])
                self.lifted = held[1]
            self._timed(self._critical_mass)

    def _shake(self) -> None:
        """Vertical sinusoidal wrist motion, a rest of hold_time, then the hold judged again."""
        p, r = self.params, self.result
        base = self.lifted
        self.phase = "shake"
        omega, dt = 2 * np.pi * p.shake_frequency, self.backend.dt
        try:
            for k in range(1, int(round(p.shake_cycles / (p.shake_frequency * dt))) + 1):
                self.lifted = base + p.shake_amplitude * np.sin(omega * k * dt)
                self._grip_step()
            self.lifted = base
            for _ in range(int(round(p.hold_time / dt))):
                self._grip_step()
        except BackendFailed as exc:
            self.lifted = base
            r.shake_outcome, r.shake_reason = "solver", f"shake: {exc}"
            return
        held, reason = self._held()
        r.shake_outcome, r.shake_reason = ("held" if held else "dropped"), reason

    def _critical_mass(self) -> None:
        p, r = self.params, self.result
        self.phase = "critical_mass"
        ramp = critical_mass_ramp(self.backend, self._grip_step, p.mass_rate, p.slip_speed, p.max_mass)
        r.critical_mass, r.critical_mass_force, r.critical_mass_reason = ramp.mass, ramp.force, ramp.reason

    # ---------------------------------------------------------------------------------- helpers
    def _step(self, closed: float | None = None, give_up=None, coarse_rounds: bool = False) -> StepReport | None:
        """One backend step with the jaws at (closed, self.lifted); counts it in the result. None
        (nothing counted in the result) when give_up (see Backend.step) abandoned it;
        coarse_rounds as in Backend.step.

        Every attempt, taken, abandoned, failed or later undone (a refined closing step, a force
        grip's retry), counts its Newton iterations against newton_budget, at least one each
        (`Backend.newton_iterations_run`); a model that counts only the steps it takes (its
        newton_iterations_run None, e.g. MuJoCo, whose steps have no Newton iterations) counts
        their StepReport.newton_iterations. Past the budget the attempt raises BackendFailed
        naming it."""
        r = self.result
        closed = self.closed if closed is None else closed
        report, before = None, self.backend.newton_iterations_run
        try:
            report = self.backend.step(closed, self.lifted, give_up, coarse_rounds)
        finally:
            after = self.backend.newton_iterations_run
            if after is not None:  # a Newton solver: every attempt counts, at least one iteration
                self._spent += max(after - before, 1)
            elif report is not None:  # a model that counts only the steps it takes (e.g. MuJoCo)
                self._spent += report.newton_iterations
        if report is None:
            self._check_budget()
            return None
        r.steps += 1
        self._jaw_lag = report.jaw_lag
        r.newton_iterations += report.newton_iterations
        r.newton_fallback_steps += not report.newton_converged
        r.min_distance = min(r.min_distance, report.min_distance)
        r.max_penetration = max(r.max_penetration, report.max_penetration)
        r.max_force_gap = max(r.max_force_gap, report.max_force_gap)
        if self.phase == "settle" and max(report.pad_forces) > 0.0:
            self._settle_touched = True
        if self.record_frames:
            r.frames.append(self.backend.frame())
        if self.record_trajectory:
            r.trajectory.append(step_record(report, self.phase, self.backend.object_pose(),
                                            self.backend.object_height(), r.start_opening - 2 * closed,
                                            self.backend.pad_contacts(), *self._sent_poses(closed),
                                            self._grip_motion()))
        self._time = report.time
        if self.progress:
            self.progress(report.time)
        self._check_budget()
        if self.phase == "squeeze":
            self._check_squeeze_duration()
        return report

    def _sent_poses(self, closed: float) -> tuple[np.ndarray, np.ndarray]:
        """Where the jaws were sent for (closed, self.lifted) (the backend's convention): the wrist
        (gripper frame, 4x4) raised self.lifted m along world z, and each jaw's tooltip frame
        ((2, 4, 4)) `closed` m along its own closing direction from its start, raised the same."""
        wrist = self.grasp_pose.copy()
        wrist[2, 3] += self.lifted
        jaws = self.start_tooltips.copy()
        jaws[:, :3, 3] += closed * jaws[:, :3, 2]
        jaws[:, 2, 3] += self.lifted
        return wrist, jaws

    def _check_squeeze_duration(self) -> None:
        """BackendFailed once the squeeze has taken MAX_SQUEEZE_DURATION times the time its jaws
        need to close their whole travel at the closing speed (simulated time, s)."""
        limit = MAX_SQUEEZE_DURATION * self._squeezing.travel / self.closing_speed
        taken = self._time - self.result.squeeze_time
        if taken > limit:
            raise BackendFailed(f"the squeeze took {taken:.1f} s of simulated time, {MAX_SQUEEZE_DURATION:g} times the "
                                f"{limit / MAX_SQUEEZE_DURATION:.1f} s its jaws need to close their whole travel at the "
                                f"closing speed, the jaws {self._squeezing.reached * 1e3:.3f} mm closed: they creep "
                                "without the close rule, the force limit or the end of travel ending it")

    def _check_budget(self) -> None:
        """BackendFailed naming newton_budget once the step attempts have run past it."""
        budget = self.params.newton_budget
        if self._spent > budget:
            raise BackendFailed(f"the trial ran {self._spent} Newton iterations, past newton_budget = {budget} (every "
                                "step attempt counts, retried, abandoned and failed ones included)")

    def _grip_step(self) -> StepReport:
        """One step after the close (lift, hold, shake, mass ramp), the jaws holding the object
        as SimParams.grip says. "position": they stay at self.closed. "force": they move, at most
        closing_speed x dt per step, so that the pads' mean normal force on the object ends the
        step within half FORCE_TOLERANCE of grip_force (the force the close rule fired at; the
        other half for the two pads' difference). The first try moves the jaws as the last step
        did, corrected by the force errors e1, e0 the last two steps ended with: -(2 e1 - e0) / k
        (k: the grip's slope of force over jaw position), what a force drifting at a steady rate
        needs to end this step on target, where the last step's motion alone would carry its own
        correction into this one. The step is
        retried from its start with other jaw positions, by secant on (position, force) inside a
        bracket (`_grip_position`), up to MAX_GRIP_TRIES times; then the try closest to
        grip_force is taken again and stands. An object no pad touches any more lets the jaws
        close at their speed."""
        if self.params.grip == "position":
            return self._step()
        backend, start = self.backend, self.closed
        reach = self.closing_speed * backend.dt
        low, high = start - reach, min(start + reach, self._squeezing.travel)  # the jaws' reach this step
        saved, counters = backend.save(), self._counters()
        tries = []  # (jaw position, force error in N)
        slope = self._grip_slope if self._grip_slope > 0.0 else self._grip_stiffness
        last, before = self._grip_errors
        correction = -(2.0 * last - before) / slope if slope > 0.0 else 0.0
        closed = float(np.clip(start + self._grip_drift + correction, low, high))
        for attempt in range(MAX_GRIP_TRIES):
            report = self._step(closed)
            error = float(np.mean(report.pad_forces)) - self.grip_force
            tries.append((closed, error))
            if error > 0.0:
                high = closed
            else:
                low = closed
            if abs(error) <= 0.5 * FORCE_TOLERANCE * self.grip_force or low >= high:
                break
            if attempt == MAX_GRIP_TRIES - 1:  # none within the window: the closest try stands
                best = min(tries, key=lambda t: abs(t[1]))[0]
                if best != closed:
                    backend.restore(saved)
                    self._restore_counters(counters)
                    closed, report = best, self._step(best)
                break
            backend.restore(saved)
            self._restore_counters(counters)
            closed = self._grip_position(tries, low, high)
        self.closed, self._grip_drift = closed, closed - start
        self._grip_errors = (float(np.mean(report.pad_forces)) - self.grip_force, self._grip_errors[0])
        return report

    def _grip_position(self, tries: list, low: float, high: float) -> float:
        """The next jaw position (m) of the force grip, kept inside (low, high). Where the tries
        bracket the target (low and high both tried) and the last two or more landed on one side,
        the regula falsi point between low and high with the other end's force error halved for
        each of those tries past the first (Illinois). Else a secant step
        from the last try (jaw position, force error). Its slope is the secant through the last
        two tries where both found the object in a pad; else the last such slope of an earlier
        step (the contact's stiffness changes little from step to step); else the pads'
        stiffness seen while they closed; the middle of the bracket where none is positive. A
        guess beyond the jaws' reach this step (`low` or `high` not yet tried: the target force
        lies further than the jaws move in a step) tries that reach itself, the jaws at their
        speed; when that try still falls short of the target it stands (`_grip_step`): an object
        sliding out of the pads is followed at the closing speed, not with every try of a step."""
        (c1, e1) = tries[-1]
        side = [e > 0.0 for _, e in tries]
        same = next((k for k, above in enumerate(reversed(side)) if above != side[-1]), len(side))  # trailing, one side
        if 2 <= same < len(side):
            # bracketed, and the last tries all landed on one side: regula falsi between the bracket's
            # ends with the other end's error halved for each try past the first (Illinois), which a
            # force curve bending sharply at contact would otherwise hold on one side
            e_low = next(e for c, e in reversed(tries) if c == low)
            e_high = next(e for c, e in reversed(tries) if c == high)
            if side[-1]:
                e_low /= 2.0 ** (same - 1)
            else:
                e_high /= 2.0 ** (same - 1)
            return low - e_low * (high - low) / (e_high - e_low)
        slope = 0.0
        if len(tries) >= 2:
            c0, e0 = tries[-2]
            if c1 != c0 and min(e0, e1) > -self.grip_force:
                slope = (e1 - e0) / (c1 - c0)
        if slope > 0.0:
            self._grip_slope = slope
        else:
            slope = self._grip_slope if self._grip_slope > 0.0 else self._grip_stiffness
        guess = c1 - e1 / slope if slope > 0.0 else 0.5 * (low + high)
        if not low < guess < high:
            reach = high if guess >= high else low
            guess = reach if all(c != reach for c, _ in tries) else 0.5 * (low + high)
        return guess

    @property
    def _grip_stiffness(self) -> float:
        """dF/dx (N/m) of the pads' mean force over each jaw's travel in the last two closing
        steps with both pads on the object (0 when unknown)."""
        history = self._squeezing.history
        if len(history) < 2:
            return 0.0
        (c0, f0, _), (c1, f1, _) = history[-2:]
        return (np.mean(f1) - np.mean(f0)) / (c1 - c0) if c1 > c0 else 0.0

    def _guarded(self, run, phase: str):
        """run(), with a failed step judged: a "slip" when the object was being lifted or held and
        has left a pad (a drop), else a "solver" failure."""
        try:
            return run()
        except BackendFailed as exc:
            if phase in ("lift", "hold") and self._dropped():
                self._fail("slip", f"the object left the pads during the {phase} (then the solver failed: {exc}); "
                                   f"{self._slip_account()}")
            self._fail("solver", f"{phase}: {exc}")

    def _dropped(self) -> bool:
        """The object is away from a pad by more than contact_tol (state of the last good step)."""
        tol = self.params.contact_tol
        return any(not self.backend.pad_object_distance(i, tol) <= tol for i in range(2))

    def _counters(self):
        r = self.result
        return (r.steps, r.newton_iterations, r.newton_fallback_steps, r.min_distance, r.max_penetration,
                r.max_force_gap, len(r.frames), len(r.trajectory))

    def _restore_counters(self, counters):
        r = self.result
        (r.steps, r.newton_iterations, r.newton_fallback_steps, r.min_distance, r.max_penetration, r.max_force_gap,
         n_frames, n_steps) = counters
        del r.frames[n_frames:]
        del r.trajectory[n_steps:]

    @staticmethod
    def _close_level(rule: SimParams, pad_forces, pad_energies) -> float:
        """How far the close rule's threshold quantity is (1 = exactly at it): the smaller pad
        force over close_force, or the smaller pad strain energy over psi_th (StepReport's
        pad_forces, N, and pad_energies, J)."""
        if rule.close_rule == "force":
            return min(pad_forces) / rule.close_force
        return min(pad_energies) / rule.psi_th

    def _agreed(self, decide) -> bool:
        """decide(variant) under every variant this trial runs (`run_variants`); _Diverged if
        they differ."""
        answers = {decide(variant) for _, variant in self._variants}
        if len(answers) > 1:
            raise _Diverged
        return answers.pop()

    def _overshoots(self, pad_forces, pad_energies, touched, before, jaw_forces) -> bool:
        """A squeeze step went too far: a jaw pushes the object harder than the force limit
        (`jaw_forces`, StepReport.limit_forces), or the step crossed the close rule's threshold
        (from below it at the step's start, `before`: (pad forces, pad energies, jaw forces)
        then, None before the first step) and its quantity ends more than FORCE_TOLERANCE past
        it, both pads on the object (or having touched it, `touched`). A psi close that waited
        for the balance past the threshold is not an overshoot."""
        if max(jaw_forces) > self.max_grip_force:
            return True
        if not all(t or f > 0.0 for t, f in zip(touched, pad_forces)):
            return False

        def overshot(rule: SimParams) -> bool:
            below = before is None or self._close_level(rule, *before[:2]) < 1.0
            return below and self._close_level(rule, pad_forces, pad_energies) > 1.0 + FORCE_TOLERANCE

        return self._agreed(overshot)

    def _gives_up(self, tries: _Tries, round_: _Round, s: _Squeeze) -> bool:
        """Backend.step's give_up for a squeeze try: whether the drive round `round_` overshoots
        (`_overshoots`); the round it does is kept as tries.abandoned."""
        if self._overshoots(round_.pad_forces, round_.pad_energies, s.touched, s.before, round_.limit_forces):
            tries.abandoned = round_
            return True
        return False

    def _refined_increment(self, increment: float, report: StepReport | None, s: _Squeeze, target: float,
                           previous: tuple | None, abandoned: _Round | None = None) -> tuple[float, tuple | None]:
        """The closing increment (m) to retry a step that overshot with `increment` (it reached
        `target` less its jaw lag; `report` None when the backend gave it up on the way, at the
        drive round `abandoned` when it told which), and the try the next call compares with
        (`previous`): the step's first finished try measured on the same level as the last,
        (increment, the rise of its level over the step, whether that level is the force
        limit's), None before one finished. A secant from the step's start (s.before) to where it
        ended (or the round it was given up at), aimed inside the window (TARGET_LEVEL of the
        close rule, or FORCE_TOLERANCE / 2 below the force limit when that was passed), kept
        between a tenth and 0.8 x the travel. Half the increment where no secant is defined (a
        step given up at no known round, no rise) or the step did not start with both pads on
        the object: until then variants with other close rules share the step
        (`run_variants`), and a trial run alone must refine it as they do.

        From a start with both pads pressing the object, the jaws back off (a negative increment
        of FIRST_CONTACT_STEP approach distances, doubled at each further overshoot) when the
        jaw travel does not explain the overshoot: a step given up with an increment of at most
        MIN_CONTACT_STEP approach distances, or a finished try with at most half the increment
        of the try it is compared with whose level rose more than twice that share of the
        compared rise (a contact that only stiffens with travel rises less). Once backed off (the
        caller records where: s.backed_off_at), the jaws back off again only from a step that
        starts beyond where they did (by more than
        MIN_CONTACT_STEP approach distances): an object pushing into them carries the squeeze on,
        while a level that jumps at the same place whatever the jaws do would bring them back
        there, and back off, without end; there the refinement goes on as for any step."""
        near = self.backend.approach_distance
        ended = report if report is not None else abandoned  # where the try ended, or was given up
        over_limit = ended is not None and max(ended.limit_forces) > self.max_grip_force
        if over_limit:
            aim = 1.0 - 0.5 * FORCE_TOLERANCE

            def level(forces, energies, jaws):
                return max(jaws) / self.max_grip_force
        else:
            aim = TARGET_LEVEL

            def level(forces, energies, jaws):
                return self._close_level(self.params, forces, energies)
        measured = ended is not None and s.before is not None
        if measured:
            start, end = level(*s.before), level(ended.pad_forces, ended.pad_energies, ended.limit_forces)
        tried = (increment, end - start, over_limit) if measured and report is not None else None
        compared = tried if previous is None or tried is not None and previous[2] != over_limit else previous
        unexplained = (previous is not None and tried is not None and previous[2] == over_limit
                       and 0.0 < increment <= 0.5 * previous[0] and tried[1] * previous[0] > 2.0 * increment * previous[1])
        beyond = s.backed_off_at is None or s.reached > s.backed_off_at + MIN_CONTACT_STEP * near
        if s.pressed and (increment < 0.0 or beyond and (unexplained or report is None
                                                       and increment <= MIN_CONTACT_STEP * near)):
            # Both pads pressed the object at the step's start, and the level rises past the bound
            # with the jaws hardly moving, or moving back: the object pushes into them (carried on
            # by its own motion, a cube turning flat against a pad), as a force-controlled gripper
            # feels and yields to. Back the jaws off, twice as far each try.
            if increment > 0.0:
                return -FIRST_CONTACT_STEP * near, compared
            return 2.0 * increment, compared
        if not measured or not all(s.touched):
            return 0.5 * increment, compared
        travelled = target - ended.jaw_lag - s.reached
        if not (end > aim > start and travelled > 0.0):
            return 0.5 * increment, compared
        return float(np.clip((aim - start) / (end - start), 0.1, 0.8)) * travelled, compared

    def _closed(self, report: StepReport, on_object) -> bool:
        """The close rule, counted only while both pads touch the object (pads squeezing each
        other never close a grasp)."""
        if not all(on_object):
            return False
        forces = report.pad_forces

        def fires(rule: SimParams) -> bool:
            if rule.close_rule == "force":
                return min(forces) >= rule.close_force
            return min(report.pad_energies) >= rule.psi_th and abs(forces[0] - forces[1]) <= rule.psi_tol * max(forces)

        return self._agreed(fires)

    def _track_object(self, start_pose, pose):
        r = self.result
        moved = pose[:3, 3] - start_pose[:3, 3]
        axis = self.axis
        r.object_translation = max(r.object_translation, float(np.linalg.norm(moved)))
        r.object_lateral_translation = max(r.object_lateral_translation,
                                           float(np.linalg.norm(moved - (moved @ axis) * axis)))
        relative = pose[:3, :3] @ start_pose[:3, :3].T
        angle = float(np.arccos(np.clip((np.trace(relative) - 1) / 2, -1.0, 1.0)))
        r.object_rotation = max(r.object_rotation, angle)

    def _pushed_out(self) -> str:
        p, r = self.params, self.result
        if r.object_lateral_translation > p.pushed_out_translation:
            return (f"object moved {r.object_lateral_translation * 1e3:.1f} mm across the closing direction "
                    "during the squeeze")
        if r.object_rotation > p.pushed_out_rotation:
            return f"object turned {np.degrees(r.object_rotation):.0f} degrees during the squeeze"
        return ""

    def _fail(self, mode: str, reason: str):
        self.result.success, self.result.failure_mode, self.result.reason = False, mode, reason
        raise _Over
