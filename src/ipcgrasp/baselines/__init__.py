"""Baselines the simulator is compared with (DESIGN.md section 6): analytic models, a penalty
dynamic model, the image-space quality measure, contact-stability metrics, critical mass."""

from ipcgrasp.baselines.interface import MODELS, Prediction

__all__ = ["MODELS", "Prediction"]
