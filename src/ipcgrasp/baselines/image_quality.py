"""Image-space quality measure for antipodal grasps (Tan, Alqasemi, Dubey, Sarkar, "A Practical
and Intuitive Quality Measure for Evaluating Antipodal Grasp Poses in the Image Space",
section III).

What is implemented
-------------------
- `render_silhouette`: the object's binary silhouette seen along the gripper's approach axis
  (gripper z), an orthographic projection onto the gripper frame's x-y plane with square pixels
  of `resolution` metres. The image is the object frame's projection rasterised exactly: a pixel
  is set when its centre lies in a projected triangle. Pixel edges sit on integer multiples of
  the resolution in gripper coordinates, so the gripper's centre is a pixel corner.
- `grasp_quality`: section III on a `Silhouette`. The gripper projection is n grasp lines
  (eqs. 1-3) of length r (the opening range) spread over the pad width w; GRPV (eq. 4) with the
  paper's abnormal grasp distances (no intersection: -r left, r right; an end point inside the
  silhouette: -2r left, 3r right); primary and secondary contact points and CRFV (eq. 5, the
  contact angles and centre offsets Delta w_i); the six features D_m, D_c (eqs. 6-9), D_t (10),
  R_r (11), S_a (12-14), S_f (15-16); linear normalisation to scores with the paper's thresholds
  (D_t: 1; R_r, S_a: 60 degrees; S_f: 1 at 0, 0.7 at w/4, 0 at w/2; D_m, D_c: score 1 - D) and
  the score S = k s_min + (1 - k) s_o- (eq. 17, k = 0.9), with s_o- the mean of the five scores
  other than the minimum.
- `image_quality`: both steps for a mesh and a grasp pose.
- `predict`: the study's baseline interface (`baselines.interface`): the quality of the trial's
  perturbed grasp; success = score >= `SUCCESS_THRESHOLD` (0.5), the score ranks grasps.
The defaults are the YuMi gripper of docs/data.md: pads 16 mm wide across the grasp
(w = 16 mm), 50 mm between the open tooltips (r = 50 mm).

Departures from the paper, and readings of what it leaves open
--------------------------------------------------------------
- The silhouette is the orthographic projection of the whole object mesh, every depth along the
  approach axis included (parts the pads cannot reach, and parts on the camera's side of the
  gripper origin). The paper segments a perspective hand-camera image (Detectron2), i.e. what a
  depth camera sees of the object from the grasp direction, and does not model cross-section
  changes along the projection direction either.
- Grasp points are the exact crossings of a grasp line with the pixel edges of the silhouette
  (a grid traversal), not samples along the line, so a straight pixel edge gives the exact
  distance and the measure has no half-pixel bias.
- Delta d_max (eq. 8) is read as max_i | |d_i^L| - |d_i^R| |. The signed reading makes right-side
  and two-sided collisions negative, which eq. 7 does not define; the absolute reading is the
  only one under which the asymmetric abnormal values (-2r, 3r) flag every collision.
- Primary contact points are the normal grasp points each jaw reaches first: the minimum d^L and
  the maximum d^R (eq. 10 uses these). The paper says "maximum absolute grasp distance", the
  same points whenever the left grasp points lie left of the grasp centre and the right ones
  right of it (d^L <= 0 <= d^R).
- The secondary-contact threshold is not given in the paper: `contact_tol`, default 2 pixels.
- Contact normals are not specified in the paper: the outward normal at a grasp point is minus
  the gradient of the silhouette smoothed by a Gaussian of `NORMAL_SIGMA_PX` pixels (bilinear
  interpolation at the grasp point), which removes the pixel staircase of slanted edges (straight
  edges at any slope give contact angles within about 2 degrees, 0.5 degrees rms); it also rounds
  silhouette corners over about 2.5 sigma.
- S_a uses the mean contact angle of each side (the text: "the average of all the contact
  angles"; eq. 14 writes sums, which grow with the number of grasp lines and would make the
  60-degree threshold meaningless). A side contributes only when its slippage indicator SI^e is
  0 (all its contact angles of one sign); S_a is the mean of the two sides' contributions.
- S_f^e is the absolute centre offset of the force zone (the text calls it a distance with range
  [0, w/2]; eq. 15 without the absolute value could cancel between sides).
- R_r: the rotation centre is the midpoint of the two primary contacts' grasp lines; each side's
  potential after-rotation contact region (PARCR) is that side's normal grasp points from the
  rotation centre's grasp line to the end of the pad in the direction that side turns towards
  its jaw; a_i = angle between the jaw plate (the Delta w direction) and the vector from the
  side's primary contact point to the grasp point. Primary contacts on the same grasp line give
  R_r = 0; no point in either PARCR gives R_r = 90 degrees.
- Features that need normal grasp points on both sides (D_t, R_r, S_a, S_f) are NaN when a side
  has none (a miss, or a collision on every line) and then score 0. Scores are clipped to [0, 1].
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.ndimage
import trimesh

from ipcgrasp.baselines.image_quality_settings import DEFAULT_RESOLUTION
from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.engine._numba import njit
from ipcgrasp.grasp.simulate import perturbed_grasp

__all__ = [
    "ANGLE_THRESHOLD",
    "DEFAULT_RESOLUTION",
    "FEATURE_NAMES",
    "K_MIN",
    "MAX_PIXELS",
    "NORMAL_SIGMA_PX",
    "YUMI_OPENING",
    "YUMI_PAD_WIDTH",
    "ImageQuality",
    "RasterSizeError",
    "Silhouette",
    "grasp_quality",
    "image_quality",
    "predict",
    "render_silhouette",
]

YUMI_PAD_WIDTH = 16e-3
"""Pad width across the grasp (gripper y) after the 0.8 scale, m (docs/data.md): w."""
YUMI_OPENING = 50e-3
"""Distance between the fully open YuMi tooltips, m (docs/data.md): the opening range r."""
MAX_PIXELS = 25_000_000
"""Largest silhouette raster (pixels): 25 MB of mask, a 1 m object at DEFAULT_RESOLUTION; a finer
resolution raises RasterSizeError before anything is allocated."""
K_MIN = 0.9
"""Weight k of the minimum feature score in eq. 17 (the paper's value)."""
ANGLE_THRESHOLD = math.pi / 3
"""R_r and S_a at which their scores reach 0 (60 degrees), rad."""
NORMAL_SIGMA_PX = 3.0
"""Standard deviation (pixels) of the Gaussian that smooths the silhouette for contact normals."""
SUCCESS_THRESHOLD = 0.5
"""Quality score at and above which the measure predicts a successful lift."""
FEATURE_NAMES = ("D_m", "D_c", "D_t", "R_r", "S_a", "S_f")
"""The six high-level features, in the order of `ImageQuality.features`."""


@dataclass(frozen=True, eq=False)
class Silhouette:
    """Binary silhouette in a metric image plane.

    mask[i, j] is True when pixel (row i, column j) is inside the object; the pixel covers
    x in [x0 + j res, x0 + (j+1) res), y in [y0 + i res, y0 + (i+1) res), with (x0, y0) = origin
    in metres and res = resolution (m). Rows grow with y (an image viewer shows it upside down).
    For a rendered silhouette the plane is the gripper frame's x-y plane.
    `gradient` (2 x rows x cols: d/dx, d/dy per pixel) is the gradient of the mask smoothed by a
    Gaussian of NORMAL_SIGMA_PX pixels, computed once; contact normals are read from it.
    """

    mask: np.ndarray
    resolution: float
    origin: tuple[float, float] = (0.0, 0.0)
    gradient: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        mask = np.ascontiguousarray(self.mask, dtype=np.bool_)
        if mask.ndim != 2 or min(mask.shape) < 1:
            raise ValueError(f"a silhouette mask must be a non-empty 2-D array, got shape {mask.shape}")
        if not self.resolution > 0:
            raise ValueError(f"resolution must be positive (m), got {self.resolution}")
        object.__setattr__(self, "mask", mask)
        object.__setattr__(self, "resolution", float(self.resolution))
        object.__setattr__(self, "origin", (float(self.origin[0]), float(self.origin[1])))
        smooth = scipy.ndimage.gaussian_filter(mask.astype(np.float64), NORMAL_SIGMA_PX, mode="constant")
        d_drow, d_dcol = np.gradient(smooth)
        object.__setattr__(self, "gradient", np.ascontiguousarray(np.stack([d_dcol, d_drow])))

    @property
    def area(self) -> float:
        """Area inside the silhouette, m^2."""
        return float(self.mask.sum()) * self.resolution**2

    def to_pixel(self, xy) -> np.ndarray:
        """Continuous pixel coordinates (u, v) = ((x - x0)/res, (y - y0)/res) of points (..., 2) in
        metres; the point lies in pixel mask[floor(v), floor(u)]."""
        return (np.asarray(xy, dtype=np.float64) - np.asarray(self.origin)) / self.resolution

    def to_metric(self, uv) -> np.ndarray:
        """Inverse of `to_pixel`: metres (..., 2) from continuous pixel coordinates (u, v)."""
        return np.asarray(uv, dtype=np.float64) * self.resolution + np.asarray(self.origin)


@dataclass(frozen=True, eq=False)
class ImageQuality:
    """One evaluation of the image-space quality measure (Tan et al., section III).

    score: S of eq. 17 in [0, 1]. miss (D_m) and collision (D_c): the binary detectors.
    d_t: predicted object translation over half the opening range (eq. 10, dimensionless).
    r_r: predicted object rotation (eq. 11, rad). s_a: type-1 slippage, mean contact angle
    (eq. 14, rad). s_f: type-2 slippage, force-zone centre offset (eq. 16, m).
    feature_scores: the normalised scores keyed by FEATURE_NAMES.
    grpv: (2, n) grasp distances of the left and right sides (eq. 4, m), with the abnormal values
    -r / r (no intersection) and -2r / 3r (end point inside the silhouette).
    contact: (2, n) True at the contact points (primary and secondary).
    contact_angle: (2, n) contact angles beta (eq. 12, rad), NaN away from contact points.
    offsets: (n,) centre offsets Delta w_i of the grasp lines (eq. 3, m); with `contact` and
    `contact_angle` they make up CRFV (eq. 5). w, r: pad width and opening range used (m).
    """

    score: float
    miss: bool
    collision: bool
    d_t: float
    r_r: float
    s_a: float
    s_f: float
    feature_scores: dict[str, float]
    grpv: np.ndarray = field(repr=False)
    contact: np.ndarray = field(repr=False)
    contact_angle: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    w: float = field(repr=False)
    r: float = field(repr=False)

    @property
    def features(self) -> dict[str, float]:
        """The raw features keyed by FEATURE_NAMES (D_m, D_c as 0.0/1.0)."""
        return dict(zip(FEATURE_NAMES, (float(self.miss), float(self.collision), self.d_t, self.r_r,
                                         self.s_a, self.s_f)))

    @property
    def translation(self) -> float:
        """Predicted object travel along the closing direction T_d = D_t r / 2, m."""
        return self.d_t * self.r / 2


@njit
def _rasterize(xy, faces, x0, y0, res, n_rows, n_cols):
    """Mask of the pixels whose centre lies in (or on the edge of) a projected triangle."""
    mask = np.zeros((n_rows, n_cols), dtype=np.bool_)
    for f in range(faces.shape[0]):
        ax, ay = xy[faces[f, 0], 0], xy[faces[f, 0], 1]
        bx, by = xy[faces[f, 1], 0], xy[faces[f, 1], 1]
        cx, cy = xy[faces[f, 2], 0], xy[faces[f, 2], 1]
        area2 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        if area2 == 0.0:
            continue
        s = 1.0 if area2 > 0.0 else -1.0
        j_lo = max(0, int(math.ceil((min(ax, bx, cx) - x0) / res - 0.5)))
        j_hi = min(n_cols - 1, int(math.floor((max(ax, bx, cx) - x0) / res - 0.5)))
        i_lo = max(0, int(math.ceil((min(ay, by, cy) - y0) / res - 0.5)))
        i_hi = min(n_rows - 1, int(math.floor((max(ay, by, cy) - y0) / res - 0.5)))
        for i in range(i_lo, i_hi + 1):
            py = y0 + (i + 0.5) * res
            for j in range(j_lo, j_hi + 1):
                px = x0 + (j + 0.5) * res
                if (s * ((bx - ax) * (py - ay) - (by - ay) * (px - ax)) >= 0.0
                        and s * ((cx - bx) * (py - by) - (cy - by) * (px - bx)) >= 0.0
                        and s * ((ax - cx) * (py - cy) - (ay - cy) * (px - cx)) >= 0.0):
                    mask[i, j] = True
    return mask


class RasterSizeError(ValueError):
    """The silhouette raster would exceed MAX_PIXELS at the requested resolution."""


def render_silhouette(mesh: trimesh.Trimesh, grasp_pose, resolution: float = DEFAULT_RESOLUTION,
                      margin: float = 1e-3, object_pose=None) -> Silhouette:
    """Orthographic silhouette of `mesh` seen along the gripper's approach axis (gripper z).

    grasp_pose: 4x4 gripper frame in the mesh's frame, or in the world when `object_pose` (4x4,
    mesh frame in the world) is given. The whole object is projected onto the gripper x-y plane
    (every depth along z); the image covers the projection plus `margin` (m) on every side, with
    pixel edges on integer multiples of `resolution` (m) in gripper coordinates.
    """
    if not resolution > 0 or not margin >= 0:
        raise ValueError(f"resolution must be positive and margin non-negative, got {resolution}, {margin}")
    to_gripper = np.linalg.inv(np.asarray(grasp_pose, dtype=np.float64))
    if object_pose is not None:
        to_gripper = to_gripper @ np.asarray(object_pose, dtype=np.float64)
    vertices = np.asarray(mesh.vertices, dtype=np.float64)
    xy = np.ascontiguousarray((vertices @ to_gripper[:3, :3].T + to_gripper[:3, 3])[:, :2])
    lo = np.floor((xy.min(axis=0) - margin) / resolution).astype(np.int64)
    hi = np.ceil((xy.max(axis=0) + margin) / resolution).astype(np.int64)
    x0, y0 = lo * resolution
    n_cols, n_rows = (hi - lo).tolist()
    if n_cols * n_rows > MAX_PIXELS:
        raise RasterSizeError(f"a silhouette of {n_cols} x {n_rows} pixels at resolution {resolution:g} m exceeds "
                              f"{MAX_PIXELS:.3g} pixels; fix: a resolution of at least "
                              f"{resolution * math.sqrt(n_cols * n_rows / MAX_PIXELS):.3g} m")
    faces = np.ascontiguousarray(mesh.faces, dtype=np.int64)
    mask = _rasterize(xy, faces, float(x0), float(y0), float(resolution), n_rows, n_cols)
    return Silhouette(mask, resolution, (float(x0), float(y0)))


@njit
def _grasp_distances(mask, x0, y0, res, sx, sy, ct, st, r):
    """Left and right grasp distances of one grasp line from (sx, sy) along (ct, st), length r.

    Walks the pixels the segment crosses (Amanatides-Woo traversal); the left grasp point is the
    entry of the first inside pixel, the right one the exit of the last inside pixel.
    """
    n_rows, n_cols = mask.shape
    u = (sx - x0) / res
    v = (sy - y0) / res
    col = int(math.floor(u))
    row = int(math.floor(v))
    if ct > 0.0:
        step_c, t_next_c, t_delta_c = 1, (col + 1 - u) * res / ct, res / ct
    elif ct < 0.0:
        step_c, t_next_c, t_delta_c = -1, (u - col) * res / -ct, res / -ct
    else:
        step_c, t_next_c, t_delta_c = 0, np.inf, np.inf
    if st > 0.0:
        step_r, t_next_r, t_delta_r = 1, (row + 1 - v) * res / st, res / st
    elif st < 0.0:
        step_r, t_next_r, t_delta_r = -1, (v - row) * res / -st, res / -st
    else:
        step_r, t_next_r, t_delta_r = 0, np.inf, np.inf
    t = 0.0
    first = -1.0
    last = -1.0
    start_inside = False
    end_inside = False
    first_cell = True
    while True:
        t_exit = min(t_next_c, t_next_r, r)
        inside = 0 <= row < n_rows and 0 <= col < n_cols and mask[row, col]
        if inside:
            if first < 0.0:
                first = t
                start_inside = first_cell
            last = t_exit
        if t_exit >= r:
            end_inside = inside
            break
        first_cell = False
        if t_next_c < t_next_r:
            col += step_c
            t = t_next_c
            t_next_c += t_delta_c
        else:
            row += step_r
            t = t_next_r
            t_next_r += t_delta_r
    if first < 0.0:
        return -r, r
    d_left = -2.0 * r if start_inside else first - 0.5 * r
    d_right = 3.0 * r if end_inside else last - 0.5 * r
    return d_left, d_right


@njit
def _contact_angle(gradient, x0, y0, res, px, py, fx, fy, nx_axis, ny_axis):
    """Contact angle beta (eq. 12, rad) at (px, py) for jaw force direction (fx, fy).

    |beta| is the angle between the force and the inward normal (the smoothed-silhouette
    gradient), capped at 90 degrees; its sign is that of the outward normal's component along the
    gripper-frame y axis (nx_axis, ny_axis).
    """
    n_rows, n_cols = gradient.shape[1], gradient.shape[2]
    u = (px - x0) / res - 0.5
    v = (py - y0) / res - 0.5
    j0 = int(math.floor(u))
    i0 = int(math.floor(v))
    fu = u - j0
    fv = v - i0
    gx = 0.0
    gy = 0.0
    for di in range(2):
        for dj in range(2):
            i = i0 + di
            j = j0 + dj
            if 0 <= i < n_rows and 0 <= j < n_cols:
                weight = (fv if di else 1.0 - fv) * (fu if dj else 1.0 - fu)
                gx += weight * gradient[0, i, j]
                gy += weight * gradient[1, i, j]
    norm = math.hypot(gx, gy)
    if norm == 0.0:
        return 0.0
    cos_beta = (fx * gx + fy * gy) / norm
    beta = math.acos(min(1.0, max(0.0, cos_beta)))
    outward_y = -(gx * nx_axis + gy * ny_axis)
    if outward_y < 0.0:
        return -beta
    return beta


@njit
def _linear_score(value, threshold):
    return min(1.0, max(0.0, 1.0 - value / threshold))


@njit
def _grasp_quality(mask, gradient, x0, y0, res, cx, cy, theta, w, r, n, contact_tol):
    """Section III on one grasp (x, y, theta, w, r, n); see the module docstring.

    Returns grpv (2, n), contact (2, n), contact angles (2, n), offsets (n,),
    features (6: D_m, D_c, D_t, R_r, S_a, S_f) and their scores (6).
    """
    ct = math.cos(theta)
    st = math.sin(theta)
    offsets = np.zeros(n)
    grpv = np.empty((2, n))
    for i in range(n):
        if n > 1:
            offsets[i] = w * (2 * (i + 1) - n - 1) / (2.0 * (n - 1))
        sx = cx - offsets[i] * st - 0.5 * r * ct
        sy = cy + offsets[i] * ct - 0.5 * r * st
        grpv[0, i], grpv[1, i] = _grasp_distances(mask, x0, y0, res, sx, sy, ct, st, r)
    contact = np.zeros((2, n), dtype=np.bool_)
    beta = np.full((2, n), np.nan)
    features = np.full(6, np.nan)
    scores = np.zeros(6)

    dd_max = -np.inf
    dl_max = -np.inf
    i_left = -1
    i_right = -1
    for i in range(n):
        dd_max = max(dd_max, abs(abs(grpv[0, i]) - abs(grpv[1, i])))
        dl_max = max(dl_max, grpv[0, i])
        if abs(grpv[0, i]) <= 0.5 * r and (i_left < 0 or grpv[0, i] < grpv[0, i_left]):
            i_left = i
        if abs(grpv[1, i]) <= 0.5 * r and (i_right < 0 or grpv[1, i] > grpv[1, i_right]):
            i_right = i
    features[0] = 1.0 if dd_max == 0.0 and dl_max == -r else 0.0
    features[1] = 1.0 if dd_max >= 0.5 * r else 0.0
    scores[0] = 1.0 - features[0]
    scores[1] = 1.0 - features[1]

    if i_left >= 0 and i_right >= 0:
        features[2] = abs(grpv[0, i_left] + grpv[1, i_right]) / r

        # Contact points, their angles (type-1 slippage) and force zones (type-2 slippage).
        s_a = 0.0
        s_f = 0.0
        for side in range(2):
            sign = 1.0 if side == 0 else -1.0
            primary = grpv[side, i_left if side == 0 else i_right]
            n_contact = 0
            beta_sum = 0.0
            beta_abs_sum = 0.0
            w_min = np.inf
            w_max = -np.inf
            for i in range(n):
                d = grpv[side, i]
                if abs(d) <= 0.5 * r and sign * (d - primary) < contact_tol:
                    contact[side, i] = True
                    px = cx - offsets[i] * st + d * ct
                    py = cy + offsets[i] * ct + d * st
                    b = _contact_angle(gradient, x0, y0, res, px, py, sign * ct, sign * st, -st, ct)
                    beta[side, i] = b
                    n_contact += 1
                    beta_sum += b
                    beta_abs_sum += abs(b)
                    w_min = min(w_min, offsets[i])
                    w_max = max(w_max, offsets[i])
            if beta_abs_sum == abs(beta_sum):  # SI^e = 0 (eq. 13), exact when all share a sign
                s_a += 0.5 * abs(beta_sum) / n_contact
            s_f += 0.5 * abs(w_min + w_max) / 2.0
        features[4] = s_a
        features[5] = s_f

        # Rotation about the primary contacts towards the potential after-rotation contact regions.
        if i_left == i_right:
            features[3] = 0.0
        else:
            # Each side turns towards its jaw on the far side of the rotation centre (the
            # midpoint of the primary lines) from its own primary contact.
            r_r = 0.5 * math.pi
            centre2 = i_left + i_right
            for i in range(n):
                below = 2 * i <= centre2
                above = 2 * i >= centre2
                toward_left = below if i_left > i_right else above
                toward_right = above if i_left > i_right else below
                if toward_left and abs(grpv[0, i]) <= 0.5 * r:
                    r_r = min(r_r, math.atan2(grpv[0, i] - grpv[0, i_left], abs(offsets[i] - offsets[i_left])))
                if toward_right and abs(grpv[1, i]) <= 0.5 * r:
                    r_r = min(r_r, math.atan2(grpv[1, i_right] - grpv[1, i], abs(offsets[i] - offsets[i_right])))
            features[3] = r_r

        scores[2] = _linear_score(features[2], 1.0)
        scores[3] = _linear_score(features[3], ANGLE_THRESHOLD)
        scores[4] = _linear_score(features[4], ANGLE_THRESHOLD)
        quarter = 0.25 * w
        if features[5] <= quarter:
            scores[5] = 1.0 - 0.3 * features[5] / quarter
        else:
            scores[5] = max(0.0, 0.7 * (2.0 * quarter - features[5]) / quarter)
    return grpv, contact, beta, offsets, features, scores


def grasp_quality(silhouette: Silhouette, w: float = YUMI_PAD_WIDTH, r: float = YUMI_OPENING,
                  n_lines: int | None = None, contact_tol: float | None = None,
                  centre=(0.0, 0.0), theta: float = 0.0, k: float = K_MIN) -> ImageQuality:
    """Image-space quality (Tan et al., section III) of a planar grasp on a silhouette.

    The grasp is centred at `centre` (m, silhouette frame) with its closing direction at angle
    `theta` (rad) from the silhouette's x axis; the defaults are the gripper that rendered the
    silhouette. w: pad width (m), r: opening range (m), n_lines: grasp lines (default one per
    pixel of w), contact_tol: secondary-contact threshold (m, default two pixels), k: eq. 17.
    """
    if not (w > 0 and r > 0 and 0 <= k <= 1):
        raise ValueError(f"need w > 0, r > 0 and 0 <= k <= 1, got w={w}, r={r}, k={k}")
    res = silhouette.resolution
    n = max(1, round(w / res)) if n_lines is None else int(n_lines)
    if n < 1:
        raise ValueError(f"n_lines must be at least 1, got {n_lines}")
    tol = 2.0 * res if contact_tol is None else float(contact_tol)
    x0, y0 = silhouette.origin
    grpv, contact, beta, offsets, features, scores = _grasp_quality(
        silhouette.mask, silhouette.gradient, x0, y0, res, float(centre[0]), float(centre[1]),
        float(theta), float(w), float(r), n, tol)
    lowest = int(np.argmin(scores))
    others = (scores.sum() - scores[lowest]) / (len(scores) - 1)
    return ImageQuality(
        score=float(k * scores[lowest] + (1.0 - k) * others),
        miss=bool(features[0]), collision=bool(features[1]),
        d_t=float(features[2]), r_r=float(features[3]), s_a=float(features[4]), s_f=float(features[5]),
        feature_scores=dict(zip(FEATURE_NAMES, scores.tolist())),
        grpv=grpv, contact=contact, contact_angle=beta, offsets=offsets, w=float(w), r=float(r))


def image_quality(mesh: trimesh.Trimesh, grasp_pose, object_pose=None,
                  resolution: float = DEFAULT_RESOLUTION, **kwargs) -> ImageQuality:
    """`render_silhouette` then `grasp_quality` at the gripper's own centre and orientation.

    grasp_pose / object_pose as in `render_silhouette`; kwargs go to `grasp_quality`
    (w, r, n_lines, contact_tol, k).
    """
    return grasp_quality(render_silhouette(mesh, grasp_pose, resolution, object_pose=object_pose), **kwargs)


def predict(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """The image-space quality of one trial's perturbed grasp (`interface.Prediction`): success =
    score >= SUCCESS_THRESHOLD; info holds the predicted object translation along the closing
    direction (translation, m) and D_t (eq. 10), rotation R_r (rad), S_a (rad), S_f (m), and
    miss/collision."""
    start = time.perf_counter()
    q = image_quality(obj.mesh, perturbed_grasp(grasp_pose, params, seed), object_pose=object_pose)
    info = {"translation": q.translation, "d_t": q.d_t, "r_r": q.r_r, "s_a": q.s_a, "s_f": q.s_f, "miss": q.miss, "collision": q.collision}
    return Prediction(q.score >= SUCCESS_THRESHOLD, q.score, time.perf_counter() - start, info)
