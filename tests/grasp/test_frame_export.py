"""`ipcgrasp frames`: one mesh file per step and body of a trajectory, read back by trimesh with
the trajectory's vertex positions and triangles, a frames.csv of their times and phases; existing
files are refused before any is written."""

import numpy as np
import pandas as pd
import pytest
import trimesh
import xarray as xr

from ipcgrasp.cli import main
from ipcgrasp.grasp.frame_export import frame_files
from ipcgrasp.grasp.trajectory import PHASES

STEPS = 5


@pytest.fixture
def trajectory(tmp_path):
    """A trajectory file of a box rising 1 mm per step and a tetrahedron turning about z (the
    other variables every trajectory holds are zeros)."""
    box, tet = trimesh.creation.box([0.03, 0.02, 0.01]), trimesh.creation.icosphere(subdivisions=0, radius=0.01)
    rise = np.array([box.vertices + [0.0, 0.0, 0.001 * k] for k in range(STEPS)])
    turns = [trimesh.transformations.rotation_matrix(0.1 * k, [0, 0, 1])[:3, :3] for k in range(STEPS)]
    spin = np.array([tet.vertices @ r.T for r in turns])
    phase = np.array([0, 1, 1, 2, 3], dtype=np.int8)
    ds = xr.Dataset({
        "phase": (("time",), phase, {"flag_values": np.arange(len(PHASES), dtype=np.int8),
                                     "flag_meanings": " ".join(PHASES)}),
        "vertices_object": (("time", "object_vertex", "xyz"), rise),
        "faces_object": (("object_face", "corner"), box.faces.astype(np.int64)),
        "vertices_pad0": (("time", "pad0_vertex", "xyz"), spin),
        "faces_pad0": (("pad0_face", "corner"), tet.faces.astype(np.int64)),
        **{name: (("time", "pad"), np.zeros((STEPS, 2))) for name in ("pad_normal_force", "pad_friction_force")},
        **{name: (("time",), np.zeros(STEPS)) for name in ("jaw_opening", "object_height", "object_rotation")},
    }, coords={"time": ("time", 0.01 * np.arange(1, STEPS + 1))})
    path = tmp_path / "t.nc"
    ds.to_netcdf(path)
    return path, ds


@pytest.mark.parametrize("file_format", ["obj", "ply"])
def test_every_step_of_every_body_reads_back_as_its_vertices_and_faces(trajectory, tmp_path, capsys, file_format):
    path, ds = trajectory
    out = tmp_path / "frames"
    assert main(["frames", str(path), "--out", str(out), "--format", file_format]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {2 * STEPS} {file_format.upper()} files and frames.csv to {out}"
    for step in range(STEPS):
        for body in ("object", "pad0"):
            mesh = trimesh.load(out / f"{body}_{step}.{file_format}", process=False, force="mesh")
            assert np.allclose(mesh.vertices, ds[f"vertices_{body}"].values[step], atol=1e-6)
            assert np.array_equal(mesh.faces, ds[f"faces_{body}"].values)
    index = pd.read_csv(out / "frames.csv")
    assert list(index.step) == list(range(STEPS)) and np.allclose(index.time_s, ds.time.values)
    assert list(index.phase) == ["settle", "squeeze", "squeeze", "lift", "hold"]


def test_every_kth_step_and_the_last(trajectory, tmp_path):
    path, ds = trajectory
    assert main(["frames", str(path), "--out", str(tmp_path / "f"), "--every", "3"]) == 0
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == \
        ["frames.csv", "object_0.obj", "object_3.obj", "object_4.obj", "pad0_0.obj", "pad0_3.obj", "pad0_4.obj"]
    assert frame_files(ds, "d", "ply", 3)[0].name == "object_0.ply"


def test_an_existing_frame_is_refused_before_any_file_is_written(trajectory, tmp_path, capsys):
    path, _ = trajectory
    out = tmp_path / "frames"
    out.mkdir()
    (out / "pad0_2.obj").write_text("mine")
    assert main(["frames", str(path), "--out", str(out)]) == 2
    assert f"--out: {out / 'pad0_2.obj'} exists; fix:" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["pad0_2.obj"] and (out / "pad0_2.obj").read_text() == "mine"
    assert main(["frames", str(path), "--out", str(out), "--overwrite"]) == 0
    assert len(list(out.iterdir())) == 2 * STEPS + 1


def test_a_trajectory_without_vertices_names_the_fix(trajectory, tmp_path, capsys):
    path, ds = trajectory
    bare = tmp_path / "bare.nc"
    ds.drop_vars([name for name in ds.data_vars if name.startswith(("vertices_", "faces_"))]).to_netcdf(bare)
    assert main(["frames", str(bare), "--out", str(tmp_path / "f")]) == 2
    assert "holds no vertex positions; fix: record it with `ipcgrasp simulate ... --trajectory OUT.nc --vertices`" \
        in capsys.readouterr().err
    assert not (tmp_path / "f").exists()
