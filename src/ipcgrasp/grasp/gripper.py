"""Parallel-jaw gripper: where the two jaws (compliant pad + rigid backing plate, optionally a
rigid finger) sit for a grasp pose and a jaw opening (docs/data.md), how far to open them
before a trial and how fast to close them (docs/data.md). A Gripper is built from a
description file (`Gripper.from_description`, `grasp.description`, docs/grippers.md); the YuMi
is the shipped `yumi` description.

Frames: the gripper frame is the recorded grasp pose; each jaw has a tooltip frame (x along the
gripper z axis, z the jaw's closing direction, pointing at the other jaw) in which the pad's
front face is the plane z = 0 and the pad, backing plate and finger are defined. World tooltip
pose = grasp @ T_tooltip. The jaw opening is the gap between the two pads' front faces,
(p_1 - p_0) . z_0 for tooltip origins p_i and closing direction z_0.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import numbers
import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import trimesh

from ipcgrasp.documents import DocumentError, load_yaml
from ipcgrasp.geometry import PadMesh, backing_plate, surface_sha256
from ipcgrasp.geometry.pads import PadShape
from ipcgrasp.geometry.tetra import DEFAULT_PAD_RESOLUTION, shape_pad, surface_pad
from ipcgrasp.grasp.description import (GripperDescription, GripperDescriptionError, load_description,
                                        widest_tooltip_frames)
from ipcgrasp.grasp.scene import solid_distance

RIGID_TOLERANCE = 1e-6
NANOMETRE = 1e-9
"""Margin (m) against rounding where distances are compared with a clearance."""
SCAN_SKIP = 8  # narrowest_opening: openings one distance query may prove clear at most


class GripperFormatError(ValueError):
    """A gripper description file is missing a field or holds a non-rigid tooltip transform."""


@dataclass(frozen=True, eq=False)
class MeshPad:
    """A user's own closed pad surface in the tooltip frame (front face z = 0, the pad behind it),
    from the description file `source`; tetrahedralised like the parametric pads."""

    surface: trimesh.Trimesh
    source: str

    @property
    def depth(self) -> float:
        """Pad thickness along z (m): the back face is z = -depth."""
        return float(-self.surface.bounds[0, 2])


@dataclass(frozen=True)
class BackingPlate:
    """The rigid plate behind each pad (tooltip frame, m): x in [x_min, x_max], width along y,
    `thickness` along z, its front face `gap` behind the pad's back face."""

    x_min: float
    x_max: float
    width: float
    thickness: float
    gap: float = 0.0

    def mesh(self, pad: PadShape | MeshPad) -> trimesh.Trimesh:
        """The plate as a box behind `pad` (`geometry.backing_plate`, a new mesh each call)."""
        if isinstance(pad, PadShape):
            scale, depth = pad.scale, pad.thickness
        else:
            scale, depth = 1.0, pad.depth
        return backing_plate(scale=scale, thickness=depth, gap=self.gap, x_range=(self.x_min, self.x_max),
                             half_width=0.5 * self.width, plate_thickness=self.thickness)


@dataclass(frozen=True, eq=False)
class JawPlacement:
    """One jaw placed in the world: its tooltip frame `pose` (4x4, m), the pad tet mesh and the
    backing plate, both in the tooltip frame (place them with `pose`)."""

    pose: np.ndarray
    pad: PadMesh
    backing: trimesh.Trimesh

    @property
    def closing_direction(self) -> np.ndarray:
        """Unit vector (world) along which this jaw closes: the tooltip z axis."""
        return self.pose[:3, 2].copy()

    def pad_nodes(self) -> np.ndarray:
        """World positions of the pad's tet nodes (n, 3), m."""
        return trimesh.transform_points(self.pad.nodes, self.pose)

    def backing_vertices(self) -> np.ndarray:
        """World positions of the rigid jaw's vertices (backing plate and finger), m."""
        return trimesh.transform_points(self.backing.vertices, self.pose)


@dataclass(frozen=True, eq=False)
class JawClearance:
    """Result of `Gripper.clearance_opening` or `Gripper.narrowest_opening`: the jaw `opening`
    (m) and whether both jaws (pad and backing) are at least the clearance from the object there
    (`clear`); when not, no opening tried kept the jaws far enough (the trial starts in collision)
    and `opening` is the last one tried. `distances`, each jaw's distance (m) to the object there
    (0 when inside it), is measured when first asked for: the scans only needed to know whether
    the jaws clear the object, and an uncapped distance query visits many more primitive pairs
    (about 0.1 s at the widest opening for a 1538-vertex cube)."""

    opening: float
    clear: bool
    _measure: Callable[[], tuple[float, float]] = field(repr=False)

    @functools.cached_property
    def distances(self) -> tuple[float, float]:
        return tuple(self._measure())


@dataclass(frozen=True, eq=False)
class Gripper:
    """A parallel-jaw gripper with a compliant pad on a rigid backing plate (and optionally a rigid
    finger) per jaw, usually built from a description file (`from_description`, docs/grippers.md).

    tooltip_transforms: (2, 4, 4) tooltip frames in the gripper frame at the widest opening;
        each tooltip z axis (the closing direction) points at the other tooltip, the two
        anti-parallel. pad: the pad's shape (`geometry.pads.PadShape` or a `MeshPad`), pad_kind
        its variant name; pad_resolution: target tet edge length (m); backing: the plate;
        finger: a closed surface (tooltip frame) behind the plate, or None. force_limit (N): the
        jaws stall at this pad force; closing_speeds (min, max) per jaw (m/s); lift_speed (m/s).
        bending_length: length (m) of each finger from its clamp to its tooltip, the cantilever
        of compliant fingers (SimParams.finger_stiffness); None where the description gives none.
    """

    tooltip_transforms: np.ndarray
    pad: PadShape | MeshPad
    backing: BackingPlate
    force_limit: float
    closing_speeds: tuple[float, float]
    lift_speed: float
    pad_kind: str = "rounded"
    pad_resolution: float = DEFAULT_PAD_RESOLUTION
    finger: trimesh.Trimesh | None = None
    name: str = "gripper"
    bending_length: float | None = None

    def __post_init__(self):
        transforms = np.array(self.tooltip_transforms, dtype=np.float64)
        if transforms.shape != (2, 4, 4) or not np.all(np.isfinite(transforms)):
            raise ValueError(f"tooltip_transforms must be two finite 4x4 matrices, got shape {transforms.shape}")
        for i, transform in enumerate(transforms):
            _check_rigid(transform, f"tooltip transform {i}")
        z0, z1 = transforms[:, :3, 2]
        if abs(z0 @ z1 + 1.0) > RIGID_TOLERANCE:
            raise ValueError(f"the tooltip z axes (closing directions) must be opposite, got {z0} and {z1}")
        if not (transforms[1, :3, 3] - transforms[0, :3, 3]) @ z0 > 0.0:
            raise ValueError("tooltip 0's z axis must point at tooltip 1 (the jaws close towards each other)")
        if not isinstance(self.pad, (PadShape, MeshPad)):
            raise ValueError(f"pad must be a PadShape or MeshPad, got {type(self.pad).__name__}")
        if not self.pad_resolution > 0.0:
            raise ValueError(f"pad_resolution (m) must be positive, got {self.pad_resolution}")
        low, high = self.closing_speeds
        if not (self.force_limit > 0.0 and 0.0 < low <= high and self.lift_speed > 0.0):
            raise ValueError(f"need force_limit > 0 (N), 0 < min <= max closing speed and lift_speed > 0 (m/s), got "
                             f"{self.force_limit}, {self.closing_speeds}, {self.lift_speed}")
        transforms.flags.writeable = False
        object.__setattr__(self, "tooltip_transforms", transforms)

    @classmethod
    def from_description(cls, description: str | os.PathLike | GripperDescription | None = None,
                         pad: str | None = None, pad_resolution: float = DEFAULT_PAD_RESOLUTION) -> Gripper:
        """The gripper of a description: a shipped name (`description.shipped_grippers`), a YAML
        file's path, a loaded GripperDescription, or None for the YuMi. `pad` picks the pad
        variant (None: the description's default_pad). Raises GripperDescriptionError naming the
        file, the key and the fix."""
        if not isinstance(description, GripperDescription):
            description = load_description(description)
        d = description.data
        pad = d["default_pad"] if pad is None else pad
        if pad not in d["pads"]:
            raise GripperDescriptionError(f"{description.path}: gripper {d['name']!r} has no pad {pad!r}; fix: choose "
                                          f"one of its pads ({', '.join(d['pads'])}) with jaw / --jaw")
        widest = widest_tooltip_frames(d)
        spec = d["pads"][pad]
        if spec["outline"] == "mesh":
            shape = MeshPad(_description_mesh(description, spec["mesh"], spec["scale"]), spec["mesh"])
        else:
            shape = PadShape(spec["outline"], spec["x_min"], spec["x_max"], spec["width"], spec["thickness"],
                             spec["scale"], spec["arc_segments"])
        b = d["backing"]
        backing = BackingPlate(b["x_min"], b["x_max"], b["width"], b["thickness"], b["gap"])
        finger = _finger_mesh(description, backing.mesh(shape)) if "finger" in d else None
        return cls(widest, shape, backing, float(d["force_limit"]),
                   (float(d["closing_speed"]["min"]), float(d["closing_speed"]["max"])), float(d["lift_speed"]),
                   pad, pad_resolution, finger, d["name"], d.get("bending_length"))

    @classmethod
    def yumi(cls, pad_kind: str = "rounded", pad_resolution: float = DEFAULT_PAD_RESOLUTION) -> Gripper:
        """The ABB YuMi with the study's silicone pads (the shipped `yumi` description)."""
        return cls.from_description("yumi", pad_kind, pad_resolution)

    @staticmethod
    def read_tooltip_yaml(path: str | os.PathLike) -> np.ndarray:
        """The tooltip transforms (2, 4, 4; gripper frame, widest opening) of a REACH
        ParallelJawGripper file (`yumi_meshes/yumi_metal_spline.yaml`: params.tooltip_poses[i].
        params.rotation (3x3) and .translation (m), tooltip frame to gripper frame)."""
        try:
            config = load_yaml(path)
        except DocumentError as exc:
            raise GripperFormatError(str(exc)) from None
        try:
            poses = config["params"]["tooltip_poses"]
            transforms = np.tile(np.eye(4), (len(poses), 1, 1))
            for transform, pose in zip(transforms, poses):
                transform[:3, :3] = np.array(pose["params"]["rotation"], dtype=np.float64)
                transform[:3, 3] = np.array(pose["params"]["translation"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise GripperFormatError(f"{path}: expected params.tooltip_poses, a list of two entries with "
                                     f"params.rotation (3x3) and params.translation (3), m ({exc!r})") from None
        if transforms.shape != (2, 4, 4):
            raise GripperFormatError(f"{path}: expected two tooltip_poses, got {len(transforms)}")
        for i, transform in enumerate(transforms):
            try:
                _check_rigid(transform, f"tooltip transform {i}")
            except ValueError as exc:
                raise GripperFormatError(f"{path}: {exc}") from None
        return transforms

    @property
    def max_opening(self) -> float:
        """Jaw opening of `tooltip_transforms` (m): the widest the jaws open (YuMi: 50 mm)."""
        return self.jaw_opening(self.tooltip_transforms)

    @property
    def pad_width(self) -> float:
        """Width of the pad across the grasp (m, along the tooltip y axis)."""
        if isinstance(self.pad, PadShape):
            return self.pad.width * self.pad.scale
        return float(self.pad.surface.extents[1])

    @property
    def closing_directions(self) -> np.ndarray:
        """(2, 3) closing direction of each jaw in the gripper frame (its tooltip z axis)."""
        return self.tooltip_transforms[:, :3, 2].copy()

    def settings_sha256(self) -> str:
        """SHA-256 of everything that shapes this gripper's trials: its name, tooltip frames (m),
        pad (variant name, tet resolution in m, the outline's dimensions or a mesh pad's surface),
        backing plate (m), finger surface, force limit (N), closing and lift speeds (m/s) and
        bending length (m).

        The hash is of canonical JSON (sorted keys, no spaces, every number as a float in
        Python's shortest round-trip form, surfaces by `geometry.surface_sha256`), so it is the
        same in every process for the same description content and changes with any value above;
        a description's free text and the paths of its mesh files do not enter it.
        """
        pad = ({"outline": dataclasses.asdict(self.pad)} if isinstance(self.pad, PadShape)
               else {"mesh_sha256": surface_sha256(self.pad.surface)})
        settings = {"name": self.name, "tooltip_transforms": self.tooltip_transforms.tolist(),
                    "pad_kind": self.pad_kind, "pad_resolution": self.pad_resolution, "pad": pad,
                    "backing": dataclasses.asdict(self.backing),
                    "finger_sha256": None if self.finger is None else surface_sha256(self.finger),
                    "force_limit": self.force_limit, "closing_speeds": list(self.closing_speeds),
                    "lift_speed": self.lift_speed, "bending_length": self.bending_length}
        text = json.dumps(_floats(settings), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    @staticmethod
    def jaw_opening(tooltip_poses) -> float:
        """Gap between the pads' front faces (m): (p_1 - p_0) . z_0 for the two tooltip poses
        (4x4, same frame) with origins p_i and tooltip 0's closing direction z_0."""
        poses = np.asarray(tooltip_poses, dtype=np.float64)
        return float((poses[1, :3, 3] - poses[0, :3, 3]) @ poses[0, :3, 2])

    def top_down_grasp(self, sideways: float = 0.0, along: float = 0.0) -> np.ndarray:
        """The gripper frame (4x4, m) pointing its z down with its x along world x (the jaws close
        along world x) and the tooltips at the height of the world origin, e.g. mid-height of a
        box centred there; shifted `sideways` m along its y axis and `along` m along its x axis."""
        pose = np.eye(4)
        pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
        tooltip_depth = float(np.mean(np.asarray(self.tooltip_transforms)[:, 2, 3]))
        pose[:3, 3] = -pose[:3, :3] @ [0.0, 0.0, tooltip_depth] + sideways * pose[:3, 1] + along * pose[:3, 0]
        return pose

    def tooltip_poses(self, grasp_pose, opening: float | None = None) -> np.ndarray:
        """World poses (2, 4, 4) of both tooltips for the gripper frame `grasp_pose` (4x4, m).

        Each jaw moves (max_opening - opening) / 2 along its closing direction from the widest
        opening, so the jaws stay symmetric about the gripper frame; opening None means the widest.
        An opening above max_opening (the original study's extra opening, docs/data.md)
        moves the jaws apart beyond what the real gripper can.
        """
        grasp_pose = _grasp_pose(grasp_pose)
        transforms = np.array(self.tooltip_transforms)
        if opening is not None:
            opening = float(opening)
            if not (opening >= 0.0 and np.isfinite(opening)):
                raise ValueError(f"opening must be finite and non-negative (m), got {opening}")
            advance = 0.5 * (self.max_opening - opening)
            transforms[:, :3, 3] += advance * transforms[:, :3, 2]
        return grasp_pose @ transforms

    def lowest_point(self, tooltip_poses) -> float:
        """Height (m, world z) of the lowest point of both jaws' pads and backing plates at the
        tooltip poses (2, 4, 4)."""
        vertices, _ = self._jaw_surface
        return float(min((vertices @ pose[:3, :3].T + pose[:3, 3])[:, 2].min() for pose in tooltip_poses))

    def pad_mesh(self) -> PadMesh:
        """The pad's tet mesh in the tooltip frame (`geometry.tetra.shape_pad` or `surface_pad`,
        cached)."""
        if isinstance(self.pad, PadShape):
            return shape_pad(self.pad, self.pad_resolution)
        return self._mesh_pad

    @functools.cached_property
    def _mesh_pad(self) -> PadMesh:
        return surface_pad(self.pad.surface, "mesh", self.pad_resolution)

    def backing_mesh(self) -> trimesh.Trimesh:
        """The rigid part of a jaw in the tooltip frame: the backing plate, and the finger when the
        gripper has one (a new mesh each call; one closed surface per part)."""
        plate = self.backing.mesh(self.pad)
        if self.finger is None:
            return plate
        return trimesh.util.concatenate([plate, self.finger])

    def place_pads(self, grasp_pose, opening: float | None = None) -> tuple[JawPlacement, JawPlacement]:
        """Both jaws (pad and backing, each with its world tooltip pose) for a grasp pose and
        opening (m; None for the widest)."""
        poses = self.tooltip_poses(grasp_pose, opening)
        pad = self.pad_mesh()
        return JawPlacement(poses[0], pad, self.backing_mesh()), JawPlacement(poses[1], pad, self.backing_mesh())

    def jaw_distances(self, grasp_pose, object_vertices, object_faces, opening: float | None = None,
                      cutoff: float = np.inf) -> tuple[float, float]:
        """Distance (m) of each jaw's solids (pad and backing plate) to the object's solid, capped
        at `cutoff` and 0 when they overlap (`scene.mesh_distance`); the object is a closed
        surface in world coordinates."""
        poses = self.tooltip_poses(grasp_pose, opening)
        jaw_vertices, jaw_faces = self._jaw_surface
        object_vertices = np.asarray(object_vertices, dtype=np.float64)
        if object_vertices.ndim != 2 or object_vertices.shape[1] != 3:
            raise ValueError(f"object_vertices must be an (n, 3) array, got shape {object_vertices.shape}")
        solids = solid_distance(jaw_faces, len(jaw_vertices), object_faces, len(object_vertices))
        return tuple(solids.distance(trimesh.transform_points(jaw_vertices, pose), object_vertices, cutoff)
                     for pose in poses)

    def jaw_box_gap(self, grasp_pose, points, opening: float | None = None) -> float:
        """The gap (m) between the axis-aligned bounding box of `points` ((n, 3), world, m) and the
        nearer of the jaws' boxes (pad and backing plate) at `opening` (m; None: the widest): a
        lower bound of their distance that costs no distance query, 0 where the boxes overlap."""
        points = np.asarray(points, dtype=np.float64)
        low, high = points.min(axis=0), points.max(axis=0)
        jaw_vertices, _ = self._jaw_surface
        gaps = []
        for pose in self.tooltip_poses(grasp_pose, opening):
            jaw = trimesh.transform_points(jaw_vertices, pose)
            apart = np.maximum(np.maximum(jaw.min(axis=0) - high, low - jaw.max(axis=0)), 0.0)
            gaps.append(float(np.linalg.norm(apart)))
        return min(gaps)

    def clearance_opening(self, grasp_pose, object_mesh: trimesh.Trimesh, clearance: float = 1e-3,
                          step: float = 1e-3, max_extra: float = 0.0) -> JawClearance:
        """Open the jaws like the original study (docs/data.md): from the widest opening,
        widen in `step`s until both jaws (pads and backings) are at least `clearance` (m) from the
        object (a closed surface, world coordinates), trying openings max_opening + k step,
        k = 0, 1, ..., up to max_opening + `max_extra`.

        max_extra = 0 is the real gripper, which cannot open further: a jaw closer than
        `clearance` at the widest opening then gives a result that is not `clear` (the trial
        starts in collision). The original opened without limit.
        """
        _check_grid(clearance, step)
        if not max_extra >= 0.0:
            raise ValueError(f"max_extra (m) must be non-negative, got {max_extra}")
        vertices, faces = _closed_mesh(object_mesh)
        for k in range(int(np.floor(max_extra / step + 1e-9)) + 1):
            opening = self.max_opening + k * step
            clear = self._clear(grasp_pose, vertices, faces, opening, clearance)
            if clear:
                break
        return self._clearance(grasp_pose, vertices, faces, opening, clear)

    def narrowest_opening(self, grasp_pose, object_mesh: trimesh.Trimesh, start: float,
                          clearance: float = 1e-3, step: float = 1e-3) -> JawClearance:
        """Close the jaws from the opening `start` (m, clear of the object) in `step`s while both
        jaws stay at least `clearance` (m) from the object: the narrowest of start - k step,
        k = 0, 1, ..., reached without a jaw coming closer, and never below `clearance` (the
        pads would be closer than that to each other). Each jaw moves step / 2 per step, so with
        step < 2 clearance no part of the object can slip between two checked openings. A
        trial may start here instead of at `start` to skip closing through empty space.
        """
        _check_grid(clearance, step)
        vertices, faces = _closed_mesh(object_mesh)
        if not self._clear(grasp_pose, vertices, faces, start, clearance):
            return self._clearance(grasp_pose, vertices, faces, start, False)
        # The scan of k = 1, 2, ... skips openings proved clear: each jaw moves step / 2 per step
        # and a solid's distance changes no faster than it moves, so from an opening where the
        # jaws are d from the object the next j openings are clear while j step / 2 <= d -
        # clearance (less a nanometre against rounding). Same result, far fewer distance queries.
        # Distances beyond `reach` would only prove more openings clear at once: capping them keeps
        # the queries near the jaws (the farther, the more primitive pairs a distance visits).
        last = 0  # the scan's last candidate: start - k step >= clearance up to k = last
        while start - (last + 1) * step >= clearance:
            last += 1
        reach = clearance + 0.5 * SCAN_SKIP * step
        k, distance = 0, min(self.jaw_distances(grasp_pose, vertices, faces, start, cutoff=reach))
        while k < last:
            skip = int(np.floor(2.0 * (distance - clearance - NANOMETRE) / step))
            opening = start - min(last, k + max(1, skip)) * step
            distance = min(self.jaw_distances(grasp_pose, vertices, faces, opening, cutoff=reach))
            clear = (distance >= clearance if abs(distance - clearance) > NANOMETRE
                     else self._clear(grasp_pose, vertices, faces, opening, clearance))
            if not clear:
                break
            k = min(last, k + max(1, skip))
        return self._clearance(grasp_pose, vertices, faces, start - k * step, True)

    def _clear(self, grasp_pose, vertices, faces, opening: float, clearance: float) -> bool:
        return min(self.jaw_distances(grasp_pose, vertices, faces, opening, cutoff=clearance)) >= clearance

    def _clearance(self, grasp_pose, vertices, faces, opening: float, clear: bool) -> JawClearance:
        """The opening with `clear` as the scan found it; the distances there are measured when
        first asked for."""
        return JawClearance(float(opening), clear,
                            functools.partial(self.jaw_distances, grasp_pose, vertices, faces, opening))

    def closing_speed(self, opening: float, closing_time: float) -> float:
        """Speed of each backing towards the other (m/s): opening / 2 / closing_time (both meet
        within `closing_time`, s) clipped to the gripper's closing_speeds (docs/data.md: the
        YuMi's 10 mm/s and the study's 2 s)."""
        if not opening >= 0.0:
            raise ValueError(f"opening (m) must be non-negative, got {opening}")
        if not closing_time > 0.0:
            raise ValueError(f"closing_time (s) must be positive, got {closing_time}")
        low, high = self.closing_speeds
        return min(high, max(low, 0.5 * opening / closing_time))

    @functools.cached_property
    def _jaw_surface(self) -> tuple[np.ndarray, np.ndarray]:
        """Closed surfaces of the pad and the backing plate as one mesh (tooltip frame)."""
        pad, backing = self.pad_mesh(), self.backing_mesh()
        vertices = np.vstack([pad.nodes, backing.vertices])
        faces = np.vstack([pad.surface_faces, np.asarray(backing.faces) + len(pad.nodes)])
        return vertices, faces


def _description_mesh(description: GripperDescription, relative: str, scale: float) -> trimesh.Trimesh:
    mesh = trimesh.load(description.mesh_path(relative), force="mesh", process=True)
    return mesh.apply_scale(scale)


def _finger_mesh(description: GripperDescription, plate: trimesh.Trimesh) -> trimesh.Trimesh:
    """The finger of the description (tooltip frame): a box from the plate's back face backwards,
    or the given mesh (`grasp.description` checked that it lies behind the plate)."""
    finger = description.data["finger"]
    if "box" in finger:
        back = float(plate.bounds[0, 2])
        box = finger["box"]
        half = 0.5 * box["width"]
        return trimesh.creation.box(bounds=[[box["x_min"], -half, back - box["depth"]], [box["x_max"], half, back]])
    return _description_mesh(description, finger["mesh"], finger["scale"])


def _floats(value):
    """`value` (nested dicts, lists and tuples) with every number a Python float (bools and
    strings kept): 16, 16.0 and numpy.float64(16) serialise alike."""
    if isinstance(value, dict):
        return {key: _floats(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_floats(item) for item in value]
    if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    return value


def _check_grid(clearance: float, step: float) -> None:
    if not clearance > 0.0 or not 0.0 < step < 2.0 * clearance:
        raise ValueError(f"need clearance > 0 and 0 < step < 2 clearance (m), got {clearance}, {step}")


def _closed_mesh(mesh) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces)


def _check_rigid(transform: np.ndarray, name: str) -> None:
    rotation = transform[:3, :3]
    if (np.abs(rotation.T @ rotation - np.eye(3)).max() > RIGID_TOLERANCE or np.linalg.det(rotation) <= 0.0
            or not np.array_equal(transform[3], [0.0, 0.0, 0.0, 1.0])):
        raise ValueError(f"{name} is not a rigid transform (rotation orthonormal with det +1, last row 0 0 0 1)")


def _grasp_pose(pose) -> np.ndarray:
    pose = np.asarray(pose, dtype=np.float64)
    if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
        raise ValueError(f"grasp_pose must be a finite 4x4 matrix, got shape {pose.shape}")
    return pose
