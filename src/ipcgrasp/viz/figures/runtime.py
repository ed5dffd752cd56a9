"""The runtime figure: wall time of a trial against the object mesh resolution, and the per-trial
wall time of every simulation cube of the study."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from ipcgrasp.study.tables import resolution_table
from ipcgrasp.viz.figures.caption import ALL, add_caption, caption_line, cube_sample, new_figure


def _cube_label(name: str, rows: pd.DataFrame) -> str:
    settings, trials = len(rows), int(rows.trials.sum())
    return f"{name}\n({settings} setting{'s' * (settings != 1)}, {trials} trial{'s' * (trials != 1)})"


def runtime_figure(resolution_cube: xr.Dataset, trials: pd.DataFrame) -> Figure:
    """Left: median wall time of a trial and wall time per Newton iteration (s) against the object
    mesh's faces (log-log, ticks at the measured face counts); right: per study cube (rows of
    `study.tables.trial_time_table`, one per setting), each setting's median wall time per trial
    as a dot and its slowest trial as a cross."""
    resolution = resolution_table(resolution_cube)
    fig, ((ax_mesh, ax_trials),) = new_figure(11, 4.2, ncols=2)
    ax_mesh.loglog(resolution.n_faces, resolution.wall_time_s, "o-", label="median wall time of a trial")
    ax_mesh.loglog(resolution.n_faces, resolution.ms_per_newton_iteration / 1e3, "s--",
                   label="wall time per Newton iteration")
    ax_mesh.xaxis.set_major_locator(FixedLocator(resolution.n_faces.values))
    ax_mesh.xaxis.set_major_formatter(lambda value, _: f"{value:.0f}")
    ax_mesh.xaxis.set_minor_locator(NullLocator())
    ax_mesh.yaxis.set_minor_formatter(NullFormatter())
    ax_mesh.set(xlabel="object mesh faces (subdivided cube)", ylabel="wall time (s)",
                title="runtime vs mesh resolution")
    ax_mesh.legend(fontsize=8)
    cubes = list(dict.fromkeys(trials.cube))
    for k, name in enumerate(cubes):
        rows = trials[trials.cube == name]
        ax_trials.plot(rows.median_s, np.full(len(rows), k), "o", color="tab:blue", ms=5, alpha=0.6,
                       label="median of a setting" if k == 0 else None)
        ax_trials.plot(rows.max_s, np.full(len(rows), k), "x", color="tab:red", ms=5, alpha=0.6,
                       label="slowest trial of a setting" if k == 0 else None)
    ax_trials.set_yticks(range(len(cubes)), [_cube_label(name, trials[trials.cube == name]) for name in cubes],
                         fontsize=8)
    ax_trials.set_ylim(len(cubes) - 0.5, -0.5)
    ax_trials.set_xlim(left=0)
    ax_trials.set(xlabel="wall time per trial (s)", title="per-trial wall time of the study's cubes")
    ax_trials.legend(fontsize=8)
    sample = cube_sample(resolution_cube)
    add_caption(fig, caption_line(sample.objects, ALL,
                                  f"{int(trials.trials.sum())} trials over {len(trials)} settings (right); "
                                  f"{sample.text()} per mesh resolution (left: training grasp "
                                  f"{', '.join(str(g) for g in resolution_cube.grasp.values)})"),
                "Wall-clock times on the machine that ran the study, with other jobs beside them.")
    return fig
