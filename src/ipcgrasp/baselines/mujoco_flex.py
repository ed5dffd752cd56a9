"""MuJoCo penalty FEM grasp model: the role Isaac Gym with FleX played in Kim et al.,
IPC-GraspSim (Table 4.2) -- a widely used engine with soft pads and penalty-type contact.

What is modelled
----------------
- The object: a free rigid body (mass, centre of mass and inertia from `GraspObject.properties`)
  with the object mesh as its collision geom, placed by `grasp.scene.place_scene` (lowest point
  1 mm above the ground plane z = 0).
- Each jaw: a rigid backing plate (`Gripper.backing_mesh`, a box) and a 3-D MuJoCo flex pad
  (`flexcomp`, dof="full": every node has its own 3 translational dofs) of 6 x 5 x 3 nodes along
  the tooltip x, y, z axes (22 x 16 x 2.4 mm, the simulated pad), 6 tetrahedra per grid cell,
  linear elastic (MuJoCo's flex elasticity: Young's modulus `params.E`, Poisson ratio
  `params.nu`, mass `params.density` x pad volume). For the rounded jaw the nodes at x > 0 are
  mapped radially from the half-square onto the half-disc of the outline (`geometry.pads`), so
  the pad has the simulated footprint; the rectangular jaw keeps the grid. Flex elements are
  inflated by `PAD_RADIUS` for collision and the nodes inset by it, so the inflated surface is
  the pad's. The 30 back-face nodes are held on the backing by stiff equality constraints
  (`PIN_SOLREF`).
- The gripper: both backings hang from a lift body (slide joint along world z); each backing
  starts at its jaw's tooltip pose (`Gripper.tooltip_poses` of the perturbed grasp, the same
  tooltip transforms as the simulator) on a slide joint along its closing direction. Three
  position actuators (`JAW_STIFFNESS`, critically damped) drive the joints; the gripper bodies
  are gravity-compensated.
- The procedure is the simulator's (`grasp.procedure`, through `MujocoBackend`): the grasp
  perturbed with the trial seed, the jaws opened clear of the object and closed to the narrowest
  clear opening, settling, the squeeze under the force close rule (each pad's measured normal
  force on the object, the norm of the resultant of its contacts' normal forces, reaches
  `params.close_force`), the lift, the hold and the same judgement and failure labels as every
  dynamic model. Distances for the judgement are exact between the pads' surfaces (less the flex
  radius) and the object mesh (`grasp.scene.mesh_distance`). "solver" means MuJoCo reported an
  unstable step. The contact-stability metrics are not measured (NaN). A trajectory
  (record="trajectory") has the pads' normal forces, the jaw lag, the object's pose and the number
  of MuJoCo contacts; friction forces, strain energies, the ground reaction, per-contact points
  and forces, the minimum distance and Newton iterations are NaN / inf / 0 (not reported).
- Settings (`MujocoSettings`, keyword arguments of `predict`): integrator "discrete", solver
  Newton, elliptic friction cones, condim 3; contact stiffness and damping in MuJoCo's direct
  form, solref = (-stiffness, -damping) (the default time-constant form lets the pads sink
  millimetres into the object); the pair margin (contacts act from that distance on, with gap 0:
  the force field); the time step. MuJoCo takes the larger friction coefficient of a pair, so the
  pads carry `params.mu`, the ground `params.mu_ground` and the object 0.
- Recorded per trial (`Prediction.info`): penetration_pad / penetration_ground, the largest
  interpenetration depth (largest negative contact distance) of pad-object and object-ground
  contacts over the trial, and max_penetration of both; force_gap, the largest positive contact
  distance at which a normal force above `FORCE_FLOOR` acted on the object (the force field,
  up to the margin); close_forces, each pad's force when the close rule fired; failure_mode,
  reason, lift_height, openings, steps, metric_warnings (below), wall_time and the settings.
  `sweep` runs a stiffness x margin grid over a list of trials (e.g. the training grasps).

Departures from the paper's Isaac Gym setup
-------------------------------------------
- MuJoCo instead of Isaac Gym/FleX: FleX's corotational FEM pads with particle-based contact
  become MuJoCo's linear-elastic flex with soft-constraint contacts, on a coarse 6 x 5 x 3 node
  grid (the pad is 2.4 mm thick) rather than FleX's tet mesh; MuJoCo runs on one CPU core.
- The jaws are servoed through position actuators on joints (a 1e5 N/m servo in series with the
  pad) rather than moved kinematically, and the close rule reads contact forces, not Psi.
- The object collides as the convex hull of its mesh (MuJoCo's mesh geoms), so the study's
  non-convex objects lose their concavities; the cube is exact.
- No explicit object-pad "rest offset" as in FleX: the only distance artifacts are MuJoCo's
  penetration and the margin.

Known MuJoCo caveats (mujoco 3.17)
----------------------------------
- Flex elasticity runs only under integrator="discrete": the implicit integrators refuse it and
  the explicit ones would need microsecond steps at E = 1e8 Pa.
- Under "discrete" a flex pinned to a moving body ("general attachment") requires solver CG,
  and there it went unstable at the first pad contact; pinning to a mocap body is refused. The
  pads are therefore free flexes in the world whose back faces are held on the backings by
  equality constraints, which Newton accepts. For such a floating stiff pad MuJoCo warns every
  step that the effective-metric (M + h^2 K) solve is under-converged ("Flex stiffness is too
  ill-conditioned ..."); the count is reported as info["metric_warnings"]. The steps stay
  stable and the squeeze forces balance to the close force.
- The reduced dof="trilinear" pad jitters and misreports contact force, dof="quadratic" produced
  NaNs; neither is offered.
- Contact forces are soft-constraint forces: they flicker from step to step and scale with the
  contact's effective mass, so the direct-form stiffness is not a spring constant in N/m. A
  stiff setting (1e9) can kick the light cube out of the grasp at dt = 1e-3 (reported as
  "pushed_out"); a margin wider than the 1 mm opening clearance pushes the object before the
  jaws move.
- MuJoCo prints a compile warning per pad ("flex ... is not rigid and has no equality
  constraints or passive forces"): its elasticity is applied in the solver, not as a passive
  force, so the warning does not apply.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from dataclasses import asdict, dataclass, replace

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.engine.tetmesh import boundary_faces
from ipcgrasp.geometry.pads import (
    PAD_HALF_WIDTH,
    PAD_KINDS,
    PAD_RECT_LENGTH,
    PAD_SCALE,
    PAD_THICKNESS,
    pad_surface,
)
from ipcgrasp.grasp.backend import Backend, BackendFailed, StepReport
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import STATIC_SPEED_FACTOR
from ipcgrasp.grasp.scene import mesh_distance
from ipcgrasp.grasp.simulate import simulate_grasp

__all__ = [
    "GRID_COUNT",
    "MujocoBackend",
    "MujocoSettings",
    "build_model",
    "pad_grid",
    "predict",
    "sweep",
]

GRID_COUNT = (6, 5, 3)
"""Pad nodes along the tooltip x (length), y (width) and z (thickness) axes."""
PAD_RADIUS = 1e-4
"""Collision radius of the flex elements (m); the nodes are inset by it."""
JAW_STIFFNESS = 1e5
"""Position gain of each jaw's and the lift's actuator (N/m), critically damped."""
JAW_MASS = 0.1
"""Mass of each backing (kg)."""
LIFT_MASS = 1.0
"""Mass of the lift body carrying both jaws (kg)."""
PIN_SOLREF = (-1e10, -1e5)
"""Direct-form solref of the equality constraints that hold each back-face node on its backing."""
FORCE_FLOOR = 1e-4
"""Smallest contact normal force (N) counted as acting, for the force-field gap."""
APPROACH_DISTANCE = 1e-4
"""Distance scale of contact (m) the grasp procedure slows the jaws to near contact: one jaw step
at 1 ms is 12.5 um, so the first steps after contact keep the closing speed."""

# collision bits: a pair collides when contype of one meets conaffinity of the other
_OBJECT, _GROUND, _PAD0, _PAD1, _BACKING = 1, 2, 4, 8, 16


@dataclass(frozen=True)
class MujocoSettings:
    """MuJoCo settings of one run (keyword arguments of `predict`).

    stiffness, damping: direct-form contact solref = (-stiffness, -damping) of every contact
        (MuJoCo's reference acceleration -damping v - stiffness r, per unit effective mass:
        1/s^2 and 1/s); margin: distance (m) below which contacts are generated and act (with
        gap 0 a contact force pushes from `margin` on); dt: time step (s).
    """

    stiffness: float = 1e8
    damping: float = 1e4
    margin: float = 0.0
    dt: float = 1e-3

    def __post_init__(self):
        for name in ("stiffness", "damping", "margin", "dt"):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, float(value))
            except (TypeError, ValueError):
                raise ValueError(f"mujoco_flex setting {name} must be a number, got {value!r}") from None
        for name in ("stiffness", "damping"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"mujoco_flex setting {name} must be positive and finite, got {value!r} (the "
                                 "magnitudes of the direct-form solref, e.g. stiffness=1e8, damping=1e4)")
        if not (math.isfinite(self.margin) and self.margin >= 0.0):
            raise ValueError(f"mujoco_flex setting margin must be a non-negative distance (m), "
                             f"got {self.margin!r}")
        if not 1e-4 <= self.dt <= 5e-3:
            raise ValueError(f"mujoco_flex setting dt must lie in [1e-4, 5e-3] s (1e-3 to 2e-3 is tested), "
                             f"got {self.dt!r}")


_log = logging.getLogger(__name__)


def _log_warning(message: str) -> None:
    _log.debug("mujoco: %s", message)


# MuJoCo's default warning handler prints and appends to MUJOCO_LOG.TXT in the working directory.
mujoco.set_mju_user_warning(_log_warning)


def pad_grid(jaw: str = "rounded", count=GRID_COUNT, radius: float = PAD_RADIUS):
    """The pad's nodes in the tooltip frame and its tetrahedra: (points (n, 3) m, tets (T, 4),
    back-face node indices). Nodes span the pad's box inset by `radius`, x-major then y then z
    (z index 0 is the back face); for jaw "rounded" the nodes at x > 0 are mapped radially from the
    half-square onto the half-disc of the outline. Each grid cell is split into 6 tetrahedra
    around its main diagonal, all positively oriented."""
    if jaw not in PAD_KINDS:
        raise ValueError(f"unknown jaw {jaw!r}; expected one of {PAD_KINDS}")
    nx, ny, nz = count
    if min(count) < 2:
        raise ValueError(f"the pad grid needs at least 2 nodes per axis, got {count}")
    half = PAD_HALF_WIDTH * PAD_SCALE - radius
    x = np.linspace(-PAD_RECT_LENGTH * PAD_SCALE + radius, half, nx)
    y = np.linspace(-half, half, ny)
    z = np.linspace(-PAD_THICKNESS * PAD_SCALE, -radius, nz)
    points = np.stack(np.meshgrid(x, y, z, indexing="ij"), axis=-1).reshape(-1, 3)
    if jaw == "rounded":
        tip = points[:, 0] > 0.0
        px, py = points[tip, 0], points[tip, 1]
        scale = np.maximum(px, np.abs(py)) / np.hypot(px, py)
        points[tip, 0] *= scale
        points[tip, 1] *= scale
    index = np.arange(nx * ny * nz).reshape(nx, ny, nz)
    corner = index[:-1, :-1, :-1].ravel()
    step = np.array([ny * nz, nz, 1])
    tets = []
    for order in itertools.permutations(range(3)):
        path = np.cumsum([np.zeros(3, dtype=int)] + [np.eye(3, dtype=int)[a] for a in order], axis=0)
        tets.append(corner[:, None] + path @ step)
    tets = np.vstack(tets)
    a, b, c, d = (points[tets[:, k]] for k in range(4))
    negative = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) < 0.0
    tets[negative] = tets[negative][:, [1, 0, 2, 3]]
    return points, tets, index[:, :, 0].ravel()


def _quat(rotation) -> str:
    x, y, z, w = Rotation.from_matrix(rotation).as_quat()
    return f"{w:.17g} {x:.17g} {y:.17g} {z:.17g}"


def _vec(values) -> str:
    return " ".join(f"{v:.17g}" for v in np.ravel(values))


def build_model(obj, object_pose, tooltip_poses, params, settings: MujocoSettings,
                gripper: Gripper) -> mujoco.MjModel:
    """The MuJoCo model of one trial: the object at `object_pose` (4x4, m), the jaws' backings at
    `tooltip_poses` (2, 4, 4) (joint positions 0 there), pads from `params` (E, nu, density, mu,
    jaw) with their back faces held on the backings, ground friction `params.mu_ground`,
    contacts from `settings`."""
    props = obj.properties
    points, tets, back = pad_grid(params.jaw)
    pad_mass = params.density * pad_surface(params.jaw).volume
    # MuJoCo adds the margins of a pair's two sides: each side gets half the pair margin
    contact = (f'solref="{-settings.stiffness:.17g} {-settings.damping:.17g}" '
               f'margin="{settings.margin / 2:.17g}" gap="0"')
    lo, hi = gripper.backing_mesh().bounds
    backings, pads, pins = [], [], []
    for i, pose in enumerate(tooltip_poses):
        own, other = (_PAD0, _PAD1) if i == 0 else (_PAD1, _PAD0)
        backings.append(f"""
      <body name="backing{i}" pos="{_vec(pose[:3, 3])}" quat="{_quat(pose[:3, :3])}" gravcomp="1">
        <joint name="jaw{i}" type="slide" axis="0 0 1"/>
        <inertial pos="0 0 0" mass="{JAW_MASS}" diaginertia="1e-4 1e-4 1e-4"/>
        <geom name="backing{i}" type="box" pos="{_vec((lo + hi) / 2)}" size="{_vec((hi - lo) / 2)}"
              contype="{_BACKING}" conaffinity="{_GROUND}" friction="{params.mu:.17g} 0 0" {contact}/>
      </body>""")
        pads.append(f"""
    <flexcomp name="pad{i}" type="direct" dim="3" dof="full" radius="{PAD_RADIUS}" mass="{pad_mass:.17g}"
              point="{_vec(points @ pose[:3, :3].T + pose[:3, 3])}" element="{' '.join(map(str, tets.ravel()))}">
      <elasticity young="{params.E:.17g}" poisson="{params.nu:.17g}" damping="0"/>
      <contact {contact} friction="{params.mu:.17g}" condim="3" selfcollide="none"
               contype="{own}" conaffinity="{_GROUND | other}"/>
    </flexcomp>""")
        pins.extend(f'\n    <connect body1="pad{i}_{k}" body2="backing{i}" anchor="0 0 0" '
                    f'solref="{_vec(PIN_SOLREF)}"/>' for k in back)
    mesh = obj.mesh
    xml = f"""
<mujoco model="ipcgrasp_mujoco_flex">
  <option timestep="{settings.dt:.17g}" integrator="discrete" solver="Newton" cone="elliptic"/>
  <asset>
    <mesh name="object" vertex="{_vec(mesh.vertices)}" face="{' '.join(map(str, np.ravel(mesh.faces)))}"/>
  </asset>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" contype="{_GROUND}" conaffinity="0"
          friction="{params.mu_ground:.17g} 0 0" {contact}/>
    <body name="object" pos="{_vec(object_pose[:3, 3])}" quat="{_quat(object_pose[:3, :3])}">
      <freejoint/>
      <inertial pos="{_vec(props.center_of_mass)}" mass="{props.mass:.17g}"
                fullinertia="{_vec(props.inertia[[0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]])}"/>
      <geom name="object" type="mesh" mesh="object" friction="0 0 0" condim="3"
            contype="{_OBJECT}" conaffinity="{_GROUND | _PAD0 | _PAD1 | _BACKING}" {contact}/>
    </body>
    <body name="lift" gravcomp="1">
      <joint name="lift" type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="{LIFT_MASS}" diaginertia="1e-3 1e-3 1e-3"/>{''.join(backings)}
    </body>{''.join(pads)}
  </worldbody>
  <equality>{''.join(pins)}
  </equality>
  <actuator>
    <position name="jaw0" joint="jaw0" kp="{JAW_STIFFNESS}" dampratio="1"/>
    <position name="jaw1" joint="jaw1" kp="{JAW_STIFFNESS}" dampratio="1"/>
    <position name="lift" joint="lift" kp="{JAW_STIFFNESS}" dampratio="1"/>
  </actuator>
</mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def require_rigid_fingers(params) -> None:
    """Raise ValueError when params ask for compliant fingers, which this model does not have."""
    if params.finger_stiffness is not None:
        raise ValueError(f"SimParams.finger_stiffness = {params.finger_stiffness} N/m: the MuJoCo baseline has "
                         "rigid fingers only; fix: leave finger_stiffness None (rigid) for mujoco_flex")


class MujocoBackend(Backend):
    """One trial's MuJoCo model as a grasp backend (`grasp.backend`): the jaws' slide joints and
    the lift joint follow the procedure through their position actuators. `artifacts` collects
    the contact artifacts of every step (module docstring)."""

    has_strain_energy = False

    def __init__(self, obj, object_pose, tooltip_poses, params, gripper: Gripper, settings: MujocoSettings):
        require_rigid_fingers(params)
        self.obj, self.params, self.settings = obj, params, settings
        self.model = build_model(obj, object_pose, tooltip_poses, params, settings, gripper)
        self.data = mujoco.MjData(self.model)
        self.dt = settings.dt
        self.approach_distance = APPROACH_DISTANCE
        self._static_speed = STATIC_SPEED_FACTOR * params.eps_v
        self.artifacts = {"penetration_pad": 0.0, "penetration_ground": 0.0, "force_gap": 0.0}
        self._index()
        mujoco.mj_forward(self.model, self.data)
        self._spec = mujoco.mjtState.mjSTATE_INTEGRATION
        self._state = np.empty(mujoco.mj_stateSize(self.model, self._spec))

    def _index(self):
        m = self.model
        self.object_body = m.body("object").id
        self.object_geom = m.geom("object").id
        self.ground_geom = m.geom("ground").id
        self.pad_flex = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_FLEX, f"pad{i}") for i in range(2)]
        self.backing_bodies = [m.body(f"backing{i}").id for i in range(2)]
        self.jaw_actuators = [m.actuator(f"jaw{i}").id for i in range(2)]
        self.jaw_qpos = [m.jnt_qposadr[m.joint(f"jaw{i}").id] for i in range(2)]
        self.lift_actuator = m.actuator("lift").id
        adr, num = m.flex_vertadr, m.flex_vertnum
        self.pad_vertices = [np.arange(adr[f], adr[f] + num[f]) for f in self.pad_flex]
        points, tets, _ = pad_grid(self.params.jaw)
        self.pad_faces = boundary_faces(tets, points)
        self.base_mass = float(m.body_mass[self.object_body])
        self.base_inertia = m.body_inertia[self.object_body].copy()

    def step(self, closed: float, lifted: float, give_up=None, coarse_rounds: bool = False) -> StepReport:
        d = self.data
        d.ctrl[self.jaw_actuators] = closed
        d.ctrl[self.lift_actuator] = lifted
        mujoco.mj_step(self.model, d)
        if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number or not np.all(np.isfinite(d.qpos)):
            raise BackendFailed(f"MuJoCo went unstable at t = {d.time:.3f} s")
        normals, pads_touch = self._record_contacts()
        lag = max(closed - float(d.qpos[q]) for q in self.jaw_qpos)  # the servo behind its target
        return StepReport(time=float(d.time), pad_forces=tuple(float(np.linalg.norm(f)) for f in normals),
                          pads_touch=pads_touch, jaw_lag=max(lag, 0.0), n_contacts=int(self.data.ncon),
                          max_penetration=max(self.artifacts["penetration_pad"], self.artifacts["penetration_ground"]),
                          max_force_gap=self.artifacts["force_gap"])

    def _record_contacts(self):
        """Each pad's normal-force resultant on the object (N) and whether the pads touch; the
        step's artifacts are folded into `artifacts`."""
        d, n = self.data, self.data.ncon
        normals = [np.zeros(3), np.zeros(3)]
        if n == 0:
            return normals, False
        contact = d.contact
        geom, flex, dist = contact.geom[:n], contact.flex[:n], contact.dist[:n]
        address = contact.efc_address[:n]
        normal_force = np.where(address >= 0, d.efc_force[np.maximum(address, 0)], 0.0)
        with_object = np.any(geom == self.object_geom, axis=1)
        acting = with_object & (normal_force > FORCE_FLOOR)
        a = self.artifacts
        if np.any(acting):
            a["force_gap"] = max(a["force_gap"], float(dist[acting].max()))
        ground = with_object & np.any(geom == self.ground_geom, axis=1)
        if np.any(ground):
            a["penetration_ground"] = max(a["penetration_ground"], float(-dist[ground].min()))
        frames = contact.frame[:n, :3]
        for i, f in enumerate(self.pad_flex):
            pad = with_object & np.any(flex == f, axis=1)
            if np.any(pad):
                a["penetration_pad"] = max(a["penetration_pad"], float(-dist[pad].min()))
                # orient every normal along the pad's closing direction before summing
                closing = d.xmat[self.backing_bodies[i]].reshape(3, 3)[:, 2]
                oriented = frames[pad] * np.where(frames[pad] @ closing < 0.0, -1.0, 1.0)[:, None]
                normals[i] = normal_force[pad] @ oriented
        f0, f1 = self.pad_flex
        pads_touch = bool(np.any(((flex[:, 0] == f0) & (flex[:, 1] == f1)) | ((flex[:, 0] == f1) & (flex[:, 1] == f0))))
        return normals, pads_touch

    def save(self):
        mujoco.mj_getState(self.model, self.data, self._state, self._spec)
        return self._state.copy(), dict(self.artifacts)

    def restore(self, snapshot) -> None:
        state, artifacts = snapshot
        mujoco.mj_setState(self.model, self.data, state, self._spec)
        mujoco.mj_forward(self.model, self.data)
        self.artifacts = dict(artifacts)

    def object_pose(self) -> np.ndarray:
        pose = np.eye(4)
        pose[:3, :3] = self.data.xmat[self.object_body].reshape(3, 3)
        pose[:3, 3] = self.data.xpos[self.object_body]
        return pose

    def object_vertices(self) -> np.ndarray:
        pose = self.object_pose()
        return np.asarray(self.obj.mesh.vertices) @ pose[:3, :3].T + pose[:3, 3]

    def _pad_surface(self, i: int):
        return self.data.flexvert_xpos[self.pad_vertices[i]].copy(), self.pad_faces

    def pad_object_distance(self, pad: int, cutoff: float) -> float:
        faces = np.asarray(self.obj.mesh.faces, dtype=np.int64)
        d = mesh_distance(*self._pad_surface(pad), self.object_vertices(), faces, cutoff + PAD_RADIUS)
        d = max(d - PAD_RADIUS, 0.0)  # the flex surface is inflated by its radius
        return d if d <= cutoff else math.inf

    def pad_pad_distance(self, cutoff: float) -> float:
        d = max(mesh_distance(*self._pad_surface(0), *self._pad_surface(1), cutoff + 2 * PAD_RADIUS)
                - 2 * PAD_RADIUS, 0.0)
        return d if d <= cutoff else math.inf

    def object_centre(self) -> np.ndarray:
        return self.data.xipos[self.object_body].copy()

    def pads_centre(self) -> np.ndarray:
        return np.mean([self.data.flexvert_xpos[v].mean(axis=0) for v in self.pad_vertices], axis=0)

    def set_object_mass(self, mass: float) -> None:
        scale = mass / self.base_mass
        self.model.body_mass[self.object_body] = mass
        self.model.body_inertia[self.object_body] = scale * self.base_inertia

    @property
    def object_mass(self) -> float:
        return float(self.model.body_mass[self.object_body])

    @property
    def static_speed(self) -> float:
        return self._static_speed

    def frame(self) -> dict:
        return {"time": float(self.data.time), "object": self.object_vertices(),
                **{f"pad{i}": self._pad_surface(i)[0] for i in range(2)}}

    def faces(self) -> dict:
        return {"object": np.asarray(self.obj.mesh.faces), "pad0": self.pad_faces, "pad1": self.pad_faces}


def predict(obj, object_pose, grasp_pose, params, seed, **mujoco_settings) -> Prediction:
    """MuJoCo flex-pad verdict on one trial (`interface.Prediction`, score nan): the grasp
    perturbed with `seed`, then the grasp procedure (`grasp.procedure`) on a `MujocoBackend`
    under the force close rule (MuJoCo's flex has no strain energy to read). `mujoco_settings`
    are `MujocoSettings` fields (stiffness, damping, margin, dt)."""
    require_rigid_fingers(params)
    started = time.perf_counter()
    try:
        settings = MujocoSettings(**mujoco_settings)
    except TypeError:
        known = ", ".join(MujocoSettings.__dataclass_fields__)
        raise TypeError(f"unknown mujoco_flex setting among {sorted(mujoco_settings)}; known: {known}") from None
    built = []

    def backend(*args):
        built.append(MujocoBackend(*args, settings=settings))
        return built[-1]

    result = simulate_grasp(obj, object_pose, grasp_pose, replace(params, close_rule="force"), seed,
                            gripper=Gripper.yumi(params.jaw), backend=backend)
    runtime = time.perf_counter() - started
    artifacts = built[0].artifacts if built else {"penetration_pad": 0.0, "penetration_ground": 0.0, "force_gap": 0.0}
    warnings = int(built[0].data.warning[mujoco.mjtWarning.mjWARN_INERTIA].number) if built else 0
    info = {"failure_mode": result.failure_mode, "reason": result.reason,
            "close_forces": tuple(float(f) for f in result.close_forces),
            "start_opening": result.start_opening, "close_opening": result.close_opening,
            "lift_height": result.lift_height, **artifacts,
            "max_penetration": max(artifacts["penetration_pad"], artifacts["penetration_ground"]),
            "steps": result.steps, "sim_time": float(built[0].data.time) if built else 0.0,
            "metric_warnings": warnings, **asdict(settings), "wall_time": runtime}
    return Prediction(bool(result.success), math.nan, runtime, info)


def sweep(obj, trials, params, stiffness=(1e7, 1e8, 1e9), margin=(0.0, 5e-4, 1e-3), damping_ratio: float = 0.5,
          **mujoco_settings) -> list[dict]:
    """Run `predict` on every trial for every stiffness x margin setting (the study picks one
    setting on the training grasps): `trials` an iterable of (object_pose, grasp_pose, seed),
    e.g. the training grasps with `grasp.perturbation.trial_seed`. The damping of each stiffness
    k is 2 `damping_ratio` sqrt(k) unless `mujoco_settings` fixes it; other `MujocoSettings`
    fields come from `mujoco_settings`. Returns one row per setting and trial: the settings,
    trial index, success, runtime (s) and the `Prediction.info` numbers."""
    if not (math.isfinite(damping_ratio) and damping_ratio > 0.0):
        raise ValueError(f"damping_ratio must be positive, got {damping_ratio!r}")
    trials = list(trials)
    rows = []
    for k, b in itertools.product(stiffness, margin):
        settings = {"damping": 2.0 * damping_ratio * math.sqrt(k), **mujoco_settings, "stiffness": k, "margin": b}
        for index, (object_pose, grasp_pose, seed) in enumerate(trials):
            prediction = predict(obj, object_pose, grasp_pose, params, seed, **settings)
            rows.append({**prediction.info, "trial": index, "success": prediction.success,
                         "runtime": prediction.runtime})
    return rows
