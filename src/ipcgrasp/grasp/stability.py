"""Contact-stability metrics of Rocchi, Ames, Li and Hauser, "Stable Simulation of Underactuated
Compliant Hands" (ICRA 2016), section IV: how much the contact force, position and normal of each
body touching the object fluctuate while the object should be in equilibrium (the hold after the
lift). 0 is best.

    S_cf = 1/|C| sum_{i in C} sqrt(||Var[f_i(t)]||_F) / E[||f_i(t)||]      (eq. 7)
    S_cp = 1/|C| sum_{i in C} sqrt(||Var[x^_i(t)]||_F)                    (eq. 8)
    S_cn = 1/|C| sum_{i in C} sqrt(||Var[n^_i(t)]||_F)                    (eq. 9)

C: the bodies touching the object (here the two pads); f_i: the resultant contact force between
body i and the object; x^_i, n^_i: the average position and the average normal of the point
contacts of body i at one time step. Var of a vector signal is its 3 x 3 covariance matrix over
the time steps, E the mean over them; the paper leaves the estimator open, these use the
population forms (divide by the number of samples T), so a two-sample signal +-a has variance a^2.
S_cf is dimensionless, S_cp in m, S_cn dimensionless.

How the simulator's contacts become point contacts is `contact_points`. The functions here are
pure: arrays in, floats out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _series(values, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != 3 or a.shape[0] == 0:
        raise ValueError(f"{name} must be a (T, 3) time series with T >= 1, got shape {a.shape}")
    return a


def spread(series) -> float:
    """sqrt(||Var[s(t)]||_F) of a vector signal s (T, 3): the square root of the Frobenius norm
    of its (population) covariance matrix, in the units of s. Rows with a NaN (steps without
    contact) are left out; NaN when none is left."""
    s = _series(series, "series")
    s = s[np.all(np.isfinite(s), axis=1)]
    if not len(s):
        return float("nan")
    shifted = s - s[0]  # shifted data: a constant signal gives exactly 0, not rounding noise
    centred = shifted - shifted.mean(axis=0)
    covariance = centred.T @ centred / len(s)
    return float(np.sqrt(np.linalg.norm(covariance, "fro")))


def contact_force_variation(forces: Sequence) -> float:
    """S_cf (eq. 7, dimensionless): forces[i] (T, 3), N, the resultant contact force between body
    i of C and the object at each time step (zero at steps without contact). NaN for empty C."""
    if not len(forces):
        return float("nan")
    terms = []
    for i, f in enumerate(forces):
        f = _series(f, f"forces[{i}]")
        mean_norm = float(np.linalg.norm(f, axis=1).mean())
        if not mean_norm > 0.0:
            raise ValueError(f"forces[{i}] is zero at every step: that body does not touch the object (not in C)")
        terms.append(spread(f) / mean_norm)
    return float(np.mean(terms))


def contact_position_variation(positions: Sequence) -> float:
    """S_cp (eq. 8, m): positions[i] (T, 3), m, the average contact position x^_i of body i of C
    at each time step (NaN rows: no contact at that step). NaN for empty C."""
    return float(np.mean([spread(_series(x, f"positions[{i}]")) for i, x in enumerate(positions)])) \
        if len(positions) else float("nan")


def contact_normal_variation(normals: Sequence) -> float:
    """S_cn (eq. 9, dimensionless): normals[i] (T, 3), the average contact normal n^_i of body i
    of C at each time step (the mean of unit normals, not renormalised; NaN rows: no contact).
    NaN for empty C."""
    return float(np.mean([spread(_series(n, f"normals[{i}]")) for i, n in enumerate(normals)])) \
        if len(normals) else float("nan")


def contact_point_forces(vertex_positions, vertex_forces, on_object) -> tuple[np.ndarray, np.ndarray]:
    """Point contacts (position, force on the object) of K IPC collisions.

    vertex_positions (K, 4, 3) m and vertex_forces (K, 4, 3) the positions of each collision's
    vertices and the barrier force on each (N, or any positive scale; padding rows zero); on_object
    (K, 4) bool, which of them belong to the object. The barrier force of a collision acts along
    the gradient of its distance, which splits between the two primitives with the closest
    points' barycentric weights, so the vertex positions averaged with weights |force| give the
    midpoint of the two closest points: that is the contact position (as BLEM places a contact
    between the two closest points). The force is the sum over the object's vertices (pointing
    from the other body into the object). Collisions without force are dropped.
    Returns points (K', 3) m and forces (K', 3) in the units of vertex_forces."""
    x = np.asarray(vertex_positions, dtype=np.float64)
    f = np.asarray(vertex_forces, dtype=np.float64)
    on_object = np.asarray(on_object, dtype=bool)
    if x.ndim != 3 or x.shape[1:] != (4, 3) or f.shape != x.shape or on_object.shape != x.shape[:2]:
        raise ValueError(f"expected vertex_positions, vertex_forces (K, 4, 3) and on_object (K, 4), got "
                         f"{x.shape}, {f.shape}, {on_object.shape}")
    weight = np.linalg.norm(f, axis=2)
    total = weight.sum(axis=1)
    on_obj_force = np.where(on_object[:, :, None], f, 0.0).sum(axis=1)
    keep = (total > 0.0) & (np.linalg.norm(on_obj_force, axis=1) > 0.0)
    points = (weight[keep, :, None] * x[keep]).sum(axis=1) / total[keep, None]
    return points, on_obj_force[keep]


def contact_points(vertex_positions, vertex_forces, on_object) -> tuple[np.ndarray, np.ndarray]:
    """Point contacts (position, unit normal) of K IPC collisions (`contact_point_forces`; the
    normal is the direction of the force on the object's vertices, pointing from the other body
    into the object). Returns points (K', 3) m and normals (K', 3)."""
    points, forces = contact_point_forces(vertex_positions, vertex_forces, on_object)
    return points, forces / np.linalg.norm(forces, axis=1)[:, None]


def contact_average(points, normals) -> tuple[np.ndarray, np.ndarray]:
    """x^_i and n^_i of one body at one step (Rocchi et al. section IV.B): the mean position
    (3,) m and the mean unit normal (3,) of its point contacts (K, 3); NaN (3,) for K = 0."""
    points, normals = np.asarray(points, dtype=np.float64), np.asarray(normals, dtype=np.float64)
    if not len(points):
        return np.full(3, np.nan), np.full(3, np.nan)
    return points.mean(axis=0), normals.mean(axis=0)
