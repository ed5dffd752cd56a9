"""Antipodal parallel-jaw grasp candidates on an object resting on the ground.

One attempt, for a point p drawn uniformly by area on the surface of the object in its resting
pose and a grasp axis a drawn inside p's friction cone (seeded):

1. Axis: a direction within atan(mu) of the inward normal -n_p (`cone_directions`: the tangent
   of its angle to -n_p, the tangential-to-normal force ratio a squeeze along a asks of the
   contact at p, uniform on [0, mu); its azimuth uniform), as Dex-Net's antipodal sampler draws
   it. Only the normal itself (the rule before) misses every pair whose surfaces are not
   parallel: two flat faces meeting at an angle below 2 atan(mu), most pairs on a curved or
   coarsely faceted object.
2. Ray from p along a; its first crossing q with the surface (where the ray leaves the solid)
   is the opposite contact, jaw 0 at p and jaw 1 at q. A ray that enters a face there instead
   (an open or self-intersecting patch) is rejected ("no_exit").
3. Width |q - p| within [min_width, max_opening - 2 clearance]: the jaws must start `clearance`
   from both contacts at the gripper's widest opening ("width"; also no crossing within it).
4. Friction cones: the angle between a and the inward normal at p (at most atan(mu) by the draw,
   checked anyway) and between a and the outward normal at q both at most atan(mu) ("friction"):
   a squeeze along the axis is inside both cones. The normals are the mesh's face normals: the
   simulated object is that polyhedron, and on the real-object set smoothed normals (vertex
   normals interpolated at the contact, or face normals averaged over the pad's footprint) pass
   no more pairs (bunny, duck) or fewer (teddy, the convex-piece random objects, whose flat faces
   meet at sharp edges).
5. Gripper frame: x = a, the contact midpoint on the line between the two tooltip origins (the
   centres of the rounded pads' arcs), approach z perpendicular to a at a random roll about it;
   a roll that points the approach upward is turned by pi, so the wrist stays above the grasp
   (as for a robot above a table) and the roll is uniform over the allowed half-turn. Up to
   `rolls` rolls are tried in turn for steps 6 and 7; the attempt is rejected for the last
   reason met ("collision" if any roll cleared the ground, else "ground").
6. Ground: every vertex of both jaws (pads and backing plates) stays `ground_clearance` above
   the ground z = 0 from the widest opening until the pads are fully compressed at the contacts
   (vertex heights are linear in the opening, so the two ends bound them). A frame whose jaws
   come lower than `ground_clearance + noise_margin` is first moved back along its approach
   toward that height, as far as the contacts may go along the pads: they lie on the pads'
   faces between the tooltip origins and the pads' tips, at least `tip_margin` from the tips.
   The pads reach past the tooltip origins (8 mm on the YuMi), so a low object lying on a table
   is gripped near the fingertips, as a person would, and the jaws keep the noise margin above
   the ground where they can, so that the trial's perturbed pose starts above it too.
7. Object: at the widest opening both jaws (solids of pad and backing) are at least
   `clearance + noise_margin` from the object (the real gripper: no extra opening).

Each attempt is counted once, accepted or under one of REJECTIONS, so `Sampling.acceptance` is
the fraction of (point, axis) draws that give a grasp. Steps 1 to 6 run on a whole batch of
attempts at once (numpy, the ray casts through Embree when it is installed, else
`baselines.contacts.cast_rays`); step 7's exact distance query, about 14 ms a pose, runs only on
poses that a surface-point test does not already prove colliding, and takes most of the time.

The object pose is the most probable stable pose (`GraspObject.stable_pose`), lifted
1 mm above the ground by `grasp.scene.place_scene`, as `simulate_grasp` places it; the grasp
poses are in that world frame, so `simulate_grasp(obj, object_pose, grasp_pose)` takes them as
they are. Attempts run in fixed batches from one seeded generator (points, axes and rolls of a
batch drawn before any is tested), so the first k candidates do not depend on how many are
asked for.
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
    "MAX_ATTEMPTS",
    "MIN_WIDTH",
    "REJECTIONS",
    "TIP_MARGIN",
    "GraspCandidate",
    "SamplerSettings",
    "Sampling",
    "approach_frame",
    "approach_frames",
    "cone_directions",
    "sample_antipodal_grasps",
]

MIN_WIDTH = MIN_GRASP_WIDTH
"""Narrowest object width (m) between the contacts the sampler keeps: the smallest object size the
mesh validator accepts (geometry.mesh.MIN_GRASP_WIDTH)."""
GROUND_CLEARANCE = 2e-3
"""Smallest height (m) of the jaws above the ground: the object settles 1 mm from where it is
placed and the simulator perturbs the grasp by about 1 mm."""
NOISE_MARGIN = 2e-3
"""Extra jaw-object gap (m) at the widest opening beyond the trial's clearance, and the height
above the ground clearance a frame is moved back toward (step 6): the trial perturbs the grasp
pose (1 mm and 3 mrad standard deviations per axis, `grasp.perturbation`), which moves a jaw
sideways or along the approach toward the object by up to about 2 mm in 19 of 20 trials; the
trial's extra opening absorbs only the part along the closing axis."""
TIP_MARGIN = 3e-3
"""Least distance (m) along the approach from the contacts to the pads' tips (step 6): room for a
contact patch (radii up to about 2 mm on the real-object set at the close force) and for the
trial's perturbation of the grasp pose (about 1 mm)."""
ROLLS = 4
"""Approach rolls tried for each antipodal contact pair before it is rejected (for the ground or
a collision): one pair serves several wrist orientations. More rolls hardly raise the acceptance
on the real-object set (most pairs the ground rejects are too low or too steep for any roll) and
cost quick collision tests."""
MAX_ATTEMPTS = 100_000
"""Attempts (surface point and axis draws) before the sampler gives up with fewer candidates than
asked for: the bunny of the real-object set, lying 28 mm high, accepts about 1 in 170 (most of
its antipodal pairs squeeze it vertically, the lower jaw under the ground), so 100 grasps take
some 17,000 attempts (about 1 s); an object without any grasp costs at most about 15 s."""
OBJECT_SAMPLES = 4000
"""Surface points of the object kept for the quick collision test (`_Scene.surely_collide`)."""
BATCH = 256
"""Attempts drawn from the generator and screened (steps 1 to 6) at a time."""
RAY_OFFSET = 1e-7
"""How far (m) along the axis, into the solid, the ray from p starts, so p's own face is behind it."""
OFF_FACE = 1e-10
"""How far (m) from its face a surface point (a sampled p, or the crossing q of the ray with the
plane of the face the ray cast names) may lie before it is moved onto the face
(`_Scene.on_faces`); rounding leaves a point inside its face within about 1e-17 m."""
REJECTIONS = ("no_exit", "width", "friction", "ground", "collision")
"""Why an attempt was rejected (module docstring, steps 2, 3, 4, 6, 7): the ray along the axis
entered a face instead of leaving the solid (an open or self-intersecting patch), width out of
range (or no crossing within the opening), the axis outside a contact's friction cone, a jaw too
close to the ground at every roll, a jaw too close to the object at the widest opening at every
roll that clears the ground."""


@dataclass(frozen=True)
class SamplerSettings:
    """mu: pad-object friction of the cones; clearance (m): jaw-object gap the trial needs at the
    widest opening; noise_margin (m): added to it and, where the pads reach, to ground_clearance,
    so the trial's perturbed pose starts clear too; ground_clearance (m); min_width (m);
    max_attempts: (point, axis) draws before giving up; rolls: approach rolls tried per antipodal
    pair before it is rejected; tip_margin (m): least distance along the approach from the
    contacts to the pads' tips when a frame is moved back from the ground (module docstring,
    step 6)."""

    mu: float = 0.4
    clearance: float = SimParams().clearance
    ground_clearance: float = GROUND_CLEARANCE
    min_width: float = MIN_WIDTH
    max_attempts: int = MAX_ATTEMPTS
    noise_margin: float = NOISE_MARGIN
    rolls: int = ROLLS
    tip_margin: float = TIP_MARGIN

    def __post_init__(self):
        if not (isinstance(self.rolls, (int, np.integer)) and self.rolls >= 1):
            raise ValueError(f"SamplerSettings.rolls must be a positive integer, got {self.rolls!r}")
        for name in ("mu", "clearance", "ground_clearance", "min_width", "noise_margin", "tip_margin"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"SamplerSettings.{name} must be finite and >= 0, got {value!r}")
        if not self.max_attempts >= 1:
            raise ValueError(f"SamplerSettings.max_attempts must be >= 1, got {self.max_attempts!r}")

    def to_dict(self) -> dict:
        return {"mu": self.mu, "clearance": self.clearance, "ground_clearance": self.ground_clearance,
                "min_width": self.min_width, "max_attempts": self.max_attempts, "noise_margin": self.noise_margin,
                "rolls": self.rolls, "tip_margin": self.tip_margin}


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


def approach_frames(axes, rolls) -> np.ndarray:
    """Rotations (..., R, 3, 3) for unit `axes` (..., 3) and approach rolls (..., R) (rad): x =
    the axis, z the approach at angle roll about it from a reference perpendicular direction,
    turned by pi when it would point up (z_z > 0), y = z x x."""
    axes = np.asarray(axes, dtype=np.float64)
    axes = axes / np.linalg.norm(axes, axis=-1, keepdims=True)
    rolls = np.asarray(rolls, dtype=np.float64)
    e1, e2 = _perpendiculars(axes)
    approach = np.cos(rolls)[..., None] * e1[..., None, :] + np.sin(rolls)[..., None] * e2[..., None, :]
    approach = np.where(approach[..., 2:] > 0.0, -approach, approach)
    axis = np.broadcast_to(axes[..., None, :], approach.shape)
    return np.stack([axis, np.cross(approach, axis), approach], axis=-1)


def approach_frame(axis, roll: float) -> np.ndarray:
    """Rotation (3x3) with x = the unit `axis` and z the approach at angle `roll` (rad) about it
    from a reference perpendicular direction, turned by pi when it would point up (z_z > 0)."""
    return approach_frames(np.asarray(axis, dtype=np.float64)[None], np.array([[float(roll)]]))[0, 0]


def _perpendiculars(directions):
    """Two unit vectors (e1, e2), each (..., 3), completing the unit `directions` d (..., 3) to a
    right-handed frame: e1 = d x h / |d x h| with h the world z axis, or the x axis where d is
    within 26 deg of z (|d_z| >= 0.9), and e2 = d x e1."""
    directions = np.asarray(directions, dtype=np.float64)
    helper = np.where(np.abs(directions[..., 2:]) < 0.9, np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]))
    e1 = np.cross(directions, helper)
    e1 /= np.linalg.norm(e1, axis=-1, keepdims=True)
    return e1, np.cross(directions, e1)


def cone_directions(axes, mu: float, uniforms) -> np.ndarray:
    """Unit directions (N, 3) inside the friction cones of coefficient `mu` (half-angle
    atan(mu)) about the unit `axes` (N, 3), from `uniforms` (N, 2) in [0, 1): the tangent of the
    angle to the axis (the ratio of tangential to normal force a squeeze along the direction
    asks of the contact) is uniform on [0, mu), the azimuth about the axis uniform on [0, 2 pi)."""
    uniforms = np.asarray(uniforms, dtype=np.float64)
    ratio = mu * uniforms[:, 0]
    azimuth = 2.0 * np.pi * uniforms[:, 1]
    e1, e2 = _perpendiculars(axes)
    directions = axes + (ratio * np.cos(azimuth))[:, None] * e1 + (ratio * np.sin(azimuth))[:, None] * e2
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


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
        jaw_points = np.vstack([pad.nodes, gripper.backing_mesh().vertices])  # tooltip frame
        tooltips = gripper.tooltip_poses(np.eye(4))  # in the gripper frame, at the widest opening
        # both jaws' pad nodes and backing vertices in the gripper frame at the widest opening (2, P, 3), and
        # each jaw's closing direction (2, 3), along which it advances (max_opening - opening) / 2
        self.jaw_points = np.stack([jaw_points @ pose[:3, :3].T + pose[:3, 3] for pose in tooltips])
        self.closing = tooltips[:, :3, 2]
        self.pad_depth = -float(pad.nodes[:, 2].min())  # pad thickness behind its front face
        # how far (m) a frame may move back along its approach (step 6): the pads' reach past the tooltip
        # origins, less the tip margin
        reach = min(float(((pad.nodes @ pose[:3, :3].T)[:, 2]).max()) for pose in tooltips)
        self.max_setback = max(reach - settings.tip_margin, 0.0)
        self.centre = gripper.tooltip_transforms[:, :3, 3].mean(axis=0)  # contact midpoint, gripper frame
        self.cone = np.arctan(settings.mu)
        self.start_clearance = settings.clearance + settings.noise_margin
        # points on the object's surface: two surface points closer than start_clearance prove a collision
        # before the exact distance query, which costs about a hundred times more
        samples = trimesh.sample.sample_surface(world, OBJECT_SAMPLES, seed=np.random.default_rng(0))[0]
        self.object_points = cKDTree(np.vstack([world.vertices, samples]))

    def lowest_jaw_points(self, rotations, translations, advances) -> np.ndarray:
        """Lowest world z (m) of both jaws' pad nodes and backing vertices (...,) for gripper
        frames (rotations (..., 3, 3), translations (..., 3)) with each jaw advanced `advances`
        (...,) m along its closing direction from the widest opening."""
        up = rotations[..., 2, :]  # world z of each gripper axis
        lowest = np.einsum("jpk,...k->...jp", self.jaw_points, up).min(axis=-1)  # (..., 2 jaws)
        lowest = lowest + advances[..., None] * np.einsum("jk,...k->...j", self.closing, up)
        return lowest.min(axis=-1) + translations[..., 2]

    def surely_collide(self, rotations, translations) -> np.ndarray:
        """Whether a jaw point (pad node or backing vertex) at the widest opening is within
        start_clearance of an object surface point, for each gripper frame (rotations (M, 3, 3),
        translations (M, 3)): then the solids are too (a sufficient test)."""
        points = np.einsum("jpk,mlk->mjpl", self.jaw_points, rotations) + translations[:, None, None, :]
        distance, _ = self.object_points.query(points.reshape(-1, 3), distance_upper_bound=self.start_clearance)
        return np.isfinite(distance).reshape(len(rotations), 2 * self.jaw_points.shape[1]).any(axis=1)

    def exits(self, points, directions):
        """(distance (m), face) of the first crossing of each ray from points[i] along
        directions[i] within max_width, (inf, -1) for none: every ray of a batch at once. The rays
        start RAY_OFFSET inside, so p's own face is behind them."""
        origins = points + RAY_OFFSET * directions
        distance = np.full(len(points), np.inf)
        hit = np.full(len(points), -1)
        if _embree_available():
            from trimesh.ray.ray_pyembree import RayMeshIntersector

            if not hasattr(self, "_rays"):
                self._rays = RayMeshIntersector(self.world)
            first = np.asarray(self._rays.intersects_first(origins, directions), dtype=np.int64)
            found = first >= 0
            # the distance in float64 from the crossed face's plane (embree works in float32)
            normal = self.normals[first[found]]
            along = np.einsum("ij,ij->i", normal, directions[found])
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.einsum("ij,ij->i", normal, self.triangles[first[found], 0] - origins[found]) / along
            near = t <= self.max_width
            keep = np.flatnonzero(found)[near]
            distance[keep] = t[near]
            hit[keep] = first[keep]
        else:
            for i, (origin, direction) in enumerate(zip(origins, directions)):
                distance[i], hit[i] = _first_exit(self.triangles, origin, direction, self.max_width)
        return distance, hit

    def on_faces(self, points, faces):
        """points (N, 3), each moved onto its face (N,) where it lies farther than OFF_FACE from it
        (to the face's nearest point), and which were moved (N,)."""
        nearest = trimesh.triangles.closest_point(self.triangles[faces], points)
        moved = np.linalg.norm(nearest - points, axis=1) > OFF_FACE
        return np.where(moved[:, None], nearest, points), moved

    def screen(self, points, faces, axes):
        """The antipodal test of a batch of attempts (surface points (N, 3) on `faces` (N,) with
        unit grasp axes (N, 3) drawn in their friction cones): (reasons (N,) object array, None
        for a pair that passes; opposite contacts q (N, 3) on the faces `hit` (N,), -1 for none;
        widths |q - p| (N,); friction angles (N, 2) of the axis to the inward normal at p and
        to the outward normal at q, rad)."""
        distance, hit = self.exits(points, axes)
        inward = -self.normals[faces]
        reasons = np.full(len(points), None, dtype=object)
        missed = hit < 0
        reasons[missed] = "width"  # no crossing within max_width: wider than the gripper opens
        exit_normals = self.normals[np.where(missed, 0, hit)]
        entered = ~missed & (np.einsum("ij,ij->i", exit_normals, axes) <= 0.0)
        reasons[entered] = "no_exit"  # entered a face: p is not on the boundary of a closed solid here
        q = points + (RAY_OFFSET + np.where(missed, 0.0, distance))[:, None] * axes
        # Embree casts in float32: a ray within microns of an edge may name the neighbouring face, and
        # the crossing with that face's plane then lies outside it, off the surface
        crossed = np.flatnonzero(~missed)
        q[crossed], moved = self.on_faces(q[crossed], hit[crossed])
        if moved.any():
            moved = crossed[moved]
            axes = axes.copy()
            axes[moved] = (q[moved] - points[moved]) / np.linalg.norm(q[moved] - points[moved], axis=1)[:, None]
        width = np.linalg.norm(q - points, axis=1)
        open_ = reasons == None  # noqa: E711 (elementwise)
        reasons[open_ & ~((self.settings.min_width <= width) & (width <= self.max_width))] = "width"
        angles = np.arccos(np.clip(np.stack([np.einsum("ij,ij->i", axes, inward),
                                             np.einsum("ij,ij->i", axes, exit_normals)], axis=1), -1.0, 1.0))
        reasons[(reasons == None) & (angles.max(axis=1) > self.cone)] = "friction"  # noqa: E711
        return reasons, q, hit, width, angles

    def place(self, points, q, widths, rolls):
        """Gripper frames for antipodal pairs p -> q (M, 3 each; widths (M,)) at the approach rolls
        (M, R), each moved back along its approach toward the noise margin above the ground
        clearance, within the pads' reach (step 6): (rotations (M, R, 3, 3), translations (M, R, 3), whether both jaws then clear the ground
        (M, R) at the widest opening and with the pads fully compressed at the contacts)."""
        axes = (q - points) / widths[:, None]
        rotations = approach_frames(axes, rolls)
        translations = 0.5 * (points + q)[:, None, :] - rotations @ self.centre
        squeezed = np.maximum(widths - 2.0 * self.pad_depth, 0.0)
        advance = np.broadcast_to((0.5 * (self.gripper.max_opening - squeezed))[:, None], rolls.shape)
        # vertex heights are linear in the opening, so its two ends bound them
        lowest = np.minimum(self.lowest_jaw_points(rotations, translations, np.zeros(rolls.shape)),
                            self.lowest_jaw_points(rotations, translations, advance))
        rise = -rotations[..., 2, 2]  # height gained (m) per metre moved back along the approach
        settings = self.settings
        with np.errstate(divide="ignore", invalid="ignore"):
            # moved back toward the noise margin above the clearance, as far as the pads reach
            setback = np.where((lowest < settings.ground_clearance + settings.noise_margin) & (rise > 0.0),
                               np.minimum((settings.ground_clearance + settings.noise_margin - lowest) / rise,
                                          self.max_setback), 0.0)
        moved = setback > 0.0
        translations[moved] -= setback[moved][:, None] * rotations[moved][:, :, 2]
        clear = lowest + setback * rise >= settings.ground_clearance
        return rotations, translations, clear

    def clear_of_object(self, rotation, translation) -> bool:
        """Whether both jaws (solids of pad and backing) at the widest opening are at least
        start_clearance from the object (the exact distance query)."""
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, translation
        distances = self.gripper.jaw_distances(pose, self.world.vertices, self.world.faces,
                                               self.gripper.max_opening, self.start_clearance)
        return min(distances) >= self.start_clearance


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
        points, _ = scene.on_faces(points, faces)  # trimesh's samples can lie microns off a sliver face
        axes = cone_directions(-scene.normals[faces], settings.mu, rng.random((BATCH, 2)))
        rolls = rng.uniform(0.0, 2.0 * np.pi, (BATCH, settings.rolls))
        reasons, q, hits, widths, angles = scene.screen(points, faces, axes)
        pairs = np.flatnonzero(reasons == None)  # noqa: E711 (elementwise): the antipodal pairs
        rotations, translations, grounded = scene.place(points[pairs], q[pairs], widths[pairs], rolls[pairs])
        surely = np.zeros(grounded.shape, dtype=bool)
        surely[grounded] = scene.surely_collide(rotations[grounded], translations[grounded])
        row = dict(zip(pairs.tolist(), range(len(pairs))))
        for i in range(BATCH):
            if len(candidates) == n or attempts == settings.max_attempts:
                break
            reason, candidate = reasons[i], None
            if reason is None:  # an antipodal pair: the approach rolls in turn
                k, reason = row[i], "ground"
                for r in np.flatnonzero(grounded[k]):
                    if surely[k, r] or not scene.clear_of_object(rotations[k, r], translations[k, r]):
                        reason = "collision"
                        continue
                    pose = np.eye(4)
                    pose[:3, :3], pose[:3, 3] = rotations[k, r], translations[k, r]
                    candidate = GraspCandidate(pose, np.array([points[i], q[i]]),
                                               scene.normals[[faces[i], hits[i]]],
                                               float(widths[i]), angles[i], attempts)
                    break
            attempts += 1
            if candidate is None:
                rejections[reason] += 1
            else:
                candidates.append(candidate)
    return Sampling(candidates, object_pose, attempts, rejections)
