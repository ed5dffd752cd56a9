"""Visibility by ray casting with Intel Embree (the `embreex` wheel; CPU only, no OpenGL, no display).

The nearest triangle a ray hits is what a pixel shows, so one body is never drawn through another
however their triangles are sized or ordered (matplotlib's painter's sort by triangle centroids
gets that wrong where bodies touch). Embree works in single precision: for the scenes drawn here,
a few centimetres across, it resolves depth to well below a micrometre.
"""

from __future__ import annotations

import numpy as np
from embreex import rtcore_scene
from embreex.mesh_construction import TriangleMesh


class RayScene:
    """A bounding-volume hierarchy over triangles (F, 3, 3) in m, built once, queried with
    bundles of parallel rays."""

    def __init__(self, triangles):
        triangles = np.ascontiguousarray(triangles, dtype=np.float32)
        if triangles.ndim != 3 or triangles.shape[1:] != (3, 3) or not len(triangles):
            raise ValueError(f"triangles must have shape (F, 3, 3) with F >= 1, got {triangles.shape}")
        self._scene = rtcore_scene.EmbreeScene()
        self._mesh = TriangleMesh(self._scene, triangles)  # the scene does not own its geometry

    @staticmethod
    def _bundle(origins, direction):
        origins = np.ascontiguousarray(np.reshape(origins, (-1, 3)), dtype=np.float32)
        direction = np.asarray(direction, dtype=np.float32)
        directions = direction if direction.shape == origins.shape else np.broadcast_to(direction, origins.shape)
        return origins, np.ascontiguousarray(directions)

    def first_hits(self, origins, direction) -> tuple[np.ndarray, np.ndarray]:
        """For rays from `origins` (..., 3) in m along the unit `direction` (3,) (or one per ray,
        like origins): index of the nearest triangle hit (-1: none) and the distance to it in m
        (inf: none), both of shape origins[..., 0]. Float32 contiguous inputs are used as they are."""
        shape = np.shape(origins)[:-1]
        hits = self._scene.run(*self._bundle(origins, direction), output=1)
        index = hits["primID"]
        distance = np.where(index >= 0, hits["tfar"], np.float32(np.inf))
        return index.reshape(shape), distance.reshape(shape)

    def blocked(self, origins, direction) -> np.ndarray:
        """Whether each ray from `origins` (..., 3) in m along `direction` (3,) (or one per ray)
        hits any triangle."""
        shape = np.shape(origins)[:-1]
        return (self._scene.run(*self._bundle(origins, direction), query="OCCLUDED") >= 0).reshape(shape)
