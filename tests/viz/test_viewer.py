"""`ipcgrasp view`'s server: it starts on localhost, serves the viewer page and sends the scene
(every body's mesh) to a browser that connects, and stops."""

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
from ipcgrasp.viz.viewer import serve_trajectory


def _trajectory(steps=3):
    """A small trajectory with vertex positions: a box rising between two plates."""
    box, plate = trimesh.creation.box(extents=(0.03,) * 3), trimesh.creation.box(extents=(0.016, 0.002, 0.02))
    lift = np.arange(steps)[:, None, None] * np.array([0.0, 0.0, 0.005])
    data = {"phase": (("time",), np.array([0, 1, 2][:steps], dtype=np.int8),
                      {"flag_meanings": " ".join(PHASES)}),
            "pad_normal_force": (("time", "pad"), np.full((steps, 2), 20.0)),
            "object_height": (("time",), lift[:, 0, 2])}
    for name, mesh, shift in (("object", box, 0.0), ("pad0", plate, -0.016), ("pad1", plate, 0.016)):
        data[f"vertices_{name}"] = (("time", f"{name}_vertex", "xyz"), mesh.vertices[None] + [0, shift, 0.015] + lift)
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
        names = set()
        with connect(f"ws://{url}", subprotocols=[f"viser-v{viser.__version__}"], open_timeout=10) as ws:
            deadline = time.monotonic() + 10
            while "/bodies/pad1" not in names and time.monotonic() < deadline:
                try:
                    frame = ws.recv(timeout=1)
                except TimeoutError:
                    continue
                names |= {m.get("name") for m in _messages(frame) if isinstance(m, dict)}
        assert {"/bodies/object", "/bodies/pad0", "/bodies/pad1", "/ground"} <= names
    finally:
        server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://{url}/", timeout=2)


def test_viewer_needs_vertex_positions():
    ds = _trajectory().drop_vars(["vertices_object", "vertices_pad0", "vertices_pad1"])
    with pytest.raises(ValueError, match="--vertices"):
        serve_trajectory(ds, port=0)
