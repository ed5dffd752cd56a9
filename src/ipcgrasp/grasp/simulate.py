"""Public entry points: one perturbed grasp trial (or several variants of it, other friction or
close rules, sharing its simulation while they do not matter), the one trial runner every caller
uses, and robustness over N trials.

Seeding rule (one for the API, the CLI, the study and the generator): trial k of grasp g under
root seed S uses `perturbation.trial_seed(S, g, k)`, and that seed alone fixes the trial's pose
noise. `ipcgrasp simulate --object O --grasp g --seed S` therefore runs trials 0, 1, ... of the
study's grasp g when the study's root seed is S, bit for bit.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.params import SimParams, trial_count
from ipcgrasp.grasp.perturbation import perturb_grasp, trial_seed
from ipcgrasp.grasp.pose import rigid_pose
from ipcgrasp.grasp.procedure import GraspProcedure
from ipcgrasp.interrupts import reraise_interrupt
from ipcgrasp.workers import process_pool


@dataclass
class Robustness:
    """N independent perturbed trials of one grasp: robustness = mean success."""

    trials: list = field(default_factory=list)

    @property
    def robustness(self) -> float:
        return float(np.mean([t.success for t in self.trials])) if self.trials else float("nan")


def perturbed_grasp(grasp_pose, params: SimParams, seed: int) -> np.ndarray:
    """The grasp pose a trial with this seed uses (every model in the study calls this)."""
    return perturb_grasp(np.asarray(grasp_pose, dtype=np.float64), np.random.default_rng(seed),
                         params.noise_translation, params.noise_rotation)


def simulate_grasp(obj: GraspObject, object_pose, grasp_pose, params: SimParams | None = None, seed: int = 0,
                   gripper: Gripper | None = None, record=(), progress=None,
                   backend: Callable | None = None) -> GraspResult:
    """Simulate one trial of a grasp (poses 4x4 in m, world z up; object_pose None: the object's
    most stable resting pose). The grasp pose is perturbed with `seed` by params' noise.
    `gripper` (None: the YuMi with the pad params.jaw) must carry the pad params.jaw
    (`Gripper.from_description(name, params.jaw)`).
    `backend(obj, object_pose, tooltip_poses, params, gripper)` builds the dynamic model
    (`grasp.backend.Backend`; default the IPC engine, with penalty contact when
    params.contact_model is "penalty"). `record`: "frames" (for pictures, `viz.render`),
    "trajectory" (per-step forces, poses, contacts: `grasp.trajectory.write_trajectory`) or both
    (`procedure.RECORDS`); recording never changes the outcome. `progress(t)` is called with the
    simulated time (s) after every step."""
    return simulate_variants(obj, object_pose, grasp_pose, [params or SimParams()], seed, gripper, record, progress,
                             backend)[0]


def simulate_variants(obj: GraspObject, object_pose, grasp_pose, variants: Sequence[SimParams], seed: int = 0,
                      gripper: Gripper | None = None, record=(), progress=None,
                      backend: Callable | None = None) -> list[GraspResult]:
    """One trial of a grasp under each SimParams of `variants`, which may differ only in the pads'
    friction with the object (`procedure.FRICTION_FIELDS`: mu) and the close rule's fields
    (`procedure.RULE_FIELDS`: close_rule, psi_th, psi_tol): they share the simulation as long as
    those are not read (`GraspProcedure.run_variants`), and each result is, to the bit, what
    `simulate_grasp` gives with that variant. Arguments as `simulate_grasp`; a backend other than
    the IPC engine may refuse variants of mu (NotImplementedError)."""
    object_pose = None if object_pose is None else rigid_pose(object_pose, "object_pose")
    grasp_pose = rigid_pose(grasp_pose, "grasp_pose")
    variants = list(variants)
    if not variants:
        raise ValueError("simulate_variants needs at least one SimParams in variants")
    params = variants[0]
    if object_pose is None:
        object_pose = obj.stable_pose()
    results = GraspProcedure(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), params,
                             backend or IpcBackend, gripper, record, progress).run_variants(variants)
    for result in results:
        result.seed = seed
    return results


def run_trial(obj: GraspObject, object_pose, grasp_pose, params: SimParams, seed: int,
              log: Callable[[str], None] | None = None, **options) -> GraspResult:
    """The trial runner: simulate_grasp (with `options` such as backend, record), with any
    exception it raises recorded as an "error" failure (reason: the exception; its traceback goes
    to `log`) instead of propagating, so one trial never loses the others."""
    return _recorded(lambda: [simulate_grasp(obj, object_pose, grasp_pose, params, seed, **options)], 1, seed, log)[0]


def run_variants(obj: GraspObject, object_pose, grasp_pose, variants: Sequence[SimParams], seed: int,
                 log: Callable[[str], None] | None = None, **options) -> list[GraspResult]:
    """The trial runner for several variants of one trial (`simulate_variants`): as `run_trial`,
    an exception is recorded as an "error" failure of every variant."""
    variants = list(variants)
    return _recorded(lambda: simulate_variants(obj, object_pose, grasp_pose, variants, seed, **options),
                     len(variants), seed, log)


def _recorded(simulate: Callable[[], list[GraspResult]], n_results: int, seed: int,
              log: Callable[[str], None] | None) -> list[GraspResult]:
    """simulate(), or n_results "error" failures naming the exception it raised (a step the
    solver could not take is judged inside the trial: "solver" or "slip")."""
    started = time.perf_counter()
    try:
        return simulate()
    except Exception as exc:  # noqa: BLE001 - a failure of one trial must not end the sweep
        reraise_interrupt(exc)
        if log:
            log(traceback.format_exc())
        results = [GraspResult(success=False, failure_mode="error", seed=seed,
                               reason=f"{type(exc).__name__}: {exc}".strip()) for _ in range(n_results)]
        for result in results:
            result.wall_time = time.perf_counter() - started
        return results


def trial_seeds(root_seed: int, grasp_index: int, n_trials: int) -> list[int]:
    """The seeds of trials 0 .. n_trials - 1 of one grasp (`perturbation.trial_seed`)."""
    return [trial_seed(root_seed, grasp_index, k) for k in range(n_trials)]


def _trial(args):
    *trial, record, gripper = args
    return run_trial(*trial, record=record, gripper=gripper)


def robustness(obj: GraspObject, object_pose, grasp_pose, params: SimParams | None = None, n_trials: int = 5,
               seed: int = 0, workers: int | None = None, on_trial=None, grasp_index: int = 0,
               record=(), gripper: Gripper | None = None) -> Robustness:
    """Run `n_trials` perturbed trials (in `workers` processes; default: the CPU count) and
    return them with R = mean success. Trial k uses trial_seed(seed, grasp_index, k), the seed
    the study gives trial k of grasp `grasp_index`. A trial that raises is recorded as an "error"
    failure with its reason (`run_trial`). `on_trial(result)` is called as each trial finishes.
    `record`: what every trial records; `gripper`: as `simulate_grasp`."""
    object_pose = None if object_pose is None else rigid_pose(object_pose, "object_pose")
    grasp_pose = rigid_pose(grasp_pose, "grasp_pose")
    n_trials = trial_count(n_trials)
    params = params or SimParams()
    if object_pose is None:
        object_pose = obj.stable_pose()
    jobs = [(obj, object_pose, grasp_pose, params, s, record, gripper) for s in trial_seeds(seed, grasp_index, n_trials)]
    workers = min(workers or os.cpu_count() or 1, n_trials)
    results = []
    if workers <= 1:
        for job in jobs:
            results.append(_trial(job))
            if on_trial:
                on_trial(results[-1])
    else:
        with process_pool(workers) as pool:
            for result in pool.map(_trial, jobs):
                results.append(result)
                if on_trial:
                    on_trial(result)
    return Robustness(results)
