"""Quasi-static wrench resistance shared by the analytic grasp models (soft point, REACH, 6DFC).

A grasp holds when contact wrenches within the friction model's limits balance the load
(gravity): the quasi-static check of Dex-Net, REACH and 6DFC (Mahler et al. 2017; Danielczuk et
al., ISRR 2019; Xu et al., ICRA 2020). Each jaw presses with the closing force F, so at its
nominal normal force a jaw's wrenches about the reference point form a bounded convex set

    W_i = { n_i + sum_e M_e u_e : ||u_e|| <= 1 },

n_i the wrench of its normal force(s) and each block M_e (6 x k) the image of a unit ball: a
Coulomb disc of radius mu N in a tangent plane (k = 2), a torsional friction interval (k = 1) or
a limit-surface ellipsoid (k = 3). Its support function is h_i(y) = y . n_i + sum_e ||M_e^T y||,
attained at n_i + sum_e M_e M_e^T y / ||M_e^T y||: for disc blocks this is the friction each
element exerts when the object slides with the twist y (y's force part the velocity of the
reference point, its moment part the angular velocity), i.e. a point of the limit surface.

The gripper squeezes with F, but its mechanism carries any net force along the closing axis, so
jaw i's normal force (and with it its friction limits) is sigma_i F with sigma_i >= 0 of mean 1:
with a normal force fixed at exactly F per jaw, the smallest component of the weight along the
closing axis (a grasp tilted by the pose noise) could never be balanced. `resist` finds the
largest load factor s with sum_i sigma_i w_i + s L = 0 over w_i in W_i and such sigma (the load L
a wrench, gravity by default): the grasp resists s times the object's weight.

It is solved exactly, with no fixed linearisation of cones or limit surfaces, by column generation
(Dantzig-Wolfe): a master LP (scipy's HiGHS) over nonnegative combinations of generated support
points with sum of weights = number of jaws, and a pricing step adding, for each jaw, its support
point in the direction y of the LP's balance-row duals (a limit-surface sample at the twist the LP
asks about). With y normalised so that y . L = -1, every feasible s satisfies
s = sum_i sigma_i y . w_i <= n max_i h_i(y), an upper bound; iterations stop when it is within
`tolerance` (relative) of the master's s, or when no column improves the master. Rows are scaled to
units of the load (forces by |L_f|, moments by |L_f| times a length scale), and six penalised
slack pairs keep the master feasible; a positive slack at the optimum means no load factor
balances the squeeze (e.g. tilted contact normals whose normal forces friction cannot cancel).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.grasp.grip_motion import GRAVITY
from ipcgrasp.grasp.gripper import Gripper

__all__ = [
    "GRAVITY_VECTOR",
    "ContactWrenchSet",
    "WrenchResistance",
    "analytic_prediction",
    "disc_blocks",
    "gravity_wrench",
    "resist",
    "resist_gravity",
    "tangent_bases",
    "torsion_blocks",
    "wrenches",
]

GRAVITY_VECTOR = np.array([0.0, 0.0, -GRAVITY])
"""Gravitational acceleration (m/s^2), world z up (docs/physics.md, "Units and frames")."""
GRAVITY_VECTOR.flags.writeable = False
LENGTH_SCALE = 0.01
"""Length (m) by which moment rows are divided (about the pad size) so all rows are comparable."""
SLACK_PENALTY = 1e4
"""Cost of a unit of unbalanced wrench (in load units) in the master LP; exact whenever the
balanced problem's duals are smaller, far above the O(1) duals of the scaled problem."""
MAX_FACTOR = 1e9
"""Bound on the load factor, reached only by a load the contacts cannot act on at all."""
BALANCE_TOLERANCE = 1e-7
"""Largest residual (scaled units: weights, weights x length scale) of a balanced wrench sum."""


def wrenches(points, forces, reference) -> np.ndarray:
    """Wrenches (n, 6) = [f; (p - reference) x f] of forces (n, 3) (N) at points (n, 3) (m)
    about `reference` (3,) (m): force in N, moment in N m."""
    points = np.atleast_2d(np.asarray(points, dtype=np.float64))
    forces = np.atleast_2d(np.asarray(forces, dtype=np.float64))
    arms = points - np.asarray(reference, dtype=np.float64)
    return np.hstack([forces, np.cross(arms, forces)])


def gravity_wrench(mass: float, center_of_mass, reference=None, gravity=GRAVITY_VECTOR) -> np.ndarray:
    """Gravity's wrench (6,) on an object of `mass` (kg) about `reference` (m; default the centre
    of mass, where its moment vanishes): [m g; (c - reference) x m g]."""
    if not mass > 0.0:
        raise ValueError(f"mass must be positive (kg), got {mass}")
    center_of_mass = np.asarray(center_of_mass, dtype=np.float64)
    reference = center_of_mass if reference is None else reference
    return wrenches(center_of_mass, mass * np.asarray(gravity, dtype=np.float64), reference)[0]


def tangent_bases(normals) -> np.ndarray:
    """Orthonormal tangent pairs (n, 3, 2) (columns t1, t2) of unit normals (n, 3), with
    (t1, t2, n) right-handed."""
    normals = np.atleast_2d(np.asarray(normals, dtype=np.float64))
    helper = np.zeros_like(normals)
    helper[np.arange(len(normals)), np.argmin(np.abs(normals), axis=1)] = 1.0
    t1 = np.cross(helper, normals)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return np.stack([t1, np.cross(normals, t1)], axis=2)


def disc_blocks(points, normals, limits, reference) -> np.ndarray:
    """Coulomb friction discs (n, 6, 2): the tangential forces f in the plane normal to each
    unit normal (n, 3) at each point (n, 3) with ||f|| <= limit (n,) (N), as wrenches about
    `reference`: M = limit [T; (p - reference) x T], T the tangent basis."""
    points = np.atleast_2d(np.asarray(points, dtype=np.float64))
    bases = tangent_bases(normals)
    limits = np.broadcast_to(np.asarray(limits, dtype=np.float64), (len(points),))
    arms = points - np.asarray(reference, dtype=np.float64)
    moments = np.cross(arms[:, :, None], bases, axis=1)
    return limits[:, None, None] * np.concatenate([bases, moments], axis=1)


def torsion_blocks(normals, limits) -> np.ndarray:
    """Torsional friction intervals (n, 6, 1): moments tau n about each unit normal (n, 3) with
    |tau| <= limit (n,) (N m)."""
    normals = np.atleast_2d(np.asarray(normals, dtype=np.float64))
    limits = np.broadcast_to(np.asarray(limits, dtype=np.float64), (len(normals),))
    return np.concatenate([np.zeros_like(normals), limits[:, None] * normals], axis=1)[:, :, None]


@dataclass(frozen=True, eq=False)
class ContactWrenchSet:
    """One contact's (or jaw's) wrenches about the reference point (N, N m):
    { normal_wrench + sum_e M_e u_e : ||u_e|| <= 1 }, with `blocks` a tuple of (E, 6, k) arrays
    of the matrices M_e (k may differ between blocks)."""

    normal_wrench: np.ndarray
    blocks: tuple[np.ndarray, ...] = ()

    def __post_init__(self):
        normal = np.asarray(self.normal_wrench, dtype=np.float64)
        if normal.shape != (6,) or not np.all(np.isfinite(normal)):
            raise ValueError(f"normal_wrench must be a finite 6-vector, got shape {normal.shape}")
        blocks = tuple(np.asarray(b, dtype=np.float64) for b in self.blocks)
        for b in blocks:
            if b.ndim != 3 or b.shape[1] != 6 or not np.all(np.isfinite(b)):
                raise ValueError(f"each block must be a finite (E, 6, k) array, got shape {b.shape}")
        object.__setattr__(self, "normal_wrench", normal)
        object.__setattr__(self, "blocks", blocks)

    def scaled(self, scale) -> ContactWrenchSet:
        """The same set with every wrench multiplied componentwise by `scale` (6,)."""
        scale = np.asarray(scale, dtype=np.float64)
        return ContactWrenchSet(scale * self.normal_wrench, tuple(scale[None, :, None] * b for b in self.blocks))

    def friction_support(self, direction) -> tuple[float, np.ndarray]:
        """max over the friction part sum_e M_e u_e of direction . w, and a maximiser (6,)."""
        direction = np.asarray(direction, dtype=np.float64)
        value, point = 0.0, np.zeros(6)
        for block in self.blocks:
            projected = np.einsum("eik,i->ek", block, direction)
            norms = np.linalg.norm(projected, axis=1)
            active = norms > 0.0
            value += norms.sum()
            point += np.einsum("eik,ek->i", block[active], projected[active] / norms[active, None])
        return float(value), point

    def support(self, direction) -> tuple[float, np.ndarray]:
        """The support function h(y) = max over the set of y . w, and a maximiser (6,)."""
        value, point = self.friction_support(direction)
        return float(value + np.dot(direction, self.normal_wrench)), point + self.normal_wrench


@dataclass(frozen=True)
class WrenchResistance:
    """Result of `resist`: `factor`, the largest multiple of the load the contacts balance (nan
    when none does); `balanced`, whether some multiple does; `resisted` = balanced and
    factor >= 1 + margin; `gap`, the certified bound on factor's error (in load multiples);
    `iterations` of column generation."""

    resisted: bool
    factor: float
    balanced: bool
    gap: float
    iterations: int
    info: dict = field(default_factory=dict)


def resist(sets, load, length_scale: float = LENGTH_SCALE, margin: float = 0.0, tolerance: float = 1e-4,
           max_iterations: int = 200) -> WrenchResistance:
    """Largest s with sum_i sigma_i w_i + s load = 0, w_i in sets[i] (`ContactWrenchSet`s about
    the load's reference point; load (6,), N and N m), sigma_i >= 0 with mean 1, by column
    generation to a certified relative `tolerance` (module docstring)."""
    load = np.asarray(load, dtype=np.float64)
    force = np.linalg.norm(load[:3]) if load.shape == (6,) else 0.0
    if not (np.all(np.isfinite(load)) and force > 0.0):
        raise ValueError("load must be a finite 6-vector with a nonzero force")
    if not length_scale > 0.0:
        raise ValueError(f"length_scale must be positive (m), got {length_scale}")
    if not sets:
        raise ValueError("need at least one contact wrench set")
    scale = np.repeat([1.0 / force, 1.0 / (force * length_scale)], 3)
    sets = [s.scaled(scale) for s in sets]
    load = scale * load
    directions = np.vstack([np.eye(6), -np.eye(6), load, -load])
    columns = [[s.support(d)[1] for d in directions] for s in sets]
    magnitude = max(np.abs(c).max() for c in columns)
    bound = np.inf
    for iteration in range(1, max_iterations + 1):
        factor, slack, duals, squeeze_dual = _master(columns, load)
        # reduced costs below this are rounding: a few ulps of the terms y . x and pi they sum
        noise = 1e-9 * (1.0 + abs(squeeze_dual) + np.abs(duals).sum() * magnitude)
        values, improved = [], False
        for i, s in enumerate(sets):
            value, point = s.support(duals)
            values.append(value)
            if value + squeeze_dual > noise:
                columns[i].append(point)
                improved = True
        if abs(duals @ load + 1.0) <= 1e-9:
            bound = min(bound, len(sets) * max(values))  # y . load = -1: s <= n max_i h_i(y)
        balanced = slack <= BALANCE_TOLERANCE
        if balanced and bound - factor <= tolerance * max(1.0, abs(factor)):
            break
        if not improved:
            break  # no column improves the master: it is optimal over the whole sets
    gap = bound - factor if balanced else np.nan
    factor = factor if balanced else np.nan
    return WrenchResistance(bool(balanced and factor >= 1.0 + margin), factor, bool(balanced), gap, iteration,
                            {"residual": slack, "columns": sum(len(c) for c in columns)})


def _master(columns, load) -> tuple[float, float, np.ndarray, float]:
    """The restricted master LP over nonnegative multiples mu_ij of each set's columns (support
    points, normal part included): minimise -s + penalty |r| subject to
    sum_ij mu_ij x_ij + s load + r = 0 and sum_ij mu_ij = number of sets (the squeeze).
    Returns (s, max |r|, the 6 balance-row duals, the squeeze-row dual)."""
    n_sets = len(columns)
    stacked = np.vstack([np.array(c) for c in columns])
    n_mu = len(stacked)
    matrix = np.zeros((7, n_mu + 13))
    matrix[:6, :n_mu] = stacked.T
    matrix[:6, n_mu] = load
    matrix[:6, n_mu + 1:n_mu + 7] = np.eye(6)
    matrix[:6, n_mu + 7:] = -np.eye(6)
    matrix[6, :n_mu] = 1.0
    cost = np.zeros(n_mu + 13)
    cost[n_mu] = -1.0
    cost[n_mu + 1:] = SLACK_PENALTY
    bounds = np.zeros((n_mu + 13, 2))
    bounds[:, 1] = np.inf
    bounds[n_mu] = (-MAX_FACTOR, MAX_FACTOR)
    rhs = np.zeros(7)
    rhs[6] = n_sets
    result = scipy.optimize.linprog(cost, A_eq=matrix, b_eq=rhs, bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"wrench resistance master LP failed: {result.message}")
    slack = float(np.abs(result.x[n_mu + 1:n_mu + 7] - result.x[n_mu + 7:]).max())
    duals = result.eqlin.marginals
    return float(result.x[n_mu]), slack, duals[:6], float(duals[6])


def resist_gravity(sets, mass: float, center_of_mass, gravity=GRAVITY_VECTOR, **options) -> WrenchResistance:
    """`resist` with the object's weight as the load, the sets taken about its centre of mass."""
    return resist(sets, gravity_wrench(mass, center_of_mass, gravity=gravity), **options)


def analytic_prediction(contact_sets, obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """Run a quasi-static model: perturb the grasp (`perturbed_grasp`), find the contacts
    (`grasp_contacts` with the YuMi and `params.jaw`'s pad), build each jaw's wrench set with
    `contact_sets(contacts, params)` (about the centre of mass), and check that the grasp
    resists the object's weight. success = resisted; score = the load factor (multiples of the
    weight the grasp holds, 0 when it holds none, a jaw misses, or a jaw still overlaps the object
    when opened as far as the simulator may: reasons "miss" and "no_clearance"); runtime in s."""
    start = time.perf_counter()
    contacts = grasp_contacts(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), Gripper.yumi(params.jaw))
    info = {"width": contacts.width, "travel": tuple(j.travel for j in contacts.jaws),
            "patch_area": tuple(float(j.patch_areas.sum()) for j in contacts.jaws)}
    if not (contacts.hit and contacts.clear):
        reason = "no_clearance" if not contacts.clear else "miss"
        return Prediction(False, 0.0, time.perf_counter() - start, {**info, "reason": reason})
    result = resist_gravity(contact_sets(contacts, params), contacts.mass, contacts.center_of_mass)
    score = max(result.factor, 0.0) if result.balanced else 0.0
    reason = "held" if result.resisted else ("slip" if result.balanced else "unbalanced")
    info.update(reason=reason, factor=result.factor, gap=result.gap, iterations=result.iterations)
    return Prediction(result.resisted, float(score), time.perf_counter() - start, info)
