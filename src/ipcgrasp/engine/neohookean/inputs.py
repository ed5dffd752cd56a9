"""Argument checks of the public Neo-Hookean functions: positions (m), tets, Dm^-1 (1/m) and volumes (m^3)."""

import numpy as np


def _as_positions(x, name):
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_tets(tets, n_vertices):
    arr = np.asarray(tets)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"tets must have shape (T, 4), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"tets must hold integer vertex indices, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_vertices):
        raise ValueError(f"tets index vertices outside [0, {n_vertices})")
    return arr


def _as_dm_inv(Dm_inv, n_tets):
    arr = np.ascontiguousarray(Dm_inv, dtype=np.float64)
    if arr.shape != (n_tets, 3, 3):
        raise ValueError(f"Dm_inv must have shape ({n_tets}, 3, 3), got {arr.shape}")
    return arr


def _as_volumes(volumes, n_tets):
    arr = np.ascontiguousarray(volumes, dtype=np.float64)
    if arr.shape != (n_tets,):
        raise ValueError(f"volumes must have shape ({n_tets},), got {arr.shape}")
    return arr


def _validated(x, tets, Dm_inv, volumes=None):
    x = _as_positions(x, "x")
    tets = _as_tets(tets, x.shape[0])
    Dm_inv = _as_dm_inv(Dm_inv, tets.shape[0])
    if volumes is None:
        return x, tets, Dm_inv
    return x, tets, Dm_inv, _as_volumes(volumes, tets.shape[0])
