"""`ipcgrasp view`'s server: it starts on localhost, serves the viewer page and sends the scene
(every body's mesh, the contacts and their forces) to a browser that connects, plays and pauses,
opens the camera on the object, and stops; it refuses requests for another Host
and websocket handshakes from another Origin."""

import base64
import logging
import os
import socket
import time
import urllib.request

import msgspec
import numpy as np
import pytest
import trimesh
import viser
import xarray as xr
import zstandard
from websockets.sync.client import connect

from ipcgrasp.grasp.trajectory import PHASES
from ipcgrasp.viz.viewer import FOV, RequestGuard, crease_split, frame_camera, serve_trajectory


def _trajectory(steps=3, where=(0.0, 0.0, 0.015)):
    """A small trajectory with vertex positions: a box centred at `where` rising between two plates,
    with one contact on each plate (none at the first step)."""
    box, plate = trimesh.creation.box(extents=(0.03,) * 3), trimesh.creation.box(extents=(0.016, 0.002, 0.02))
    lift = np.arange(steps)[:, None, None] * np.array([0.0, 0.0, 0.005])
    points = np.array(where) + np.array([[0.0, -0.015, 0.0], [0.0, 0.015, 0.0]]) + lift
    points[0] = np.nan
    data = {"phase": (("time",), np.array([0, 1, 2][:steps], dtype=np.int8),
                      {"flag_meanings": " ".join(PHASES)}),
            "pad_normal_force": (("time", "pad"), np.full((steps, 2), 20.0)),
            "object_height": (("time",), lift[:, 0, 2]),
            "contact_point": (("time", "contact", "xyz"), points),
            "contact_force": (("time", "contact", "xyz"),
                              np.broadcast_to([[0.0, 20.0, 0.0], [0.0, -20.0, 0.0]], points.shape))}
    for name, mesh, shift in (("object", box, 0.0), ("pad0", plate, -0.016), ("pad1", plate, 0.016)):
        data[f"vertices_{name}"] = (("time", f"{name}_vertex", "xyz"),
                                    mesh.vertices[None] + where + [0, shift, 0] + lift)
        data[f"faces_{name}"] = ((f"{name}_face", "corner"), mesh.faces)
    return xr.Dataset(data, coords={"time": 0.02 * (1 + np.arange(steps))})


def _messages(frame: bytes) -> list:
    """The messages of one viser websocket frame: [8 bytes size][8 bytes compressed size][zstd msgpack]..."""
    compressed = int.from_bytes(frame[8:16], "little")
    payload = zstandard.ZstdDecompressor().decompress(frame[16:16 + compressed],
                                                      max_output_size=int.from_bytes(frame[:8], "little"))
    return msgspec.msgpack.decode(payload)["messages"]


def test_viewer_serves_the_page_and_the_scene_and_stops():
    server = serve_trajectory(_trajectory(), port=0)
    try:
        url = f"127.0.0.1:{server.get_port()}"
        with urllib.request.urlopen(f"http://{url}/", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        names, expected = set(), {"/bodies/object", "/bodies/pad0", "/bodies/pad1", "/ground", "/contacts/points",
                                  "/contacts/forces"}
        with connect(f"ws://{url}", subprotocols=[f"viser-v{viser.__version__}"], open_timeout=10) as ws:
            deadline = time.monotonic() + 10
            while not expected <= names and time.monotonic() < deadline:
                try:
                    frame = ws.recv(timeout=1)
                except TimeoutError:
                    continue
                names |= {m.get("name") for m in _messages(frame) if isinstance(m, dict)}
        assert expected <= names
    finally:
        server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://{url}/", timeout=2)


def test_the_viewer_steps_plays_and_pauses():
    ds = _trajectory(steps=3)
    with pytest.raises(ValueError, match="step must be from 0 to 2"):
        serve_trajectory(ds, port=0, step=3)
    server = serve_trajectory(ds, port=0, step=1)
    try:
        gui = {handle.label: handle for handle in server.gui._gui_input_handle_from_uuid.values()}
        assert gui["step"].value == 1 and gui["play"].label == "play"
        gui["speed"].value = "real time"

        def click():
            for callback in gui["play"]._impl.update_cb:
                callback(None)

        click()  # 0.04 s of trajectory left at real time
        deadline = time.monotonic() + 10
        while gui["play"].label == "pause" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert gui["step"].value == 2 and gui["play"].label == "play"
        gui["speed"].value = "1/20 real time"
        click()  # from the last step: from the start again, 0.8 s to the next step
        assert gui["step"].value == 0 and gui["play"].label == "pause"
        click()
        assert gui["play"].label == "play"
        time.sleep(1.0)
        assert gui["step"].value == 0, "paused, yet the slider moved"
    finally:
        server.stop()


def test_the_camera_opens_on_the_object():
    where = np.array([0.39, 0.0, 0.015])
    ds = _trajectory(where=tuple(where))
    position, look_at = frame_camera(ds, ["object", "pad0", "pad1"])
    np.testing.assert_allclose(look_at, where, atol=1e-9)
    distance = np.linalg.norm(position - look_at)
    radius = 0.5 * np.sqrt(3) * 0.03  # the box's bounding sphere
    assert 1.5 * radius < distance * np.tan(np.radians(FOV) / 2) < 4 * radius  # the box fills part of the view
    assert position[2] > look_at[2]  # from above the horizon
    # looking across the closing direction (y): the camera is off the pads' line
    offset = (position - look_at)[:2]
    assert abs(offset[0]) > abs(offset[1])


def test_crease_split_keeps_a_cube_faceted_and_a_sphere_smooth():
    cube = trimesh.creation.box(extents=(0.03,) * 3)
    source, faces = crease_split(cube.vertices, cube.faces)
    assert len(source) == 24 and faces.shape == cube.faces.shape  # 4 vertices per side
    np.testing.assert_array_equal(cube.vertices[source][faces], cube.vertices[cube.faces])
    sphere = trimesh.creation.icosphere(subdivisions=3)
    source, faces = crease_split(sphere.vertices, sphere.faces)
    assert len(source) == len(sphere.vertices)
    np.testing.assert_array_equal(sphere.vertices[source][faces], sphere.vertices[sphere.faces])
    cylinder = trimesh.creation.cylinder(radius=0.01, height=0.02, sections=32)
    source, _ = crease_split(cylinder.vertices, cylinder.faces)
    assert len(source) == len(cylinder.vertices) + 2 * 32  # the rims split from the caps, the side smooth


def test_viewer_needs_vertex_positions():
    ds = _trajectory().drop_vars(["vertices_object", "vertices_pad0", "vertices_pad1"])
    with pytest.raises(ValueError, match="--vertices"):
        serve_trajectory(ds, port=0)


def _status(port: int, headers: dict[str, str], websocket: bool = False) -> int:
    """The HTTP status the server answers `GET /` with these headers (and, with `websocket`, a
    websocket upgrade's), sent raw so that Host and Origin are exactly these."""
    if websocket:
        headers = {**headers, "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
                   "Sec-WebSocket-Protocol": f"viser-v{viser.__version__}"}
    request = "GET / HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        reply = b""
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply.split(b" ", 2)[1])


def test_viewer_answers_only_its_own_host_and_origin(caplog):
    server = serve_trajectory(_trajectory(), port=0)
    try:
        port = server.get_port()
        caplog.set_level(logging.WARNING, logger="ipcgrasp.viz.viewer")
        for name in ("127.0.0.1", "localhost", "LOCALHOST", "[::1]"):
            assert _status(port, {"Host": f"{name}:{port}"}) == 200, name
        assert not caplog.records
        # DNS rebinding: the page's own name, now resolving to 127.0.0.1; another port; no Host
        for headers in ({"Host": f"evil.example:{port}"}, {"Host": f"127.0.0.1:{port + 1}"}, {"Host": "127.0.0.1"},
                        {}):
            assert _status(port, headers) == 403, headers
        assert _status(port, {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
                       websocket=True) == 403
        message = caplog.records[0].getMessage()
        assert message.startswith("ipcgrasp view: refused / from 127.0.0.1: Host 'evil.example:") and \
            f"open the viewer at http://127.0.0.1:{port}/" in message
        caplog.clear()
        # the viewer's own page, and clients that send no Origin, open the websocket
        for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", None):
            headers = {"Host": f"127.0.0.1:{port}"} | ({"Origin": origin} if origin else {})
            assert _status(port, headers, websocket=True) == 101, origin
        # cross-site websocket hijacking: a page of another site, a sandboxed page, another port
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null", f"http://127.0.0.1:{port + 1}",
                       f"file://127.0.0.1:{port}"):
            assert _status(port, {"Host": f"127.0.0.1:{port}", "Origin": origin}, websocket=True) == 403, origin
        assert len(caplog.records) == 5
        assert "websocket Origin 'http://evil.example' is not a page of this server" in caplog.records[0].getMessage()
    finally:
        server.stop()


def test_on_every_interface_the_viewer_takes_ip_addresses_and_the_machines_name_but_no_other_name():
    guard = RequestGuard("0.0.0.0")
    for host in ("192.168.1.20:8080", "[fe80::1]:8080", f"{socket.gethostname()}:8080", "localhost:8080"):
        assert guard.accepts(host, 8080), host
    for host in ("evil.example:8080", "192.168.1.20:8081", "192.168.1.20"):
        assert not guard.accepts(host, 8080), host
    local = RequestGuard("127.0.0.1")
    assert not local.accepts("192.168.1.20:8080", 8080) and local.accepts("localhost", 80)
    assert RequestGuard("my-box.lan").accepts("My-Box.lan:8080", 8080)
