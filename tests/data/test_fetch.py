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


def tree(root):
    """{relative path: bytes} of every file under root."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_populated_dest_that_is_not_a_fetch_is_refused_and_nothing_is_deleted(tmp_path):
    archive = tmp_path / "data.zip"
    sha = make_archive(archive)
    dest = tmp_path / "my_project"
    (dest / "notes").mkdir(parents=True)
    (dest / "notes" / "thesis.tex").write_text("years of work")
    (dest / "object_meshes").mkdir()
    (dest / "object_meshes" / "my_part.obj").write_text("v 0 0 0\n")
    before = tree(dest)
    with pytest.raises(FetchError, match=r"my_project is not empty and is not a previous .*fix: choose a new"):
        fetch_reach(dest, url=archive.as_uri(), sha256=sha)
    assert tree(dest) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.zip", "my_project"]  # no staging left behind


def test_a_previous_fetch_is_replaced_but_files_added_to_it_stop_the_fetch(tmp_path):
    archive = tmp_path / "data.zip"
    sha = make_archive(archive)
    dest = fetch_reach(tmp_path / "reach", url=archive.as_uri(), sha256=sha)
    fetched = tree(dest)
    assert ".ipcgrasp-fetch.json" in fetched
    assert fetch_reach(dest, url=archive.as_uri(), sha256=sha) == dest  # a refetch replaces its own copy
    assert tree(dest) == fetched
    (dest / "object_meshes" / "added_by_user.obj").write_text("mine")
    with pytest.raises(FetchError, match=r"1 file\(s\) the previous fetch did not write \(e.g. "
                                         r"object_meshes/added_by_user.obj\)"):
        fetch_reach(dest, url=archive.as_uri(), sha256=sha)
    assert (dest / "object_meshes" / "added_by_user.obj").read_text() == "mine"


def test_an_empty_dest_is_filled_and_a_file_dest_refused(tmp_path):
    archive = tmp_path / "data.zip"
    sha = make_archive(archive)
    (tmp_path / "empty").mkdir()
    assert is_reach_dir(fetch_reach(tmp_path / "empty", url=archive.as_uri(), sha256=sha))
    (tmp_path / "a_file").write_text("keep")
    with pytest.raises(FetchError, match="a_file is a file, not a directory"):
        fetch_reach(tmp_path / "a_file", url=archive.as_uri(), sha256=sha)
    assert (tmp_path / "a_file").read_text() == "keep"


def test_an_archive_that_yields_no_files_fails_and_writes_nothing(tmp_path):
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for sub in ("object_meshes/", "phys_grasps_json/", "yumi_meshes/"):
            zf.writestr("data/" + sub, "")  # directory entries only
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    with pytest.raises(FetchError, match="yielded no files in object_meshes, phys_grasps_json, yumi_meshes"):
        fetch_reach(tmp_path / "reach", url=archive.as_uri(), sha256=sha)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.zip"]
