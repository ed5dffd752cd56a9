"""Picture of one image-space quality evaluation (`baselines.image_quality`): the object's
silhouette seen along the approach axis, the grasp lines between the open jaws, the grasp points
where each line meets the silhouette, the contact points, and the features in the title. Axes in
mm of the gripper frame (x: closing direction, y: across the pads)."""

from __future__ import annotations

import io
import os

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.viz.figures.caption import add_caption

PAD_THICKNESS = 1.5e-3
"""Drawn thickness of the open jaws' pads (m); only for the picture."""


def image_quality_figure(silhouette, quality, caption: str | None = None) -> Figure:
    """A picture of `quality` (an ImageQuality of the gripper that rendered `silhouette`), with
    `caption` (a `viz.figures.caption.caption_line`: data, split, N) below it."""
    mm = 1e3
    rows, cols = silhouette.mask.shape
    x0, y0 = silhouette.origin
    res = silhouette.resolution
    half_r, half_w = quality.r / 2, quality.w / 2
    fig = Figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.subplots()
    ax.imshow(silhouette.mask, origin="lower", cmap="Greys", vmin=0, vmax=1.6, interpolation="nearest",
              extent=[mm * x0, mm * (x0 + cols * res), mm * y0, mm * (y0 + rows * res)])
    for inner_face in (-half_r, half_r):  # the open jaws' pads, outside the opening
        left = inner_face - PAD_THICKNESS if inner_face < 0 else inner_face
        ax.add_patch(Rectangle((mm * left, -mm * half_w), mm * PAD_THICKNESS, mm * quality.w,
                               color=(0.25, 0.5, 0.85), alpha=0.6))
    ax.hlines(mm * quality.offsets, -mm * half_r, mm * half_r, colors=(0.6, 0.6, 0.6), linewidths=0.3)
    for side in (0, 1):
        d = quality.grpv[side]
        normal = np.abs(d) <= half_r  # abnormal values (miss, collision) lie outside the opening
        ax.plot(mm * d[normal], mm * quality.offsets[normal], ".", ms=2, color=(0.9, 0.5, 0.15))
        touch = quality.contact[side]
        ax.plot(mm * d[touch], mm * quality.offsets[touch], "o", ms=4, mfc="none", color=(0.8, 0.1, 0.1))
    f = quality.features
    title = (f"score {quality.score:.2f}   D_t {f['D_t']:.2f}   R_r {np.degrees(f['R_r']):.0f} deg   "
             f"S_a {np.degrees(f['S_a']):.0f} deg   S_f {mm * f['S_f']:.1f} mm"
             + ("   MISS" if quality.miss else "") + ("   COLLISION" if quality.collision else ""))
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("closing direction [mm]")
    ax.set_ylabel("across the pads [mm]")
    ax.set_xlim(-mm * half_r * 1.15, mm * half_r * 1.15)
    ax.set_aspect("equal")
    fig.tight_layout()
    if caption:
        add_caption(fig, caption)
    return fig


def plot_image_quality(silhouette, quality, path: str | os.PathLike, caption: str | None = None) -> None:
    """Write `image_quality_figure` as PNG to `path` atomically."""
    buffer = io.BytesIO()
    image_quality_figure(silhouette, quality, caption).savefig(buffer, format="png", bbox_inches="tight",
                                                               pad_inches=0.1)
    write_bytes_atomic(path, buffer.getvalue())
