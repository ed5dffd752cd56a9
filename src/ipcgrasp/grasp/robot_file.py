"""A gripper description read from a robot file, MJCF or URDF, through MuJoCo's own parser
(docs/grippers.md, "From MJCF or URDF").

`read_robot_file(path, options, given)` returns the keys of a description (docs/grippers.md, "Keys")
measured on the model: the two finger bodies, their pad boxes (the tooltip frames, pad outline
and backing plate), the opening at the open and closed ends (the stroke), the actuator's force
range turned into a pad force (the force limit) and the finger box around the fingers' meshes.
`options` are the robot keys of a description YAML that names the file (`robot:`): `fingers`
(two body names) and `pad_thickness` (m). Every error is a GripperDescriptionError naming the
file, the element and the fix, raised before any simulation starts. mujoco is imported here
only, when a robot file is read.

Units: m, N (a hinge actuator's range in N m); frames as docs/grippers.md: the gripper frame is
the model's world frame turned about its z axis so that x is the closing axis (finger 0 at -x).
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path

import numpy as np

ROBOT_SUFFIXES = (".xml", ".mjcf", ".urdf")
"""File name endings read as robot files (MJCF: .xml, .mjcf; URDF: .urdf)."""
ROBOT_KEYS = ("robot", "fingers", "pad_thickness")
"""Keys of a description YAML that only the robot file reading uses."""
PARALLEL = 0.999
"""|cos| above which a box axis counts as parallel to the closing axis (about 2.6 degrees)."""
COPLANAR = 1e-4
"""Pad boxes whose front faces lie within this distance (m) form one pad."""
REST_STEPS = 5000
"""Simulation steps (contacts and gravity off) allowed for a linkage to settle at a control end."""
REST_SPEED = 1e-6
"""Largest joint speed (m/s or rad/s) at which a linkage counts as settled."""


class RobotFileError(ValueError):
    """The robot file cannot be mapped to a gripper description; the message names the file, the
    element and the fix (description.py turns it into a GripperDescriptionError)."""


PAD_THICKNESS = 0.003
"""Silicone thickness (m) when pad_thickness is not given: the description schema's default."""


def read_robot_file(path: Path, options: dict, given: set[str]) -> dict:
    """The description keys measured on the robot file `path` (MJCF or URDF): name, source,
    description, stroke, force_limit (unless in `given`, the keys the user's YAML sets),
    tooltips, pads, default_pad, backing, finger, bending_length. `options`: the YAML's
    `fingers` and `pad_thickness`. Cached per file version (a study loads a description many
    times); the caller gets its own copy."""
    fingers = options.get("fingers")
    if fingers is not None and not (isinstance(fingers, list) and len(fingers) == 2
                                    and all(isinstance(name, str) for name in fingers)):
        raise RobotFileError(f"{path}: fingers: {fingers!r} is not two body names; fix: fingers: [left_body, "
                             "right_body], the bodies carrying each finger's pad box")
    thickness = options.get("pad_thickness", PAD_THICKNESS)
    if isinstance(thickness, bool) or not (isinstance(thickness, (int, float)) and 0.0 < thickness <= 0.05):
        raise RobotFileError(f"{path}: pad_thickness: {thickness!r} is not in (0, 0.05] m; fix: give the silicone "
                             "thickness in metres")
    data = _measured(str(path), path.stat().st_mtime_ns, tuple(fingers) if fingers else None, float(thickness),
                     frozenset(given))
    return copy.deepcopy(data)


@functools.cache
def _measured(path: str, mtime_ns: int, fingers: tuple[str, str] | None, pad_thickness: float,
              given: frozenset) -> dict:
    return _Mapping(_model(Path(path)), Path(path), fingers, pad_thickness).description(set(given))


def _model(path: Path):
    import mujoco  # a heavy import: only when a robot file is read

    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        raise RobotFileError(f"{path}: MuJoCo cannot read it as MJCF or URDF: {str(exc).strip()}; fix: give a "
                             "robot file MuJoCo loads (mujoco.MjModel.from_xml_path), meshes next to it as its "
                             "meshdir says, or a description YAML (docs/grippers.md)") from None


class _Mapping:
    """One robot model measured as a gripper (see the module docstring)."""

    def __init__(self, model, path: Path, fingers: tuple[str, str] | None, pad_thickness: float):
        import mujoco

        self.mj, self.model, self.path, self.pad_thickness = mujoco, model, path, pad_thickness
        self.data = mujoco.MjData(model)
        self.bodies, self.joints = self._fingers(fingers)

    def fail(self, element: str, message: str, fix: str):
        raise RobotFileError(f"{self.path}: {element}: {message}; fix: {fix}")

    def description(self, given: set[str]) -> dict:
        open_pose, closed_pose = self._ends()
        self._pose(open_pose)
        self.pad_geoms = [self._pad_geoms(i) for i in range(2)]
        pads = [self._pad(i) for i in range(2)]
        axis = pads[1]["centre"] - pads[0]["centre"]
        axis /= np.linalg.norm(axis)
        if pads[0]["normal"] @ axis < PARALLEL or pads[1]["normal"] @ axis > -PARALLEL:
            self.fail(f"body {self.bodies[0]!r}", "its pad box does not face the other finger's",
                      "name the two finger bodies whose pad boxes face each other (fingers:)")
        approach = np.array([0.0, 0.0, 1.0]) - axis[2] * axis
        if np.linalg.norm(approach) < 0.1:
            self.fail("worldbody", "the fingers close along the model's z axis", "turn the gripper in the file so "
                      "that its fingers point along z (the approach) and close across it")
        approach /= np.linalg.norm(approach)
        gap = float((pads[1]["front"] - pads[0]["front"]) @ axis)
        frames, outline = self._tooltips(pads, axis, approach, gap)
        name = re.sub(r"[^a-z0-9_]", "_", self.path.stem.lower()).strip("_")[:40] or "robot"
        d = {"name": name if name[0].isalnum() else "r" + name[:39],
             "source": f"{self.path.name} read by MuJoCo {self.mj.__version__} (docs/grippers.md)"[:120],
             "stroke": gap, "tooltips": frames, "pads": self._pads(outline), "default_pad": "rectangular",
             "backing": {"x_min": outline["x_min"], "x_max": outline["x_max"], "width": outline["width"],
                         "thickness": outline["depth"] - self.pad_thickness, "gap": 0.0}}
        tooltip = np.column_stack([approach, np.cross(axis, approach), axis])  # world <- jaw 0's tooltip
        finger, bending = self._finger_box(tooltip, pads[0]["front"], outline["depth"])
        if finger is not None:
            d["finger"] = {"box": finger}
        if bending is not None:
            d["bending_length"] = bending
        if "force_limit" not in given:
            d["force_limit"] = self._force_limit(open_pose, closed_pose, axis)
        self._pose(closed_pose)
        rise = float((self._pad(0)["centre"] - pads[0]["centre"]) @ approach)
        d["description"] = (f"Read from {self.path.name}: fingers {' and '.join(self._body_names(self.bodies))}, pad faces "
                            f"{gap * 1e3:.1f} mm apart when open; the fingertips move {rise * 1e3:+.1f} mm along the "
                            f"approach from open to closed (here they close along a straight line).")
        return d

    # -- the fingers and their two end poses ------------------------------------------------------
    def _fingers(self, names):
        m, mj = self.model, self.mj
        if names is not None:
            ids = []
            for name in names:
                body = mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, name)
                if body < 0:
                    self.fail(f"fingers: {name}", "no body of that name", f"name two of its bodies "
                              f"({', '.join(self._body_names(range(1, m.nbody)))}); MuJoCo merges URDF links on "
                              "fixed joints into their parent")
                ids.append(body)
            slides = [self._slide(body) for body in ids]
            return ids, (slides if None not in slides and slides[0] != slides[1] else None)
        slides = [j for j in range(m.njnt) if m.jnt_type[j] == mj.mjtJoint.mjJNT_SLIDE]
        if len(slides) != 2:
            self.fail('joint type="slide" (URDF: prismatic)', f"the model has {len(slides)} slide joints, not two",
                      "name the two finger bodies carrying the pad boxes in a description YAML: robot: FILE, "
                      "fingers: [left, right] (docs/grippers.md, \"From MJCF or URDF\")")
        return [int(m.jnt_bodyid[j]) for j in slides], slides

    def _body_names(self, ids) -> list[str]:
        return [self.mj.mj_id2name(self.model, self.mj.mjtObj.mjOBJ_BODY, b) or f"#{b}" for b in ids]

    def _slide(self, body: int) -> int | None:
        """The slide joint that moves `body` (on it or on a parent), or None."""
        m = self.model
        while body > 0:
            for j in range(m.body_jntadr[body], m.body_jntadr[body] + m.body_jntnum[body]):
                if m.jnt_type[j] == self.mj.mjtJoint.mjJNT_SLIDE:
                    return j
            body = int(m.body_parentid[body])
        return None

    def _ends(self) -> tuple[np.ndarray, np.ndarray]:
        """qpos at the open and the closed end: the slide joints' range ends, or for a linkage the
        rest pose at each end of the actuator's ctrlrange (contacts and gravity off). The open end
        is the one with the finger bodies farther apart."""
        m, mj = self.model, self.mj
        if self.joints is not None:
            poses = []
            for end in (0, 1):
                qpos = m.qpos0.copy()
                for j in self.joints:
                    if not m.jnt_limited[j]:
                        self.fail(f"joint {mj.mj_id2name(m, mj.mjtObj.mjOBJ_JOINT, j)!r}", "has no range",
                                  "give the slide joint its travel: range=\"min max\" (URDF: <limit lower upper>)")
                    qpos[m.jnt_qposadr[j]] = m.jnt_range[j, end]
                poses.append(qpos)
        else:
            actuator = self._actuator()
            if not m.actuator_ctrllimited[actuator]:
                self.fail(f"actuator {self._name(actuator)!r}", "has no ctrlrange", "give it ctrlrange=\"min max\"")
            poses = [self._rest(actuator, ctrl) for ctrl in m.actuator_ctrlrange[actuator]]
        spans = []
        for qpos in poses:
            self._pose(qpos)
            spans.append(np.linalg.norm(self.data.xpos[self.bodies[1]] - self.data.xpos[self.bodies[0]]))
        if abs(spans[0] - spans[1]) < 1e-6:
            self.fail(f"bodies {', '.join(self._body_names(self.bodies))}", "do not move apart between the ends "
                      "of their joints' range", "name the finger bodies that the gripper's joints move (fingers:)")
        return (poses[0], poses[1]) if spans[0] > spans[1] else (poses[1], poses[0])

    def _rest(self, actuator: int, ctrl: float) -> np.ndarray:
        m, d, mj = self.model, self.data, self.mj
        flags = m.opt.disableflags
        m.opt.disableflags = flags | mj.mjtDisableBit.mjDSBL_CONTACT | mj.mjtDisableBit.mjDSBL_GRAVITY
        try:
            mj.mj_resetData(m, d)
            d.ctrl[actuator] = ctrl
            for _ in range(REST_STEPS):
                mj.mj_step(m, d)
                if np.abs(d.qvel).max(initial=0.0) < REST_SPEED:
                    return d.qpos.copy()
        finally:
            m.opt.disableflags = flags
        self.fail(f"actuator {self._name(actuator)!r}", f"the linkage does not come to rest at ctrl {ctrl:g} within "
                  f"{REST_STEPS} steps", "check the model's equality constraints and damping, or describe the "
                  "gripper in YAML")

    def _pose(self, qpos: np.ndarray) -> None:
        self.data.qpos[:] = qpos
        self.mj.mj_forward(self.model, self.data)

    def _actuator(self) -> int:
        if self.model.nu != 1:
            self.fail("actuator", f"the model has {self.model.nu} actuators, not one that closes both fingers",
                      "keep the one gripper actuator in the file, or give force_limit: and slide joints")
        return 0

    def _name(self, actuator: int) -> str:
        return self.mj.mj_id2name(self.model, self.mj.mjtObj.mjOBJ_ACTUATOR, actuator) or f"#{actuator}"

    # -- pads, tooltips, finger -------------------------------------------------------------------
    def _pad_geoms(self, i: int) -> list[tuple[int, int, float]]:
        """Finger i's pad (open pose): (geom, box axis, sign) of the largest collision box on the
        finger body whose face looks at the other finger, with the boxes sharing its front plane."""
        m, d, mj = self.model, self.data, self.mj
        body = self.bodies[i]
        towards = d.xpos[self.bodies[1 - i]] - d.xpos[body]
        towards /= np.linalg.norm(towards)
        faces = []
        for g in range(m.ngeom):
            if (m.geom_bodyid[g] != body or m.geom_type[g] != mj.mjtGeom.mjGEOM_BOX
                    or not (m.geom_contype[g] or m.geom_conaffinity[g])):
                continue
            rotation, size = d.geom_xmat[g].reshape(3, 3), m.geom_size[g]
            k = int(np.argmax(np.abs(rotation.T @ towards)))
            sign = float(np.sign(rotation[:, k] @ towards))
            front = float(d.geom_xpos[g] @ (sign * rotation[:, k]) + size[k])
            faces.append((g, k, sign, front, float(np.prod(np.delete(2.0 * size, k)))))
        if not faces:
            self.fail(f"body {self._body_names([body])[0]!r}", "carries no collision box (the pad geometry)",
                      "add a box geom for the pad to that body, or name the bodies that carry them (fingers:)")
        best = max(faces, key=lambda face: face[4])
        return [(g, k, sign) for g, k, sign, front, _ in faces
                if k == best[1] and sign == best[2] and abs(front - best[3]) < COPLANAR]

    def _pad(self, i: int) -> dict:
        """Finger i's pad boxes in the current pose (world, m): their corners, the front face's
        normal (towards the other finger), its centre `front`, the boxes' `centre` and depth."""
        m, d = self.model, self.data
        unit = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        points, normal, depth = [], None, np.inf
        for g, k, sign in self.pad_geoms[i]:
            rotation, size = d.geom_xmat[g].reshape(3, 3), m.geom_size[g]
            points.append(d.geom_xpos[g] + (unit * size) @ rotation.T)
            normal = sign * rotation[:, k]
            depth = min(depth, 2.0 * size[k])
        points = np.concatenate(points)
        centre = 0.5 * (points.min(0) + points.max(0))
        front = centre + ((points @ normal).max() - centre @ normal) * normal
        return {"points": points, "normal": normal, "front": front, "centre": centre, "depth": float(depth)}

    def _tooltips(self, pads, axis, approach, gap):
        """Tooltip frames (jaws closed, docs/grippers.md) and the pad outline in the tooltip frame."""
        gripper = np.column_stack([axis, np.cross(approach, axis), approach])  # world <- gripper rotation
        frames, extents = [], []
        for i, pad in enumerate(pads):
            z = axis if i == 0 else -axis
            rotation = np.column_stack([approach, np.cross(z, approach), z])  # world <- tooltip
            origin = pad["front"] + (0.5 * gap) * z
            local = (pad["points"] - pad["front"]) @ rotation
            extents.append((local[:, 0].min(), local[:, 0].max(), 2.0 * np.abs(local[:, 1]).max()))
            frames.append({"rotation": (gripper.T @ rotation).round(12).tolist(),
                           "translation": (gripper.T @ origin).round(9).tolist()})
        outline = {"x_min": float(min(e[0] for e in extents)), "x_max": float(max(e[1] for e in extents)),
                   "width": float(max(e[2] for e in extents)), "depth": min(pad["depth"] for pad in pads)}
        if outline["depth"] <= self.pad_thickness:
            self.fail(f"body {self._body_names([self.bodies[0]])[0]!r}", f"its pad box is {outline['depth'] * 1e3:.3g}"
                      f" mm deep, not deeper than the silicone ({self.pad_thickness * 1e3:.3g} mm)",
                      "give a thinner pad_thickness:")
        return frames, outline

    def _pads(self, outline) -> dict:
        pad = {key: outline[key] for key in ("x_min", "x_max", "width")} | {"thickness": self.pad_thickness}
        variants = {"rectangular": {"outline": "rectangular", **pad}}
        if outline["x_max"] - outline["x_min"] >= 0.5 * outline["width"]:
            variants["rounded"] = {"outline": "rounded", **pad}
        return variants

    def _finger_box(self, rotation: np.ndarray, front: np.ndarray, depth: float):
        """Finger 0's box around its collision meshes behind the pad box (`rotation`: world <-
        tooltip, `front`: the pad face centre, open pose; None without such meshes), and the bending length from the joint that moves the
        pad's link to the tooltip (None if not positive). The link: the finger body and its
        parents up to the first one with a joint."""
        m, d, mj = self.model, self.data, self.mj
        chain = [self.bodies[0]]
        while m.body_jntnum[chain[-1]] == 0 and m.body_parentid[chain[-1]] > 0:
            chain.append(int(m.body_parentid[chain[-1]]))
        bending = None
        if m.body_jntnum[chain[-1]]:
            reach = float((front - d.xanchor[m.body_jntadr[chain[-1]]]) @ rotation[:, 0])
            bending = reach if reach > 0.0 else None
        points = []
        for g in range(m.ngeom):
            if (m.geom_bodyid[g] not in chain or m.geom_type[g] != mj.mjtGeom.mjGEOM_MESH
                    or not (m.geom_contype[g] or m.geom_conaffinity[g])):
                continue
            mesh = m.geom_dataid[g]
            vertices = m.mesh_vert[m.mesh_vertadr[mesh]:m.mesh_vertadr[mesh] + m.mesh_vertnum[mesh]]
            points.append(d.geom_xpos[g] + vertices @ d.geom_xmat[g].reshape(3, 3).T)
        behind = (np.concatenate(points) - front) @ rotation if points else np.empty((0, 3))
        behind = behind[behind[:, 2] < -depth]
        if len(behind) == 0:
            return None, bending
        return ({"x_min": float(behind[:, 0].min()), "x_max": float(behind[:, 0].max()),
                 "width": float(2.0 * np.abs(behind[:, 1]).max()), "depth": float(-depth - behind[:, 2].min())},
                bending)

    # -- force ------------------------------------------------------------------------------------
    def _force_limit(self, open_pose, closed_pose, axis) -> float:
        """Pad force (N) at the drive's force limit: the finger joints' own force range (URDF
        effort) for slide fingers, else by virtual work over the travel, the actuator's
        forcerange (or ctrlrange x gain of a plain motor) x its length change / opening change."""
        m, mj = self.model, self.mj
        if self.joints is not None and all(m.jnt_actfrclimited[j] for j in self.joints):
            return float(min(np.abs(m.jnt_actfrcrange[j]).max() for j in self.joints))
        if m.nu == 0:
            self.fail("actuator", "the model has no actuator and its finger joints no force range",
                      "add an actuator with forcerange=\"-F F\", a joint actuatorfrcrange (URDF: <limit effort>) or "
                      "give force_limit: in a description YAML with robot: FILE")
        actuator = self._actuator()
        if m.actuator_forcelimited[actuator]:
            force = float(np.abs(m.actuator_forcerange[actuator]).max())
        elif (m.actuator_gaintype[actuator] == mj.mjtGain.mjGAIN_FIXED
              and m.actuator_biastype[actuator] == mj.mjtBias.mjBIAS_NONE and m.actuator_ctrllimited[actuator]):
            force = float(np.abs(m.actuator_ctrlrange[actuator]).max() * abs(m.actuator_gainprm[actuator, 0]))
        else:
            self.fail(f"actuator {self._name(actuator)!r}", "has no forcerange (a servo's force is not bounded "
                      "by its ctrlrange)", "add forcerange=\"-F F\" to it, or give force_limit: in a description "
                      "YAML with robot: FILE")
        lengths, gaps = [], []
        for qpos in (open_pose, closed_pose):
            self._pose(qpos)
            lengths.append(float(self.data.actuator_length[actuator]))
            gaps.append(float((self._pad(1)["centre"] - self._pad(0)["centre"]) @ axis))
        self._pose(open_pose)
        return force * abs(lengths[0] - lengths[1]) / abs(gaps[0] - gaps[1])
