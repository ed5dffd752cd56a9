"""Interactive 3D replay of a trajectory file in the browser (viser): the bodies' surfaces at
the step a time slider selects (a play/pause button steps through the trajectory), the pads'
contact points on the object with the force at each, and the step's time, phase and pad forces
beside it. The camera opens on the object at the first step; the fingers are drawn see-through so
the contacts between them and the object show; faceted meshes keep flat sides and sharp edges
(`crease_split`). The file must hold the vertex positions (`simulate --trajectory OUT.nc --vertices`, or
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
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import numpy as np
import trimesh
import viser
import websockets.asyncio.server
import xarray as xr
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from ipcgrasp.viz.render import CONTACT_COLOUR, FORCE_COLOUR, FORCE_LENGTH, body_colour, camera_azimuth
from ipcgrasp.viz.view_options import ELEVATION

LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")
"""Host names (as in a Host header) under which the viewer is always reachable."""
CREASE_ANGLE = 30.0
"""deg: neighbouring triangles whose normals differ by more meet at a sharp edge (`crease_split`)."""
FOV = 45.0  # deg, vertical field of view of the camera
FRAME_FILL = 2.5  # the camera's half-height of view at the object is this many times the object's radius
FINGER_OPACITY = 0.45  # the fingers' opacity while see-through: the contacts between them and the object show
CONTACT_SIZE = 0.04  # contact dot diameter as a fraction of the object's size
SPEEDS = {"1/20 real time": 0.05, "1/5 real time": 0.2, "1/2 real time": 0.5, "real time": 1.0}
DEFAULT_SPEED = "1/5 real time"
SKY_LIGHT = 1.5  # intensity of the light from the sky (white above, grey below)
PLAY_TICK = 0.03  # s between two looks at the clock while playing

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


def crease_split(vertices: np.ndarray, faces: np.ndarray, angle: float = CREASE_ANGLE) -> tuple[np.ndarray, np.ndarray]:
    """The mesh with its vertices split along creases, so that a browser's smooth shading (one
    normal per vertex, averaged over its triangles) keeps the flat sides of a faceted mesh flat and
    its edges sharp while a curved surface stays smooth: (source, faces), `source` (V',) the input
    vertex each drawn vertex sits on (positions at any step: `vertices[source]`), `faces` (F, 3)
    into the drawn vertices. Two triangles sharing an edge share its vertices when their normals
    differ by less than `angle` deg; an 8-vertex cube becomes 24 vertices, 4 per side."""
    faces = np.asarray(faces, dtype=np.int64)
    n_corners = 3 * len(faces)
    mesh = trimesh.Trimesh(np.asarray(vertices, dtype=np.float64), faces, process=False)
    smooth = mesh.face_adjacency_angles < np.radians(angle)  # NaN (degenerate triangle): a crease
    pairs, edges = mesh.face_adjacency[smooth], mesh.face_adjacency_edges[smooth]
    # the corner (3 f + c) of each of the two triangles at each end of each smooth edge: joined
    links = [3 * pairs[:, side] + np.argmax(faces[pairs[:, side]] == edges[:, end, None], axis=1)
             for end in (0, 1) for side in (0, 1)]
    rows, cols = np.concatenate(links[0::2]), np.concatenate(links[1::2])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_corners, n_corners))
    count, label = connected_components(graph, directed=False)
    source = np.empty(count, dtype=np.int64)
    source[label] = faces.reshape(-1)
    return source, label.reshape(-1, 3)


def _frame(ds: xr.Dataset, bodies: list[str], k: int) -> dict:
    return {body: ds[f"vertices_{body}"].values[k] for body in bodies}


def frame_camera(ds: xr.Dataset, bodies: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(position, look_at) in m of the camera that opens on the object at the first step (the first
    body when there is no "object"): looking at the centre of its bounding box from the side where
    the pads are (`camera_azimuth`), ELEVATION deg above the horizon, far enough for the object to
    fill 1/FRAME_FILL of the picture's height within the FOV."""
    frame = _frame(ds, bodies, 0)
    target = frame["object"] if "object" in frame else frame[bodies[0]]
    lo, hi = target.min(axis=0), target.max(axis=0)
    centre, radius = 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 1e-4)
    az, el = np.radians(camera_azimuth(frame)), np.radians(ELEVATION)
    towards = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    distance = FRAME_FILL * radius / np.tan(0.5 * np.radians(FOV))
    return centre + distance * towards, centre


def _force_scale(ds: xr.Dataset, extent: float) -> float:
    """Arrow length per newton (m/N): the largest contact force of the trajectory is drawn
    FORCE_LENGTH x `extent` long (0 when no step has a contact force)."""
    if "contact_force" not in ds or not ds.sizes.get("contact", 0):
        return 0.0
    largest = float(np.nanmax(np.linalg.norm(ds.contact_force.values, axis=-1), initial=0.0))
    return FORCE_LENGTH * extent / largest if largest > 0.0 else 0.0


def serve_trajectory(ds: xr.Dataset, host: str = "127.0.0.1", port: int = 8080, step: int = 0) -> viser.ViserServer:
    """Start a viser server on host:port (port 0: any free one, `server.get_port()`) showing the
    trajectory: the bodies at the step a slider selects, starting at `step` (play/pause steps
    through it at a chosen fraction of real time), the pads' contact points on the object (dots)
    and the force at each (arrows whose tips touch the point: the push on the object, the largest
    of the trajectory FORCE_LENGTH of the object's size long), the fingers see-through so the
    contacts between them and the object show, and the step's time, phase and forces beside it.
    The camera opens on the object at the first step (`frame_camera`). Returns the running server
    (`server.stop()` ends it). It answers only requests addressed to it (`RequestGuard`)."""
    bodies = trajectory_bodies(ds)
    if not bodies:
        raise ValueError("the trajectory has no vertex positions: record them with `simulate --trajectory OUT.nc "
                         "--vertices` (or write_trajectory(..., vertices=True))")
    steps = ds.sizes["time"]
    if not 0 <= step < steps:
        raise ValueError(f"step must be from 0 to {steps - 1} (the trajectory has {steps} steps), got {step}")
    server = None
    try:
        with _guarded_servers(RequestGuard(host)):
            server = viser.ViserServer(host=host, port=port, label="ipcgrasp trajectory", verbose=False)
    except RuntimeError:
        if server is not None:
            server.stop()
        raise
    try:
        _build_scene(server, ds, bodies, step)
    except BaseException:
        server.stop()
        raise
    return server


def _build_scene(server: viser.ViserServer, ds: xr.Dataset, bodies: list[str], step: int) -> None:
    """`serve_trajectory`'s scene and controls on `server`."""
    server.scene.set_up_direction("+z")
    server.gui.main_panel.dock_right()  # beside the scene, not over the object in its middle
    # light from the sky and the default lights, no environment map: pre-filtering one takes a browser
    # without a GPU (software WebGL) over 10 s of CPU before the first picture
    server.scene.configure_environment_map(None)
    server.scene.add_light_hemisphere("/light/sky", sky_color=(255, 255, 255), ground_color=(110, 110, 120),
                                      intensity=SKY_LIGHT)
    position, look_at = frame_camera(ds, bodies)
    camera = server.initial_camera
    camera.fov, camera.near = np.radians(FOV), 1e-3 * float(np.linalg.norm(position - look_at))
    camera.position, camera.look_at = position, look_at

    phases = ds.phase.attrs["flag_meanings"].split()
    vertices = {body: ds[f"vertices_{body}"].values for body in bodies}
    split = {body: crease_split(vertices[body][0], ds[f"faces_{body}"].values) for body in bodies}
    meshes = {}
    for body in bodies:
        colour = tuple(int(round(255 * c)) for c in body_colour(body))
        source, faces = split[body]
        meshes[body] = server.scene.add_mesh_simple(
            f"/bodies/{body}", vertices[body][0][source].astype(np.float32), faces.astype(np.uint32), color=colour,
            opacity=None if body == "object" else FINGER_OPACITY)
    target = vertices["object" if "object" in vertices else bodies[0]][0]
    extent = float(np.max(np.ptp(target, axis=0)))
    centre = target.mean(axis=0)
    server.scene.add_grid("/ground", width=0.2, height=0.2, cell_size=0.01, position=(centre[0], centre[1], 0.0))

    newton = _force_scale(ds, extent)
    has_contacts = "contact_point" in ds and ds.sizes.get("contact", 0) > 0
    contact_rgb = tuple(int(round(255 * c)) for c in CONTACT_COLOUR)
    force_rgb = tuple(int(round(255 * c)) for c in FORCE_COLOUR)
    dots = arrows = None
    if has_contacts:
        dots = server.scene.add_point_cloud("/contacts/points", np.zeros((1, 3), np.float32), contact_rgb,
                                            point_size=CONTACT_SIZE * extent, point_shape="circle",
                                            precision="float32", visible=False)
        arrows = server.scene.add_arrows("/contacts/forces", np.zeros((1, 2, 3), np.float32), force_rgb,
                                         shaft_radius=0.005 * extent, head_radius=0.015 * extent,
                                         head_length=0.04 * extent, visible=False)

    steps, times = ds.sizes["time"], ds.time.values.astype(np.float64)
    slider = server.gui.add_slider("step", min=0, max=steps - 1, step=1, initial_value=step)
    play = server.gui.add_button("play", icon=viser.Icon.PLAYER_PLAY)
    speed = server.gui.add_dropdown("speed", tuple(SPEEDS), initial_value=DEFAULT_SPEED)
    see_through = server.gui.add_checkbox("see-through fingers", initial_value=True)
    status = server.gui.add_markdown("")

    def show(k: int) -> None:
        row = ds.isel(time=k)
        for body, mesh in meshes.items():
            mesh.vertices = vertices[body][k][split[body][0]].astype(np.float32)
        text = f"t = {times[k]:.3f} s, {phases[int(row.phase)]}  \n"
        if "pad_normal_force" in row:
            text += "pad normal forces " + " / ".join(f"{f:.2f}" for f in row.pad_normal_force.values) + " N, "
        if "object_height" in row:
            text += f"object height {float(row.object_height) * 1e3:.2f} mm"
        if dots is not None:
            points = row.contact_point.values
            real = np.isfinite(points).all(axis=1)
            points, forces = points[real], np.nan_to_num(row.contact_force.values[real])
            text += f"  \n{len(points)} pad contacts (dots)"
            if len(points):
                dots.points = points.astype(np.float32)
                tails = points - newton * forces
                arrows.points = np.stack([tails, points], axis=1).astype(np.float32)
                text += f", arrows: contact forces, 1 mm = {1e-3 / newton:.3g} N" if newton > 0 else ""
            dots.visible = arrows.visible = bool(len(points))
        status.content = text

    playing = {"run": threading.Event()}  # the running playback's go signal (cleared: paused)

    def pause() -> None:
        playing["run"].clear()
        play.label, play.icon = "play", viser.Icon.PLAYER_PLAY

    def run(go: threading.Event) -> None:
        """Advance the slider at the chosen fraction of real time until the last step, a pause, or
        the user moving the slider."""
        start, first = time.monotonic(), int(slider.value)
        shown = first
        while go.is_set() and int(slider.value) == shown and shown < steps - 1:
            elapsed = (time.monotonic() - start) * SPEEDS[speed.value]
            k = min(first + int(np.searchsorted(times[first:] - times[first], elapsed, side="right")) - 1, steps - 1)
            if k != shown:
                slider.value = shown = k
            time.sleep(PLAY_TICK)
        if playing["run"] is go:
            pause()

    @play.on_click
    def _(_event) -> None:
        if playing["run"].is_set():
            pause()
            return
        if int(slider.value) >= steps - 1:
            slider.value = 0
        go = playing["run"] = threading.Event()
        go.set()
        play.label, play.icon = "pause", viser.Icon.PLAYER_PAUSE
        threading.Thread(target=run, args=(go,), name="ipcgrasp-view-play", daemon=True).start()

    @see_through.on_update
    def _(_event) -> None:
        for body, mesh in meshes.items():
            if body != "object":
                mesh.opacity = FINGER_OPACITY if see_through.value else None

    slider.on_update(lambda _event: show(int(slider.value)))
    show(step)
