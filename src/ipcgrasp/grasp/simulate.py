"""Public entry points: one perturbed grasp trial, and robustness over N trials."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ipcgrasp.grasp.controller import GraspTrial
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.params import SimParams, trial_count
from ipcgrasp.grasp.perturbation import perturb_grasp
from ipcgrasp.grasp.pose import rigid_pose


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
                   gripper: Gripper | None = None, record_frames: bool = False, progress=None) -> GraspResult:
    """Simulate one trial of a grasp (poses 4x4 in m, world z up; object_pose None: the object's
    most stable resting pose). The grasp pose is perturbed with `seed` by params' noise."""
    object_pose = None if object_pose is None else rigid_pose(object_pose, "object_pose")
    grasp_pose = rigid_pose(grasp_pose, "grasp_pose")
    params = params or SimParams()
    if object_pose is None:
        object_pose = obj.stable_pose()
    result = GraspTrial(obj, object_pose, perturbed_grasp(grasp_pose, params, seed), params, gripper,
                        record_frames, progress).run()
    result.seed = seed
    return result


def _trial(args):
    obj, object_pose, grasp_pose, params, seed = args
    return simulate_grasp(obj, object_pose, grasp_pose, params, seed)


def trial_seeds(seed: int, n_trials: int) -> list[int]:
    """Independent per-trial seeds derived from one root seed."""
    return [int(s.generate_state(1, np.uint64)[0] >> np.uint64(1)) for s in np.random.SeedSequence(seed).spawn(n_trials)]


def robustness(obj: GraspObject, object_pose, grasp_pose, params: SimParams | None = None, n_trials: int = 5,
               seed: int = 0, workers: int | None = None, on_trial=None) -> Robustness:
    """Run `n_trials` perturbed trials (in `workers` processes; default: the CPU count) and
    return them with R = mean success. `on_trial(result)` is called as each trial finishes."""
    object_pose = None if object_pose is None else rigid_pose(object_pose, "object_pose")
    grasp_pose = rigid_pose(grasp_pose, "grasp_pose")
    n_trials = trial_count(n_trials)
    params = params or SimParams()
    if object_pose is None:
        object_pose = obj.stable_pose()
    jobs = [(obj, object_pose, grasp_pose, params, s) for s in trial_seeds(seed, n_trials)]
    workers = min(workers or os.cpu_count() or 1, n_trials)
    results = []
    if workers <= 1:
        for job in jobs:
            results.append(_trial(job))
            if on_trial:
                on_trial(results[-1])
    else:
        with ProcessPoolExecutor(workers) as pool:
            for result in pool.map(_trial, jobs):
                results.append(result)
                if on_trial:
                    on_trial(result)
    return Robustness(results)
