"""Interactive 3D replay of a trajectory file in the browser (viser): the bodies' surfaces at
the step a time slider selects, with the step's time, phase and pad forces beside it. The file
must hold the vertex positions (`simulate --trajectory OUT.nc --vertices`, or
`write_trajectory(..., vertices=True)` of a trial recorded with record=("frames", "trajectory"))."""

from __future__ import annotations

import numpy as np
import viser
import xarray as xr

from ipcgrasp.viz.render import body_colour


def trajectory_bodies(ds: xr.Dataset) -> list[str]:
    """The bodies whose vertex positions the trajectory holds."""
    return [name.removeprefix("vertices_") for name in ds.data_vars if name.startswith("vertices_")]


def serve_trajectory(ds: xr.Dataset, host: str = "127.0.0.1", port: int = 8080) -> viser.ViserServer:
    """Start a viser server on host:port (port 0: any free one, `server.get_port()`) showing the
    trajectory with a step slider; returns the running server (`server.stop()` ends it)."""
    bodies = trajectory_bodies(ds)
    if not bodies:
        raise ValueError("the trajectory has no vertex positions: record them with `simulate --trajectory OUT.nc "
                         "--vertices` (or write_trajectory(..., vertices=True))")
    server = viser.ViserServer(host=host, port=port, label="ipcgrasp trajectory", verbose=False)
    server.scene.set_up_direction("+z")
    phases = ds.phase.attrs["flag_meanings"].split()
    meshes = {}
    for body in bodies:
        colour = tuple(int(round(255 * c)) for c in body_colour(body))
        meshes[body] = server.scene.add_mesh_simple(
            f"/bodies/{body}", ds[f"vertices_{body}"].values[0].astype(np.float32),
            ds[f"faces_{body}"].values.astype(np.uint32), color=colour)
    centre = ds[f"vertices_{bodies[0]}"].values[0].mean(axis=0)
    server.scene.add_grid("/ground", width=0.2, height=0.2, cell_size=0.01, position=(centre[0], centre[1], 0.0))
    steps = ds.sizes["time"]
    slider = server.gui.add_slider("step", min=0, max=steps - 1, step=1, initial_value=0)
    status = server.gui.add_markdown("")

    def show(k: int) -> None:
        step = ds.isel(time=k)
        for body, mesh in meshes.items():
            mesh.vertices = step[f"vertices_{body}"].values.astype(np.float32)
        forces = " / ".join(f"{f:.2f}" for f in step.pad_normal_force.values)
        status.content = (f"t = {float(step.time):.3f} s, {phases[int(step.phase)]}  \n"
                          f"pad normal forces {forces} N, object height {float(step.object_height) * 1e3:.2f} mm")

    slider.on_update(lambda _event: show(int(slider.value)))
    show(0)
    return server
