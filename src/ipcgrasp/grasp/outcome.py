"""The record of one grasp trial and the rules that judge it (docs/grasp_procedure.md, "Judge")."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

FAILURE_MEANINGS = {
    "miss": "no pad ever touched the object",
    "graze": "only one pad ever touched the object, then the jaws closed past it",
    "pushed_out": "the object was pushed or turned out of the grasp before the close rule fired",
    "no_clearance": "the jaws cannot open wide enough to start clear of the object",
    "stall": "the jaws stalled at the gripper's force limit without the close rule firing",
    "end_of_travel": "both pads reached the object but the jaws ran out of travel without the close rule firing",
    "unequal_effort": "the psi rule's pad energies were reached but its force balance never held",
    "jaws_meet": "both pads touched the object, then the pads met without the close rule firing",
    "slip": "the close rule fired, then the object was lost during the lift or hold (drops included)",
    "solver": "a step the solver could not take while the object was still held (or before it was grasped), or the "
              "trial past its newton_budget",
    "error": "the trial raised an error other than a failed step (the reason names it)",
}
"""One meaning per failure label (docs/grasp_procedure.md; `grasp.procedure` applies them)."""
FAILURE_MODES = tuple(FAILURE_MEANINGS)


SHAKE_OUTCOMES = ("held", "dropped", "solver")


@dataclass
class GraspResult:
    """One trial. Lengths in m, angles in rad, energies in J, forces in N, times in s.

    success / failure_mode (None on success, else one of FAILURE_MODES) / reason (words).
    squeeze_time, close_time: simulated time the squeeze started and the close rule fired (nan if never); psi, close_forces: each
    pad's strain energy and normal force on the object at closing; jaw_opening: front-face gap
    when the trial started and at closing; object_translation, object_rotation: largest
    displacement and rotation angle of the object during the squeeze; object_lateral_translation:
    the largest part of that displacement across the closing direction (a jaw that touches first
    pushes the object along the closing direction until the other catches it: that is not a
    push out of the grasp); grip_slide, grip_pivot, grip_roll: the object's largest motion
    relative to the gripper during the lift and hold (`grasp.grip_motion`): how far its point at
    the grasp centre slid along the pads (m), how far it turned about the grasp axis (rad,
    unsigned) and about an axis across it, rolling over the pads (rad); slip_kind: on a slip,
    which of the three moved the object's farthest point from the grasp axis most, "slid",
    "pivoted" or "rolled", else ""; at the close, the two sides of the pivot condition:
    gravity_torque = m g lever_arm (N m; lever_arm, m, the horizontal distance of the centre of
    mass from the grasp axis) and torsional_capacity (N m), the pads' torsional friction about the
    grasp axis, mu sum f_i r_i over their point contacts, with contact_radius (m) the force-weighted
    radius a of the uniform-pressure disc with that capacity (2/3 mu F a per pad; NaN where the
    model does not report point contact forces); contact_tilt (rad): at the close, the largest
    angle over the pads between a pad's resultant normal force and the grasp axis (beyond
    atan(mu) the squeeze alone pushes the object along the pads); lift_height: highest the
    object's lowest point got above the ground; min_distance: smallest contact distance over
    all steps; newton_iterations: total over the steps taken (attempts retried from their
    start, abandoned or failed count only against SimParams.newton_budget);
    newton_fallback_steps: steps accepted by the engine's Newton fallback
    (SolverSettings.newton_fallback_tolerance) instead of newton_tolerance;
    wall_time: total and per phase (the optional phases "shake" and "critical_mass" appear only
    when they ran; for variants of a trial run together, `simulate_variants`, the shared part
    included).
    max_penetration, max_force_gap: the largest of the engine's per-step StepStats fields of
    those names over the trial (m; 0 for IPC, whose configurations never intersect and whose
    barrier acts only below dhat).
    s_cf, s_cp (m), s_cn: Rocchi et al.'s contact-stability metrics over the hold after the lift
    (grasp.stability; NaN when the trial never reached the hold or no pad touched the object).
    shake_outcome: None when the shake test did not run (shake_amplitude = 0 or the trial failed),
    else one of SHAKE_OUTCOMES, with shake_reason in words.
    critical_mass (kg, PrendoSim): the object's mass when it first slipped (speed relative to the
    pads > slip_speed) while its mass ramped at mass_rate after the hold; NaN when not run, when
    the trial failed (nothing to ramp) or the solver failed during the ramp; inf when it never
    slipped up to max_mass. critical_mass_force (N): the pads' mean normal force on the object at
    the last step before the slip (or the cap, or the solver failure); critical_mass_reason: words.
    The shake and the ramp run after the trial is judged: they never change success.
    With record="frames": frames (the start, then per step {"time": s, body name: (n,3) world
    vertices, "contacts": (K,3) m}) and faces (body name -> (F,3) surface triangles indexing those
    vertices), for rendering. With record="trajectory": trajectory, one
    `grasp.trajectory.StepRecord` per step (`grasp.trajectory.write_trajectory` writes it).
    """

    success: bool = False
    failure_mode: str | None = None
    reason: str = ""
    seed: int | None = None
    squeeze_time: float = float("nan")
    close_time: float = float("nan")
    psi: tuple = (float("nan"), float("nan"))
    close_forces: tuple = (float("nan"), float("nan"))
    start_opening: float = float("nan")
    close_opening: float = float("nan")
    object_translation: float = 0.0
    object_rotation: float = 0.0
    object_lateral_translation: float = 0.0
    grip_slide: float = 0.0
    grip_pivot: float = 0.0
    grip_roll: float = 0.0
    slip_kind: str = ""
    gravity_torque: float = float("nan")
    lever_arm: float = float("nan")
    torsional_capacity: float = float("nan")
    contact_radius: float = float("nan")
    contact_tilt: float = float("nan")
    lift_height: float = 0.0
    min_distance: float = float("inf")
    newton_iterations: int = 0
    newton_fallback_steps: int = 0
    max_penetration: float = 0.0
    max_force_gap: float = 0.0
    s_cf: float = float("nan")
    s_cp: float = float("nan")
    s_cn: float = float("nan")
    shake_outcome: str | None = None
    shake_reason: str = ""
    critical_mass: float = float("nan")
    critical_mass_force: float = float("nan")
    critical_mass_reason: str = ""
    steps: int = 0
    wall_time: float = 0.0
    phase_wall_time: dict = field(default_factory=dict)
    grasp_pose: np.ndarray | None = field(default=None, repr=False)
    frames: list = field(default_factory=list, repr=False)
    faces: dict = field(default_factory=dict, repr=False)
    trajectory: list = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        """One line: outcome, reason, closing forces (N) and wall time (s)."""
        outcome = "success" if self.success else f"failure_mode={self.failure_mode!r}"
        forces = "/".join(f"{f:.1f}" for f in self.close_forces)
        return (f"GraspResult({outcome}, reason={self.reason!r}, close_forces={forces} N, "
                f"wall_time={self.wall_time:.1f} s)")

    def summary(self) -> dict:
        """Scalar fields only (for tables and JSON): per-pad values as psi_0, psi_1,
        close_force_0, close_force_1; phase wall times as wall_time_<phase>."""
        skip = ("frames", "faces", "trajectory", "grasp_pose", "phase_wall_time", "psi", "close_forces")
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        for i in range(2):
            out[f"psi_{i}"] = float(self.psi[i])
            out[f"close_force_{i}"] = float(self.close_forces[i])
        out.update({f"wall_time_{k}": v for k, v in self.phase_wall_time.items()})
        return out


@dataclass(frozen=True)
class HoldCheck:
    """The object's state after the hold: lowest point above the ground (m), the highest that
    point got during the lift (m), each pad's distance to the object (m), pad to pad (m)."""

    object_height: float
    lift_height: float
    pad_object: tuple
    pad_pad: float


def judge_hold(check: HoldCheck, lift_height: float, contact_tol: float, dhat: float) -> tuple[bool, str]:
    """Success iff the object reached `lift_height` (m) during the lift, is clear of the ground,
    both pads are within contact_tol (m) of it, and the pads do not touch each other (distance
    above dhat, m). Returns (success, reason)."""
    if not check.lift_height >= lift_height:
        return False, (f"object not lifted to {lift_height * 1e3:.1f} mm (its lowest point rose "
                       f"{check.lift_height * 1e3:.1f} mm)")
    if not check.object_height > contact_tol:
        return False, f"object back on the ground (lowest point {check.object_height * 1e3:.2f} mm above it)"
    far = [i for i, d in enumerate(check.pad_object) if not d <= contact_tol]
    if far:
        return False, f"pad {far[0]} lost the object (farther than {contact_tol * 1e3:.2f} mm)"
    if check.pad_pad <= dhat:
        return False, "pads touch each other"
    return True, "held after lift"
