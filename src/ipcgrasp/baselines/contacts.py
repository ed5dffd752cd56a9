"""Where the jaws of a parallel-jaw grasp meet the object, for the analytic quasi-static models
(soft point, REACH, 6DFC; Kim et al., IPC-GraspSim, Table 4.2; Danielczuk et al., ISRR 2019).

What is implemented
-------------------
- `perturbed_grasp`: the trial's grasp pose, perturbed exactly as the simulator perturbs it
  (`grasp.perturbation.perturb_grasp` with `numpy.random.default_rng(seed)` and the noise
  standard deviations of `SimParams`), so every model sees the same grasp for the same seed.
- `pad_footprint` / `footprint_grid`: the pad's outline in its tooltip frame (`geometry.pads`,
  the simulated pad, 0.8-scaled) covered by square cells of side `spacing`, each clipped to the
  outline (exact areas, summing to the footprint area) with a ray origin at the clipped cell's
  centroid; plus points along the outline (its corners included).
- `cast_rays`: the first crossing of rays along +z from the plane z = 0 with a triangle mesh
  (Moller-Trumbore specialised to parallel rays, i.e. 2-D barycentric coordinates, over a
  uniform 2-D bin grid), a numba kernel. trimesh's ray casting needs `rtree`, which is not
  installed here, so it is not used.
- `grasp_contacts`: the object placed by `grasp.scene.place_scene` and, for each jaw opened to
  the widest plus `extra_opening` (10 mm by default: the grasp procedure may open the jaws
  that much beyond the gripper's maximum to clear the object, as the original study did), rays
  from the pad footprint along its closing direction over the jaw's full travel (the opening).
  A ray whose first crossing enters the object (the face's outward normal against the ray)
  touches the object there; a cell ray whose first crossing leaves it starts inside the object
  (the jaw overlaps it even when opened that far). The jaw's travel to first contact is the smallest such
  distance over the cell rays, the outline rays and rays through the object vertices that project
  into the footprint (so a corner of the object or of the footprint that touches first is not
  missed between cells; a face tilted against the pad is touched exactly). Each jaw closes
  independently until it touches, the object staying where it was placed (the quasi-static
  models' assumption); the jaw width at contact is the opening minus both travels.
  The area-contact patch is every cell whose ray touches the object within `silicone_depth` of
  the first contact: its point, outward normal, projected (cell) area, surface area
  (cell area / |n . z|) and penetration depth of the pad advanced `silicone_depth` past first
  contact (travel + silicone_depth - hit distance, in [0, silicone_depth]). When the object
  pokes into the footprint only between cell rays (at its edge), the patch is the first contact
  alone, with the area of its cell.

Departures
----------
- Only the pad's front face is considered: a grasp in which the backing plate or the finger
  touches first is evaluated on its pad contacts alone.
- The patch is sampled on a grid (first crossing per cell), not clipped exactly as REACH's
  constructive solid geometry intersection does. Surfaces hidden behind the first crossing are
  left out, which a pad pressing along its closing direction could not reach anyway.
- The default footprint is the simulated pad, not REACH's hexagonal approximation of the unscaled
  YuMi pad (`area_contact_generator.yaml`), so all models of the study see the same pad.
- The default silicone depth is REACH's 5.296 mm (the original study rounds it to 5.3 mm).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import shapely
import trimesh

from ipcgrasp.engine._numba import njit
from ipcgrasp.geometry.pads import pad_outline
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.simulate import perturbed_grasp
from ipcgrasp.grasp.scene import place_scene

__all__ = [
    "EXTRA_OPENING",
    "GRID_SPACING",
    "SILICONE_DEPTH",
    "Footprint",
    "GraspContacts",
    "JawContact",
    "cast_rays",
    "footprint_grid",
    "grasp_contacts",
    "jaw_contact",
    "pad_footprint",
    "perturbed_grasp",
]

SILICONE_DEPTH = 5.296e-3
"""REACH's silicone depth (m, `area_contact_generator.yaml`): how far past its first contact the
pad is taken to reach into the object (the true layer is 3 mm)."""
EXTRA_OPENING = SimParams().max_extra_opening
"""How far beyond the gripper's widest opening the jaws may open to clear the object (m): the
grasp procedure's allowance (SimParams.max_extra_opening)."""
GRID_SPACING = 0.5e-3
"""Side of the footprint's ray cells (m): about 1200 rays per rounded pad."""
BARYCENTRIC_SLACK = 1e-10
"""Rays this close (in barycentric coordinates) outside a triangle still hit it, so a ray through
a shared edge cannot slip between its two triangles."""


@dataclass(frozen=True, eq=False)
class Footprint:
    """A pad footprint in the tooltip xy-plane (m): the outline `polygon` (n, 2), ray origins
    `points` (K, 2) at the centroids of grid cells clipped to it with their `areas` (K,, m^2),
    and `boundary` (B, 2) points along the outline, corners included."""

    polygon: np.ndarray
    points: np.ndarray
    areas: np.ndarray
    boundary: np.ndarray
    spacing: float

    @property
    def area(self) -> float:
        """Footprint area (m^2), the sum of the cell areas."""
        return float(self.areas.sum())


def footprint_grid(polygon, spacing: float = GRID_SPACING) -> Footprint:
    """Cover a simple polygon (a shapely Polygon or (n, 2) vertices, m) with square cells of side
    `spacing` centred on its bounding box, each clipped to the polygon (shapely)."""
    if not isinstance(polygon, shapely.Polygon):
        polygon = shapely.Polygon(np.asarray(polygon, dtype=np.float64))
    if not (polygon.is_valid and polygon.area > 0.0):
        raise ValueError("footprint must be a valid polygon with positive area")
    if not spacing > 0.0:
        raise ValueError(f"spacing must be positive (m), got {spacing}")
    minx, miny, maxx, maxy = polygon.bounds
    nx, ny = (max(1, math.ceil((hi - lo) / spacing)) for lo, hi in ((minx, maxx), (miny, maxy)))
    x0 = 0.5 * (minx + maxx) - 0.5 * nx * spacing
    y0 = 0.5 * (miny + maxy) - 0.5 * ny * spacing
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    lo_x, lo_y = (x0 + spacing * i).ravel(), (y0 + spacing * j).ravel()
    cells = shapely.intersection(shapely.box(lo_x, lo_y, lo_x + spacing, lo_y + spacing), polygon)
    areas = shapely.area(cells)
    keep = areas > 1e-9 * spacing**2
    points = shapely.get_coordinates(shapely.centroid(cells[keep]))
    vertices = np.asarray(polygon.exterior.coords)[:-1]
    boundary = []
    for a, b in zip(vertices, np.roll(vertices, -1, axis=0)):
        n = max(1, math.ceil(np.linalg.norm(b - a) / spacing))
        boundary.append(a + np.linspace(0.0, 1.0, n, endpoint=False)[:, None] * (b - a))
    footprint = Footprint(vertices, points, areas[keep], np.vstack(boundary), float(spacing))
    for array in (footprint.polygon, footprint.points, footprint.areas, footprint.boundary):
        array.flags.writeable = False
    return footprint


@functools.lru_cache(maxsize=8)
def pad_footprint(kind: str = "rounded", spacing: float = GRID_SPACING) -> Footprint:
    """The simulated pad's footprint (`geometry.pads.pad_outline(kind)`) on a grid (cached)."""
    return footprint_grid(pad_outline(kind), spacing)


@njit
def _cast_rays(origins, triangles, max_distance):
    """First crossing of each ray (x, y, 0) + t (0, 0, 1), 0 <= t <= max_distance, with the
    triangles (T, 3, 3): (t (R,), inf when none; face index (R,), -1 when none). Triangles are
    binned by their xy bounding boxes on a grid over the ray origins' bounding box."""
    n_rays, n_faces = origins.shape[0], triangles.shape[0]
    distance = np.full(n_rays, np.inf)
    face = np.full(n_rays, -1, dtype=np.int64)
    if n_rays == 0 or n_faces == 0:
        return distance, face
    lo_x, hi_x = origins[:, 0].min(), origins[:, 0].max()
    lo_y, hi_y = origins[:, 1].min(), origins[:, 1].max()
    n_bins = max(1, int(np.sqrt(n_rays) / 2.0))
    size_x = max((hi_x - lo_x) / n_bins, 1e-12)
    size_y = max((hi_y - lo_y) / n_bins, 1e-12)
    ranges = np.full((n_faces, 4), -1, dtype=np.int64)
    for f in range(n_faces):
        tri = triangles[f]
        if tri[:, 2].max() < 0.0 or tri[:, 2].min() > max_distance:
            continue
        x_min, x_max, y_min, y_max = tri[:, 0].min(), tri[:, 0].max(), tri[:, 1].min(), tri[:, 1].max()
        if x_max < lo_x or x_min > hi_x or y_max < lo_y or y_min > hi_y:
            continue
        ranges[f, 0] = min(max(int(np.floor((x_min - lo_x) / size_x)), 0), n_bins - 1)
        ranges[f, 1] = min(max(int(np.floor((x_max - lo_x) / size_x)), 0), n_bins - 1)
        ranges[f, 2] = min(max(int(np.floor((y_min - lo_y) / size_y)), 0), n_bins - 1)
        ranges[f, 3] = min(max(int(np.floor((y_max - lo_y) / size_y)), 0), n_bins - 1)
    starts = np.zeros(n_bins * n_bins + 1, dtype=np.int64)
    for f in range(n_faces):
        if ranges[f, 0] >= 0:
            for i in range(ranges[f, 0], ranges[f, 1] + 1):
                for j in range(ranges[f, 2], ranges[f, 3] + 1):
                    starts[i * n_bins + j + 1] += 1
    starts = np.cumsum(starts)
    entries = np.empty(starts[-1], dtype=np.int64)
    fill = starts[:-1].copy()
    for f in range(n_faces):
        if ranges[f, 0] >= 0:
            for i in range(ranges[f, 0], ranges[f, 1] + 1):
                for j in range(ranges[f, 2], ranges[f, 3] + 1):
                    entries[fill[i * n_bins + j]] = f
                    fill[i * n_bins + j] += 1
    for r in range(n_rays):
        x, y = origins[r, 0], origins[r, 1]
        i = min(max(int(np.floor((x - lo_x) / size_x)), 0), n_bins - 1)
        j = min(max(int(np.floor((y - lo_y) / size_y)), 0), n_bins - 1)
        for k in range(starts[i * n_bins + j], starts[i * n_bins + j + 1]):
            f = entries[k]
            a, b, c = triangles[f, 0], triangles[f, 1], triangles[f, 2]
            e1x, e1y, e2x, e2y = b[0] - a[0], b[1] - a[1], c[0] - a[0], c[1] - a[1]
            det = e1x * e2y - e1y * e2x
            if abs(det) <= 1e-14 * (e1x * e1x + e1y * e1y + e2x * e2x + e2y * e2y):
                continue  # face parallel to the rays
            px, py = x - a[0], y - a[1]
            u = (px * e2y - py * e2x) / det
            v = (e1x * py - e1y * px) / det
            if u < -BARYCENTRIC_SLACK or v < -BARYCENTRIC_SLACK or u + v > 1.0 + BARYCENTRIC_SLACK:
                continue
            t = a[2] + u * (b[2] - a[2]) + v * (c[2] - a[2])
            if 0.0 <= t <= max_distance and t < distance[r]:
                distance[r] = t
                face[r] = f
    return distance, face


def cast_rays(origins, triangles, max_distance: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """First crossing of the rays (x, y, 0) + t (0, 0, 1) with triangles (T, 3, 3), for ray
    origins (R, 2) and 0 <= t <= max_distance (m). Returns the distances t (R,) (inf for a miss)
    and the index of the face crossed (R,) (-1 for a miss). A ray through an edge or vertex
    crosses one of the faces sharing it; faces parallel to the rays are never crossed."""
    origins = np.ascontiguousarray(origins, dtype=np.float64)
    triangles = np.ascontiguousarray(triangles, dtype=np.float64)
    if origins.ndim != 2 or origins.shape[1] != 2:
        raise ValueError(f"origins must have shape (R, 2), got {origins.shape}")
    if triangles.ndim != 3 or triangles.shape[1:] != (3, 3):
        raise ValueError(f"triangles must have shape (T, 3, 3), got {triangles.shape}")
    if not (np.all(np.isfinite(origins)) and np.all(np.isfinite(triangles))):
        raise ValueError("ray origins and triangles must be finite")
    if not max_distance >= 0.0:
        raise ValueError(f"max_distance must be non-negative (m), got {max_distance}")
    return _cast_rays(origins, triangles, float(max_distance))


@dataclass(frozen=True, eq=False)
class JawContact:
    """Where one jaw's pad meets the object (world frame, m; normals are the object's outward
    unit normals, pointing at the jaw).

    hit: some footprint ray touches the object within the jaw's travel; travel: distance the jaw
    moves from its start (`tooltip_pose`) to first contact (nan on a miss); tooltip_pose: the
    jaw's tooltip frame at the start opening (4x4); closing_direction (3,).
    first_point, first_normal: the footprint point that touches first (nan on a miss).
    patch_points (K, 3), patch_normals (K, 3): the cells touching within the silicone depth;
    patch_projected_areas (K,): their footprint cell areas (m^2); patch_areas (K,): the object
    surface areas they cover (cell area / |n . closing direction|, m^2); patch_depths (K,):
    penetration depth of the pad advanced the silicone depth past first contact (m).
    start_inside: some footprint ray starts inside the object (the jaw overlaps it when open).
    """

    hit: bool
    travel: float
    tooltip_pose: np.ndarray
    closing_direction: np.ndarray
    first_point: np.ndarray
    first_normal: np.ndarray
    patch_points: np.ndarray
    patch_normals: np.ndarray
    patch_projected_areas: np.ndarray
    patch_areas: np.ndarray
    patch_depths: np.ndarray
    start_inside: bool


@dataclass(frozen=True, eq=False)
class GraspContacts:
    """Both jaws' contacts for one grasp, in the world frame of the placed scene: `jaws`, the
    `opening` they start from (m), the jaw `width` at contact (m, the opening minus both travels;
    nan on a miss), the object's `center_of_mass` (3,, m) and `mass` (kg), and the placed
    `object_pose` and `grasp_pose`."""

    jaws: tuple[JawContact, JawContact]
    opening: float
    width: float
    center_of_mass: np.ndarray
    mass: float
    object_pose: np.ndarray
    grasp_pose: np.ndarray

    @property
    def hit(self) -> bool:
        """Both jaws touch the object."""
        return self.jaws[0].hit and self.jaws[1].hit

    @property
    def clear(self) -> bool:
        """Neither jaw overlaps the object at the start opening."""
        return not (self.jaws[0].start_inside or self.jaws[1].start_inside)


def jaw_contact(vertices, faces, tooltip_pose, footprint: Footprint, max_travel: float,
                silicone_depth: float = SILICONE_DEPTH) -> JawContact:
    """One jaw's contact with a closed, outward-oriented object surface (`vertices` (n, 3) world,
    m; `faces` (F, 3)): rays from the `footprint` in the tooltip frame `tooltip_pose` (4x4) along
    its z axis, up to `max_travel` (m). See the module docstring for what is measured."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    pose = np.asarray(tooltip_pose, dtype=np.float64)
    if not silicone_depth >= 0.0:
        raise ValueError(f"silicone_depth must be non-negative (m), got {silicone_depth}")
    rotation, origin = pose[:3, :3], pose[:3, 3]
    local = (vertices - origin) @ rotation
    triangles = local[faces]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    in_reach = (local[:, 2] >= 0.0) & (local[:, 2] <= max_travel)
    outline = shapely.Polygon(footprint.polygon)
    in_reach[in_reach] = shapely.contains_xy(outline, local[in_reach, 0], local[in_reach, 1])
    n_cells = len(footprint.points)
    origins = np.vstack([footprint.points, footprint.boundary, local[in_reach, :2]])
    # cast without the travel limit: a ray starting inside the object exits it beyond
    distance, face = cast_rays(origins, triangles)
    crossed = face >= 0
    entering = np.zeros(len(origins), dtype=bool)
    entering[crossed] = normals[face[crossed], 2] < 0.0
    start_inside = bool(np.any(crossed[:n_cells] & ~entering[:n_cells]))
    entering &= distance <= max_travel

    def world_point(k):
        return origin + rotation @ np.array([origins[k, 0], origins[k, 1], distance[k]])

    closing = rotation[:, 2].copy()
    nan3 = np.full(3, np.nan)
    if not entering.any():
        empty = np.empty((0, 3))
        return JawContact(False, math.nan, pose, closing, nan3, nan3, empty, empty, np.empty(0), np.empty(0),
                          np.empty(0), start_inside)
    touching = np.flatnonzero(entering)
    first = touching[np.argmin(distance[touching])]
    travel = float(distance[first])
    patch = np.flatnonzero(entering[:n_cells] & (distance[:n_cells] <= travel + silicone_depth))
    projected = footprint.areas[patch]
    if len(patch) == 0:
        # the object only pokes between the cell rays at the footprint's edge: the first contact
        # alone, weighted with the area of the cell it lies in
        patch = np.array([first])
        projected = footprint.areas[[np.argmin(np.sum((footprint.points - origins[first]) ** 2, axis=1))]]
    patch_normals_local = normals[face[patch]]
    local_points = np.column_stack([origins[patch], distance[patch]])
    return JawContact(
        hit=True, travel=travel, tooltip_pose=pose, closing_direction=closing,
        first_point=world_point(first), first_normal=rotation @ normals[face[first]],
        patch_points=origin + local_points @ rotation.T,
        patch_normals=patch_normals_local @ rotation.T,
        patch_projected_areas=projected.copy(),
        patch_areas=projected / np.abs(patch_normals_local[:, 2]),
        patch_depths=travel + silicone_depth - distance[patch],
        start_inside=start_inside)


def grasp_contacts(obj, object_pose, grasp_pose, gripper: Gripper | None = None,
                   silicone_depth: float = SILICONE_DEPTH, spacing: float = GRID_SPACING,
                   extra_opening: float = EXTRA_OPENING) -> GraspContacts:
    """Both jaws' contacts for a grasp (already perturbed) on `obj` (a `GraspObject`): the scene
    placed by `place_scene`, each jaw's footprint (`pad_footprint(gripper.pad_kind, spacing)`)
    cast from the opening `gripper.max_opening + extra_opening` (m) over the whole opening.
    `gripper` defaults to the YuMi."""
    gripper = gripper or Gripper.yumi()
    object_pose, grasp_pose = place_scene(obj.mesh, object_pose, grasp_pose)
    vertices = trimesh.transform_points(np.asarray(obj.mesh.vertices, dtype=np.float64), object_pose)
    faces = np.asarray(obj.mesh.faces, dtype=np.int64)
    footprint = pad_footprint(gripper.pad_kind, spacing)
    if not extra_opening >= 0.0:
        raise ValueError(f"extra_opening must be non-negative (m), got {extra_opening}")
    opening = gripper.max_opening + extra_opening
    jaws = tuple(jaw_contact(vertices, faces, pose, footprint, opening, silicone_depth)
                 for pose in gripper.tooltip_poses(grasp_pose, opening))
    width = opening - jaws[0].travel - jaws[1].travel
    center_of_mass = object_pose[:3, :3] @ obj.properties.center_of_mass + object_pose[:3, 3]
    return GraspContacts(jaws, float(opening), float(width), center_of_mass, float(obj.mass), object_pose,
                         grasp_pose)
