"""`ipcgrasp data fetch`: download the original IPC-GraspSim data archive and unpack REACH.

The only code in ipcgrasp that touches the network, and only when a user asks for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from ipcgrasp.documents import load_json

ARCHIVE_URL = ("https://github.com/BerkeleyAutomation/ipc-graspsim/raw/"
               "90c8b9b198fce13646454da8c3c199d4abc02e4d/data.zip")
ARCHIVE_SHA256 = "48ef1beac16ae7ba5173dbfcbab5d095893ba81148ce195cf633dcb625fd09aa"
REACH_SUBDIRS = ("object_meshes", "phys_grasps_json", "yumi_meshes")
FETCH_MARKER = ".ipcgrasp-fetch.json"
"""Written into a fetched directory: the files the fetch wrote (all a later fetch may replace)."""


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


def previous_fetch_files(dest: Path) -> set[str] | None:
    """The files (relative paths) a previous fetch wrote into `dest`, from its FETCH_MARKER; None
    when `dest` holds no marker."""
    marker = dest / FETCH_MARKER
    if not marker.is_file():
        return None
    try:
        return set(load_json(marker)["files"])
    except (ValueError, KeyError, TypeError):
        return None


def check_destination(dest: Path) -> None:
    """FetchError unless `dest` is absent, an empty directory, or a previous fetch holding only
    the files that fetch wrote (so replacing it deletes nothing the user put there)."""
    if not dest.exists():
        return
    if not dest.is_dir():
        raise FetchError(f"--dest {dest} is a file, not a directory; fix: choose a directory path for the data")
    if not any(dest.iterdir()):
        return
    fetched = previous_fetch_files(dest)
    if fetched is None:
        raise FetchError(f"--dest {dest} is not empty and is not a previous `ipcgrasp data fetch` (no {FETCH_MARKER}); "
                         "nothing was changed; fix: choose a new or empty directory, or move its contents away")
    present = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_dir()} - {FETCH_MARKER}
    foreign = sorted(present - fetched)
    if foreign:
        raise FetchError(f"--dest {dest} holds {len(foreign)} file(s) the previous fetch did not write (e.g. "
                         f"{foreign[0]}); nothing was changed; fix: move them out or choose another directory")


def unpack_reach(archive: Path, dest: Path) -> Path:
    """Extract the REACH subdirectories of `archive` into `dest`: all or nothing, replacing a
    previous fetch (see `check_destination`) only once the new copy is complete."""
    check_destination(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".reach-new-", dir=dest.parent))
    try:
        files = _extract_reach(archive, staging)
        (staging / FETCH_MARKER).write_text(json.dumps({"archive": archive.name, "files": sorted(files)}, indent=1))
        _replace(staging, dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging)  # our own staging copy, never the user's directory
    return dest


def _extract_reach(archive: Path, target: Path) -> list[str]:
    """Extract the REACH_SUBDIRS files of `archive` into `target`; their relative paths. FetchError
    when the archive lacks the layout or yields no file for one of the subdirectories."""
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        marker = next((n for n in names if "/phys_grasps_json/" in "/" + n), None)
        if marker is None:
            raise FetchError(f"{archive}: no phys_grasps_json/ directory inside; not the IPC-GraspSim data archive")
        prefix = ("/" + marker).split("/phys_grasps_json/")[0].lstrip("/")
        prefix = prefix + "/" if prefix else ""
        written = []
        for name in names:
            rel = name[len(prefix):] if name.startswith(prefix) else None
            if not rel or rel.endswith("/") or rel.split("/")[0] not in REACH_SUBDIRS:
                continue
            if ".." in Path(rel).parts:
                raise FetchError(f"{archive}: unsafe path {name!r} in archive")
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            with zf.open(name) as src, open(target / rel, "wb") as out:
                shutil.copyfileobj(src, out)
            written.append(rel)
    empty = [sub for sub in REACH_SUBDIRS if not any(f.startswith(sub + "/") for f in written)]
    if empty:
        raise FetchError(f"{archive}: yielded no files in {', '.join(empty)}/; not the IPC-GraspSim data archive "
                         "(nothing was written)")
    return written


def _replace(staging: Path, dest: Path) -> None:
    """Move the complete `staging` copy to `dest`; a previous fetch there is moved aside first and
    removed only after the new copy is in place (an empty `dest` is replaced by the rename)."""
    if not (dest.exists() and any(dest.iterdir())):
        os.replace(staging, dest)
        return
    old = Path(tempfile.mkdtemp(prefix=".reach-old-", dir=dest.parent))
    os.replace(dest, old / "reach")
    os.replace(staging, dest)
    shutil.rmtree(old)


def fetch_reach(dest: Path, url: str = ARCHIVE_URL, sha256: str = ARCHIVE_SHA256, progress=None) -> Path:
    """Download the archive, verify its sha256, and unpack the REACH layout into `dest`: a new or
    empty directory, or a previous fetch (checked before downloading; see `check_destination`)."""
    dest = Path(dest)
    check_destination(dest)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "data.zip"
        download(url, archive, progress)
        actual = sha256_of(archive)
        if actual != sha256:
            raise FetchError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {actual}; "
                             "the download is corrupt or the file changed upstream")
        return unpack_reach(archive, dest)
