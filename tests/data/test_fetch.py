"""The data-fetch path, exercised on a local archive (tests never touch the network)."""

import hashlib
import zipfile

import pytest

from ipcgrasp.data.fetch import FetchError, fetch_reach
from ipcgrasp.data.location import is_reach_dir


def make_archive(path, prefix="ipc-graspsim/data/"):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(prefix + "object_meshes/cube_3cm.obj", "v 0 0 0\n")
        zf.writestr(prefix + "phys_grasps_json/cube_3cm.json", "[]")
        zf.writestr(prefix + "yumi_meshes/round_pad.obj", "v 0 0 0\n")
        zf.writestr(prefix + "ipc_msh/cube_3cm.msh", "unused")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("prefix", ["", "data/", "ipc-graspsim/data/"])
def test_fetch_verifies_checksum_and_unpacks_the_reach_layout(tmp_path, prefix):
    archive = tmp_path / "data.zip"
    sha = make_archive(archive, prefix)
    dest = fetch_reach(tmp_path / "resources" / "reach", url=archive.as_uri(), sha256=sha)
    assert is_reach_dir(dest)
    assert (dest / "yumi_meshes" / "round_pad.obj").is_file()
    assert not (dest / "ipc_msh").exists()


def test_checksum_mismatch_leaves_nothing_behind(tmp_path):
    archive = tmp_path / "data.zip"
    make_archive(archive)
    dest = tmp_path / "reach"
    with pytest.raises(FetchError, match="checksum mismatch"):
        fetch_reach(dest, url=archive.as_uri(), sha256="0" * 64)
    assert not dest.exists()


def test_archive_without_reach_layout_is_rejected(tmp_path):
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("README.md", "hello")
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    with pytest.raises(FetchError, match="no phys_grasps_json"):
        fetch_reach(tmp_path / "reach", url=archive.as_uri(), sha256=sha)
