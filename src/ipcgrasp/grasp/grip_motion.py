"""How a grasped object moves in the grip, and the two friction limits that decide whether it does.

A held object can leave the grasp in two ways, with different physics:

- it **slides** along the pads: its weight m g exceeds the pads' tangential friction 2 mu F
  (F the normal force of each pad, mu the pad-object friction);
- it **pivots** about the grasp axis (the line through the two contact patches): the gravity
  torque about that axis, m g d (d the horizontal distance of the centre of mass from the axis,
  across it), exceeds the pads' torsional friction capacity. A pad pressing with pressure p(r) on
  a contact patch resists rotation about the patch's pressure centre with a torque of at most
  mu sum_i f_i r_i (f_i the normal force of a point contact at distance r_i from that centre);
  for uniform pressure on a disc of radius a that is 2/3 mu F a per pad. Both pads resist, so
  the capacity is the sum over the two pads, 4/3 mu F a for two equal discs.

An object whose centre of mass is far from the grasp axis pivots long before it slides (for the
same pads, pivoting needs m g d > 4/3 mu F a, sliding m g > 2 mu F: with a = 2 mm and d = 20 mm
the pivot comes at 1/15 of the weight that would make it slide). Tangential load and torsion
share one friction limit (the pads' limit surface), so a pad carrying weight resists a little
less torque; at the weights of a held object (m g a few per cent of 2 mu F) the difference is
those few per cent.

A third way needs no weight at all: where the pads meet the object on surfaces that lean from
the grasp axis by more than the friction cone's half-angle atan(mu), the squeeze pushes the
object along the pads like a wedge (`contact_tilt`).

`GripReference` fixes the grip at the close (the gripper frame, the object's pose, the grasp
centre and axis); `grip_motion` measures, at any later step, the object's motion relative to the
gripper split into a slide (the grasp centre's displacement across the axis), a pivot (rotation
about the axis) and a roll (rotation about an axis across it: the object rolling over the pads);
`torsional_capacity` and `gravity_torque` give the two sides of the pivot condition from the
pads' point contacts and the object's centre of mass. Lengths in m, angles in rad, forces in N,
torques in N m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipcgrasp.engine.solver.settings import GRAVITY


@dataclass(frozen=True)
class GripReference:
    """The grip when the close rule fired: wrist (4x4, the gripper frame in the world where the
    jaws were sent), object_pose (4x4, world), centre (3,) m, the grasp centre in the world (the
    midpoint of the two pads' pressure centres), axis (3,) the unit grasp axis (jaw 0's closing
    direction)."""

    wrist: np.ndarray
    object_pose: np.ndarray
    centre: np.ndarray
    axis: np.ndarray


@dataclass(frozen=True)
class TorsionalCapacity:
    """The pads' resistance to the object turning about the grasp axis: capacity (N m), the sum
    over the pads of mu sum_i f_i r_i about each pad's pressure centre; per pad its normal force
    (N), its torsional capacity (N m) and its equivalent patch radius (m: the radius a of the disc
    under uniform pressure with that capacity, 3 capacity / (2 mu F); NaN for a pad without
    contact) and pressure centre (3,) m (NaN without contact)."""

    capacity: float
    forces: tuple
    pad_capacities: tuple
    radii: tuple
    centres: tuple

    @property
    def radius(self) -> float:
        """The force-weighted mean of the pads' equivalent patch radii (m; NaN without contact)."""
        f, a = np.array(self.forces), np.array(self.radii)
        ok = np.isfinite(a) & (f > 0)
        return float(np.sum(f[ok] * a[ok]) / np.sum(f[ok])) if ok.any() else float("nan")


def torsional_capacity(points, forces, pads, mu: float, axis) -> TorsionalCapacity:
    """The torsional friction capacity of the pads' point contacts on the object about the grasp
    axis: points (K, 3) m, their normal forces on the object (K, 3) N, pads (K,) (0 or 1, as
    `Backend.pad_contacts` gives them), mu the pad-object friction, axis (3,) the grasp axis.
    Each pad resists a rotation about the axis through its pressure centre c (the force-weighted
    mean of its points) with at most mu sum_i |f_i| r_i, r_i the distance of point i from that
    line. All NaN when no point carries a finite force (a model that cannot attribute forces to
    points, or reports no points)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    magnitudes = np.linalg.norm(np.asarray(forces, dtype=np.float64).reshape(-1, 3), axis=1)
    pads = np.asarray(pads).reshape(-1)
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    if not np.any(np.isfinite(magnitudes)):  # a model that reports no contact forces per point
        nan = float("nan")
        return TorsionalCapacity(nan, (nan, nan), (nan, nan), (nan, nan), (np.full(3, np.nan),) * 2)
    totals, capacities, radii, centres = [], [], [], []
    for pad in range(2):
        on = (pads == pad) & np.isfinite(magnitudes) & (magnitudes > 0)
        f, x = magnitudes[on], points[on]
        total = float(f.sum())
        if not total > 0.0:
            totals.append(0.0), capacities.append(0.0), radii.append(float("nan")), centres.append(np.full(3, np.nan))
            continue
        centre = (f[:, None] * x).sum(axis=0) / total
        offset = x - centre
        r = np.linalg.norm(offset - np.outer(offset @ axis, axis), axis=1)
        capacity = mu * float(np.sum(f * r))
        totals.append(total), capacities.append(capacity), centres.append(centre)
        radii.append(1.5 * capacity / (mu * total) if mu > 0 else float("nan"))
    return TorsionalCapacity(float(sum(capacities)), tuple(totals), tuple(capacities), tuple(radii), tuple(centres))


def contact_tilt(forces, pads, axis) -> float:
    """The largest angle (rad) over the pads between a pad's resultant normal force on the object
    (forces (K, 3) N, pads (K,) as `Backend.pad_contacts` gives them) and the grasp axis (either
    sense): how far the contact normals lean from the squeeze's line. Beyond the friction cone's
    half-angle atan(mu) the squeeze itself pushes the object along the pads, whatever its weight
    (a wedge pinched between the pads). NaN when no pad carries a finite force."""
    forces = np.asarray(forces, dtype=np.float64).reshape(-1, 3)
    pads = np.asarray(pads).reshape(-1)
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    tilts = []
    for pad in range(2):
        on = (pads == pad) & np.all(np.isfinite(forces), axis=1)
        total = forces[on].sum(axis=0)
        norm = float(np.linalg.norm(total))
        if norm > 0.0:
            tilts.append(float(np.arccos(min(abs(total @ axis) / norm, 1.0))))
    return max(tilts) if tilts else float("nan")


def grasp_centre(capacity: TorsionalCapacity, fallback) -> np.ndarray:
    """The midpoint of the pads' pressure centres (m); `fallback` (3,) where a pad has none."""
    centres = [c for c in capacity.centres if np.all(np.isfinite(c))]
    return np.mean(centres, axis=0) if len(centres) == 2 else np.asarray(fallback, dtype=np.float64).copy()


def lever_arm(centre_of_mass, centre, axis) -> float:
    """d (m): the horizontal distance of the centre of mass from the grasp axis through `centre`,
    across the axis (the arm of the weight's torque about the axis: |((c - x) x e_z) . axis|)."""
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    offset = np.asarray(centre_of_mass, dtype=np.float64) - np.asarray(centre, dtype=np.float64)
    return float(abs(np.cross(offset, [0.0, 0.0, 1.0]) @ axis))


def gravity_torque(mass: float, centre_of_mass, centre, axis) -> float:
    """m g d (N m): the weight's torque about the grasp axis through `centre` (mass in kg)."""
    return mass * GRAVITY * lever_arm(centre_of_mass, centre, axis)


def rotation_vector(rotation) -> np.ndarray:
    """The axis-angle vector (3,) of a 3x3 rotation (rad; its norm is the angle in [0, pi])."""
    R = np.asarray(rotation, dtype=np.float64)
    angle = float(np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if angle < 1e-9:
        return 0.5 * w
    if np.pi - angle < 1e-6:  # a half turn: the axis from the symmetric part
        k = int(np.argmax(np.diag(R)))
        v = R[:, k] + np.eye(3)[k]
        return angle * v / np.linalg.norm(v)
    return angle * w / (2.0 * np.sin(angle))


def grip_motion(reference: GripReference, wrist, object_pose) -> tuple[float, float, float]:
    """The object's motion relative to the gripper since `reference`, with the gripper's frame
    now `wrist` (4x4) and the object at `object_pose` (4x4): (slide, pivot, roll). slide (m): how
    far the object's material point that was at the grasp centre moved relative to the gripper,
    across the grasp axis (along the pads); pivot (rad, signed about the grasp axis): the
    component along that axis of the object's rotation (vector) relative to the gripper; roll
    (rad, unsigned): the size of its component across the axis, the object rolling over the
    pads (their contact points move, the jaws close or open after it)."""
    relative_then = np.linalg.solve(reference.wrist, reference.object_pose)  # object in the gripper frame
    relative_now = np.linalg.solve(np.asarray(wrist, dtype=np.float64), np.asarray(object_pose, dtype=np.float64))
    motion = relative_now @ np.linalg.inv(relative_then)  # gripper-frame points at the close -> now
    centre = np.linalg.solve(reference.wrist, np.append(reference.centre, 1.0))[:3]
    axis = reference.wrist[:3, :3].T @ reference.axis
    moved = motion[:3, :3] @ centre + motion[:3, 3] - centre
    slide = float(np.linalg.norm(moved - (moved @ axis) * axis))
    turn = rotation_vector(motion[:3, :3])
    pivot = float(turn @ axis)
    return slide, pivot, float(np.linalg.norm(turn - pivot * axis))
