"""Off-screen pictures of a grasp trial: shaded triangle meshes of the object, pads and backing
plates over a tiled ground (z = 0), drawn with matplotlib (Agg) and written as PNG or animated GIF.

A frame is what `GraspResult.frames` holds: {"time": s, body name: (n, 3) world vertices in m};
`faces` maps body name -> (F, 3) vertex indices of its surface triangles.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mpl_toolkits.mplot3d import proj3d  # noqa: E402
from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # noqa: E402
from PIL import Image  # noqa: E402
from scipy.spatial import ConvexHull  # noqa: E402

from ipcgrasp.io import write_bytes_atomic  # noqa: E402

# base colours (RGB in [0, 1]) by body kind: the name without its jaw index
BODY_COLOURS = {
    "object": (0.90, 0.50, 0.15),
    "pad": (0.25, 0.50, 0.85),
    "backing": (0.40, 0.40, 0.43),
}
OTHER_COLOUR = (0.6, 0.3, 0.7)
GROUND_COLOURS = ((0.86, 0.86, 0.84), (0.74, 0.74, 0.72))
SHADOW_COLOUR = (0.2, 0.2, 0.2, 0.35)  # the object's shadow under a light straight above: shows lift height
GROUND_TILE = 0.01  # m, edge of one ground tile: a 1 cm scale in every picture
# towards the light for a camera at azimuth -60 deg; the light turns with the camera
LIGHT = np.array([0.35, -0.45, 0.82])
AMBIENT, DIFFUSE = 0.35, 0.65
ELEVATION = 30.0  # deg above the horizon
OBLIQUE = 15.0  # deg the camera turns away from looking straight across the closing direction
MARGIN = 0.3  # ground beyond the framed points, as a fraction of their extent
FILL = 0.92  # fraction of the picture's half-width (or height) the framed points reach from its centre
# matplotlib depth-sorts whole triangles by their centroids, which puts a large object face in
# front of a small pad face behind it; splitting faces to this fraction of the scene avoids it
SORT_EDGE = 1.0 / 40.0


def _kind(name: str) -> str:
    return name.rstrip("0123456789")


def body_colour(name: str) -> tuple:
    """Base RGB colour of a body by its kind ("object", "pad<i>", "backing<i>")."""
    return BODY_COLOURS.get(_kind(name), OTHER_COLOUR)


def lambert_shade(triangles: np.ndarray, colour, light=LIGHT) -> np.ndarray:
    """RGBA per triangle: colour x (ambient + diffuse |n . l|), n the unit face normal,
    l the unit light direction (Lambert's cosine law, two-sided). triangles: (F, 3, 3)."""
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    norm = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, norm, out=np.zeros_like(normals), where=norm > 0)
    light = np.asarray(light, dtype=np.float64) / np.linalg.norm(light)
    intensity = AMBIENT + DIFFUSE * np.abs(normals @ light)
    rgba = np.empty((len(triangles), 4))
    rgba[:, :3] = np.clip(intensity[:, None] * np.asarray(colour, dtype=np.float64), 0.0, 1.0)
    rgba[:, 3] = 1.0
    return rgba


def subdivide_triangles(triangles: np.ndarray, max_edge: float) -> tuple[np.ndarray, np.ndarray]:
    """Split each triangle (F, 3, 3) into k^2 congruent ones, k = ceil(longest edge / max_edge);
    returns the new triangles and the index of each one's parent."""
    edges = np.linalg.norm(triangles[:, [1, 2, 0]] - triangles, axis=2).max(axis=1)
    ks = np.maximum(np.ceil(edges / max_edge).astype(np.int64), 1)
    pieces, parents = [], []
    for k in np.unique(ks):
        chosen = np.flatnonzero(ks == k)
        pieces.append(np.einsum("sjc,fcd->fsjd", _barycentric_grid(int(k)), triangles[chosen]).reshape(-1, 3, 3))
        parents.append(np.repeat(chosen, k * k))
    return np.concatenate(pieces), np.concatenate(parents)


def _barycentric_grid(k: int) -> np.ndarray:
    """Barycentric corners (k^2, 3, 3) of the k^2 sub-triangles of a triangle split k times per edge."""
    corners = []
    for i in range(k):
        for j in range(k - i):
            a, b, c = (i, j), (i + 1, j), (i, j + 1)
            corners.append([a, b, c])
            if j < k - i - 1:
                corners.append([b, (i + 1, j + 1), c])
    ij = np.array(corners, dtype=np.float64) / k
    return np.concatenate([1.0 - ij.sum(axis=2, keepdims=True), ij], axis=2)


def _bodies(frame: dict, faces: dict) -> list[str]:
    return [name for name in faces if name in frame and len(faces[name])]


def framed_points(frames, faces) -> np.ndarray:
    """The points (N, 3) in m the camera keeps in view: every body vertex over `frames` and
    its foot on the ground (z = 0), so the ground under a lifted object shows."""
    points = [np.asarray(f[name], dtype=np.float64) for f in frames for name in _bodies(f, faces)]
    if not points:
        raise ValueError("no body of `faces` appears in the frames; nothing to render")
    points = np.vstack(points)
    return np.vstack([points, points * [1.0, 1.0, 0.0]])


def _box_corners(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def camera_azimuth(frame: dict) -> float:
    """Azimuth (deg, matplotlib convention) of a camera looking across the closing direction
    (pad0 -> pad1) from the side where the pads are, so the object does not hide them, turned
    OBLIQUE degrees so the inner face of one pad shows; -60 when there are no two pads or they
    close vertically."""
    if "pad0" not in frame or "pad1" not in frame:
        return -60.0
    pad0, pad1 = np.mean(frame["pad0"], axis=0), np.mean(frame["pad1"], axis=0)
    closing = pad1 - pad0
    if np.hypot(closing[0], closing[1]) < 0.1 * np.linalg.norm(closing):
        return -60.0
    across = np.array([-closing[1], closing[0]])
    if "object" in frame and across @ (0.5 * (pad0 + pad1) - np.mean(frame["object"], axis=0))[:2] < 0.0:
        across = -across
    return float(np.degrees(np.arctan2(across[1], across[0]))) - OBLIQUE


class _Canvas:
    """One matplotlib figure reused for every frame of a trial (same camera and zoom)."""

    def __init__(self, points, azimuth: float, size: tuple[int, int], dpi: int):
        self.figure = plt.figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
        self.figure.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.92)
        self.axes = ax = self.figure.add_subplot(projection="3d", computed_zorder=False)
        lo, hi = points.min(axis=0), points.max(axis=0)
        centre, half = 0.5 * (lo + hi), (0.5 + MARGIN) * max(float(np.max(hi - lo)), 1e-3)
        # a cube of equal side around the points: equal aspect on all three axes
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_zlim(centre[2] - half, centre[2] + half)
        ax.set_proj_type("ortho")
        ax.view_init(elev=ELEVATION, azim=azimuth)
        ax.set_axis_off()
        ax.set_box_aspect((1, 1, 1), zoom=1.0)
        ax.set_box_aspect((1, 1, 1), zoom=FILL * self._room(points))
        self.max_edge = SORT_EDGE * 2 * half
        self.light = _rotate_z(LIGHT, np.radians(azimuth + 60.0))
        ax.add_collection3d(self._ground(centre, half), autolim=False)
        self.artists = []

    def _room(self, points) -> float:
        """How many times the points, seen by the camera, fit into the picture around its centre
        (the zoom that makes the outermost touch the picture's border)."""
        self.figure.canvas.draw()
        xs, ys, _ = proj3d.proj_transform(*points.T, self.axes.get_proj())
        pixels = self.axes.transData.transform(np.column_stack([xs, ys]))
        box = self.axes.bbox
        reach = np.abs(pixels - [0.5 * (box.x0 + box.x1), 0.5 * (box.y0 + box.y1)]).max(axis=0)
        return float(min(0.5 * box.width / reach[0], 0.5 * box.height / reach[1]))

    @staticmethod
    def _ground(centre, half) -> Poly3DCollection:
        n = int(np.ceil(2 * half / GROUND_TILE)) + 1
        x0 = np.floor((centre[0] - half) / GROUND_TILE) * GROUND_TILE
        y0 = np.floor((centre[1] - half) / GROUND_TILE) * GROUND_TILE
        tiles, colours = [], []
        for i in range(n):
            for j in range(n):
                x, y = x0 + i * GROUND_TILE, y0 + j * GROUND_TILE
                tiles.append([(x, y, 0.0), (x + GROUND_TILE, y, 0.0), (x + GROUND_TILE, y + GROUND_TILE, 0.0),
                              (x, y + GROUND_TILE, 0.0)])
                colours.append(GROUND_COLOURS[(i + j) % 2])
        # the ground lies below everything and the camera looks down: draw it first
        return Poly3DCollection(tiles, facecolors=colours, edgecolors="none", zorder=0)

    def draw(self, frame: dict, faces: dict, title: str) -> np.ndarray:
        triangles, colours = [], []
        for name in _bodies(frame, faces):
            tri = np.asarray(frame[name], dtype=np.float64)[np.asarray(faces[name])]
            pieces, parents = subdivide_triangles(tri, self.max_edge)
            triangles.append(pieces)
            colours.append(lambert_shade(tri, body_colour(name), self.light)[parents])
        triangles, colours = np.concatenate(triangles), np.concatenate(colours)
        for artist in self.artists:
            artist.remove()
        self.artists = []
        if "object" in frame:
            self.artists.append(self.axes.add_collection3d(_shadow(frame["object"]), autolim=False))
        # one collection for all bodies so faces are depth-sorted across bodies
        # edges in the face colour close the hairline gaps anti-aliasing leaves between faces
        meshes = Poly3DCollection(triangles, facecolors=colours, edgecolors=colours, linewidths=0.3, zorder=2)
        self.artists.append(self.axes.add_collection3d(meshes, autolim=False))
        self.axes.set_title(title, fontsize=10)
        self.figure.canvas.draw()
        return np.asarray(self.figure.canvas.buffer_rgba())[..., :3].copy()

    def close(self):
        plt.close(self.figure)


def _shadow(vertices) -> Poly3DCollection:
    """The convex hull of the vertices projected on the ground, as a translucent patch."""
    xy = np.asarray(vertices, dtype=np.float64)[:, :2]
    hull = xy[ConvexHull(xy).vertices]
    return Poly3DCollection([np.column_stack([hull, np.zeros(len(hull))])], facecolors=[SHADOW_COLOUR],
                            edgecolors="none", zorder=1)


def _rotate_z(v, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


def frame_title(time: float, phase: str | None = None, caption: str | None = None) -> str:
    """"caption   t = 0.42 s   phase" (the parts given)."""
    parts = [caption] if caption else []
    parts.append(f"t = {time:.2f} s")
    if phase:
        parts.append(phase)
    return "   ".join(parts)


def _png_bytes(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def render_frame(frame: dict, faces: dict, path: str | os.PathLike | None = None, *, phase: str | None = None,
                 caption: str | None = None, bounds=None, azimuth: float | None = None,
                 size: tuple[int, int] = (800, 600), dpi: int = 100) -> np.ndarray:
    """Render one frame; return the RGB image (H, W, 3) uint8 and, with `path`, also write it as
    PNG. bounds: (lo, hi) box in m to keep in view (default: see `framed_points`);
    azimuth in deg (default: `camera_azimuth`)."""
    canvas = _Canvas(framed_points([frame], faces) if bounds is None else _box_corners(*bounds),
                     camera_azimuth(frame) if azimuth is None else azimuth, size, dpi)
    try:
        image = canvas.draw(frame, faces, frame_title(frame["time"], phase, caption))
    finally:
        canvas.close()
    if path is not None:
        write_bytes_atomic(path, _png_bytes(image))
    return image


def trial_phases(result) -> list[str]:
    """Phase of each recorded frame of a trial, from its time: "settle" until the squeeze
    starts, "squeeze" until the close rule fired, then "lift and hold"; the last frame names the
    outcome."""
    tolerance = 1e-9
    phases = []
    for frame in result.frames:
        t = frame["time"]
        if t < result.squeeze_time - tolerance:
            phases.append("settle")
        elif not np.isfinite(result.close_time) or t <= result.close_time + tolerance:
            phases.append("squeeze")
        else:
            phases.append("lift and hold")
    if phases:
        outcome = "success" if result.success else f"failed: {result.failure_mode}"
        phases[-1] = f"end ({outcome})"
    return phases


def still_paths(out_path: str | os.PathLike) -> tuple[Path, Path]:
    """Where `render_trial` puts the first and final stills: out.gif -> out_first.png, out_final.png."""
    out = Path(out_path)
    return out.with_name(f"{out.stem}_first.png"), out.with_name(f"{out.stem}_final.png")


def _subsample(n: int, every: int) -> list[int]:
    indices = list(range(0, n, every))
    if indices[-1] != n - 1:
        indices.append(n - 1)
    return indices


def render_trial(result, out_path: str | os.PathLike, fps: float = 10.0, every: int = 2, *,
                 caption: str | None = None, size: tuple[int, int] = (640, 480), dpi: int = 100) -> dict:
    """Animated GIF of a trial recorded with record_frames=True (every `every`-th frame and the
    last, `fps` frames per second), plus PNG stills of the first and the final frame (after the
    lift, or where the trial ended) beside it, all with one camera. Returns
    {"gif": path, "first": path, "final": path, "frames": number of GIF frames}."""
    if not result.frames or not result.faces:
        raise ValueError("the trial has no recorded frames; simulate it with record_frames=True")
    if every < 1 or not fps > 0:
        raise ValueError(f"need every >= 1 and fps > 0, got every={every}, fps={fps}")
    indices = _subsample(len(result.frames), every)
    frames = [result.frames[i] for i in indices]
    phases = trial_phases(result)
    canvas = _Canvas(framed_points(frames, result.faces), camera_azimuth(result.frames[0]), size, dpi)
    try:
        images = [canvas.draw(f, result.faces, frame_title(f["time"], phases[i], caption))
                  for i, f in zip(indices, frames)]
    finally:
        canvas.close()
    gif = Path(out_path)
    palette = [Image.fromarray(im).quantize(colors=255, method=Image.Quantize.MEDIANCUT) for im in images]
    buffer = io.BytesIO()
    palette[0].save(buffer, format="GIF", save_all=True, append_images=palette[1:],
                    duration=int(round(1000 / fps)), loop=0, disposal=1)
    write_bytes_atomic(gif, buffer.getvalue())
    first, final = still_paths(gif)
    write_bytes_atomic(first, _png_bytes(images[0]))
    write_bytes_atomic(final, _png_bytes(images[-1]))
    return {"gif": gif, "first": first, "final": final, "frames": len(images)}


def render_stills(result, path: str | os.PathLike, *, caption: str | None = None,
                  size: tuple[int, int] = (640, 480), dpi: int = 100) -> np.ndarray:
    """The first and the final frame of a recorded trial side by side in one PNG (one camera);
    returns the RGB image."""
    if not result.frames or not result.faces:
        raise ValueError("the trial has no recorded frames; simulate it with record_frames=True")
    ends = [result.frames[0], result.frames[-1]]
    phases = trial_phases(result)
    canvas = _Canvas(framed_points(ends, result.faces), camera_azimuth(ends[0]), size, dpi)
    try:
        images = [canvas.draw(f, result.faces, frame_title(f["time"], p, caption))
                  for f, p in zip(ends, (phases[0], phases[-1]))]
    finally:
        canvas.close()
    image = np.concatenate(images, axis=1)
    write_bytes_atomic(path, _png_bytes(image))
    return image
