"""Picture of one image-space quality evaluation (`baselines.image_quality`): the object's
silhouette seen along the approach axis, the grasp lines between the open jaws, the grasp points
where each line meets the silhouette, the contact points, and the features in the title. Axes in
mm of the gripper frame (x: closing direction, y: across the pads)."""

from __future__ import annotations

import io
import os

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.viz.figures.caption import add_caption

PAD_THICKNESS = 1.5e-3
"""Drawn thickness of the open jaws' pads (m); only for the picture."""
PAD_COLOUR, LINE_COLOUR, POINT_COLOUR, CONTACT_COLOUR = (0.25, 0.5, 0.85), (0.35, 0.35, 0.35), (0.9, 0.5, 0.15), \
    (0.8, 0.1, 0.1)
SILHOUETTE_MAX = 1.6
"""The grey scale's top: the silhouette (1) is drawn mid grey, under the lines and points."""
DPI = 150
"""Resolution of the PNG (the figure is 8 x 6 in): 1200 x 900 pixels before the caption."""


def image_quality_figure(silhouette, quality, caption: str | None = None) -> Figure:
    """A picture of `quality` (an ImageQuality of the gripper that rendered `silhouette`), with
    `caption` (a `viz.figures.caption.caption_line`: data, split, N) below it."""
    mm = 1e3
    rows, cols = silhouette.mask.shape
    x0, y0 = silhouette.origin
    res = silhouette.resolution
    half_r, half_w = quality.r / 2, quality.w / 2
    fig = Figure(figsize=(8.0, 6.0), dpi=100)
    ax = fig.subplots()
    ax.imshow(silhouette.mask, origin="lower", cmap="Greys", vmin=0, vmax=SILHOUETTE_MAX, interpolation="nearest",
              extent=[mm * x0, mm * (x0 + cols * res), mm * y0, mm * (y0 + rows * res)])
    for inner_face in (-half_r, half_r):  # the open jaws' pads, outside the opening
        left = inner_face - PAD_THICKNESS if inner_face < 0 else inner_face
        ax.add_patch(Rectangle((mm * left, -mm * half_w), mm * PAD_THICKNESS, mm * quality.w,
                               color=PAD_COLOUR, alpha=0.6))
    ax.hlines(mm * quality.offsets, -mm * half_r, mm * half_r, colors=LINE_COLOUR, linewidths=0.7, alpha=0.8)
    for side in (0, 1):
        d = quality.grpv[side]
        normal = np.abs(d) <= half_r  # abnormal values (miss, collision) lie outside the opening
        ax.plot(mm * d[normal], mm * quality.offsets[normal], ".", ms=4, color=POINT_COLOUR)
        touch = quality.contact[side]
        ax.plot(mm * d[touch], mm * quality.offsets[touch], "o", ms=6, mfc="none", mew=1.2, color=CONTACT_COLOUR)
    f = quality.features
    title = (f"score {quality.score:.2f}   D_t {f['D_t']:.2f}   R_r {np.degrees(f['R_r']):.0f} deg   "
             f"S_a {np.degrees(f['S_a']):.0f} deg   S_f {mm * f['S_f']:.1f} mm"
             + ("   MISS" if quality.miss else "") + ("   COLLISION" if quality.collision else ""))
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("closing direction [mm]")
    ax.set_ylabel("across the pads [mm]")
    ax.set_xlim(-mm * half_r * 1.15, mm * half_r * 1.15)
    ax.set_aspect("equal")
    ax.legend(handles=[Patch(color=colormaps["Greys"](1 / SILHOUETTE_MAX), label="object silhouette"),
                       Patch(color=PAD_COLOUR, alpha=0.6, label="open jaws' pads"),
                       Line2D([], [], color=LINE_COLOUR, linewidth=0.7, label="grasp lines"),
                       Line2D([], [], marker=".", ms=6, linestyle="none", color=POINT_COLOUR,
                              label="grasp points (line meets silhouette)"),
                       Line2D([], [], marker="o", ms=6, mfc="none", mew=1.2, linestyle="none", color=CONTACT_COLOUR,
                              label="contact points")],
              loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    if caption:
        add_caption(fig, caption)
    return fig


def plot_image_quality(silhouette, quality, path: str | os.PathLike, caption: str | None = None) -> None:
    """Write `image_quality_figure` as PNG to `path` atomically."""
    buffer = io.BytesIO()
    image_quality_figure(silhouette, quality, caption).savefig(buffer, format="png", dpi=DPI, bbox_inches="tight",
                                                               pad_inches=0.1)
    write_bytes_atomic(path, buffer.getvalue())
