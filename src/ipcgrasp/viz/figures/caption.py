"""The caption line every study figure carries, and the axis helpers every figure shares.

A caption line says what a reader needs to weigh a figure: the data (the objects, or the
experiment when there are no grasps), the split (training / held-out / all grasps) and N (grasps
and trials, integers). It is drawn below the axes as a Text with gid "caption", so tests find it
on the Figure object. Axes that count trials get integer ticks (`integer_ticks`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ipcgrasp.io import save_figure_atomic

TRAINING = "training grasps"
HELD_OUT = "held-out grasps"
ALL = "training and held-out grasps"
NO_SPLIT = "none (no grasps)"
OUTSIDE_STUDY = "not applicable (a single trial, not a study's sample)"
SPLITS = (TRAINING, HELD_OUT, ALL, NO_SPLIT, OUTSIDE_STUDY)
"""What a figure's data was drawn from, as the caption says it."""
ONE_TRIAL = "1 trial"
"""N of a picture of one trial (`ipcgrasp plot`, `quality --png`)."""
STAGE_SPLITS = {"grid": TRAINING, "psi_sensitivity": TRAINING, "baselines": TRAINING, "evaluation": HELD_OUT}
"""The split a study cube's trials come from, by the cube's `stage` attribute."""

CAPTION_GID = "caption"
DPI = 120
"""Resolution of the study's figures (dots per inch)."""

PER_TRIAL_DIMS = ("object", "grasp", "trial")


@dataclass(frozen=True)
class Sample:
    """What one setting of a result cube holds: its objects, the grasps that ran (object, grasp
    pairs) and the trials over them."""

    objects: tuple[str, ...]
    grasps: int
    trials: int

    @property
    def trials_per_grasp(self) -> int | None:
        """Trials per grasp when every grasp ran the same number, else None."""
        return self.trials // self.grasps if self.grasps and self.trials % self.grasps == 0 else None

    def text(self) -> str:
        """"2 grasps x 5 trials = 10 trials" (or "2 grasps, 7 trials" when uneven)."""
        per = self.trials_per_grasp
        grasps = f"{self.grasps} grasp{'s' * (self.grasps != 1)}"
        if per is None:
            return f"{grasps}, {self.trials} trials"
        return f"{grasps} x {per} trial{'s' * (per != 1)} = {self.trials} trial{'s' * (self.trials != 1)}"


def cube_sample(cube: xr.Dataset) -> Sample:
    """The Sample of one setting of `cube` (its first value along every dim but object, grasp
    and trial: every setting of a study cube runs the same grasps and trials). Padding (grasps a
    merged cube holds for another object only, success NaN) is not counted."""
    success = cube.success
    success = success.isel({d: 0 for d in success.dims if d not in PER_TRIAL_DIMS})
    ran = ~pd.isna(success.values)
    if "object" in success.dims:
        objects = tuple(str(o) for o in success.object.values)
    else:
        objects = (str(cube.object.item()) if "object" in cube.coords else str(cube.attrs.get("object", "?")),)
    trial_axis = success.dims.index("trial")
    per_grasp = np.moveaxis(ran, trial_axis, -1).reshape(-1, success.sizes["trial"])
    grasp_ran = per_grasp.any(axis=1)
    if "object" in success.dims:  # objects with no grasp that ran are padding of another side
        by_object = np.moveaxis(ran, [success.dims.index("object"), trial_axis], [0, -1])
        objects = tuple(o for o, r in zip(objects, by_object.reshape(len(objects), -1).any(axis=1)) if r)
    return Sample(objects, int(grasp_ran.sum()), int(per_grasp.sum()))


def caption_line(data: str | Iterable[str], split: str, n: str | Sample) -> str:
    """"Data: cube_3cm. Split: held-out grasps. N = 2 grasps x 1 trial = 2 trials." `data`: the
    objects (or a phrase for data without grasps); `split`: one of SPLITS; `n`: a Sample or text."""
    if split not in SPLITS:
        raise ValueError(f"split {split!r}: use one of {SPLITS}")
    data = data if isinstance(data, str) else ", ".join(data)
    n = n.text() if isinstance(n, Sample) else n
    return f"Data: {data}. Split: {split}. N = {n}."


def add_caption(fig: Figure, line: str, detail: str = "") -> None:
    """Draw the caption (`caption_line`, then optional detail) below the figure's axes, wrapped
    to its width. Save with `save_figure` so the caption is inside the picture."""
    fig.text(0.01, 0.0, line + (f" {detail}" if detail else ""), ha="left", va="top", fontsize=8, wrap=True,
             gid=CAPTION_GID)


def caption_of(fig: Figure) -> str:
    """The caption text of a figure made with `add_caption` ("" when it has none)."""
    return next((t.get_text() for t in fig.texts if t.get_gid() == CAPTION_GID), "")


def integer_ticks(axis) -> None:
    """Ticks only at integers on a matplotlib Axis that counts something (trials, grasps)."""
    axis.set_major_locator(MaxNLocator(integer=True))


def new_figure(width: float, height: float, **subplots) -> tuple[Figure, np.ndarray]:
    """A Figure (constrained layout, no pyplot state) and its axes grid (always 2-D)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(squeeze=False, **subplots)


def save_figure(fig: Figure, path: str | os.PathLike) -> Path:
    """Write a study figure as PNG atomically, caption included (tight bounding box)."""
    return save_figure_atomic(fig, path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
