"""`quality --png`'s picture: large enough to read, with a legend beside the axes naming what is
drawn, the grasp lines visible."""

import trimesh
from PIL import Image

from ipcgrasp.baselines.image_quality import grasp_quality, render_silhouette
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.viz.quality import image_quality_figure, plot_image_quality


def test_the_quality_picture_has_a_legend_beside_the_axes_and_is_1200_pixels_wide(tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    data = resolve_data_dir()
    mesh = trimesh.load(load_object(data, "cube_3cm")[0], force="mesh")
    grasps = load_physical_grasps(data, "cube_3cm")
    silhouette = render_silhouette(mesh, grasps.grasp_poses[2], 1e-3, object_pose=grasps.object_poses[2])
    quality = grasp_quality(silhouette)
    fig = image_quality_figure(silhouette, quality, "Data: cube_3cm grasp 2, trial 1.")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    [ax] = fig.axes
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "object silhouette", "open jaws' pads", "grasp lines", "grasp points (line meets silhouette)", "contact points"]
    renderer = canvas.get_renderer()
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    [lines] = ax.collections
    assert min(lines.get_linewidths()) >= 0.5
    plot_image_quality(silhouette, quality, tmp_path / "q.png")
    assert Image.open(tmp_path / "q.png").size[0] >= 1200
