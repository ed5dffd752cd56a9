"""Argument checks of the public distance functions: finite 3-vectors (m), positive and non-negative scalars."""

import numpy as np


def _vec3(x, name):
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def _points(names, values):
    return [_vec3(v, n) for n, v in zip(names, values)]


def _positive(x, name):
    x = float(x)
    if not x > 0.0 or not np.isfinite(x):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def _nonnegative(x, name):
    x = float(x)
    if not x >= 0.0 or not np.isfinite(x):
        raise ValueError(f"{name} must be non-negative and finite, got {x}")
    return x


_PE_NAMES = ("p", "e0", "e1")
_PT_NAMES = ("p", "t0", "t1", "t2")
_EE_NAMES = ("ea0", "ea1", "eb0", "eb1")
_EE_REST_NAMES = ("ea0_rest", "ea1_rest", "eb0_rest", "eb1_rest")
