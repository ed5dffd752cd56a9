"""An orthographic camera for the grasp pictures: where it looks from, which world point each pixel
sees, and where a world point lands in the picture.

Angles follow matplotlib's `view_init`: from the scene the camera lies in the direction
(cos el cos az, cos el sin az, sin el), azimuth az measured in the ground plane from +x towards +y,
elevation el above the horizon, both in degrees. Pixels are counted from the top-left corner, rows
downwards; pixel (col, row) covers [col, col + 1) x [row, row + 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FILL = 0.92  # fraction of the picture's half-width (or half-height) the framed points reach from its centre


@dataclass(frozen=True)
class OrthoCamera:
    """centre: world point (m) at the picture's centre; right, up, towards: orthonormal world
    directions of the picture's x axis, y axis and of the camera seen from the scene;
    pixel: edge of one pixel in m; width, height: picture size in pixels."""

    centre: np.ndarray
    right: np.ndarray
    up: np.ndarray
    towards: np.ndarray
    pixel: float
    width: int
    height: int

    @classmethod
    def fitted(cls, points, azimuth: float, elevation: float, width: int, height: int,
               fill: float = FILL) -> OrthoCamera:
        """The camera at (azimuth, elevation) in deg whose picture of `width` x `height` pixels
        shows every point (N, 3) in m, centred, the outermost `fill` of the half-size from the centre."""
        if width < 1 or height < 1:
            raise ValueError(f"picture size must be at least 1 x 1 pixels, got {width} x {height}")
        if not -90.0 < elevation < 90.0:
            raise ValueError(f"elevation must lie strictly between -90 and 90 deg, got {elevation}")
        az, el = np.radians(azimuth), np.radians(elevation)
        towards = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        right = np.array([-np.sin(az), np.cos(az), 0.0])
        up = np.cross(towards, right)
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        u, v = points @ right, points @ up
        lo, hi = np.array([u.min(), v.min()]), np.array([u.max(), v.max()])
        middle = 0.5 * (lo + hi)
        depth = float(np.mean(points @ towards))
        centre = middle[0] * right + middle[1] * up + depth * towards
        extent = np.maximum(hi - lo, 1e-6)
        pixel = float(max(extent[0] / (fill * width), extent[1] / (fill * height)))
        return cls(centre, right, up, towards, pixel, int(width), int(height))

    def project(self, points) -> np.ndarray:
        """Picture coordinates (N, 2) (column, row; fractional pixels) of world points (N, 3) in m."""
        offset = np.asarray(points, dtype=np.float64).reshape(-1, 3) - self.centre
        col = 0.5 * self.width + (offset @ self.right) / self.pixel
        row = 0.5 * self.height - (offset @ self.up) / self.pixel
        return np.column_stack([col, row])

    def rays(self, reach: float, supersample: int = 1) -> np.ndarray:
        """Origins (height*s, width*s, 3) in m of the parallel rays (direction -towards) through the
        centres of the picture's sub-pixels, s = supersample per pixel edge, each starting `reach` m
        in front of the centre's plane towards the camera."""
        s = int(supersample)
        cols = ((np.arange(self.width * s) + 0.5) / s - 0.5 * self.width) * self.pixel
        rows = (0.5 * self.height - (np.arange(self.height * s) + 0.5) / s) * self.pixel
        return (self.centre + reach * self.towards + cols[None, :, None] * self.right
                + rows[:, None, None] * self.up)
