"""One grasp trial: build the scene, then initialise, squeeze, lift, hold and judge; after a
successful hold, optionally a shake test and a critical-mass ramp.

The scene: the object as an affine body resting on the ground, each jaw a Neo-Hookean pad whose
back face is glued to a kinematic backing plate, both driven by the jaw's tooltip pose.

During the hold the pads' contact signals are recorded and reduced to Rocchi et al.'s S_cf, S_cp,
S_cn (grasp.stability). After the trial is judged, and only when it succeeded:
- shake (shake_amplitude > 0): the wrist (both jaws together, width fixed) moves vertically
  (world z, along gravity, so the object needs friction for m (g + A (2 pi f)^2) at the peaks)
  by A sin(2 pi f t) for shake_cycles cycles, rests for hold_time and is judged again as after
  the lift: "held" or "dropped".
- critical mass (PrendoSim section 3.2; `critical_mass_ramp`): from the state after the hold
  (the shake's motion undone when both run), the object's mass grows at mass_rate with the jaws
  still until it slips.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground, KinematicBody
from ipcgrasp.engine.broadphase import candidates
from ipcgrasp.engine.simulation import Simulation, SolverSettings, StepFailed
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult, HoldCheck, judge_hold
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.stability import (
    contact_average,
    contact_force_variation,
    contact_normal_variation,
    contact_points,
    contact_position_variation,
)

OBJECT, PADS, BACKINGS = "object", ("pad0", "pad1"), ("backing0", "backing1")
SETTLE_TIME = 0.06  # s of free fall/settling before the squeeze (the object starts 1 mm up)
CLEARANCE = 1e-3  # m between each jaw and the object when the squeeze starts
MAX_EXTRA_OPENING = 0.01  # m the jaws may open beyond the gripper's maximum to clear (as the original)
MAX_REFINEMENTS = 6  # halvings of the last closing increment so the close rule does not overshoot
OVERSHOOT = 1.5  # a closing increment is refined when the rule's quantity exceeds this x threshold
CONTACTS_PER_PAD = 10  # the closing force is expected to spread over at least this many contacts
STATIC_SPEED_FACTOR = 10  # relative speed (x eps_v) below which the object still counts as held by static friction
TARGET_LEVEL = 1.1  # the force-controlled approach aims 10 % past the threshold
MIN_SHAKE_STEPS = 8  # time steps per shake cycle below which the sinusoid is not resolved


@dataclass
class _Jaws:
    """The tooltip poses at the start of the squeeze and how far they have moved."""

    start: np.ndarray  # (2, 4, 4)
    closed: float = 0.0  # m each jaw advanced along its closing direction
    lifted: float = 0.0  # m both jaws moved up (world z)

    def poses(self, closed=None, lifted=None):
        closed = self.closed if closed is None else closed
        lifted = self.lifted if lifted is None else lifted
        poses = self.start.copy()
        for i in range(2):
            poses[i, :3, 3] += closed * poses[i, :3, 2]
            poses[i, 2, 3] += lifted
        return poses

    def drivers(self, closed=None, lifted=None):
        poses = self.poses(closed, lifted)
        return {PADS[0]: poses[0], PADS[1]: poses[1], BACKINGS[0]: poses[0], BACKINGS[1]: poses[1]}


def build_scene(obj: GraspObject, object_pose, tooltip_poses, gripper: Gripper, params: SimParams) -> Simulation:
    """The engine scene for one trial (object placed, jaws at `tooltip_poses`)."""
    props = obj.properties
    body = AffineBody(OBJECT, obj.mesh.vertices, obj.mesh.faces, props.mass, props.center_of_mass,
                      props.second_moment, props.volume)
    pad = gripper.pad_mesh()
    backing = gripper.backing_mesh()
    bodies, poses = [body], {OBJECT: object_pose}
    for i in range(2):
        bodies.append(DeformableBody(PADS[i], pad.nodes, pad.tets, params.E, params.nu, params.density,
                                     pad.back_nodes))
        bodies.append(KinematicBody(BACKINGS[i], backing.vertices, backing.faces))
        poses[PADS[i]] = poses[BACKINGS[i]] = tooltip_poses[i]
    settings = SolverSettings(dt=params.dt, dhat=params.dhat, eps_v=params.eps_v,
                              newton_tolerance=params.newton_tolerance,
                              contact_force_scale=params.close_force / CONTACTS_PER_PAD,
                              contact_model="barrier" if params.contact_model == "ipc" else "penalty",
                              penalty_stiffness=params.penalty_stiffness, penalty_margin=params.penalty_margin,
                              penalty_clusters=params.penalty_clusters)
    friction = {(OBJECT, PADS[0]): params.mu, (OBJECT, PADS[1]): params.mu, (OBJECT, "ground"): params.mu_ground}
    return Simulation(bodies, poses=poses, ground=Ground(mu=params.mu_ground), friction=friction,
                      default_friction=params.mu, ignore_pairs=[(PADS[0], BACKINGS[0]), (PADS[1], BACKINGS[1])],
                      settings=settings)


def point_contacts(sim: Simulation, body: str, other: str) -> tuple[np.ndarray, np.ndarray]:
    """Point contacts between `body` and `other` in the simulation's current configuration: the
    surface pairs closer than sim.dhat (the barrier's activation distance; under penalty contact
    the sum of the margins, 2 r, i.e. BLEM's contacts before any clustering), each as the
    midpoint of its closest points and the unit normal pointing from `other` into `body`
    (stability.contact_points). Returns points (K, 3) m and normals (K, 3)."""
    activation = sim.dhat
    x = sim.collision_positions()
    mesh = sim.mesh
    a, b = sim.index[body], sim.index[other]
    pair = np.zeros_like(mesh.can_collide)
    pair[a, b] = pair[b, a] = True
    vf, ee, _ = candidates(x, x, mesh.edges, mesh.faces, mesh.vertex_body, activation, can_collide=pair)
    coll = contact.build_collisions(mesh, x, activation, candidates=(vf, ee, np.zeros(0, dtype=np.int64)))
    forces = contact.contact_forces(coll, mesh, x, activation, 1.0)  # directions and weights only
    valid = coll.vertices >= 0
    vertices = np.where(valid, coll.vertices, 0)
    positions = np.where(valid[:, :, None], x[vertices], 0.0)
    return contact_points(positions, forces, valid & (mesh.vertex_body[vertices] == a))


@dataclass(frozen=True)
class CriticalMass:
    """Outcome of a mass ramp: mass (kg; inf: no slip up to the cap; NaN: the solver failed),
    force (N, the pads' mean normal force on the body at the last step it was still static,
    relative speed <= STATIC_SPEED_FACTOR x eps_v: once it slides the squeezed pads relax within a
    step, while friction still uses the lagged force; NaN if it slipped at once), ramp_time (s simulated), reason (words)."""

    mass: float
    force: float
    ramp_time: float
    reason: str


def critical_mass_ramp(sim: Simulation, body: str, pads, drivers, rate: float, slip_speed: float,
                       max_mass: float, step=None, start_mass: float | None = None) -> CriticalMass:
    """PrendoSim's critical mass (section 3.2): from the current state, grow the affine `body`'s
    mass (and inertia, and so its weight) linearly at `rate` kg/s from `start_mass` (kg; default
    its own mass), one set_mass_scale per step, with `drivers` (the jaws) held, until the speed
    of its centre of mass relative to the pads (the mean position of all their vertices) exceeds
    `slip_speed` (m/s) over a step. The mass used in that step is the critical mass.

    Rules: the mass stops at `max_mass` (kg); no slip by the end of the step taken at max_mass
    gives inf. A solver failure (StepFailed) ends the ramp with NaN (the reason names the mass
    reached, a lower bound) and leaves the simulation at its last good state. `step(drivers)`
    advances the simulation (default sim.step; the controller passes its own to count steps)."""
    step = step or sim.step
    dt = sim.settings.dt
    o = sim.index[body]
    base = sim.bodies[o].mass
    start = base if start_mass is None else float(start_mass)
    centre = sim.bodies[o].center_of_mass

    def positions():
        pose = sim.affine_pose(body)
        return pose[:3, :3] @ centre + pose[:3, 3], np.mean([sim.vertices(p).mean(axis=0) for p in pads], axis=0)

    def force(stats):
        return float(np.mean([np.linalg.norm(stats.contact_force[o, sim.index[p]]) for p in pads]))

    mass, elapsed, held_force = start, 0.0, float("nan")
    com, pad = positions()
    while mass < max_mass:
        elapsed += dt
        mass = min(start + rate * elapsed, max_mass)
        sim.set_mass_scale(body, mass / base)
        try:
            stats = step(drivers)
        except StepFailed as exc:
            return CriticalMass(float("nan"), held_force, elapsed,
                                f"solver failed at {mass:.4g} kg, still held until then: {exc.reason}")
        new_com, new_pad = positions()
        speed = float(np.linalg.norm((new_com - com) - (new_pad - pad))) / dt
        if speed > slip_speed:
            return CriticalMass(mass, held_force, elapsed,
                                f"slipped at {mass:.4g} kg ({speed * 100:.2g} cm/s relative to the pads)")
        if speed <= STATIC_SPEED_FACTOR * sim.settings.eps_v:  # still static: the pads have not relaxed
            held_force = force(stats)
        com, pad = new_com, new_pad
    return CriticalMass(float("inf"), held_force, elapsed, f"no slip up to max_mass = {max_mass:.4g} kg")


class GraspTrial:
    """Runs the phases of one trial on a perturbed grasp pose and fills a GraspResult."""

    def __init__(self, obj: GraspObject, object_pose, grasp_pose, params: SimParams,
                 gripper: Gripper | None = None, record_frames: bool = False, progress=None):
        self.obj, self.params = obj, params
        if params.shake_amplitude > 0:
            if params.shake_frequency * params.dt * MIN_SHAKE_STEPS > 1.0:
                raise ValueError(f"SimParams.shake_frequency = {params.shake_frequency} Hz leaves fewer than "
                                 f"{MIN_SHAKE_STEPS} steps of dt = {params.dt} s per cycle: lower it or dt")
            if params.shake_amplitude >= params.lift_height:
                raise ValueError(f"SimParams.shake_amplitude = {params.shake_amplitude} m would shake the object "
                                 f"back onto the ground: keep it below lift_height = {params.lift_height} m")
        self.gripper = gripper or Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
        self.object_pose, self.grasp_pose = place_scene(obj.mesh, object_pose, grasp_pose)
        self.record_frames = record_frames
        self.progress = progress
        self.result = GraspResult(grasp_pose=self.grasp_pose)

    def run(self) -> GraspResult:
        started = time.perf_counter()
        try:
            for phase in (self._initialise, self._squeeze, self._lift, self._evaluate):
                if self._timed(phase):
                    break
        except StepFailed as exc:
            self._fail("solver", exc.reason)
        self._after_hold()
        self.result.wall_time = time.perf_counter() - started
        return self.result

    def _timed(self, phase):
        t0 = time.perf_counter()
        done = phase()
        self.result.phase_wall_time[phase.__name__.strip("_")] = time.perf_counter() - t0
        return done

    def _after_hold(self) -> None:
        """The optional tests of a held grasp (module docstring); each starts from the state
        after the hold."""
        p, r = self.params, self.result
        shake, ramp = p.shake_amplitude > 0, p.critical_mass
        if not r.success:
            if shake:
                r.shake_reason = "not run: the trial did not hold the object"
            if ramp:
                r.critical_mass_reason = "the trial did not hold the object: nothing to ramp"
            return
        held = (self.sim.state.copy(), self.sim.barrier_stiffness) if shake and ramp else None
        if shake:
            self._timed(self._shake)
        if ramp:
            if held is not None:
                self.sim.restore(held[0])
                self.sim.barrier_stiffness = held[1]
            self._timed(self._critical_mass)

    # ------------------------------------------------------------------ phases (True = trial over)
    def _initialise(self) -> bool:
        world_mesh = self.obj.mesh.copy().apply_transform(self.object_pose)
        clearance = self.gripper.clearance_opening(self.grasp_pose, world_mesh, clearance=CLEARANCE,
                                                   max_extra=MAX_EXTRA_OPENING)
        if not clearance.clear:
            return self._fail("no_close", "the jaws cannot open wide enough to clear the object")
        self.closing_speed = self.params.closing_speed or self.gripper.closing_speed(clearance.opening)
        start = self.gripper.narrowest_opening(self.grasp_pose, world_mesh, clearance.opening, clearance=CLEARANCE)
        self.result.start_opening = start.opening
        self.jaws = _Jaws(self.gripper.tooltip_poses(self.grasp_pose, start.opening))
        self.sim = build_scene(self.obj, self.object_pose, self.jaws.poses(), self.gripper, self.params)
        if self.record_frames:
            self.result.faces = {b.name: b.faces for b in self.sim.bodies}
            self.result.frames.append(self.frame())
        for _ in range(int(round(SETTLE_TIME / self.params.dt))):
            self._step(self.jaws.drivers())
        return False

    def _squeeze(self) -> bool:
        p, sim = self.params, self.sim
        start_pose = sim.affine_pose(OBJECT)
        touched = [False, False]
        max_closing = 0.5 * self.result.start_opening
        history = []  # (closed, close level) once both pads touch: the force-controlled approach
        while True:
            saved, counters = sim.state.copy(), self._counters()
            increment = self._closing_increment(touched, history)
            for refinement in range(MAX_REFINEMENTS + 1):
                closed = min(self.jaws.closed + increment, max_closing)
                stats = self._step(self.jaws.drivers(closed=closed))
                forces, psi = self._pad_forces(stats), self._pad_energies(stats)
                level = self._close_level(forces, psi)
                if (level <= OVERSHOOT or not all(t or f > 0.0 for t, f in zip(touched, forces))
                        or refinement == MAX_REFINEMENTS):  # the smallest increment stands, overshoot or not
                    break
                sim.restore(saved)  # overshot the close rule: retry with half the increment
                self._restore_counters(counters)
                increment *= 0.5
            self.jaws.closed = closed - (1.0 - stats.driver_fraction) * (closed - self.jaws.closed)
            touched = [t or f > 0.0 for t, f in zip(touched, forces)]
            if all(touched):
                history.append((self.jaws.closed, level))
            self._track_object(start_pose, sim.affine_pose(OBJECT))
            if self._closed(forces, psi):
                r = self.result
                r.close_time, r.close_forces, r.psi = sim.state.time, tuple(forces), tuple(psi)
                r.close_opening = self.result.start_opening - 2 * self.jaws.closed
                return False
            if self._pads_touch(stats):
                mode = "miss" if not any(touched) else ("pushed_out" if not all(touched) else "jaws_meet")
                return self._fail(mode, "the pads met without the close rule firing")
            if r_out := self._pushed_out():
                return self._fail("pushed_out", r_out)
            if self.jaws.closed >= max_closing:
                mode = "miss" if not any(touched) else "no_close"
                return self._fail(mode, "the jaws closed fully without the close rule firing")
            if sim.state.time > self._time_limit():
                return self._fail("no_close", "time ran out before the close rule fired")

    def _closing_increment(self, touched, history) -> float:
        """How far each jaw closes this step (m): the closing speed, shortened to land a free pad
        just short of the object, and once both pads touch, a secant step on the close level
        towards TARGET_LEVEL (a force-limited gripper slowing down at contact)."""
        nominal = self.closing_speed * self.params.dt
        dhat = self.sim.dhat
        if all(touched):
            if len(history) >= 2:
                (c0, l0), (c1, l1) = history[-2], history[-1]
                if l1 > l0 and c1 > c0:
                    return float(np.clip((TARGET_LEVEL - l1) * (c1 - c0) / (l1 - l0), 0.01 * dhat,
                                         min(0.25 * dhat, nominal)))
            return min(0.25 * dhat, nominal)
        gaps = [self.sim.body_distance(PADS[i], OBJECT, nominal) for i in range(2) if not touched[i]]
        gap = min(gaps)
        return nominal if gap > nominal else max(gap - 0.5 * dhat, 0.25 * dhat)

    def _lift(self) -> bool:
        p, sim = self.params, self.sim
        max_lift = p.lift_height + 0.005
        while self.jaws.lifted < max_lift:
            self.jaws.lifted = min(self.jaws.lifted + p.lift_speed * p.dt, max_lift)
            self._step(self.jaws.drivers())
            height = self._object_height()
            self.result.lift_height = max(self.result.lift_height, height)
            if height >= p.lift_height:
                break
        self._hold()
        return False

    def _hold(self) -> None:
        """Hold still for hold_time, recording per pad and step its contact force on the object
        (normal + friction resultant) and the mean position and normal of its point contacts;
        then S_cf, S_cp, S_cn over the pads that touched the object (set C)."""
        p, sim = self.params, self.sim
        signals = {pad: ([], [], []) for pad in PADS}  # per pad: force, mean position, mean normal
        o = sim.index[OBJECT]
        for _ in range(int(round(p.hold_time / p.dt))):
            stats = self._step(self.jaws.drivers())
            for pad, (forces, positions, normals) in signals.items():
                j = sim.index[pad]
                forces.append(stats.contact_force[o, j] + stats.friction_force[o, j])
                position, normal = contact_average(*point_contacts(sim, OBJECT, pad))
                positions.append(position)
                normals.append(normal)
        touching = [s for s in signals.values() if any(np.all(np.isfinite(x)) for x in s[1])]
        r = self.result
        r.s_cf = contact_force_variation([s[0] for s in touching])
        r.s_cp = contact_position_variation([s[1] for s in touching])
        r.s_cn = contact_normal_variation([s[2] for s in touching])

    def _evaluate(self) -> bool:
        success, reason = self._judge_hold()
        self.result.success, self.result.reason = success, reason
        self.result.failure_mode = None if success else "slip"
        return True

    def _judge_hold(self) -> tuple[bool, str]:
        p, sim = self.params, self.sim
        check = HoldCheck(object_height=self._object_height(),
                          pad_object=tuple(sim.body_distance(pad, OBJECT, p.contact_tol) for pad in PADS),
                          pad_pad=sim.body_distance(PADS[0], PADS[1], 2 * sim.dhat))
        return judge_hold(check, p.contact_tol, sim.dhat)

    def _shake(self) -> None:
        """Vertical sinusoidal wrist motion, a rest of hold_time, then the hold judged again."""
        p, r = self.params, self.result
        base = self.jaws.lifted
        omega = 2 * np.pi * p.shake_frequency
        try:
            for k in range(1, int(round(p.shake_cycles / (p.shake_frequency * p.dt))) + 1):
                self.jaws.lifted = base + p.shake_amplitude * np.sin(omega * k * p.dt)
                self._step(self.jaws.drivers())
            self.jaws.lifted = base
            for _ in range(int(round(p.hold_time / p.dt))):
                self._step(self.jaws.drivers())
        except StepFailed as exc:
            self.jaws.lifted = base
            r.shake_outcome, r.shake_reason = "solver", exc.reason
            return
        held, reason = self._judge_hold()
        r.shake_outcome, r.shake_reason = ("held" if held else "dropped"), reason

    def _critical_mass(self) -> None:
        p, r = self.params, self.result
        ramp = critical_mass_ramp(self.sim, OBJECT, PADS, self.jaws.drivers(), p.mass_rate, p.slip_speed,
                                  p.max_mass, self._step)
        r.critical_mass, r.critical_mass_force, r.critical_mass_reason = ramp.mass, ramp.force, ramp.reason

    # ---------------------------------------------------------------------------------- helpers
    def _step(self, drivers):
        stats = self.sim.step(drivers)
        r = self.result
        r.steps += 1
        r.newton_iterations += stats.newton_iterations
        r.newton_fallback_steps += not stats.newton_converged
        r.min_distance = min(r.min_distance, stats.min_distance)
        r.max_penetration = max(r.max_penetration, stats.max_penetration)
        r.max_force_gap = max(r.max_force_gap, stats.max_force_gap)
        if r.newton_iterations > self.params.newton_budget:
            raise StepFailed(f"the trial used more than newton_budget = {self.params.newton_budget} Newton iterations",
                             self.sim.state.copy())
        if self.record_frames:
            r.frames.append(self.frame())
        if self.progress:
            self.progress(self.sim.state.time)
        return stats

    def _counters(self):
        r = self.result
        return (r.steps, r.newton_iterations, r.newton_fallback_steps, r.min_distance, r.max_penetration,
                r.max_force_gap, len(r.frames))

    def _restore_counters(self, counters):
        r = self.result
        (r.steps, r.newton_iterations, r.newton_fallback_steps, r.min_distance, r.max_penetration, r.max_force_gap,
         n_frames) = counters
        del r.frames[n_frames:]

    def frame(self) -> dict:
        """Current world vertex positions of every body (for rendering), and the time."""
        return {"time": self.sim.state.time,
                **{b.name: self.sim.vertices(b.name) for b in self.sim.bodies}}

    def _pad_forces(self, stats):
        """Normal force (N) of each pad on the object: the barrier force resultant."""
        o = self.sim.index[OBJECT]
        return [float(np.linalg.norm(stats.contact_force[o, self.sim.index[pad]])) for pad in PADS]

    def _pad_energies(self, stats):
        return [stats.strain_energy[pad] for pad in PADS]

    def _close_level(self, forces, psi):
        """How far the close rule's quantity is past its threshold (1 = exactly at it)."""
        if self.params.close_rule == "force":
            return min(forces) / self.params.close_force
        return min(psi) / self.params.psi_th

    def _closed(self, forces, psi) -> bool:
        p = self.params
        if p.close_rule == "force":
            return min(forces) >= p.close_force
        return min(psi) >= p.psi_th and abs(psi[0] - psi[1]) <= p.psi_tol * max(psi)

    def _pads_touch(self, stats) -> bool:
        i, j = self.sim.index[PADS[0]], self.sim.index[PADS[1]]
        return bool(np.any(stats.contact_force[i, j] != 0.0))

    def _track_object(self, start_pose, pose):
        r = self.result
        moved = pose[:3, 3] - start_pose[:3, 3]
        axis = self.jaws.start[0][:3, 2]  # tooltip 0's closing direction
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

    def _time_limit(self) -> float:
        return SETTLE_TIME + self.params.close_duration + 0.5 * self.result.start_opening / self.closing_speed

    def _object_height(self) -> float:
        return float(self.sim.vertices(OBJECT)[:, 2].min())

    def _fail(self, mode: str, reason: str) -> bool:
        self.result.success, self.result.failure_mode, self.result.reason = False, mode, reason
        return True

