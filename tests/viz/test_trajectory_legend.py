"""The trajectory plot's legend sits above the panels, under the title, so it covers none of the
curves."""

import io

from ipcgrasp.viz.figures.caption import CAPTION_GID
from ipcgrasp.viz.trajectory_plot import trajectory_figure

from .test_figures import trajectory


def test_the_trajectory_legend_covers_no_panel_title_or_caption():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = trajectory_figure(trajectory())
    canvas = FigureCanvasAgg(fig)
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # laid out as `plot` writes it
    renderer = canvas.get_renderer()
    legend = fig.axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:2] == ["pad 0", "pad 1"] and "close rule fired" in labels
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_ylabel()
    assert not box.overlaps(fig._suptitle.get_window_extent(renderer))
    [caption] = [t for t in fig.texts if t.get_gid() == CAPTION_GID]
    assert not box.overlaps(caption.get_window_extent(renderer))


def test_a_single_trial_caption_says_the_split_does_not_apply():
    from ipcgrasp.viz.figures.caption import caption_of

    line = caption_of(trajectory_figure(trajectory()))
    assert line.startswith("Data: cube_3cm grasp 0") and "Split: not applicable (a single trial" in line
    assert "N = 1 trial." in line and "none" not in line
