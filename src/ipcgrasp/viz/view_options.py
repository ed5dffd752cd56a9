"""The view a user asks for: camera angles and picture size, from text to numbers, checked.

Angles follow `ipcgrasp.viz.camera` (azimuth in the ground plane from +x towards +y, elevation above
the horizon, in degrees). Light on purpose (no numpy): the command line checks these options
while parsing, before any work.
"""

from __future__ import annotations

import math

ELEVATION = 30.0  # deg above the horizon: the default view
MAX_SIDE = 8192
"""Largest picture width or height (pixels): an 8192 x 8192 RGB picture takes 200 MB."""


def parse_size(text: str) -> tuple[int, int]:
    """"640x480" -> (640, 480): a picture's width and height in pixels (each 16 to MAX_SIDE)."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"picture size must be WIDTHxHEIGHT in pixels, e.g. 640x480, got {text!r}") from None
    if min(width, height) < 16 or max(width, height) > MAX_SIDE:
        raise ValueError(f"picture size must be from 16x16 to {MAX_SIDE}x{MAX_SIDE} pixels, got {text!r}")
    return width, height


def parse_azimuth(text: str) -> float:
    """An azimuth in deg: any finite number."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"azimuth must be a finite angle in deg, got {text!r}")
    return value


def parse_elevation(text: str) -> float:
    """An elevation in deg, strictly between -90 and 90 (straight up or down has no azimuth)."""
    value = float(text)
    if not -90.0 < value < 90.0:
        raise ValueError(f"elevation must lie strictly between -90 and 90 deg, got {text!r}")
    return value
