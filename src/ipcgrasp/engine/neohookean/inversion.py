"""Tet inversion: the smallest J = det F of a mesh and the largest step fraction along a direction
that keeps every tet's J > 0 (exact per-tet cubic root).
"""

import numpy as np

from ipcgrasp.engine._numba import njit
from ipcgrasp.engine.neohookean.element import _deformation_gradient_into
from ipcgrasp.engine.neohookean.inputs import _as_positions, _validated
from ipcgrasp.engine.neohookean.matrix3 import _cofactor_into, _det3, _frobenius_dot


@njit
def _min_jacobian(x, tets, Dm_inv):
    J_min = np.inf
    F = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        J = _det3(F)
        if J < J_min:
            J_min = J
    return J_min


@njit
def _cubic(c0, c1, c2, c3, t):
    return c0 + t * (c1 + t * (c2 + t * c3))


@njit
def _first_cubic_root(c0, c1, c2, c3, t_max):
    """Smallest t in (0, t_max] with p(t) = c0 + c1 t + c2 t^2 + c3 t^3 <= 0, given c0 > 0;
    returned as the last bisection point with p > 0 (so p(t) > 0 on [0, t]); +inf if none.

    [0, t_max] is cut at the critical points of p (stable quadratic formula) into monotone
    pieces, so a sign change, including a tangent (double) root, shows at a piece end."""
    breaks = np.empty(3)
    n_breaks = 0
    a = 3.0 * c3
    b = 2.0 * c2
    c = c1
    if a == 0.0:
        if b != 0.0:
            breaks[0] = -c / b
            n_breaks = 1
    else:
        disc = b * b - 4.0 * a * c
        if disc >= 0.0:
            q = -0.5 * (b + np.copysign(np.sqrt(disc), b))
            breaks[0] = q / a
            n_breaks = 1
            if q != 0.0:
                breaks[1] = c / q
                n_breaks = 2
    pieces = np.empty(3)
    n_pieces = 0
    for k in range(n_breaks):
        if 0.0 < breaks[k] < t_max:
            pieces[n_pieces] = breaks[k]
            n_pieces += 1
    if n_pieces == 2 and pieces[1] < pieces[0]:
        pieces[0], pieces[1] = pieces[1], pieces[0]
    pieces[n_pieces] = t_max
    n_pieces += 1

    lo = 0.0
    for k in range(n_pieces):
        hi = pieces[k]
        if _cubic(c0, c1, c2, c3, hi) <= 0.0:
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if _cubic(c0, c1, c2, c3, mid) > 0.0:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return np.inf


@njit
def _max_noninverting_step(x, dx, tets, Dm_inv, safety):
    """Largest alpha in [0, 1] with J > 0 on all of [0, alpha] along x + alpha dx, scaled back
    by `safety`: alpha = min(1, safety * t*), t* the first per-tet root of the cubic
    det(F + t dF) = det F + t cof(F):dF + t^2 F:cof(dF) + t^3 det dF searched in [0, 1/safety].
    Returns -1 if a tet is already inverted (J <= 0)."""
    t_max = 1.0 / safety
    t_first = t_max
    F = np.empty((3, 3))
    dF = np.empty((3, 3))
    C = np.empty((3, 3))
    for t in range(tets.shape[0]):
        _deformation_gradient_into(x, tets[t], Dm_inv[t], F)
        _deformation_gradient_into(dx, tets[t], Dm_inv[t], dF)
        c0 = _det3(F)
        if not c0 > 0.0:
            return -1.0
        _cofactor_into(F, C)
        c1 = _frobenius_dot(C, dF)
        _cofactor_into(dF, C)
        c2 = _frobenius_dot(C, F)
        c3 = _det3(dF)
        if t_first * (abs(c1) + t_first * (abs(c2) + t_first * abs(c3))) <= 0.5 * c0:
            continue  # J >= c0 / 2 on [0, t_first]: far beyond rounding from a root, none to find
        root = _first_cubic_root(c0, c1, c2, c3, t_first)
        if root < t_first:
            t_first = root
    return min(1.0, safety * t_first)


def min_jacobian(x, tets, Dm_inv):
    """Smallest J = det F over all tets (dimensionless; +inf for no tets)."""
    x, tets, Dm_inv = _validated(x, tets, Dm_inv)
    return float(_min_jacobian(x, tets, Dm_inv))


def any_inverted(x, tets, Dm_inv):
    """True if some tet has J = det F <= 0 (inverted or flat)."""
    return min_jacobian(x, tets, Dm_inv) <= 0.0


def max_noninverting_step(x, dx, tets, Dm_inv, safety=0.9):
    """Step fraction alpha in (0, 1] keeping every tet's J > 0 along x + t dx for t in [0, alpha].

    Exact per-tet test: det(F + t dF) is a cubic in t; its first positive root t* is isolated
    between the cubic's critical points and bisected to machine precision. Returns
    min(1, safety * min_tets t*) (safety in (0, 1] leaves room for rounding and for the energy
    barrier -mu ln J). Raises ValueError if x already has an inverted tet.
    """
    x, tets, Dm_inv = _validated(x, tets, Dm_inv)
    dx = _as_positions(dx, "dx")
    if dx.shape != x.shape:
        raise ValueError(f"dx must have the shape of x {x.shape}, got {dx.shape}")
    s = float(safety)
    if not 0.0 < s <= 1.0:
        raise ValueError(f"safety must lie in (0, 1], got {s!r}")
    alpha = float(_max_noninverting_step(x, dx, tets, Dm_inv, s))
    if alpha < 0.0:
        raise ValueError("x already has an inverted tet (J <= 0)")
    return alpha
