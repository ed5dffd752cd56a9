"""The study's figures (the notebooks call these and save them with `save_figure`): each function
takes result cubes or tables and returns a matplotlib Figure whose caption line gives the data,
the split and N (`caption`), with units on every axis and integer ticks on axes that count."""

from ipcgrasp.viz.figures.calibration import calibration_figure
from ipcgrasp.viz.figures.caption import add_caption, caption_line, caption_of, cube_sample, save_figure
from ipcgrasp.viz.figures.evaluation import evaluation_failure_figure, ranking_figure, robustness_figure
from ipcgrasp.viz.figures.failure_modes import (
    artifacts_figure,
    image_vs_simulation_figure,
    outcomes_figure,
    sweep_figure,
)
from ipcgrasp.viz.figures.grid import grid_f1_figure, grid_failure_figure
from ipcgrasp.viz.figures.runtime import runtime_figure

__all__ = ["add_caption", "artifacts_figure", "calibration_figure", "caption_line", "caption_of", "cube_sample",
           "evaluation_failure_figure", "grid_f1_figure", "grid_failure_figure", "image_vs_simulation_figure",
           "outcomes_figure", "ranking_figure", "robustness_figure", "runtime_figure", "save_figure", "sweep_figure"]
