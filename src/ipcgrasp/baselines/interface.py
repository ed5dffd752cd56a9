"""The interface every baseline grasp model of the study implements, and the registry
the evaluation stage runs.

A model is a function predict(obj, object_pose, grasp_pose, params, seed) -> Prediction: `obj`
a `grasp.object.GraspObject`, the poses 4x4 (m, world; the recorded, unperturbed grasp), `params`
a `grasp.params.SimParams`, `seed` the trial seed (`grasp.perturbation.trial_seed`). The model
perturbs the grasp with that seed exactly as the simulator does
(`baselines.contacts.perturbed_grasp`), so all models see the same grasp per trial.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

__all__ = ["MODELS", "Prediction"]


@dataclass(frozen=True)
class Prediction:
    """One model's verdict on one trial: `success` (the object is lifted), a continuous `score`
    where the model has one (higher is more robust; nan otherwise), the wall-clock `runtime` of
    the prediction (s), and model-specific `info` (numbers and short strings)."""

    success: bool
    score: float
    runtime: float
    info: dict = field(default_factory=dict)


class _Registry(Mapping):
    """Model name -> predict function, each imported from its module on first use."""

    def __init__(self, modules: dict[str, str]):
        self._modules = dict(modules)

    def __getitem__(self, name: str):
        try:
            module = self._modules[name]
        except KeyError:
            raise KeyError(f"unknown model {name!r}; registered models: {', '.join(self._modules)}") from None
        return importlib.import_module(module).predict

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


MODELS = _Registry({
    "soft_point": "ipcgrasp.baselines.soft_point",
    "reach": "ipcgrasp.baselines.reach",
    "6dfc": "ipcgrasp.baselines.sixdfc",
    "image_quality": "ipcgrasp.baselines.image_quality",
    "penalty": "ipcgrasp.baselines.penalty",
    "mujoco_flex": "ipcgrasp.baselines.mujoco_flex",
})
"""Registered models: name -> predict(obj, object_pose, grasp_pose, params, seed) -> Prediction."""
