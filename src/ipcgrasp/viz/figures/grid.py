"""The grid-search figures: paper F1 over E x mu per jaw and close rule, and how the trials of
every setting ended."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ipcgrasp.study.cube import FAILURE_FLAG_MEANINGS
from ipcgrasp.study.tables import f1_table, failure_counts, grid_scores
from ipcgrasp.viz.figures.caption import (
    TRAINING,
    add_caption,
    caption_line,
    cube_sample,
    integer_ticks,
    new_figure,
)
from ipcgrasp.viz.figures.outcomes import outcome_colour, outcome_label


def _grid_caption(cubes: Mapping[str, xr.Dataset]) -> str:
    sample = cube_sample(next(iter(cubes.values())))
    return caption_line(sample.objects, TRAINING, f"{sample.text()} per setting")


def grid_f1_figure(cubes: Mapping[str, xr.Dataset]) -> Figure:
    """One heatmap per (jaw, rule) of the grid cubes (jaw -> cube): paper F1 over E (rows, Pa)
    and mu (columns), the value written in each cell."""
    scores = grid_scores(cubes)
    rules = list(dict.fromkeys(scores.rule))
    fig, axes = new_figure(4.8 * len(rules), 3.6 * len(cubes), nrows=len(cubes), ncols=len(rules))
    for row, jaw in zip(axes, cubes):
        for ax, rule in zip(row, rules):
            table = f1_table(scores, jaw, rule)
            image = ax.imshow(table.values, vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
            for (i, j), value in np.ndenumerate(table.values):
                ax.text(j, i, "n/a" if np.isnan(value) else f"{value:.2f}", ha="center", va="center",
                        color="w" if not value > 0.6 else "k", fontsize=9)
            ax.set_xticks(range(table.shape[1]), [f"{mu:g}" for mu in table.columns])
            ax.set_yticks(range(table.shape[0]), [f"{E:.0e}" for E in table.index])
            ax.set(xlabel="friction coefficient mu (1)", ylabel="pad Young's modulus E (Pa)",
                   title=f"{jaw} jaw, {rule} rule")
            fig.colorbar(image, ax=ax, shrink=0.8, label="paper F1 (1)")
    add_caption(fig, _grid_caption(cubes))
    return fig


def grid_failure_figure(cubes: Mapping[str, xr.Dataset]) -> Figure:
    """Per jaw, one horizontal bar per setting (rule, E, mu): its trials stacked by outcome
    (success or failure mode), trial counts on integer ticks; only outcomes that occur are in
    the legend."""
    counts = {jaw: failure_counts(cube, by=("rule", "E", "mu")) for jaw, cube in cubes.items()}
    settings = max(len(table) for table in counts.values())
    fig, axes = new_figure(5.5 * len(cubes) + 1.5, 0.28 * settings + 1.6, ncols=len(cubes))
    occurring = [m for m in FAILURE_FLAG_MEANINGS if any(table[m].sum() > 0 for table in counts.values())]
    for ax, (jaw, table) in zip(axes[0], counts.items()):
        labels = [f"{rule}, E {E:.0e} Pa, mu {mu:g}" for rule, E, mu in zip(table.rule, table.E, table.mu)]
        y = np.arange(len(table))
        left = np.zeros(len(table))
        for mode in occurring:
            category = outcome_label(mode)
            ax.barh(y, table[mode].values, left=left, color=outcome_colour(category), label=category)
            left += table[mode].values
        ax.set_yticks(y, labels, fontsize=8)
        ax.invert_yaxis()
        integer_ticks(ax.xaxis)
        ax.set(xlabel="trials", title=f"{jaw} jaw")
    axes[0, -1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    add_caption(fig, _grid_caption(cubes))
    return fig
