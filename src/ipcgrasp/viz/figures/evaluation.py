"""The held-out evaluation figures: predicted against physical robustness per grasp, how
continuous scores rank the grasps, and how the simulator's trials ended."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import MultipleLocator

from ipcgrasp.study.cube import FAILURE_FLAG_MEANINGS, physical_robustness
from ipcgrasp.study.tables import failure_counts, ranking_scores
from ipcgrasp.viz.figures.caption import (
    HELD_OUT,
    add_caption,
    caption_line,
    cube_sample,
    integer_ticks,
    new_figure,
)
from ipcgrasp.viz.figures.outcomes import outcome_colour, outcome_label

MARKERS = "os^vDx*P<>"
ROBUSTNESS_LABEL = "robustness (fraction of trials that lifted)"


def _held_out_caption(cube: xr.Dataset, detail: str = "") -> str:
    return caption_line(cube_sample(cube).objects, HELD_OUT, cube_sample(cube).text() + detail)


def robustness_figure(per_grasp: pd.DataFrame, models: Sequence[str], cube: xr.Dataset) -> Figure:
    """Per held-out grasp (rows of `per_grasp`, index (object, grasp); columns "physical" and
    each model's predicted robustness): the physical robustness as a grey bar, each model's as a
    marker. `cube`: one model's held-out cube (for the caption's N)."""
    fig, ((ax,),) = new_figure(max(6.0, 0.45 * len(per_grasp) + 3.5), 4.2)
    x = np.arange(len(per_grasp))
    ax.bar(x, per_grasp.physical, color="0.85", label="physical")
    for k, model in enumerate(models):
        offset = (k - (len(models) - 1) / 2) * 0.08
        ax.plot(x + offset, per_grasp[model], MARKERS[k % len(MARKERS)], label=model)
    labels = [" ".join(map(str, key)) if isinstance(key, tuple) else str(key) for key in per_grasp.index]
    ax.set_xticks(x, labels, rotation=90, fontsize=8)
    ax.set(xlabel="held-out grasp (object, grasp index)", ylabel=ROBUSTNESS_LABEL, ylim=(-0.05, 1.05),
           title="held-out grasps: predicted vs physical robustness")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    physical_trials = cube.sizes.get("physical_trial", 0)
    add_caption(fig, _held_out_caption(cube, f" per model; physical: {physical_trials} trials per grasp"))
    return fig


def ranking_figure(cubes: Mapping[str, xr.Dataset], ranking: pd.DataFrame) -> Figure:
    """Left two panels: ipcgrasp's mean critical mass (kg) and the image-space quality's mean
    score per grasp against physical robustness; right: Spearman of every ranking score with
    physical robustness (`study.tables.ranking_table`), with its 95 % bootstrap interval."""
    first = next(iter(cubes.values()))
    physical = physical_robustness(first)
    fig, ((*scatter_axes, ax_forest),) = new_figure(16, 4.8, ncols=3, width_ratios=[1, 1, 1.3])
    panels = [("ipcgrasp", "mean critical mass", "mean critical mass per grasp (kg)"),
              ("image_quality", "mean score", "mean image-space quality score per grasp (1)")]
    for ax, (model, name, label) in zip(scatter_axes, panels):
        scores = ranking_scores(cubes[model]) if model in cubes else {}
        if name not in scores:
            ax.text(0.5, 0.5, f"{model}: no {name} in this study", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        score = scores[name]
        ax.scatter(score.values.ravel(), physical.broadcast_like(score).values.ravel(), s=30, alpha=0.7)
        row = ranking.loc[(model, name)] if (model, name) in ranking.index else None
        rho = ("" if row is None else f"\nSpearman {row.spearman:.2f} [{row.spearman_low:.2f}, "
               f"{row.spearman_high:.2f}], {int(row.n_grasps)} grasps")
        ax.set(xlabel=label, ylabel="physical robustness (fraction of trials)", ylim=(-0.05, 1.05),
               title=f"{model}{rho}")
        ax.title.set_fontsize(9)
    forest = ranking.dropna(subset=["spearman"])
    y = np.arange(len(forest))
    # a percentile interval need not contain the estimate (ties, few grasps): draw the part that does
    error = np.clip([forest.spearman - forest.spearman_low, forest.spearman_high - forest.spearman], 0, None)
    ax_forest.errorbar(forest.spearman, y, xerr=np.nan_to_num(error), fmt="o", capsize=3)
    ax_forest.axvline(0, color="0.6", lw=1)
    ax_forest.set_yticks(y, [f"{m}: {s}" for m, s in forest.index], fontsize=8)
    ax_forest.invert_yaxis()
    ax_forest.xaxis.set_major_locator(MultipleLocator(0.5))
    ax_forest.set(xlim=(-1.05, 1.05), xlabel="Spearman with physical robustness (1; 95 % bootstrap interval)",
                  title="how each score ranks the held-out grasps")
    ax_forest.title.set_fontsize(10)
    add_caption(fig, _held_out_caption(first, " per model"),
                "Intervals: bootstrap over grasps. Scores constant over these grasps have no rank correlation "
                "and are left out.")
    return fig


def evaluation_failure_figure(cube: xr.Dataset, model: str = "ipcgrasp") -> Figure:
    """The simulator's held-out trials per outcome (success and each failure mode), horizontal
    bars with trial counts on integer ticks."""
    counts = failure_counts(cube).iloc[0]
    fig, ((ax,),) = new_figure(6.5, 3.6)
    y = np.arange(len(FAILURE_FLAG_MEANINGS))
    ax.barh(y, counts[list(FAILURE_FLAG_MEANINGS)].values,
            color=[outcome_colour(outcome_label(m)) for m in FAILURE_FLAG_MEANINGS])
    ax.set_yticks(y, [outcome_label(m) for m in FAILURE_FLAG_MEANINGS])
    ax.invert_yaxis()
    integer_ticks(ax.xaxis)
    ax.set(xlabel="trials", title=f"{model} on the held-out grasps: how the trials ended")
    add_caption(fig, _held_out_caption(cube))
    return fig
