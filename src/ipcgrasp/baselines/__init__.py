"""Baselines the simulator is compared with (docs/physics.md, "The comparison models"): analytic models, a penalty
dynamic model, the image-space quality measure, contact-stability metrics, critical mass."""

from ipcgrasp.baselines.interface import MODELS, Prediction

__all__ = ["MODELS", "Prediction"]
