"""Off-screen pictures of a grasp trial: shaded triangle meshes of the object, pads and backing
plates over a tiled ground (z = 0), written as PNG or animated GIF.

Visibility is exact per (sub-)pixel: every pixel shows the nearest surface along its ray
(`ipcgrasp.viz.raycast`, Embree on the CPU), so a body is never drawn through another, and pads
pressed against the object show exactly where they are. Titles, contact markers, force arrows and
the colour bar are drawn over the picture with matplotlib (Agg).

A frame is what `GraspResult.frames` holds: {"time": s, body name: (n, 3) world vertices in m};
`faces` maps body name -> (F, 3) vertex indices of its surface triangles. A frame may also carry
- "contacts": (K, 3) world points in m where bodies touch, drawn as dots over the object and the
  contact's own pad (a contact lies between two touching surfaces, so no line of sight reaches
  it), but not where another body, a backing plate or finger or the other pad, stands between it
  and the camera: those are counted in the picture's legend instead;
- "contact_forces": (K, 3) N, the force at each of those points, drawn as arrows from it (one
  length per newton for every frame of a picture, given in the picture);
- "face_values": {body name: (F,) J/m^3}, one value per surface triangle of `faces[body]` (e.g.
  the strain-energy density from `ipcgrasp.viz.strain.surface_energy_density`); that body is then
  coloured by value on one scale for every frame of a picture, with a colour bar.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from PIL import Image

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.viz.camera import OrthoCamera
from ipcgrasp.viz.raycast import RayScene
from ipcgrasp.viz.view_options import ELEVATION

# base colours (RGB in [0, 1]) by body kind: the name without its jaw index
BODY_COLOURS = {
    "object": (0.90, 0.50, 0.15),
    "pad": (0.25, 0.50, 0.85),
    "backing": (0.40, 0.40, 0.43),
}
OTHER_COLOUR = (0.6, 0.3, 0.7)
BACKGROUND = (1.0, 1.0, 1.0)
GROUND_COLOURS = ((0.86, 0.86, 0.84), (0.74, 0.74, 0.72))
SHADOW = (0.2, 0.2, 0.2, 0.35)  # RGB and opacity of the shadows under a light straight above: they show lift height
GROUND_TILE = 0.01  # m, edge of one ground tile: a 1 cm scale in every picture
CONTACT_COLOUR = (0.85, 0.1, 0.1)
FORCE_COLOUR = (0.75, 0.0, 0.45)
CONTACT_DEPTH = 1e-4  # m: a body hit this much nearer the camera than a contact stands in front of it
FORCE_LENGTH = 0.25  # the largest contact force of a picture is drawn this fraction of the scene's extent long
VALUE_COLOURMAP = "viridis"
VALUE_LABEL = "strain-energy density [J/m$^3$]"
# towards the light for a camera at azimuth -60 deg; the light turns with the camera
LIGHT = np.array([0.35, -0.45, 0.82])
AMBIENT, DIFFUSE = 0.35, 0.65
OBLIQUE = 15.0  # deg the camera turns away from looking straight across the closing direction
MARGIN = 0.3  # ground beyond the framed points, as a fraction of their extent
SUPERSAMPLE = 2  # rays per pixel edge (2: 4 rays averaged per pixel, smooth edges)
TITLE_BAND = 0.08  # fraction of the picture's height above the scene that holds the title
COLOUR_BAR_BAND = 0.16  # fraction of the picture's width right of the scene that holds the colour bar


def _kind(name: str) -> str:
    return name.rstrip("0123456789")


def body_colour(name: str) -> tuple:
    """Base RGB colour of a body by its kind ("object", "pad<i>", "backing<i>")."""
    return BODY_COLOURS.get(_kind(name), OTHER_COLOUR)


def lambert_shade(triangles: np.ndarray, colour, light=LIGHT) -> np.ndarray:
    """RGBA per triangle: colour x (ambient + diffuse |n . l|), n the unit face normal,
    l the unit light direction (Lambert's cosine law, two-sided). triangles: (F, 3, 3);
    colour: one RGB (3,) or one per triangle (F, 3), in [0, 1]."""
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    norm = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, norm, out=np.zeros_like(normals), where=norm > 0)
    light = np.asarray(light, dtype=np.float64) / np.linalg.norm(light)
    intensity = AMBIENT + DIFFUSE * np.abs(normals @ light)
    rgba = np.empty((len(triangles), 4))
    rgba[:, :3] = np.clip(intensity[:, None] * np.asarray(colour, dtype=np.float64), 0.0, 1.0)
    rgba[:, 3] = 1.0
    return rgba


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


def _points(frame: dict, key: str, n: int | None = None) -> np.ndarray | None:
    """frame[key] as (K, 3) floats (None when absent), K = n when given."""
    if key not in frame or frame[key] is None:
        return None
    points = np.asarray(frame[key], dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3 or (n is not None and len(points) != n):
        expected = f"({n}, 3), one per contact" if n is not None else "(K, 3)"
        raise ValueError(f"frame[{key!r}] must have shape {expected}, got {points.shape}")
    return points


def value_range(frames) -> float | None:
    """The largest finite face value (J/m^3) over the frames' "face_values" (the top of the colour
    scale, which starts at 0); None when no frame carries face values."""
    values = [np.asarray(v, dtype=np.float64).ravel() for f in frames for v in f.get("face_values", {}).values()]
    if not values:
        return None
    values = np.concatenate(values)
    values = values[np.isfinite(values)]
    top = float(values.max()) if len(values) else 0.0
    return top if top > 0.0 else 1.0


def force_scale(frames, points) -> float | None:
    """Arrow length per newton (m/N) that draws the largest contact force over the frames
    FORCE_LENGTH of the extent of `points` (N, 3) m; None when no frame carries a nonzero force."""
    forces = [np.linalg.norm(_points(f, "contact_forces"), axis=1) for f in frames
              if _points(f, "contact_forces") is not None]
    largest = max((float(f.max()) for f in forces if len(f)), default=0.0)
    if not largest > 0.0:
        return None
    extent = float(np.max(np.ptp(points, axis=0)))
    return FORCE_LENGTH * extent / largest


def _rotate_z(v, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


class _Canvas:
    """One camera, one ground and one matplotlib figure for every frame of a picture, so all frames
    share the view, the colour scale and the force scale."""

    def __init__(self, points, azimuth: float, elevation: float, size: tuple[int, int], dpi: int,
                 values: float | None = None, newton: float | None = None):
        width, height = int(size[0]), int(size[1])
        scene_height = height - int(round(TITLE_BAND * height))
        scene_width = width - (int(round(COLOUR_BAR_BAND * width)) if values is not None else 0)
        self.camera = OrthoCamera.fitted(points, azimuth, elevation, scene_width, scene_height)
        lo, hi = points.min(axis=0), points.max(axis=0)
        centre, half = 0.5 * (lo + hi), (0.5 + MARGIN) * max(float(np.max(hi - lo)), 1e-3)
        x0, x1, y0, y1 = centre[0] - half, centre[0] + half, centre[1] - half, centre[1] + half
        self.ground = np.array([[(x0, y0, 0.0), (x1, y0, 0.0), (x1, y1, 0.0)],
                                [(x0, y0, 0.0), (x1, y1, 0.0), (x0, y1, 0.0)]])
        # start every ray in front of all the framed points and of the ground
        depth = np.concatenate([points, self.ground.reshape(-1, 3)]) @ self.camera.towards
        reach = float(depth.max() - self.camera.centre @ self.camera.towards) + half
        origins = self.camera.rays(reach, SUPERSAMPLE)
        self.sub_shape = origins.shape[:2]  # rows, columns of sub-pixels
        # float32 and contiguous once, as Embree takes them, for every frame
        self.origins = np.ascontiguousarray(origins.reshape(-1, 3), dtype=np.float32)
        self.directions = np.ascontiguousarray(np.broadcast_to(-self.camera.towards, self.origins.shape),
                                               dtype=np.float32)
        self.light = _rotate_z(LIGHT, np.radians(azimuth + 60.0))
        self.norm = Normalize(0.0, values) if values is not None else None
        self.newton = newton
        self.figure = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
        FigureCanvasAgg(self.figure)
        self.axes = self.figure.add_axes((0.0, 0.0, scene_width / width, scene_height / height))
        self.axes.set_axis_off()
        blank = np.ones((scene_height, scene_width, 3))
        self.picture = self.axes.imshow(blank, extent=(0, scene_width, scene_height, 0), interpolation="nearest")
        self.axes.set_xlim(0, scene_width)
        self.axes.set_ylim(scene_height, 0)
        self.title = self.figure.text(0.5, 1.0 - 0.5 * TITLE_BAND, "", ha="center", va="center", fontsize=10)
        if self.norm is not None:
            bar = self.figure.add_axes((scene_width / width + 0.01, 0.15, 0.025, 0.6))
            mappable = matplotlib.cm.ScalarMappable(norm=self.norm, cmap=VALUE_COLOURMAP)
            colour_bar = self.figure.colorbar(mappable, cax=bar)
            colour_bar.set_label(VALUE_LABEL, fontsize=8)
            colour_bar.ax.tick_params(labelsize=7)
        self.overlays = []
        self.scene, self.owners = None, np.array([], dtype=object)

    def _face_colours(self, frame: dict, name: str, triangles: np.ndarray) -> np.ndarray:
        values = frame.get("face_values", {}).get(name)
        if values is None or self.norm is None:
            return lambert_shade(triangles, body_colour(name), self.light)[:, :3]
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(triangles),):
            raise ValueError(f"frame['face_values'][{name!r}] must have one value per surface triangle, "
                             f"shape ({len(triangles)},), got {values.shape}")
        colours = matplotlib.colormaps[VALUE_COLOURMAP](self.norm(values))[:, :3]
        return lambert_shade(triangles, colours, self.light)[:, :3]

    def shade(self, frame: dict, faces: dict) -> np.ndarray:
        """The scene of one frame as an RGB float image (rows, columns, 3) in [0, 1]."""
        triangles, colours = [], []
        for name in _bodies(frame, faces):
            tri = np.asarray(frame[name], dtype=np.float64)[np.asarray(faces[name])]
            triangles.append(tri)
            colours.append(self._face_colours(frame, name, tri))
        # the body of each triangle, for the contacts' visibility (`_hidden_contacts`)
        self.owners = np.repeat(np.array(_bodies(frame, faces), dtype=object), [len(t) for t in triangles])
        triangles, colours = np.concatenate(triangles), np.concatenate(colours)
        scene = RayScene(np.concatenate([triangles, self.ground]))
        self.scene = scene
        index, distance = scene.first_hits(self.origins, self.directions)
        # a colour per hit triangle, then the ground's two triangles, then the background for no hit
        table = np.vstack([colours, np.zeros((len(self.ground), 3)), BACKGROUND]).astype(np.float32)
        image = table[np.where(index >= 0, index, len(table) - 1)]
        ground = np.flatnonzero(index >= len(triangles))
        spots = self.origins[ground] + distance[ground, None] * self.directions[0]
        tiles = (np.floor(spots[:, 0] / GROUND_TILE) + np.floor(spots[:, 1] / GROUND_TILE)).astype(np.int64) % 2
        tone = np.asarray(GROUND_COLOURS, dtype=np.float32)[tiles]
        # light straight above: a ground spot is in shadow when a body is above it
        spots[:, 2] = 1e-7
        shaded = scene.blocked(spots, (0.0, 0.0, 1.0))
        tone[shaded] = (1.0 - SHADOW[3]) * tone[shaded] + SHADOW[3] * np.asarray(SHADOW[:3], dtype=np.float32)
        image[ground] = tone
        # average the SUPERSAMPLE x SUPERSAMPLE sub-pixels of each pixel
        s = SUPERSAMPLE
        image = image.reshape(*self.sub_shape, 3)
        return sum(image[i::s, j::s] for i in range(s) for j in range(s)) / (s * s)

    def _hidden_contacts(self, frame: dict, contacts: np.ndarray) -> np.ndarray:
        """Per contact, True when the first body along its line of sight is neither the object nor
        the contact's own pad (the pad nearest to it): a backing plate or finger, its own jaw's
        seen from behind or the other jaw's, or the other pad, stands in front of it."""
        hidden = np.zeros(len(contacts), dtype=bool)
        pads = [name for name in dict.fromkeys(self.owners) if _kind(name) == "pad"]
        if self.scene is None or not pads:
            return hidden
        centres = np.array([np.asarray(frame[name], dtype=np.float64).mean(axis=0) for name in pads])
        own = [pads[k] for k in np.argmin(np.linalg.norm(contacts[:, None] - centres, axis=2), axis=1)]
        reach = 1.0  # m in front of each contact, beyond every body of a scene centimetres across
        index, distance = self.scene.first_hits(contacts + reach * self.camera.towards, -self.camera.towards)
        for k, (hit, pad) in enumerate(zip(index, own)):
            if 0 <= hit < len(self.owners) and distance[k] < reach - CONTACT_DEPTH:
                hidden[k] = self.owners[hit] not in ("object", pad)
        return hidden

    def _draw_contacts(self, frame: dict):
        contacts = _points(frame, "contacts")
        if contacts is None or not len(contacts):
            return
        forces = _points(frame, "contact_forces", len(contacts))
        hidden = self._hidden_contacts(frame, contacts)
        contacts = contacts[~hidden]
        forces = forces[~hidden] if forces is not None else None
        at = self.camera.project(contacts)
        if forces is not None and self.newton is not None and len(contacts):
            tips = self.camera.project(contacts + self.newton * forces) - at
            self.overlays.append(self.axes.quiver(at[:, 0], at[:, 1], tips[:, 0], tips[:, 1], angles="xy",
                                                  scale_units="xy", scale=1.0, color=FORCE_COLOUR, width=0.004,
                                                  zorder=3))
        if len(contacts):
            self.overlays.append(self.axes.scatter(at[:, 0], at[:, 1], s=14, color=CONTACT_COLOUR,
                                                   edgecolors="white", linewidths=0.6, zorder=4))
        legend = "dots: contact points"
        if forces is not None and self.newton is not None:
            legend += f"; arrows: contact forces, 1 mm = {1e-3 / self.newton:.3g} N"
        if hidden.any():
            legend += f"; {int(hidden.sum())} contact(s) behind a jaw, not drawn"
        self.overlays.append(self.axes.text(0.01, 0.01, legend, transform=self.axes.transAxes, fontsize=7,
                                            ha="left", va="bottom"))

    def draw(self, frame: dict, faces: dict, title: str) -> np.ndarray:
        """The picture of one frame: RGB uint8 (height, width, 3)."""
        self.picture.set_data(self.shade(frame, faces))
        for artist in self.overlays:
            artist.remove()
        self.overlays = []
        self._draw_contacts(frame)
        self.title.set_text(title)
        self.figure.canvas.draw()
        return np.asarray(self.figure.canvas.buffer_rgba())[..., :3].copy()


def _canvas(frames, faces, azimuth, elevation, size, dpi, bounds=None) -> _Canvas:
    points = framed_points(frames, faces) if bounds is None else _box_corners(*bounds)
    return _Canvas(points, camera_azimuth(frames[0]) if azimuth is None else azimuth, elevation, size, dpi,
                   value_range(frames), force_scale(frames, points))


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
                 elevation: float = ELEVATION, size: tuple[int, int] = (800, 600), dpi: int = 100) -> np.ndarray:
    """Render one frame; return the RGB image (H, W, 3) uint8 and, with `path`, also write it as
    PNG. bounds: (lo, hi) box in m to keep in view (default: see `framed_points`);
    azimuth and elevation in deg (default azimuth: `camera_azimuth`); size: (width, height) in pixels."""
    image = _canvas([frame], faces, azimuth, elevation, size, dpi, bounds).draw(
        frame, faces, frame_title(frame["time"], phase, caption))
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


def _recorded(result) -> None:
    if not result.frames or not result.faces:
        raise ValueError("the trial has no recorded frames; simulate it with record='frames'")


def render_trial(result, out_path: str | os.PathLike, fps: float = 10.0, every: int = 2, *,
                 caption: str | None = None, azimuth: float | None = None, elevation: float = ELEVATION,
                 size: tuple[int, int] = (640, 480), dpi: int = 100) -> dict:
    """Animated GIF of a trial recorded with record="frames" (every `every`-th frame and the
    last, `fps` frames per second), plus PNG stills of the first and the final frame (after the
    lift, or where the trial ended) beside it, all with one camera (azimuth and elevation in deg;
    default azimuth: `camera_azimuth`; size: (width, height) in pixels). Returns
    {"gif": path, "first": path, "final": path, "frames": number of GIF frames}."""
    _recorded(result)
    if every < 1 or not fps > 0:
        raise ValueError(f"need every >= 1 and fps > 0, got every={every}, fps={fps}")
    indices = _subsample(len(result.frames), every)
    frames = [result.frames[i] for i in indices]
    phases = trial_phases(result)
    canvas = _canvas(frames, result.faces, azimuth, elevation, size, dpi)
    images = [canvas.draw(f, result.faces, frame_title(f["time"], phases[i], caption)) for i, f in zip(indices, frames)]
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


def render_stills(result, path: str | os.PathLike, *, caption: str | None = None, azimuth: float | None = None,
                  elevation: float = ELEVATION, size: tuple[int, int] = (640, 480), dpi: int = 100) -> np.ndarray:
    """The first and the final frame of a recorded trial side by side in one PNG (one camera;
    azimuth and elevation in deg, default azimuth: `camera_azimuth`; size: (width, height) of each
    half in pixels); returns the RGB image."""
    _recorded(result)
    ends = [result.frames[0], result.frames[-1]]
    phases = trial_phases(result)
    canvas = _canvas(ends, result.faces, azimuth, elevation, size, dpi)
    images = [canvas.draw(f, result.faces, frame_title(f["time"], p, caption)) for f, p in zip(ends, (phases[0], phases[-1]))]
    image = np.concatenate(images, axis=1)
    write_bytes_atomic(path, _png_bytes(image))
    return image
