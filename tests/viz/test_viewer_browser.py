"""`ipcgrasp view` in a real browser: headless Chromium (Debian's `chromium`) loads the viewer's page,
runs its WebGL scene in software (SwiftShader) and is asked for screenshots over the DevTools
protocol (spoken here through `websockets`, which viser already needs) until the object shows: the
canvas is not blank, and the middle of the picture, where the camera opens on the object, shows the
object's colour.

Where Chromium is not installed the test skips and says why; with IPCGRASP_REQUIRE_CHROMIUM=1 (set by
.ci/run, which installs it) it fails instead, so CI never skips it silently.

Run as a script it takes the picture of docs/viewer.png from a recorded trajectory:
    PYTHONPATH=src python tests/viz/test_viewer_browser.py TRAJECTORY.nc docs/viewer.png --step 50
"""

from __future__ import annotations

import argparse
import base64
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import trimesh
import xarray as xr
from PIL import Image
from websockets.sync.client import connect

from ipcgrasp.grasp.trajectory import PHASES
from ipcgrasp.viz.render import body_colour
from ipcgrasp.viz.viewer import serve_trajectory

BROWSERS = ("chromium", "chromium-browser")
SIZE = (800, 500)  # browser window, pixels
# software WebGL; no sandbox: CI runs as root, where Chromium refuses to start with its sandbox
FLAGS = ("--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--disable-gpu-sandbox", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--hide-scrollbars", "--mute-audio")
# viser's notice that WebGL runs in software would cover part of the picture: hidden
HIDE_NOTICES = ("document.addEventListener('DOMContentLoaded', () => {"
                "const style = document.createElement('style');"
                "style.textContent = '.mantine-Notifications-root { display: none !important; }';"
                "document.head.appendChild(style); });")


def chromium() -> str | None:
    """Path of the Chromium executable, None when none is installed."""
    return next(filter(None, map(shutil.which, BROWSERS)), None)


def require_chromium() -> str:
    """The Chromium executable; skip the test, saying why, when there is none (fail instead with
    IPCGRASP_REQUIRE_CHROMIUM=1)."""
    path = chromium()
    if path is None:
        reason = "no Chromium to load the viewer's page in (install it: apt-get install chromium)"
        if os.environ.get("IPCGRASP_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"IPCGRASP_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    return path


class Browser:
    """Headless Chromium driven over the DevTools protocol: one page, screenshots of it."""

    def __init__(self, executable: str, size: tuple[int, int] = SIZE):
        self.profile = tempfile.TemporaryDirectory(prefix="ipcgrasp-chromium-")
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--window-size={size[0]},{size[1]}", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.ids = itertools.count(1)
        try:
            self.socket = connect(self._devtools_url(), max_size=None, open_timeout=30)
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            self.call("Page.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", session=True, width=size[0], height=size[1],
                      deviceScaleFactor=1, mobile=False)
            self.call("Page.addScriptToEvaluateOnNewDocument", session=True, source=HIDE_NOTICES)
        except BaseException:
            self.close()
            raise

    def _devtools_url(self, timeout: float = 60.0) -> str:
        """The browser's DevTools websocket address, from the line Chromium prints on start."""
        deadline, seen = time.monotonic() + timeout, []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            seen.append(line)
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        raise RuntimeError("Chromium did not start its DevTools server; it printed:\n" + "".join(seen[-20:]))

    def call(self, method: str, session: bool = False, timeout: float = 30.0, **params) -> dict:
        """Send one DevTools command (to the page with `session`) and return its result."""
        ident = next(self.ids)
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)["result"]
        return result.get("value")

    def screenshot(self) -> np.ndarray:
        """The page as RGB (height, width, 3) uint8."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stderr.close()
        self.profile.cleanup()


# the largest canvas of the page (the 3D scene; the control panel is docked beside it): x, y, width, height
CANVAS_BOX = ("(() => { const boxes = Array.from(document.querySelectorAll('canvas'), c => c.getBoundingClientRect())"
              ".filter(r => r.width * r.height > 0).sort((a, b) => b.width * b.height - a.width * a.height);"
              "return boxes.length ? [boxes[0].x, boxes[0].y, boxes[0].width, boxes[0].height] : null; })()")


def middle(picture: np.ndarray, box, fraction: float = 0.2) -> np.ndarray:
    """The middle `fraction` (of width and of height) of the part of the picture inside `box`
    (x, y, width, height in pixels)."""
    x, y, width, height = box
    rows = slice(int(y + height * (1 - fraction) / 2), int(y + height * (1 + fraction) / 2))
    cols = slice(int(x + width * (1 - fraction) / 2), int(x + width * (1 + fraction) / 2))
    return picture[rows, cols]


def object_share(pixels: np.ndarray) -> float:
    """Share of the pixels that have the object's hue: red above green above blue, well apart (any
    shade of the lit orange)."""
    r, g, b = (pixels[..., i].astype(int) for i in range(3))
    return float(np.mean((r > g + 20) & (g > b + 20)))


def picture_of_viewer(url: str, executable: str, size: tuple[int, int] = SIZE,
                      timeout: float = 60.0) -> tuple[np.ndarray, tuple, float]:
    """(picture, the scene canvas's box in it, seconds until the object showed) of the viewer's page
    at `url` once the object fills at least half of the canvas's middle; the last picture when it
    does not within `timeout` s (box None when the page has no canvas)."""
    start = time.monotonic()
    browser = Browser(executable, size)
    try:
        browser.open(url)
        while True:
            time.sleep(0.25)
            box = browser.evaluate(CANVAS_BOX)
            if box is None and time.monotonic() - start < timeout:
                continue
            picture = browser.screenshot()
            if (box is not None and object_share(middle(picture, box)) > 0.5) or time.monotonic() - start > timeout:
                seconds = time.monotonic() - start
                time.sleep(0.5)  # the scene's last messages (contacts, arrows) drawn too
                return browser.screenshot(), box, seconds
    finally:
        browser.close()


def _trajectory(steps: int = 3) -> xr.Dataset:
    """A small trajectory where a recorded grasp is: a 3 cm box 0.39 m from the origin between two
    plates, with one contact on each plate pushing it."""
    box, plate = trimesh.creation.box(extents=(0.03,) * 3), trimesh.creation.box(extents=(0.016, 0.002, 0.02))
    where = np.array([0.39, 0.0, 0.015])
    lift = np.arange(steps)[:, None, None] * np.array([0.0, 0.0, 0.005])
    points = where + np.array([[0.0, -0.015, 0.0], [0.0, 0.015, 0.0]]) + lift
    data = {"phase": (("time",), np.array([0, 1, 2][:steps], dtype=np.int8), {"flag_meanings": " ".join(PHASES)}),
            "pad_normal_force": (("time", "pad"), np.full((steps, 2), 20.0)),
            "object_height": (("time",), lift[:, 0, 2]),
            "n_pad_contacts": (("time",), np.full(steps, 2)),
            "contact_point": (("time", "contact", "xyz"), points),
            "contact_force": (("time", "contact", "xyz"), np.broadcast_to([[0, 20.0, 0], [0, -20.0, 0]], points.shape)),
            "contact_pad": (("time", "contact"), np.tile(np.array([0, 1], np.int8), (steps, 1)))}
    for name, mesh, shift in (("object", box, 0.0), ("pad0", plate, -0.016), ("pad1", plate, 0.016)):
        data[f"vertices_{name}"] = (("time", f"{name}_vertex", "xyz"),
                                    mesh.vertices[None] + where + [0, shift, 0] + lift)
        data[f"faces_{name}"] = ((f"{name}_face", "corner"), mesh.faces)
    return xr.Dataset(data, coords={"time": 0.02 * (1 + np.arange(steps))})


@pytest.mark.slow  # Chromium starts, then renders the first picture in software: more than a few seconds
def test_the_viewer_opens_on_the_object_in_a_browser(tmp_path):
    executable = require_chromium()
    server = serve_trajectory(_trajectory(), port=0)
    try:
        picture, box, seconds = picture_of_viewer(f"http://127.0.0.1:{server.get_port()}/", executable)
    finally:
        server.stop()
    Image.fromarray(picture).save(tmp_path / "viewer.png")
    assert picture.shape[:2] == SIZE[::-1]
    assert box is not None and box[2] > SIZE[0] / 2 and box[3] > SIZE[1] / 2, f"no canvas for the scene: {box}"
    x, y, width, height = map(int, box)
    scene = picture[y:y + height, x:x + width].reshape(-1, 3)
    assert scene.std(axis=0).max() > 10, f"the canvas is blank (picture: {tmp_path / 'viewer.png'})"
    share = object_share(middle(picture, box))
    assert share > 0.5, (f"the middle of the canvas shows the object in {share:.0%} of its pixels, not most "
                         f"(picture: {tmp_path / 'viewer.png'})")
    object_rgb = np.array(body_colour("object")) * 255
    assert np.abs(scene - object_rgb).sum(axis=1).min() < 60, "no pixel of the object's colour"
    print(f"the object showed after {seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="screenshot of `ipcgrasp view` in headless Chromium")
    parser.add_argument("trajectory", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--step", type=int, default=0, help="step the slider shows")
    parser.add_argument("--size", default="1200x720", help="browser window, WIDTHxHEIGHT pixels")
    args = parser.parse_args(argv)
    executable = chromium()
    if executable is None:
        sys.exit("no Chromium: apt-get install chromium")
    from ipcgrasp.grasp.trajectory import read_trajectory

    server = serve_trajectory(read_trajectory(args.trajectory), port=0, step=args.step)
    try:
        size = tuple(int(side) for side in args.size.split("x"))
        picture, _, seconds = picture_of_viewer(f"http://127.0.0.1:{server.get_port()}/", executable, size)
    finally:
        server.stop()
    Image.fromarray(picture).save(args.out, optimize=True)
    print(f"wrote {args.out} ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
