"""Interactive 3D replay of a trajectory file in the browser (viser): the bodies' surfaces at
the step a time slider selects, with the step's time, phase and pad forces beside it. The file
must hold the vertex positions (`simulate --trajectory OUT.nc --vertices`, or
`write_trajectory(..., vertices=True)` of a trial recorded with record=("frames", "trajectory")).

The server answers only requests addressed to it (`RequestGuard`): the Host header must name
the address it listens on, localhost, 127.0.0.1 or [::1], with its port, and a websocket
handshake's Origin, when there is one, must be such an address too. A page of another site open
in the user's browser can then neither open the websocket (cross-site websocket hijacking) nor
reach the server under a name of its own (DNS rebinding); either gets 403 and a log line.
"""

from __future__ import annotations

import contextlib
import http
import ipaddress
import logging
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import numpy as np
import viser
import websockets.asyncio.server
import xarray as xr
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from ipcgrasp.viz.render import body_colour

LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")
"""Host names (as in a Host header) under which the viewer is always reachable."""

_log = logging.getLogger(__name__)
_SERVE_PATCH = threading.Lock()


def _host_name(name: str) -> str:
    """`name` as a Host header spells it: lower case, an IPv6 address in brackets."""
    name = name.strip().lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def _split_authority(authority: str) -> tuple[str, int | None]:
    """(host name as `_host_name` spells it, port or None) of a Host header or a URL's
    authority, e.g. "[::1]:8080"; ("", None) when the port is not a number."""
    parts = urlsplit(f"//{authority.strip()}")
    try:
        port = parts.port
    except ValueError:
        return "", None
    return _host_name(parts.hostname or ""), port


class RequestGuard:
    """Which requests the viewer answers (module docstring). `host`: the address the server
    listens on (--host). A wildcard address (0.0.0.0, ::) listens on every interface: then the
    machine's own names and any IP address are accepted as well (an IP address in the Host
    header cannot come from DNS rebinding, which needs a name)."""

    def __init__(self, host: str):
        self.names = {*LOCAL_NAMES, _host_name(host)}
        try:
            self.any_address = ipaddress.ip_address(host.strip("[]")).is_unspecified
        except ValueError:
            self.any_address = False
        if self.any_address:
            self.names |= {_host_name(socket.gethostname()), _host_name(socket.getfqdn())}

    def accepts(self, authority: str | None, port: int, default_port: int = 80) -> bool:
        """Whether `authority` (a Host header, or an Origin's host[:port]) names this server
        listening on `port`; an authority without a port means `default_port` (the scheme's)."""
        if not authority:
            return False
        name, given = _split_authority(authority)
        if (given if given is not None else default_port) != port:
            return False
        if name in self.names:
            return True
        if self.any_address:
            with contextlib.suppress(ValueError):
                ipaddress.ip_address(name.strip("[]"))
                return True
        return False

    def origin_accepted(self, origin: str, port: int) -> bool:
        """Whether a websocket handshake's Origin header is a page of this server on `port`."""
        url = urlsplit(origin)
        schemes = {"http": 80, "https": 443}
        return url.scheme in schemes and self.accepts(url.netloc, port, schemes[url.scheme])

    def refusal(self, connection: ServerConnection, request: Request) -> Response | None:
        """websockets' process_request hook: a 403 response (and a warning in the log) for a
        request this server must not answer, None for one it may."""
        port = connection.local_address[1]
        host, origin = request.headers.get("Host"), request.headers.get("Origin")
        where = ", ".join(f"{name}:{port}" for name in sorted(self.names))
        if not self.accepts(host, port):
            problem = (f"Host {host!r} is not this server's address ({where}); open the viewer at "
                       f"http://127.0.0.1:{port}/ (or at the --host address)")
        elif (request.headers.get("Upgrade", "").lower() == "websocket" and origin is not None
              and not self.origin_accepted(origin, port)):
            problem = (f"websocket Origin {origin!r} is not a page of this server ({where}): a page of another "
                       "site may not read the scene")
        else:
            return None
        peer = connection.remote_address[0] if connection.remote_address else "?"
        _log.warning("ipcgrasp view: refused %s from %s: %s", request.path, peer, problem)
        return connection.respond(http.HTTPStatus.FORBIDDEN, f"refused: {problem}\n")


@contextlib.contextmanager
def _guarded_servers(guard: RequestGuard) -> Iterator[None]:
    """While the block runs, every websockets server started (viser's, in its thread) runs
    `guard.refusal` before its own process_request. RuntimeError after the block when no server
    was started that way: the viewer does not serve without the check."""
    serve = websockets.asyncio.server.serve
    started = []

    def guarded_serve(*args, process_request=None, **kwargs):
        def process(connection, request):
            refused = guard.refusal(connection, request)
            if refused is not None or process_request is None:
                return refused
            return process_request(connection, request)

        started.append(True)
        return serve(*args, process_request=process, **kwargs)

    with _SERVE_PATCH:
        websockets.asyncio.server.serve = guarded_serve
        try:
            yield
        finally:
            websockets.asyncio.server.serve = serve
    if not started:
        raise RuntimeError(f"viser {viser.__version__} did not start its server through websockets.asyncio.server."
                           "serve, so the viewer's Host/Origin check is not in place; fix: install a viser release "
                           "that does (1.1 does)")


def trajectory_bodies(ds: xr.Dataset) -> list[str]:
    """The bodies whose vertex positions the trajectory holds."""
    return [name.removeprefix("vertices_") for name in ds.data_vars if name.startswith("vertices_")]


def serve_trajectory(ds: xr.Dataset, host: str = "127.0.0.1", port: int = 8080) -> viser.ViserServer:
    """Start a viser server on host:port (port 0: any free one, `server.get_port()`) showing the
    trajectory with a step slider; returns the running server (`server.stop()` ends it). It
    answers only requests addressed to it (`RequestGuard`)."""
    bodies = trajectory_bodies(ds)
    if not bodies:
        raise ValueError("the trajectory has no vertex positions: record them with `simulate --trajectory OUT.nc "
                         "--vertices` (or write_trajectory(..., vertices=True))")
    server = None
    try:
        with _guarded_servers(RequestGuard(host)):
            server = viser.ViserServer(host=host, port=port, label="ipcgrasp trajectory", verbose=False)
    except RuntimeError:
        if server is not None:
            server.stop()
        raise
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
