"""The failure-mode figures: how every model's held-out trials end, the contact artifacts of the
dynamic models, the image-space prediction against the simulated squeeze, and the dynamic
baselines' sensitivity to their contact parameters."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure

from ipcgrasp.study.sweeps import sweep_scores, sweep_table
from ipcgrasp.study.tables import IMAGE_VS_SIMULATION
from ipcgrasp.viz.figures.caption import (
    HELD_OUT,
    TRAINING,
    add_caption,
    caption_line,
    cube_sample,
    new_figure,
)
from ipcgrasp.viz.figures.outcomes import outcome_colour

MM = 1e3
"""m -> mm."""


def outcomes_figure(counts: pd.DataFrame, cubes: Mapping[str, xr.Dataset]) -> Figure:
    """One horizontal bar per model (`study.tables.outcome_counts`: rows models, columns outcome
    categories, trial counts), split into the fraction of its held-out trials per outcome."""
    fractions = counts.div(counts.sum(axis=1), axis=0)
    fig, ((ax,),) = new_figure(10, 0.45 * len(counts) + 1.8)
    left = np.zeros(len(counts))
    for category in counts.columns:
        ax.barh(counts.index, fractions[category], left=left, label=category, color=outcome_colour(category))
        left += fractions[category].values
    ax.invert_yaxis()
    ax.set(xlabel="fraction of the model's held-out trials (1)", xlim=(0, 1), title="how each model's trials end")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    sample = cube_sample(next(iter(cubes.values())))
    add_caption(fig, caption_line(sample.objects, HELD_OUT, f"{sample.text()} per model"),
                "The same perturbed trials (trial seeds) for every model.")
    return fig


def artifacts_figure(cubes: Mapping[str, xr.Dataset], artifacts: pd.DataFrame) -> Figure:
    """Per dynamic model (rows of `study.tables.artifact_table`): each trial's largest
    interpenetration and the largest gap at which a contact force acted (mm, symlog axis), the
    median as a line."""
    dynamic = list(artifacts.index)
    fig, axes = new_figure(12, 4.4, ncols=2)
    rng = np.random.default_rng(0)
    for ax, (variable, label) in zip(axes[0], [("max_penetration", "largest interpenetration per trial (mm)"),
                                               ("max_force_gap", "largest gap at which a contact force acted (mm)")]):
        for k, model in enumerate(dynamic):
            values = MM * cubes[model][variable].values.ravel() if variable in cubes[model] else np.array([])
            values = values[np.isfinite(values)]
            ax.scatter(k + rng.uniform(-0.15, 0.15, values.size), values, s=16, alpha=0.6)
            if values.size:
                ax.hlines(np.median(values), k - 0.3, k + 0.3, color="k")
        ax.set_xticks(range(len(dynamic)), dynamic)
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set(ylabel=label, xlim=(-0.6, len(dynamic) - 0.4), xlabel="model")
        ax.set_ylim(bottom=0)
    fig.suptitle("held-out trials (line: median; symlog axis, linear below 1 micrometre)")
    sample = cube_sample(cubes[dynamic[0]]) if dynamic else None
    add_caption(fig, caption_line(sample.objects if sample else "none", HELD_OUT,
                                  f"{sample.text()} per model" if sample else "0 trials"))
    return fig


def image_vs_simulation_figure(frame: pd.DataFrame, correlations: pd.DataFrame, cube: xr.Dataset) -> Figure:
    """The image-space measure's predicted object translation (mm) and rotation (deg) against the
    largest the simulator recorded during the squeeze of the same trial (`study.tables.
    image_vs_simulation`), with the correlations of `correlation_table` in the titles. `cube`:
    the simulator's held-out cube (for the caption)."""
    scales = {"translation": (MM, "mm"), "rotation": (180 / np.pi, "deg")}
    fig, axes = new_figure(11, 4.6, ncols=2)
    held = (frame.simulated_success == True).values  # noqa: E712 - NaN (padding) is not a success
    for ax, (_, _, what, _) in zip(axes[0], IMAGE_VS_SIMULATION):
        scale, unit = scales[what]
        x, y = scale * frame[f"predicted_{what}"].values, scale * frame[f"simulated_{what}"].values
        ax.scatter(x[held], y[held], s=24, alpha=0.7, label="simulated trial held")
        ax.scatter(x[~held], y[~held], s=24, marker="x", label="simulated trial failed")
        row = correlations.loc[(f"predicted_{what}", f"simulated_{what}")]
        ax.set(xlabel=f"image-space predicted {what} ({unit})",
               ylabel=f"largest simulated {what} during the squeeze ({unit})",
               title=f"Spearman {row.spearman:.2f} [{row.spearman_low:.2f}, {row.spearman_high:.2f}], "
                     f"Pearson {row.pearson:.2f}, n = {int(row.n)} trials")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    add_caption(fig, caption_line(cube_sample(cube).objects, HELD_OUT, cube_sample(cube).text()),
                "Trials where the measure detects a miss or a collision have no prediction and are not drawn.")
    return fig


def sweep_figure(sweeps: Mapping[str, xr.Dataset]) -> Figure:
    """Per swept model (name -> sweep cube, dims stiffness, margin, object, grasp, trial): training
    paper F1 and median interpenetration (mm) over contact stiffness (rows) x margin (columns, mm)."""
    fig, axes = new_figure(11, 3.8 * len(sweeps), nrows=len(sweeps), ncols=2)
    for row, (model, cube) in zip(axes, sweeps.items()):
        scores = sweep_scores(cube)
        units = cube.stiffness.attrs.get("units", "model units")
        for ax, (metric, label, scale) in zip(row, [("paper_f1", "training paper F1 (1)", 1.0),
                                                    ("penetration_m_median", "median interpenetration (mm)", MM)]):
            table = sweep_table(scores, metric) * scale
            values = table.values.astype(float)
            top = 1.0 if metric == "paper_f1" else max(float(np.nanmax(values, initial=0.0)), 1e-3)
            image = ax.imshow(values, origin="lower", aspect="auto", cmap="viridis", vmin=0.0, vmax=top)
            for (i, j), value in np.ndenumerate(values):
                ax.text(j, i, "n/a" if np.isnan(value) else f"{value:.3g}", ha="center", va="center", fontsize=9,
                        color="w" if not value > 0.6 * top else "k")
            ax.set_xticks(range(table.shape[1]), [f"{MM * m:g}" for m in table.columns])
            ax.set_yticks(range(table.shape[0]), [f"{k:.0e}" for k in table.index])
            ax.set(xlabel="contact margin (mm)", ylabel=f"contact stiffness ({units})", title=f"{model}: {label}")
            fig.colorbar(image, ax=ax, shrink=0.8, format="%.3g")
    sample = cube_sample(next(iter(sweeps.values())))
    add_caption(fig, caption_line(sample.objects, TRAINING, f"{sample.text()} per setting"),
                "The held-out evaluation ran each model's setting with the best training F1.")
    return fig
