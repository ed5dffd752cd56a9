"""The IPC engine as a grasp backend (`grasp.backend`): the object as an affine body resting on
the ground, each jaw a Neo-Hookean pad whose back face is glued to a kinematic backing plate,
both driven by the jaw's tooltip pose. With SimParams.finger_stiffness the backing and the pad's
back face of each jaw ride on a compliant mount (`engine.mounts`): the finger bends as a
cantilever along its closing direction, u = F / k at the tooltip under a steady load F there,
and the pad tilts with the bending shape. With SimParams.contact_model "penalty" the same scene runs
the engine's penalty (BLEM) contact instead of the barrier: the penalty baseline."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine import collisions as contact
from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground, KinematicBody
from ipcgrasp.engine.mounts import CompliantMount
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings, StepFailed
from ipcgrasp.grasp.backend import Backend, BackendFailed, StepReport
from ipcgrasp.interrupts import reraise_interrupt
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import CONTACTS_PER_PAD, FINGER_EFFECTIVE_MASS, STATIC_SPEED_FACTOR, SimParams
from ipcgrasp.grasp.stability import contact_average, contact_point_forces, contact_points

OBJECT, PADS, BACKINGS = "object", ("pad0", "pad1"), ("backing0", "backing1")
FINGERS = ("finger0", "finger1")


def build_scene(obj: GraspObject, object_pose, tooltip_poses, gripper: Gripper, params: SimParams) -> Simulation:
    """The engine scene for one trial (object placed, jaws at `tooltip_poses` (2, 4, 4))."""
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
    settings = params.solver_settings(newton_force_tolerance=balance_force(params, props.mass),
                                      contact_force_scale=params.close_force / CONTACTS_PER_PAD)
    friction = scene_friction(params.mu, params.mu_ground)
    return Simulation(bodies, poses=poses, ground=Ground(mu=params.mu_ground), friction=friction,
                      default_friction=params.mu, ignore_pairs=[(PADS[0], BACKINGS[0]), (PADS[1], BACKINGS[1])],
                      settings=settings, mounts=finger_mounts(tooltip_poses, params, gripper, pad.nodes, backing.vertices))


def balance_force(params: SimParams, mass: float) -> float | None:
    """The net force (N) Newton may leave unbalanced on an object of `mass` (kg):
    params.balance_tolerance times its weight under the solver's gravity (None: no such test)."""
    if params.balance_tolerance is None:
        return None
    return params.balance_tolerance * mass * float(np.linalg.norm(SolverSettings.gravity))


def scene_friction(mu: float, mu_ground: float) -> dict:
    """The scene's friction coefficients per body pair: the pads on the object `mu`, the object on
    the ground `mu_ground` (every other pair, e.g. pad on pad, takes `mu` as the default)."""
    return {(OBJECT, PADS[0]): mu, (OBJECT, PADS[1]): mu, (OBJECT, "ground"): mu_ground}


def cantilever_shape(along, length: float) -> np.ndarray:
    """Bending shape phi of a cantilever finger clamped `length` (m) behind its tooltip, loaded at
    the tooltip: the deflection of points `along` (m, tooltip-frame x: along the finger, toward
    its tip) per metre of tooltip deflection. Euler-Bernoulli, phi(s) = (3 s^2 L - s^3) / (2 L^3)
    at s = L + along from the clamp (phi = 1 at the tooltip, 0 at the clamp); beyond the load
    point the finger carries no moment and stays straight, phi = 1 + 1.5 along / L: a tooltip
    deflection u tilts the tip by 1.5 u / L (rad)."""
    s = np.clip(length + np.asarray(along, dtype=np.float64), 0.0, None)
    bent = (3.0 * s * s * length - s ** 3) / (2.0 * length ** 3)
    straight = 1.0 + 1.5 * (s - length) / length
    return np.where(s <= length, bent, straight)


def finger_mounts(tooltip_poses, params: SimParams, gripper: Gripper, pad_nodes, backing_vertices) -> list:
    """One compliant mount per jaw carrying its pad's back face and its backing along the jaw's
    closing direction (the tooltip frame's z axis) with the bending shape of a cantilever of the
    gripper's bending_length (pad nodes and backing vertices in the tooltip frame), or none for
    rigid fingers."""
    if params.finger_stiffness is None:
        return []
    length = gripper.bending_length
    if length is None:
        raise ValueError(f"finger_stiffness needs the gripper's finger length: gripper {gripper.name!r} has no "
                         "bending_length; fix: add bending_length (m, clamp to tooltip) to its description "
                         "(docs/grippers.md) or leave finger_stiffness unset (rigid fingers)")
    shapes = {"pad": cantilever_shape(pad_nodes[:, 0], length),
              "backing": cantilever_shape(backing_vertices[:, 0], length)}
    return [CompliantMount(FINGERS[i], (PADS[i], BACKINGS[i]), np.asarray(tooltip_poses[i])[:3, 2],
                           params.finger_stiffness, FINGER_EFFECTIVE_MASS,
                           shapes={PADS[i]: shapes["pad"], BACKINGS[i]: shapes["backing"]}) for i in range(2)]


def _vertex_slots(coll, x):
    """Each collision's vertex indices (padding slots 0), their positions (K, 4, 3) and validity."""
    valid = coll.vertices >= 0
    vertices = np.where(valid, coll.vertices, 0)
    return vertices, np.where(valid[:, :, None], x[vertices], 0.0), valid


def point_contacts(sim: Simulation, body: str, other: str) -> tuple[np.ndarray, np.ndarray]:
    """Point contacts between `body` and `other` in the simulation's current configuration
    (`Simulation.contacts_between`), each as the midpoint of its closest points and the unit
    normal pointing from `other` into `body` (stability.contact_points). Returns points (K, 3) m
    and normals (K, 3)."""
    coll, x = sim.contacts_between(body, [other])
    mesh = sim.mesh
    forces = contact.contact_forces(coll, mesh, x, sim.dhat, 1.0)  # directions and weights only
    vertices, positions, valid = _vertex_slots(coll, x)
    return contact_points(positions, forces, valid & (mesh.vertex_body[vertices] == sim.index[body]))


def pad_contact_forces(sim: Simulation, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pads' point contacts on the object: points (K, 3) m, the barrier's normal force of each
    on the object (K, 3) N (kappa / dt^2 times the barrier gradient, as the engine's StepStats, dt
    (s) the length of the step that led here;
    NaN under penalty contact, whose forces act on clusters, not on these pairs, and before the
    first step) and the pad of each (K,) (0 or 1)."""
    coll, x = sim.contacts_between(OBJECT, PADS)
    mesh = sim.mesh
    known = sim.settings.contact_model == "ipc" and sim.barrier_stiffness is not None  # None: before a step
    scale = sim.barrier_stiffness / dt ** 2 if known else 1.0
    forces = contact.contact_forces(coll, mesh, x, sim.dhat, scale)
    vertices, positions, valid = _vertex_slots(coll, x)
    bodies = np.where(valid, mesh.vertex_body[vertices], -1)
    points, pads, on_object = [], [], []
    for i, pad in enumerate(PADS):
        rows = np.any(bodies == sim.index[pad], axis=1)
        p, f = contact_point_forces(positions[rows], forces[rows], bodies[rows] == sim.index[OBJECT])
        points.append(p), on_object.append(f), pads.append(np.full(len(p), i, dtype=np.int64))
    forces = np.concatenate(on_object)
    return np.concatenate(points), forces if known else np.full_like(forces, np.nan), np.concatenate(pads)


class IpcBackend(Backend):
    """The engine's scene of one trial; `stats` is the engine's StepStats of the last step."""

    has_strain_energy = True

    def __init__(self, obj: GraspObject, object_pose, tooltip_poses, params: SimParams, gripper: Gripper):
        self.sim = build_scene(obj, object_pose, tooltip_poses, gripper, params)
        self._mu_ground = params.mu_ground
        self.start = np.array(tooltip_poses, dtype=np.float64)
        self.dt = params.dt
        self.approach_distance = self.sim.dhat
        self._index = [self.sim.index[name] for name in (OBJECT, *PADS)]
        self._backings = [self.sim.index[name] for name in BACKINGS]
        self._base_mass = self.sim.bodies[self._index[0]].mass
        self._mass = self._base_mass
        self._jaws = (0.0, 0.0)  # (closed, lifted) (m) after the last step
        self.stats = None
        self._step_length = self.dt  # s, of the last step (half of dt when it was retried in two halves)

    def tooltip_poses(self, closed: float, lifted: float) -> np.ndarray:
        """The jaws' tooltip poses (2, 4, 4) moved `closed` along their closing directions and
        `lifted` up."""
        poses = self.start.copy()
        for i in range(2):
            poses[i, :3, 3] += closed * poses[i, :3, 2]
            poses[i, 2, 3] += lifted
        return poses

    def _drivers(self, closed: float, lifted: float) -> dict:
        poses = self.tooltip_poses(closed, lifted)
        return {PADS[0]: poses[0], PADS[1]: poses[1], BACKINGS[0]: poses[0], BACKINGS[1]: poses[1]}

    def step(self, closed: float, lifted: float, give_up=None, coarse_rounds: bool = False) -> StepReport | None:
        """One step; a step Newton cannot solve (e.g. a squeezed pad springing back as the object
        leaves it) is retried once as two half steps, the jaws half way at the first. give_up is
        asked after each of the engine's drive-and-settle rounds that leave the jaws short, which
        coarse_rounds settles to the engine's COARSE_ROUND_TOLERANCE (not in the half steps)."""
        o, p0, p1 = self._index

        def engine_give_up(contact_force, strain_energy, driver_lag):
            return give_up(tuple(float(np.linalg.norm(contact_force[o, p])) for p in (p0, p1)),
                           tuple(strain_energy[pad] for pad in PADS), self._jaw_forces(contact_force), driver_lag)

        try:
            s = self.sim.step(self._drivers(closed, lifted), give_up=None if give_up is None else engine_give_up,
                              coarse_rounds=coarse_rounds)
            if s is None:
                return None
            self.stats = s
        except StepFailed as exc:
            reraise_interrupt(exc)  # an interrupt the engine took for a failed step
            (closed0, lifted0), half = self._jaws, 0.5 * self.dt
            try:
                first = self.sim.step(self._drivers(0.5 * (closed0 + closed), 0.5 * (lifted0 + lifted)), dt=half)
                s = self.stats = self.sim.step(self._drivers(closed, lifted), dt=half)
            except StepFailed as again:
                reraise_interrupt(again)
                self.sim.restore(exc.state)
                raise BackendFailed(f"{exc.reason} (and again in two half steps: {again.reason})") from exc
            s.newton_iterations += first.newton_iterations
            s.newton_converged = s.newton_converged and first.newton_converged
            self._step_length = half
        else:
            self._step_length = self.dt
        self._jaws = (closed, lifted)
        ground = len(self.sim.bodies)  # the ground's index in the engine's force tables
        return StepReport(time=s.time,
                          pad_forces=tuple(float(np.linalg.norm(s.contact_force[o, p])) for p in (p0, p1)),
                          pad_energies=tuple(s.strain_energy[pad] for pad in PADS),
                          pads_touch=bool(np.any(s.contact_force[p0, p1] != 0.0)), jaw_lag=s.driver_lag,
                          pad_frictions=tuple(float(np.linalg.norm(s.friction_force[o, p])) for p in (p0, p1)),
                          ground_reaction=tuple(s.contact_force[o, ground] + s.friction_force[o, ground]),
                          n_contacts=s.n_contacts,
                          newton_iterations=s.newton_iterations, newton_converged=s.newton_converged,
                          min_distance=s.min_distance, max_penetration=s.max_penetration,
                          max_force_gap=s.max_force_gap, jaw_forces=self._jaw_forces(s.contact_force))

    def _jaw_forces(self, contact_force) -> tuple:
        """Each jaw's normal force on the object (N): its pad's and backing plate's together."""
        o = self._index[0]
        return tuple(float(np.linalg.norm(contact_force[o, p] + contact_force[o, b]))
                     for p, b in zip(self._index[1:], self._backings))

    @property
    def newton_iterations_run(self) -> int:
        return self.sim.newton_iterations_run

    def set_pad_friction(self, mu: float) -> None:
        self.sim.set_friction(scene_friction(mu, self._mu_ground), default_friction=mu)

    def save(self):
        return self.sim.state.copy(), self.sim.barrier_stiffness, self._jaws

    def restore(self, snapshot) -> None:
        state, kappa, self._jaws = snapshot
        self.sim.restore(state)
        self.sim.barrier_stiffness = kappa

    def object_pose(self) -> np.ndarray:
        return self.sim.affine_pose(OBJECT)

    def object_vertices(self) -> np.ndarray:
        return self.sim.vertices(OBJECT)

    def pad_object_distance(self, pad: int, cutoff: float) -> float:
        return self.sim.body_distance(PADS[pad], OBJECT, cutoff)

    def pad_pad_distance(self, cutoff: float) -> float:
        return self.sim.body_distance(PADS[0], PADS[1], cutoff)

    def finger_deflections(self) -> tuple:
        if not self.sim.mounts:
            return super().finger_deflections()
        return tuple(self.sim.mount_deflection(name) for name in FINGERS)

    def object_centre(self) -> np.ndarray:
        pose = self.object_pose()
        return pose[:3, :3] @ self.sim.bodies[self._index[0]].center_of_mass + pose[:3, 3]

    def pads_centre(self) -> np.ndarray:
        return np.mean([self.sim.vertices(pad).mean(axis=0) for pad in PADS], axis=0)

    def set_object_mass(self, mass: float) -> None:
        self.sim.set_mass_scale(OBJECT, mass / self._base_mass)
        self._mass = float(mass)

    @property
    def object_mass(self) -> float:
        return self._mass

    @property
    def static_speed(self) -> float:
        return STATIC_SPEED_FACTOR * self.sim.settings.eps_v

    def hold_signals(self, report: StepReport):
        o = self._index[0]
        signals = []
        for pad, j in zip(PADS, self._index[1:]):
            position, normal = contact_average(*point_contacts(self.sim, OBJECT, pad))
            signals.append((self.stats.contact_force[o, j] + self.stats.friction_force[o, j], position, normal))
        return signals

    def pad_contacts(self):
        o, p0, p1 = self._index
        if self.stats is not None and not np.any(self.stats.contact_force[o, [p0, p1]]):
            return super().pad_contacts()  # no pad pushes the object: no pair within dhat
        return pad_contact_forces(self.sim, self._step_length)

    def frame(self) -> dict:
        """The bodies' vertices and, under "contacts", the pads' point contacts on the object (the
        renderer draws them)."""
        contacts = pad_contact_forces(self.sim, self._step_length)[0]
        return {"time": self.sim.state.time, **{b.name: self.sim.vertices(b.name) for b in self.sim.bodies},
                "contacts": contacts}

    def faces(self) -> dict:
        return {b.name: b.faces for b in self.sim.bodies}
