"""Atomic writes: complete or absent, usual permissions, no temporary files left behind."""

import os
import stat
from pathlib import Path

import pytest

from ipcgrasp.io import atomic_path, check_output_path, write_bytes_atomic, write_json_atomic


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_write_bytes_creates_parents_with_usual_permissions(tmp_path):
    path = write_bytes_atomic(tmp_path / "a" / "b.bin", b"xyz")
    assert path.read_bytes() == b"xyz"
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert os.listdir(tmp_path / "a") == ["b.bin"]


def test_json_is_sorted_and_ends_with_newline(tmp_path):
    path = write_json_atomic(tmp_path / "x.json", {"b": 1, "a": [1, 2]})
    assert path.read_text().startswith('{\n  "a"') and path.read_text().endswith("}\n")


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = write_bytes_atomic(tmp_path / "r.txt", b"old")
    with pytest.raises(RuntimeError, match="half written"):
        with atomic_path(path) as tmp:
            tmp.write_bytes(b"new but incomplete")
            raise RuntimeError("half written")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["r.txt"]


def test_the_writer_gets_a_temporary_beside_the_target(tmp_path):
    with atomic_path(tmp_path / "out.nc") as tmp:
        assert tmp.parent == tmp_path and tmp.name != "out.nc" and tmp.exists()
        tmp.write_text("done")
    assert (tmp_path / "out.nc").read_text() == "done"


def test_save_figure_atomic_leaves_the_previous_picture_when_saving_fails(tmp_path):
    from matplotlib.figure import Figure

    from ipcgrasp.io import save_figure_atomic

    path = tmp_path / "figures" / "f.png"
    fig = Figure()
    fig.subplots().plot([0, 1], [1, 0])
    save_figure_atomic(fig, path, dpi=50)
    before = path.read_bytes()
    assert before.startswith(b"\x89PNG")
    with pytest.raises(Exception):
        save_figure_atomic(fig, path, dpi="not a number")
    assert path.read_bytes() == before and [p.name for p in path.parent.iterdir()] == ["f.png"]


def test_check_output_path_accepts_new_files_in_new_directories_and_writes_nothing(tmp_path):
    assert check_output_path(tmp_path / "a" / "b" / "out.gif", (".gif", ".png")) == tmp_path / "a" / "b" / "out.gif"
    assert check_output_path(tmp_path / "records", directory=True) == tmp_path / "records"
    assert list(tmp_path.iterdir()) == []  # the write probe leaves nothing behind


@pytest.mark.parametrize("make, kwargs, problem", [
    (lambda tmp: tmp, {}, "is a directory; fix: give a file name"),
    (lambda tmp: tmp / "file.txt", {"directory": True}, "is a file; fix: give a directory"),
    (lambda tmp: tmp / "file.txt" / "out.json", {}, "file.txt is a file, not a directory"),
    (lambda tmp: tmp / "out.MP4", {"suffixes": (".gif", ".png")}, r"unsupported file type '.MP4'; fix: .*\.gif or \.png"),
    (lambda tmp: Path("/proc/out.json"), {}, "cannot write in /proc"),
])
def test_check_output_path_refuses_wrong_kinds_and_places(tmp_path, make, kwargs, problem):
    (tmp_path / "file.txt").write_text("keep")
    with pytest.raises(ValueError, match=problem):
        check_output_path(make(tmp_path), **kwargs)
    assert (tmp_path / "file.txt").read_text() == "keep"
