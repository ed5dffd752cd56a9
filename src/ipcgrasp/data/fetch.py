"""`ipcgrasp data fetch`: download the original IPC-GraspSim data archive and unpack REACH.

The only code in ipcgrasp that touches the network, and only when a user asks for it.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

ARCHIVE_URL = ("https://github.com/BerkeleyAutomation/ipc-graspsim/raw/"
               "90c8b9b198fce13646454da8c3c199d4abc02e4d/data.zip")
ARCHIVE_SHA256 = "48ef1beac16ae7ba5173dbfcbab5d095893ba81148ce195cf633dcb625fd09aa"
REACH_SUBDIRS = ("object_meshes", "phys_grasps_json", "yumi_meshes")


class FetchError(RuntimeError):
    """Download failed, the checksum did not match, or the archive lacks the REACH layout."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, dest: Path, progress=None) -> None:
    """Stream `url` to `dest`; `progress(done_bytes, total_bytes_or_None)` is called per block."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(dest, "wb") as out:
            total = getattr(response, "length", None)
            done = 0
            for block in iter(lambda: response.read(1 << 16), b""):
                out.write(block)
                done += len(block)
                if progress:
                    progress(done, total)
    except OSError as exc:
        raise FetchError(f"could not download {url}: {exc}") from exc


def unpack_reach(archive: Path, dest: Path) -> Path:
    """Extract the REACH subdirectories of `archive` into `dest` (atomically: all or nothing)."""
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        marker = next((n for n in names if "/phys_grasps_json/" in "/" + n), None)
        if marker is None:
            raise FetchError(f"{archive}: no phys_grasps_json/ directory inside; not the IPC-GraspSim data archive")
        prefix = ("/" + marker).split("/phys_grasps_json/")[0].lstrip("/")
        prefix = prefix + "/" if prefix else ""
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".reach-", dir=dest.parent))
        try:
            for name in names:
                rel = name[len(prefix):] if name.startswith(prefix) else None
                if not rel or rel.endswith("/") or rel.split("/")[0] not in REACH_SUBDIRS:
                    continue
                target = staging / rel
                if ".." in Path(rel).parts:
                    raise FetchError(f"{archive}: unsafe path {name!r} in archive")
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(name) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
            if dest.exists():
                shutil.rmtree(dest)
            staging.rename(dest)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    return dest


def fetch_reach(dest: Path, url: str = ARCHIVE_URL, sha256: str = ARCHIVE_SHA256, progress=None) -> Path:
    """Download the archive, verify its sha256, and unpack the REACH layout into `dest`."""
    dest = Path(dest)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "data.zip"
        download(url, archive, progress)
        actual = sha256_of(archive)
        if actual != sha256:
            raise FetchError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {actual}; "
                             "the download is corrupt or the file changed upstream")
        return unpack_reach(archive, dest)
