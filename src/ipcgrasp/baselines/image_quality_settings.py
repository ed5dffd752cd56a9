"""Settings of the image-space quality measure (`ipcgrasp.baselines.image_quality`) that the
command line shows in its help: kept apart from the measure, which loads numba, scipy and trimesh,
so that `ipcgrasp --help` and argument errors need none of them."""

DEFAULT_RESOLUTION = 0.25e-3
"""Silhouette pixel size, m."""
