"""The penalty / BLEM dynamic grasp model: ipcgrasp's own simulator, bodies, integrator
and grasp procedure, with the barrier and CCD replaced by penalty contact with a boundary
layer (`engine.penalty`: margin r around every mesh, penalty stiffness k per contact, discrete
collision detection, optional k-means contact clustering as in Rocchi et al. 2016).

What it does: `grasp.simulate.simulate_grasp` with `contact_model="penalty"` and the
`penalty_stiffness`, `penalty_margin` and `penalty_clusters` of `params`, on the grasp perturbed
with the trial seed exactly as the IPC trial. The one other change: a pad counts as touching the
object within `contact_tol + 2 r` instead of `contact_tol`, because penalty contact holds an
object across the boundary layers (up to 2 r apart); without it every penalty grasp with a
margin above contact_tol / 2 would be judged a slip while it lifts the object.

Recorded per trial (`Prediction.info`): failure_mode ("" on success) and reason, close_forces
(N, each pad at closing), max_penetration (m, the deepest a surface vertex got inside another
body or below the ground over the trial) and max_force_gap (m, the largest distance at which a
contact force acted: the "force field"), steps and newton_iterations, and the contact settings.
The two artifact measures come from the trial's per-step `StepStats` through `GraspResult`
(nan when the grasp layer does not record them).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.grasp.simulate import simulate_grasp

__all__ = ["penalty_params", "predict"]


def penalty_params(params):
    """`params` (SimParams) for the penalty model: contact_model "penalty", contact_tol + 2 r."""
    return replace(params, contact_model="penalty", contact_tol=params.contact_tol + 2.0 * params.penalty_margin)


def predict(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """Penalty-contact simulation of one trial (`interface.Prediction`; score nan, the model has
    no continuous score; runtime = wall time of the whole trial, s)."""
    p = penalty_params(params)
    start = time.perf_counter()
    result = simulate_grasp(obj, object_pose, grasp_pose, p, seed)
    runtime = time.perf_counter() - start
    info = {"failure_mode": result.failure_mode or "", "reason": result.reason,
            "close_forces": tuple(float(f) for f in result.close_forces),
            "max_penetration": float(result.max_penetration), "max_force_gap": float(result.max_force_gap),
            "s_cf": float(result.s_cf), "s_cp": float(result.s_cp), "s_cn": float(result.s_cn),
            "object_translation": float(result.object_translation),
            "object_rotation": float(result.object_rotation), "lift_height": float(result.lift_height),
            "steps": result.steps, "newton_iterations": result.newton_iterations,
            "penalty_stiffness": p.penalty_stiffness, "penalty_margin": p.penalty_margin,
            "penalty_clusters": p.penalty_clusters}
    return Prediction(bool(result.success), math.nan, runtime, info)
