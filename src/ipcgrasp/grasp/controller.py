"""One grasp trial: build the scene, then initialise, squeeze, lift, hold and judge.

The scene: the object as an affine body resting on the ground, each jaw a Neo-Hookean pad whose
back face is glued to a kinematic backing plate, both driven by the jaw's tooltip pose.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground, KinematicBody
from ipcgrasp.engine.simulation import Simulation, SolverSettings, StepFailed
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult, HoldCheck, judge_hold
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.scene import place_scene

OBJECT, PADS, BACKINGS = "object", ("pad0", "pad1"), ("backing0", "backing1")
SETTLE_TIME = 0.06  # s of free fall/settling before the squeeze (the object starts 1 mm up)
CLEARANCE = 1e-3  # m between each jaw and the object when the squeeze starts
MAX_EXTRA_OPENING = 0.01  # m the jaws may open beyond the gripper's maximum to clear (as the original)
MAX_REFINEMENTS = 6  # halvings of the last closing increment so the close rule does not overshoot
OVERSHOOT = 1.5  # a closing increment is refined when the rule's quantity exceeds this x threshold
CONTACTS_PER_PAD = 10  # the closing force is expected to spread over at least this many contacts
TARGET_LEVEL = 1.1  # the force-controlled approach aims 10 % past the threshold


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
                              contact_force_scale=params.close_force / CONTACTS_PER_PAD)
    friction = {(OBJECT, PADS[0]): params.mu, (OBJECT, PADS[1]): params.mu, (OBJECT, "ground"): params.mu_ground}
    return Simulation(bodies, poses=poses, ground=Ground(mu=params.mu_ground), friction=friction,
                      default_friction=params.mu, ignore_pairs=[(PADS[0], BACKINGS[0]), (PADS[1], BACKINGS[1])],
                      settings=settings)


class GraspTrial:
    """Runs the phases of one trial on a perturbed grasp pose and fills a GraspResult."""

    def __init__(self, obj: GraspObject, object_pose, grasp_pose, params: SimParams,
                 gripper: Gripper | None = None, record_frames: bool = False, progress=None):
        self.obj, self.params = obj, params
        self.gripper = gripper or Gripper.yumi(pad_kind=params.jaw, pad_resolution=params.pad_resolution)
        self.object_pose, self.grasp_pose = place_scene(obj.mesh, object_pose, grasp_pose)
        self.record_frames = record_frames
        self.progress = progress
        self.result = GraspResult(grasp_pose=self.grasp_pose)

    def run(self) -> GraspResult:
        started = time.perf_counter()
        try:
            for phase in (self._initialise, self._squeeze, self._lift, self._evaluate):
                t0 = time.perf_counter()
                done = phase()
                self.result.phase_wall_time[phase.__name__.strip("_")] = time.perf_counter() - t0
                if done:
                    break
        except StepFailed as exc:
            self._fail("solver", exc.reason)
        self.result.wall_time = time.perf_counter() - started
        return self.result

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
            for _ in range(MAX_REFINEMENTS + 1):
                closed = min(self.jaws.closed + increment, max_closing)
                stats = self._step(self.jaws.drivers(closed=closed))
                forces, psi = self._pad_forces(stats), self._pad_energies(stats)
                level = self._close_level(forces, psi)
                if level <= OVERSHOOT or not all(t or f > 0.0 for t, f in zip(touched, forces)):
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
        for _ in range(int(round(p.hold_time / p.dt))):
            self._step(self.jaws.drivers())
        return False

    def _evaluate(self) -> bool:
        p, sim = self.params, self.sim
        check = HoldCheck(object_height=self._object_height(),
                          pad_object=tuple(sim.body_distance(pad, OBJECT, p.contact_tol) for pad in PADS),
                          pad_pad=sim.body_distance(PADS[0], PADS[1], 2 * sim.dhat))
        success, reason = judge_hold(check, p.contact_tol, sim.dhat)
        self.result.success, self.result.reason = success, reason
        self.result.failure_mode = None if success else "slip"
        return True

    # ---------------------------------------------------------------------------------- helpers
    def _step(self, drivers):
        stats = self.sim.step(drivers)
        r = self.result
        r.steps += 1
        r.newton_iterations += stats.newton_iterations
        r.min_distance = min(r.min_distance, stats.min_distance)
        if self.record_frames:
            r.frames.append(self.frame())
        if self.progress:
            self.progress(self.sim.state.time)
        return stats

    def _counters(self):
        r = self.result
        return r.steps, r.newton_iterations, r.min_distance, len(r.frames)

    def _restore_counters(self, counters):
        r = self.result
        r.steps, r.newton_iterations, r.min_distance, n_frames = counters
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
        r.object_translation = max(r.object_translation, float(np.linalg.norm(pose[:3, 3] - start_pose[:3, 3])))
        relative = pose[:3, :3] @ start_pose[:3, :3].T
        angle = float(np.arccos(np.clip((np.trace(relative) - 1) / 2, -1.0, 1.0)))
        r.object_rotation = max(r.object_rotation, angle)

    def _pushed_out(self) -> str:
        p, r = self.params, self.result
        if r.object_translation > p.pushed_out_translation:
            return f"object moved {r.object_translation * 1e3:.1f} mm during the squeeze"
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

