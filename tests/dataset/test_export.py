"""`ipcgrasp export --format acronym`: the HDF5 file read back as ACRONYM's readers read it holds
the records' grasps in the object's mesh frame, their labels, the mesh path, scale and mass; the
command refuses what it must not write and names the fix."""

import json

import h5py
import numpy as np
import pytest
import trimesh

import ipcgrasp.grasp.simulate
from ipcgrasp.cli import main
from ipcgrasp.dataset.export import acronym_grasps
from ipcgrasp.dataset.records import generate_dataset, read_records
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult

SIDE = 0.03


def _held_on_odd_seeds(obj, object_pose, grasp_pose, params=None, seed=0, record=(), gripper=None):
    """Instant stand-in for the simulator: held on odd seeds, slipped on even ones."""
    held = seed % 2 == 1
    return GraspResult(success=held, failure_mode=None if held else "slip", seed=seed,
                       reason="held after lift" if held else "pad 1 lost the object", close_forces=(20.0, 21.0),
                       close_opening=0.03, start_opening=0.034, close_time=0.4)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A generate directory of 6 grasps x 3 trials on a 30 mm box whose mesh sits off its origin
    (so the object's resting pose is not the identity)."""
    folder = tmp_path_factory.mktemp("export")
    mesh = trimesh.creation.box([SIDE] * 3)
    mesh.apply_translation([0.1, -0.05, 0.2])
    mesh_path = folder / "box.obj"
    mesh.export(mesh_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", _held_on_odd_seeds)
        generate_dataset(GraspObject.from_file(mesh_path, 0.05), folder / "grasps", 6, n_trials=3, seed=2,
                         images=False, mesh=str(mesh_path))
    return folder / "grasps", mesh


def test_the_hdf5_read_back_holds_the_records_grasps_in_the_mesh_frame_and_their_labels(dataset, tmp_path, capsys):
    directory, mesh = dataset
    out = tmp_path / "box.h5"
    assert main(["export", str(directory), "--format", "acronym", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: box, 6 grasp(s), ")
    records = read_records(directory)
    order = sorted(records)
    with h5py.File(out, "r") as f:  # as acronym_tools.load_grasps and load_mesh read it
        transforms = np.array(f["grasps/transforms"])
        success = np.array(f["grasps/qualities/flex/object_in_gripper"])
        mesh_file = f["object/file"][()].decode()
        scale, mass = f["object/scale"][()], f["object/mass"][()]
        robustness = np.array(f["grasps/qualities/ipcgrasp/robustness"])
        trial_success = np.array(f["grasps/qualities/ipcgrasp/trial_success"])
        index = np.array(f["grasps/index"])
        gripper = f["gripper/type"][()].decode()
    assert mesh_file == str(directory.parent / "box.obj") and scale == 1.0 and mass == 0.05 and gripper == "yumi"
    assert list(index) == order and transforms.shape == (6, 4, 4)
    object_pose = np.array(records[order[0]]["object"]["pose"])
    assert not np.allclose(object_pose, np.eye(4))
    for k, i in enumerate(order):
        record = records[i]
        # the record's world gripper pose is the object's resting pose times the exported transform
        assert np.allclose(object_pose @ transforms[k], record["gripper"]["pose"], atol=1e-12)
        assert robustness[k] == record["robustness"]
        assert list(trial_success[k]) == [t["success"] for t in record["trials"]]
        assert success[k] == (record["robustness"] >= 0.5)
        # the sampled contacts, taken into the mesh file's frame by the transform, lie on the box's faces
        contacts = np.array(record["antipodal"]["contacts"])
        in_mesh = (np.linalg.inv(object_pose) @ np.c_[contacts, np.ones(2)].T).T[:, :3] - mesh.bounds.mean(axis=0)
        assert np.allclose(np.abs(in_mesh).max(axis=1), SIDE / 2, atol=1e-6)
        # the jaws close along the transform's x axis, between the two contacts
        axis = transforms[k][:3, 0]
        assert abs(abs(axis @ (in_mesh[1] - in_mesh[0])) - np.linalg.norm(in_mesh[1] - in_mesh[0])) < 1e-6
    assert 0 < success.sum() < 6  # both labels occur: the check above compares something


def test_the_label_threshold_and_mesh_path_are_the_users(dataset, tmp_path):
    directory, _ = dataset
    grasps = acronym_grasps(directory, mesh_file="meshes/box.obj", success_threshold=1.0)
    assert grasps.mesh_file == "meshes/box.obj"
    assert list(grasps.success) == [int(r == 1.0) for r in grasps.robustness]
    out = tmp_path / "box.hdf5"
    assert main(["export", str(directory), "--format", "acronym", "--out", str(out), "--mesh-file", "meshes/box.obj",
                 "--success-threshold", "1"]) == 0
    with h5py.File(out, "r") as f:
        assert f["object/file"][()].decode() == "meshes/box.obj" and f.attrs["success_threshold"] == 1.0
        assert list(f["grasps/qualities/flex/object_in_gripper"]) == list(grasps.success)


def test_an_existing_output_is_refused_unless_overwrite(dataset, tmp_path, capsys):
    directory, _ = dataset
    out = tmp_path / "box.h5"
    out.write_bytes(b"mine")
    argv = ["export", str(directory), "--format", "acronym", "--out", str(out)]
    assert main(argv) == 2
    assert f"--out: {out} exists; fix:" in capsys.readouterr().err and out.read_bytes() == b"mine"
    assert main([*argv, "--overwrite"]) == 0
    assert h5py.is_hdf5(out)


@pytest.mark.parametrize("setup, argv, message", [
    ("empty", [], "no dataset.json, so not a dataset of `ipcgrasp generate`; fix:"),
    ("no_mesh", [], "field 'object.mesh' is null"),
    ("mixed", [], "grasp 1 has 'object.mass' 0.06, grasp 0 0.05: the records are not of one generate run; fix:"),
    ("dataset", ["--success-threshold", "1.5"], "success threshold 1.5: must be in (0, 1]"),
])
def test_bad_datasets_and_options_are_errors_naming_the_field_and_fix(dataset, tmp_path, capsys, setup, argv,
                                                                       message):
    source, _ = dataset
    directory = tmp_path / "grasps"
    if setup == "empty":
        directory.mkdir()
    else:
        directory.mkdir()
        for path in source.iterdir():
            (directory / path.name).write_bytes(path.read_bytes())
        record_path = directory / "grasp_0001.json"
        record = json.loads(record_path.read_text())
        if setup == "no_mesh":
            for path in directory.glob("grasp_*.json"):
                edited = json.loads(path.read_text())
                edited["object"]["mesh"] = None
                path.write_text(json.dumps(edited))
        elif setup == "mixed":
            record["object"]["mass"] = 0.06
            record_path.write_text(json.dumps(record))
    out = tmp_path / "out.h5"
    assert main(["export", str(directory), "--format", "acronym", "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".out.h5.*"))


def test_the_format_is_required_and_named(dataset, tmp_path, capsys):
    directory, _ = dataset
    with pytest.raises(SystemExit) as exit_:
        main(["export", str(directory), "--format", "grip", "--out", str(tmp_path / "x.h5")])
    assert exit_.value.code == 2 and "invalid choice: 'grip'" in capsys.readouterr().err
