"""Pictures of grasp trials: ray-cast (depth-correct) shaded meshes of the object, pads and backings
to PNG and GIF, with contact points, contact forces and per-face values (strain-energy density)."""

from ipcgrasp.viz.render import render_frame, render_stills, render_trial
from ipcgrasp.viz.strain import surface_energy_density

__all__ = ["render_frame", "render_stills", "render_trial", "surface_energy_density"]
