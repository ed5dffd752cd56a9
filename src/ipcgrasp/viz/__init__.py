"""Pictures of grasp trials: ray-cast (depth-correct) shaded meshes of the object, pads and backings
to PNG and GIF, with contact points, contact forces and per-face values (strain-energy density).

The names below are imported on first use (PEP 562): the command line reads the light
`viz.view_options` without loading the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcgrasp.lazy import lazy_names

if TYPE_CHECKING:
    from ipcgrasp.viz.render import render_frame, render_stills, render_trial
    from ipcgrasp.viz.strain import surface_energy_density

_HOMES = {
    "render_frame": "ipcgrasp.viz.render",
    "render_stills": "ipcgrasp.viz.render",
    "render_trial": "ipcgrasp.viz.render",
    "surface_energy_density": "ipcgrasp.viz.strain",
}
"""Public name -> the module that defines it."""

__all__ = ["render_frame", "render_stills", "render_trial", "surface_energy_density"]

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
