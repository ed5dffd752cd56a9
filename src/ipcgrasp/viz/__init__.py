"""Pictures of grasp trials: shaded meshes of the object, pads and backings to PNG and GIF."""

from ipcgrasp.viz.render import render_frame, render_stills, render_trial

__all__ = ["render_frame", "render_stills", "render_trial"]
