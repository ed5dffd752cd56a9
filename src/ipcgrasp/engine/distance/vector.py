"""Arithmetic on 3-vectors as scalars and tuples (no allocation), for the distance kernels (m, m^2)."""

from ipcgrasp.engine._numba import njit


@njit
def _sub(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def _skew(a, i, j):
    """Entry (i, j) of the cross-product matrix [a]_x, with [a]_x b = a x b."""
    if i == j:
        return 0.0
    k = 3 - i - j
    return a[k] if (j - i) % 3 == 2 else -a[k]
