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
- The controller is the simulator's (`grasp.controller`): the grasp perturbed with the trial
  seed (`contacts.perturbed_grasp`), the jaws opened to 1 mm clearance
  (`Gripper.clearance_opening`, up to 10 mm beyond the widest; "no_close" otherwise) and closed
  to the narrowest clear opening, 60 ms of settling, both jaw targets advanced symmetrically at
  the closing speed until each pad's measured normal force on the object (the norm of the
  resultant of its contacts' normal forces) reaches `params.close_force`, then the lift target
  raised at `params.lift_speed` until the object's lowest point is `params.lift_height` up (at
  most 5 mm more), then `params.hold_time` of holding. Squeeze failures as the simulator's
  (pushed out beyond `params.pushed_out_translation` / `_rotation`, pads meeting, jaws closed
  fully, time out). The hold is judged by `grasp.outcome.judge_hold`: object clear of the ground
  by `params.contact_tol`, both pads within `params.contact_tol` of the object (exact distance
  between the pads' surfaces and the object mesh, `grasp.scene.mesh_distance`), pads apart.
  Failure modes are `grasp.outcome.FAILURE_MODES`; "solver" means MuJoCo reported an unstable
  step.
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
from dataclasses import asdict, dataclass

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ipcgrasp.baselines.contacts import perturbed_grasp
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
from ipcgrasp.grasp.controller import CLEARANCE, MAX_EXTRA_OPENING, SETTLE_TIME
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.outcome import HoldCheck, judge_hold
from ipcgrasp.grasp.scene import mesh_distance, place_scene

__all__ = [
    "GRID_COUNT",
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
MAX_EXTRA_LIFT = 5e-3
"""How far beyond `lift_height` the lift may go waiting for the object (m), as the simulator."""

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


class _Trial:
    """One trial in MuJoCo: the simulator's phases (settle, squeeze, lift, hold, judge) and the
    contact artifacts recorded at every step."""

    def __init__(self, obj, object_pose, grasp_pose, params, settings: MujocoSettings, gripper: Gripper):
        self.obj, self.params, self.settings, self.gripper = obj, params, settings, gripper
        self.object_pose, self.grasp_pose = place_scene(obj.mesh, object_pose, grasp_pose)
        self.info = {"failure_mode": None, "reason": "", "close_forces": (math.nan, math.nan),
                     "start_opening": math.nan, "close_opening": math.nan, "lift_height": 0.0,
                     "penetration_pad": 0.0, "penetration_ground": 0.0, "force_gap": 0.0,
                     "steps": 0, "sim_time": 0.0, "metric_warnings": 0}
        self.success = False

    # ------------------------------------------------------------------------------ phases
    def run(self) -> tuple[bool, dict]:
        """Run the trial: (success, info)."""
        self._run()
        if hasattr(self, "data"):
            self.info["metric_warnings"] = int(self.data.warning[mujoco.mjtWarning.mjWARN_INERTIA].number)
        self.info["max_penetration"] = max(self.info["penetration_pad"], self.info["penetration_ground"])
        return self.success, self.info

    def _run(self) -> bool:
        world_mesh = self.obj.mesh.copy().apply_transform(self.object_pose)
        clearance = self.gripper.clearance_opening(self.grasp_pose, world_mesh, clearance=CLEARANCE,
                                                   max_extra=MAX_EXTRA_OPENING)
        if not clearance.clear:
            return self._fail("no_close", "the jaws cannot open wide enough to clear the object")
        p = self.params
        self.closing_speed = p.closing_speed or self.gripper.closing_speed(clearance.opening)
        start = self.gripper.narrowest_opening(self.grasp_pose, world_mesh, clearance.opening,
                                               clearance=CLEARANCE)
        self.info["start_opening"] = start.opening
        self.tooltip_poses = self.gripper.tooltip_poses(self.grasp_pose, start.opening)
        self.model = build_model(self.obj, self.object_pose, self.tooltip_poses, p, self.settings, self.gripper)
        self.data = mujoco.MjData(self.model)
        self._index()
        mujoco.mj_forward(self.model, self.data)
        for _ in range(int(round(SETTLE_TIME / self.settings.dt))):
            if self._step():
                return True
        return self._squeeze() or self._lift() or self._judge()

    def _squeeze(self) -> bool:
        p, dt = self.params, self.settings.dt
        start = self._object_pose()
        max_closing = 0.5 * self.info["start_opening"]
        time_limit = self.data.time + p.close_duration + max_closing / self.closing_speed
        touched = [False, False]
        closed = 0.0
        while True:
            closed = min(closed + self.closing_speed * dt, max_closing)
            self.data.ctrl[self.jaw_actuators] = closed
            if self._step():
                return True
            forces = self._pad_forces()
            touched = [t or f > FORCE_FLOOR for t, f in zip(touched, forces)]
            if min(forces) >= p.close_force:
                self.info["close_forces"] = tuple(forces)
                self.info["close_opening"] = self.info["start_opening"] - 2.0 * closed
                return False
            if self.pads_touch:
                mode = "miss" if not any(touched) else ("pushed_out" if not all(touched) else "jaws_meet")
                return self._fail(mode, "the pads met without the close rule firing")
            moved, turned = _pose_change(start, self._object_pose())
            if moved > p.pushed_out_translation:
                return self._fail("pushed_out", f"object moved {moved * 1e3:.1f} mm during the squeeze")
            if turned > p.pushed_out_rotation:
                return self._fail("pushed_out", f"object turned {math.degrees(turned):.0f} degrees during the "
                                                "squeeze")
            if closed >= max_closing:
                return self._fail("miss" if not any(touched) else "no_close",
                                  "the jaws closed fully without the close rule firing")
            if self.data.time > time_limit:
                return self._fail("no_close", "time ran out before the close rule fired")

    def _lift(self) -> bool:
        p, dt = self.params, self.settings.dt
        lifted, max_lift = 0.0, p.lift_height + MAX_EXTRA_LIFT
        while lifted < max_lift:
            lifted = min(lifted + p.lift_speed * dt, max_lift)
            self.data.ctrl[self.lift_actuator] = lifted
            if self._step():
                return True
            height = self._object_height()
            self.info["lift_height"] = max(self.info["lift_height"], height)
            if height >= p.lift_height:
                break
        for _ in range(int(round(p.hold_time / dt))):
            if self._step():
                return True
        return False

    def _judge(self) -> bool:
        p = self.params
        obj_vertices = self._object_vertices()
        faces = np.asarray(self.obj.mesh.faces, dtype=np.int64)
        pads = [self._pad_surface(i) for i in range(2)]
        cutoff = p.contact_tol + PAD_RADIUS
        pad_object = tuple(max(mesh_distance(v, f, obj_vertices, faces, cutoff) - PAD_RADIUS, 0.0)
                           for v, f in pads)
        pad_pad = max(mesh_distance(*pads[0], *pads[1], 4 * PAD_RADIUS) - 2 * PAD_RADIUS, 0.0)
        check = HoldCheck(object_height=self._object_height(), pad_object=pad_object, pad_pad=pad_pad)
        self.success, self.info["reason"] = judge_hold(check, p.contact_tol, 0.0)
        self.info["failure_mode"] = None if self.success else "slip"
        return True

    # ----------------------------------------------------------------------------- helpers
    def _index(self):
        m = self.model
        self.object_body = m.body("object").id
        self.object_geom = m.geom("object").id
        self.ground_geom = m.geom("ground").id
        self.pad_flex = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_FLEX, f"pad{i}") for i in range(2)]
        self.backing_bodies = [m.body(f"backing{i}").id for i in range(2)]
        self.jaw_actuators = [m.actuator(f"jaw{i}").id for i in range(2)]
        self.lift_actuator = m.actuator("lift").id
        adr, num = m.flex_vertadr, m.flex_vertnum
        self.pad_vertices = [np.arange(adr[f], adr[f] + num[f]) for f in self.pad_flex]
        points, tets, _ = pad_grid(self.params.jaw)
        self.pad_faces = boundary_faces(tets, points)
        self.pads_touch = False

    def _step(self) -> bool:
        """Advance one step and record the contacts; True when MuJoCo went unstable."""
        mujoco.mj_step(self.model, self.data)
        self.info["steps"] += 1
        self.info["sim_time"] = self.data.time
        d = self.data
        if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number or not np.all(np.isfinite(d.qpos)):
            return self._fail("solver", f"MuJoCo went unstable at t = {d.time:.3f} s")
        self._record_contacts()
        return False

    def _record_contacts(self):
        d, n = self.data, self.data.ncon
        self.pad_normals = [np.zeros(3), np.zeros(3)]
        self.pads_touch = False
        if n == 0:
            return
        contact = d.contact
        geom, flex, dist = contact.geom[:n], contact.flex[:n], contact.dist[:n]
        address = contact.efc_address[:n]
        normal_force = np.where(address >= 0, d.efc_force[np.maximum(address, 0)], 0.0)
        with_object = np.any(geom == self.object_geom, axis=1)
        acting = with_object & (normal_force > FORCE_FLOOR)
        if np.any(acting):
            self.info["force_gap"] = max(self.info["force_gap"], float(dist[acting].max()))
        ground = with_object & np.any(geom == self.ground_geom, axis=1)
        if np.any(ground):
            self.info["penetration_ground"] = max(self.info["penetration_ground"], float(-dist[ground].min()))
        normals = contact.frame[:n, :3]
        for i, f in enumerate(self.pad_flex):
            pad = with_object & np.any(flex == f, axis=1)
            if np.any(pad):
                self.info["penetration_pad"] = max(self.info["penetration_pad"], float(-dist[pad].min()))
                # orient every normal along the pad's closing direction before summing
                closing = self.data.xmat[self.backing_bodies[i]].reshape(3, 3)[:, 2]
                oriented = normals[pad] * np.where(normals[pad] @ closing < 0.0, -1.0, 1.0)[:, None]
                self.pad_normals[i] = normal_force[pad] @ oriented
        self.pads_touch = bool(np.any(np.all(np.isin(flex, self.pad_flex), axis=1) & (flex[:, 0] != flex[:, 1])))

    def _pad_forces(self) -> list[float]:
        """Each pad's normal force on the object (N): the norm of the resultant of its contacts'
        normal forces."""
        return [float(np.linalg.norm(f)) for f in self.pad_normals]

    def _object_pose(self) -> np.ndarray:
        pose = np.eye(4)
        pose[:3, :3] = self.data.xmat[self.object_body].reshape(3, 3)
        pose[:3, 3] = self.data.xpos[self.object_body]
        return pose

    def _object_vertices(self) -> np.ndarray:
        pose = self._object_pose()
        return np.asarray(self.obj.mesh.vertices) @ pose[:3, :3].T + pose[:3, 3]

    def _object_height(self) -> float:
        return float(self._object_vertices()[:, 2].min())

    def _pad_surface(self, i: int):
        return self.data.flexvert_xpos[self.pad_vertices[i]].copy(), self.pad_faces

    def _fail(self, mode: str, reason: str) -> bool:
        """Record a failure; True (the trial is over)."""
        self.success = False
        self.info["failure_mode"], self.info["reason"] = mode, reason
        return True


def _pose_change(start: np.ndarray, pose: np.ndarray) -> tuple[float, float]:
    """Translation (m) and rotation angle (rad) from pose `start` to `pose` (4x4)."""
    relative = pose[:3, :3] @ start[:3, :3].T
    angle = math.acos(float(np.clip((np.trace(relative) - 1.0) / 2.0, -1.0, 1.0)))
    return float(np.linalg.norm(pose[:3, 3] - start[:3, 3])), angle


def predict(obj, object_pose, grasp_pose, params, seed, **mujoco_settings) -> Prediction:
    """MuJoCo flex-pad verdict on one trial (`interface.Prediction`, score nan): the grasp
    perturbed with `seed`, then the simulator's controller (module docstring). `mujoco_settings`
    are `MujocoSettings` fields (stiffness, damping, margin, dt)."""
    started = time.perf_counter()
    try:
        settings = MujocoSettings(**mujoco_settings)
    except TypeError:
        known = ", ".join(MujocoSettings.__dataclass_fields__)
        raise TypeError(f"unknown mujoco_flex setting among {sorted(mujoco_settings)}; known: {known}") from None
    gripper = Gripper.yumi(params.jaw)
    trial = _Trial(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), params, settings, gripper)
    success, info = trial.run()
    runtime = time.perf_counter() - started
    info = {**info, **asdict(settings), "wall_time": runtime}
    return Prediction(bool(success), math.nan, runtime, info)


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
