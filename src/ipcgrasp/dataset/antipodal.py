"""Antipodal parallel-jaw grasp candidates on an object resting on the ground.

One attempt, for a point p drawn uniformly by area on the surface of the object in its resting
pose (seeded):

1. Ray from p along the inward normal -n_p; its first crossing q with the surface (where the
   ray leaves the solid, `baselines.contacts.cast_rays`) is the opposite contact, and the grasp
   axis a = (q - p) / |q - p| runs from jaw 0 (at p) to jaw 1 (at q).
2. Width |q - p| within [min_width, max_opening - 2 clearance]: the jaws must start `clearance`
   from both contacts at the gripper's widest opening.
3. Friction cones: the angle between a and the inward normal at p, and between a and the outward
   normal at q, both at most atan(mu) (a force along the axis stays inside both cones).
4. Gripper frame: x = a, the contact midpoint on the line between the two tooltip origins (the
   centres of the rounded pads' arcs), approach z perpendicular to a at a random roll about it;
   a roll that points the approach upward is turned by pi, so the wrist stays above the grasp
   (as for a robot above a table) and the roll is uniform over the allowed half-turn.
5. Ground: every vertex of both jaws (pads and backing plates) stays `ground_clearance` above
   the ground z = 0 from the widest opening until the pads are fully compressed at the contacts
   (vertex heights are linear in the opening, so the two ends bound them).
6. Object: at the widest opening both jaws (solids of pad and backing) are at least `clearance`
   from the object (`Gripper.clearance_opening` without extra opening: the real gripper).

The object pose is the most probable stable pose (`GraspObject.stable_pose`), lifted
1 mm above the ground by `grasp.scene.place_scene`, as `simulate_grasp` places it; the grasp
poses are in that world frame, so `simulate_grasp(obj, object_pose, grasp_pose)` takes them as
they are. Attempts run in fixed batches from one seeded generator, so the first k candidates do
not depend on how many are asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from ipcgrasp.baselines.contacts import cast_rays
from ipcgrasp.geometry.mesh import MIN_GRASP_WIDTH
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.scene import place_scene

__all__ = [
    "GROUND_CLEARANCE",
    "MIN_WIDTH",
    "REJECTIONS",
    "GraspCandidate",
    "SamplerSettings",
    "Sampling",
    "approach_frame",
    "sample_antipodal_grasps",
]

MIN_WIDTH = MIN_GRASP_WIDTH
"""Narrowest object width (m) between the contacts the sampler keeps: the smallest object size the
mesh validator accepts (geometry.mesh.MIN_GRASP_WIDTH)."""
GROUND_CLEARANCE = 2e-3
"""Smallest height (m) of the jaws above the ground: the object settles 1 mm from where it is
placed and the simulator perturbs the grasp by about 1 mm."""
NOISE_MARGIN = 2e-3
"""Extra jaw-object gap (m) at the widest opening beyond the trial's clearance: the trial perturbs
the grasp pose (1 mm and 3 mrad standard deviations per axis, `grasp.perturbation`), which moves
a jaw sideways or along the approach toward the object by up to about 2 mm in 19 of 20 trials;
the trial's extra opening absorbs only the part along the closing axis."""
ROLLS = 4
"""Approach rolls tried for each antipodal contact pair before it is rejected (for the ground or
a collision): the ray cast and friction test, the costly part of an attempt, are shared by them."""
OBJECT_SAMPLES = 4000
"""Surface points of the object kept for the quick collision test (`_Scene.surely_collides`)."""
BATCH = 256
"""Attempts drawn from the generator at a time."""
RAY_OFFSET = 1e-7
"""How far (m) inside the surface the ray from p starts, so p's own face is behind it."""
REJECTIONS = ("no_exit", "width", "friction", "ground", "collision")
"""Why an attempt was rejected: the ray along the inward normal entered a face instead of leaving
the solid (an open or self-intersecting patch), width out of range (or no crossing within the
opening), a normal outside its friction cone, a jaw too close to the ground, a jaw too close to
the object at the widest opening."""


@dataclass(frozen=True)
class SamplerSettings:
    """mu: pad-object friction of the cones; clearance (m): jaw-object gap the trial needs at the
    widest opening; noise_margin (m): added to it, so the trial's perturbed pose starts clear too;
    ground_clearance (m); min_width (m); max_attempts: surface points tried before giving up;
    rolls: approach rolls tried per antipodal pair before it is rejected."""

    mu: float = 0.4
    clearance: float = SimParams().clearance
    ground_clearance: float = GROUND_CLEARANCE
    min_width: float = MIN_WIDTH
    max_attempts: int = 20_000
    noise_margin: float = NOISE_MARGIN
    rolls: int = ROLLS

    def __post_init__(self):
        if not (isinstance(self.rolls, (int, np.integer)) and self.rolls >= 1):
            raise ValueError(f"SamplerSettings.rolls must be a positive integer, got {self.rolls!r}")
        for name in ("mu", "clearance", "ground_clearance", "min_width", "noise_margin"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"SamplerSettings.{name} must be finite and >= 0, got {value!r}")
        if not self.max_attempts >= 1:
            raise ValueError(f"SamplerSettings.max_attempts must be >= 1, got {self.max_attempts!r}")

    def to_dict(self) -> dict:
        return {"mu": self.mu, "clearance": self.clearance, "ground_clearance": self.ground_clearance,
                "min_width": self.min_width, "max_attempts": self.max_attempts, "noise_margin": self.noise_margin,
                "rolls": self.rolls}


@dataclass(frozen=True, eq=False)
class GraspCandidate:
    """One antipodal grasp in the world (m): `grasp_pose` (4x4 gripper frame), `contacts` (2, 3)
    at jaw 0 and jaw 1, their outward unit `normals` (2, 3), the `width` |q - p|, the
    `friction_angles` (2,, rad) of the axis to each contact's inward normal, and the attempt
    that produced it."""

    grasp_pose: np.ndarray
    contacts: np.ndarray
    normals: np.ndarray
    width: float
    friction_angles: np.ndarray
    attempt: int

    @property
    def axis(self) -> np.ndarray:
        """Unit grasp axis from jaw 0 to jaw 1 (the gripper x axis)."""
        return self.grasp_pose[:3, 0].copy()

    @property
    def approach(self) -> np.ndarray:
        """Unit approach direction (the gripper z axis, wrist to fingertips)."""
        return self.grasp_pose[:3, 2].copy()


@dataclass(frozen=True, eq=False)
class Sampling:
    """The accepted `candidates`, the placed `object_pose` (4x4) they refer to, the number of
    `attempts` made and how many were rejected for each of REJECTIONS."""

    candidates: list
    object_pose: np.ndarray
    attempts: int
    rejections: dict = field(default_factory=dict)

    @property
    def acceptance(self) -> float:
        """Fraction of attempts accepted."""
        return len(self.candidates) / self.attempts if self.attempts else float("nan")


def approach_frame(axis, roll: float) -> np.ndarray:
    """Rotation (3x3) with x = the unit `axis` and z the approach at angle `roll` (rad) about it
    from a reference perpendicular direction, turned by pi when it would point up (z_z > 0)."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    approach = np.cos(roll) * e1 + np.sin(roll) * e2
    if approach[2] > 0.0:
        approach = -approach
    return np.column_stack([axis, np.cross(approach, axis), approach])


def _first_exit(triangles, origin, direction, max_distance):
    """(distance, face) of the first crossing of the ray origin + t direction (0 <= t <=
    max_distance) with the triangles (T, 3, 3); (inf, -1) when none. The triangles are rotated
    into a frame whose z axis is the ray, for `cast_rays`."""
    frame = approach_frame(direction, 0.0)[:, [1, 2, 0]].T  # rows: two perpendiculars, then the ray
    local = (triangles - origin) @ frame.T
    distance, face = cast_rays(np.zeros((1, 2)), local, max_distance)
    return float(distance[0]), int(face[0])


class _Scene:
    """The resting object and the gripper, with what every attempt reuses."""

    def __init__(self, world: trimesh.Trimesh, gripper: Gripper, settings: SamplerSettings):
        self.world, self.gripper, self.settings = world, gripper, settings
        self.triangles = np.ascontiguousarray(world.triangles)
        self.normals = np.asarray(world.face_normals)
        self.max_width = gripper.max_opening - 2.0 * settings.clearance
        pad = gripper.pad_mesh()
        self.jaw_points = np.vstack([pad.nodes, gripper.backing_mesh().vertices])  # tooltip frame
        self.pad_depth = -float(pad.nodes[:, 2].min())  # pad thickness behind its front face
        self.centre = gripper.tooltip_transforms[:, :3, 3].mean(axis=0)  # contact midpoint, gripper frame
        self.cone = np.arctan(settings.mu)
        self.start_clearance = settings.clearance + settings.noise_margin
        # points on the object's surface: two surface points closer than start_clearance prove a collision
        # before the exact distance query, which costs about a hundred times more
        samples = trimesh.sample.sample_surface(world, OBJECT_SAMPLES, seed=np.random.default_rng(0))[0]
        self.object_points = cKDTree(np.vstack([world.vertices, samples]))

    def lowest_jaw_point(self, grasp_pose, openings) -> float:
        """Lowest world z (m) of both jaws' pad nodes and backing vertices over the openings (m)."""
        return float(min((self.jaw_points @ pose[2, :3]).min() + pose[2, 3]
                         for opening in openings for pose in self.gripper.tooltip_poses(grasp_pose, opening)))

    def surely_collides(self, grasp_pose) -> bool:
        """Whether a jaw point (pad node or backing vertex) at the widest opening is within
        start_clearance of an object surface point: then the solids are too (a sufficient test)."""
        for pose in self.gripper.tooltip_poses(grasp_pose, self.gripper.max_opening):
            distance, _ = self.object_points.query(self.jaw_points @ pose[:3, :3].T + pose[:3, 3],
                                                   distance_upper_bound=self.start_clearance)
            if np.isfinite(distance).any():
                return True
        return False

    def exits(self, points, faces):
        """(distance (m), face) of the first crossing of each ray from points[i] along the inward
        normal of faces[i] within max_width, (inf, -1) for none: every ray of a batch at once."""
        inward = -self.normals[faces]
        origins = points + RAY_OFFSET * inward
        distance = np.full(len(points), np.inf)
        hit = np.full(len(points), -1)
        if _embree_available():
            from trimesh.ray.ray_pyembree import RayMeshIntersector

            if not hasattr(self, "_rays"):
                self._rays = RayMeshIntersector(self.world)
            first = np.asarray(self._rays.intersects_first(origins, inward), dtype=np.int64)
            found = first >= 0
            # the distance in float64 from the crossed face's plane (embree works in float32)
            normal = self.normals[first[found]]
            along = np.einsum("ij,ij->i", normal, inward[found])
            t = np.einsum("ij,ij->i", normal, self.triangles[first[found], 0] - origins[found]) / along
            keep = np.flatnonzero(found)[t <= self.max_width]
            distance[keep] = t[t <= self.max_width]
            hit[keep] = first[keep]
        else:
            for i, (origin, direction) in enumerate(zip(origins, inward)):
                distance[i], hit[i] = _first_exit(self.triangles, origin, direction, self.max_width)
        return distance, hit

    def attempt(self, p, face: int, distance: float, hit: int, rolls, attempt: int):
        """(rejection reason, None) or (None, GraspCandidate) for the surface point p on `face`
        whose inward ray leaves the solid `distance` (m) away through `hit` (-1: none within the
        widest opening); the approach rolls (rad) are tried in turn."""
        normal = self.normals[face]
        inward = -normal
        if hit < 0:
            return "width", None  # no crossing within max_width: wider than the gripper opens
        if self.normals[hit] @ inward <= 0.0:
            return "no_exit", None  # entered a face: p is not on the boundary of a closed solid here
        q = p + RAY_OFFSET * inward + distance * inward
        width = float(np.linalg.norm(q - p))
        if not self.settings.min_width <= width <= self.max_width:
            return "width", None
        axis = (q - p) / width
        angles = np.arccos(np.clip([axis @ inward, axis @ self.normals[hit]], -1.0, 1.0))
        if angles.max() > self.cone:
            return "friction", None
        squeezed = max(width - 2.0 * self.pad_depth, 0.0)
        reason = "ground"
        for roll in rolls:
            pose = np.eye(4)
            pose[:3, :3] = approach_frame(axis, roll)
            pose[:3, 3] = 0.5 * (p + q) - pose[:3, :3] @ self.centre
            if self.lowest_jaw_point(pose, (self.gripper.max_opening, squeezed)) < self.settings.ground_clearance:
                continue
            if self.surely_collides(pose):
                reason = "collision"
                continue
            distances = self.gripper.jaw_distances(pose, self.world.vertices, self.world.faces,
                                                   self.gripper.max_opening, self.start_clearance)
            if min(distances) < self.start_clearance:
                reason = "collision"
                continue
            return None, GraspCandidate(pose, np.array([p, q]), np.array([normal, self.normals[hit]]), width,
                                        angles, attempt)
        return reason, None


def _embree_available() -> bool:
    """Whether trimesh can cast rays with Embree (the embreex package)."""
    try:
        import embreex  # noqa: F401
    except ImportError:
        return False
    return True


def sample_antipodal_grasps(obj: GraspObject, n: int, settings: SamplerSettings | None = None, seed: int = 0,
                            object_pose=None, gripper: Gripper | None = None) -> Sampling:
    """Up to `n` antipodal grasp candidates on `obj` (see the module docstring) for `gripper`
    (default: the YuMi), in the world of the object resting in `object_pose` (4x4; None: its
    most probable stable pose), placed 1 mm above the ground. Stops after settings.max_attempts
    attempts with fewer candidates (the caller decides whether that is an error)."""
    settings = settings or SamplerSettings()
    if not (isinstance(n, (int, np.integer)) and n >= 0):
        raise ValueError(f"n (number of grasps) must be a non-negative integer, got {n!r}")
    object_pose, _ = place_scene(obj.mesh, obj.stable_pose() if object_pose is None else object_pose, np.eye(4))
    scene = _Scene(obj.mesh.copy().apply_transform(object_pose), gripper or Gripper.yumi(), settings)
    rng = np.random.default_rng(seed)
    candidates, rejections, attempts = [], dict.fromkeys(REJECTIONS, 0), 0
    while len(candidates) < n and attempts < settings.max_attempts:
        points, faces = trimesh.sample.sample_surface(scene.world, BATCH, seed=rng)
        rolls = rng.uniform(0.0, 2.0 * np.pi, (BATCH, settings.rolls))
        distances, hits = scene.exits(points, faces)
        for p, face, distance, hit, roll in zip(points, faces, distances, hits, rolls):
            if len(candidates) == n or attempts == settings.max_attempts:
                break
            reason, candidate = scene.attempt(p, face, distance, hit, roll, attempts)
            attempts += 1
            if candidate is None:
                rejections[reason] += 1
            else:
                candidates.append(candidate)
    return Sampling(candidates, object_pose, attempts, rejections)
