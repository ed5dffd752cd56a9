"""A user's own physical trials (data.own, docs/own_data.md): the import writes what the REACH
loader and the registry read back unchanged; every bad input is refused before anything is
written, each problem naming the file, the trial or object and field, and the fix; the import
never overwrites or deletes a file it did not create."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
import trimesh

from ipcgrasp.cli import main
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.own import OwnDataError, import_trials, known_grippers
from ipcgrasp.data.recorded import MANIFEST
from ipcgrasp.data.reach import list_objects, load_object, load_physical_grasps
from ipcgrasp.data.registry import load_registry
from ipcgrasp.grasp.description import shipped_grippers

ROBUST = [1.0, 1.0, 0.0, 0.0, 1.0, 0.5]  # tests/conftest.py ROBUST_LABELS


def test_imported_trials_read_back_through_the_reach_loader_and_registry(own_trials, tmp_path):
    source, doc = own_trials(tmp_path / "lab")
    dest = tmp_path / "own"
    manifest = import_trials(source, dest)
    assert list_objects(dest) == ["box_3cm"]
    registry = load_registry(dest / "objects.yaml")
    assert registry["box_3cm"].mass == pytest.approx(0.003, rel=1e-15) and registry["box_3cm"].split == "heldout"
    mesh, mass = load_object(dest, "box_3cm", registry)
    assert np.isclose(trimesh.load(mesh).volume, 0.03**3, rtol=1e-12)
    physical = load_physical_grasps(dest, "box_3cm")
    assert physical.results.shape == (6, 2) and physical.robustness.tolist() == ROBUST
    first = doc["trials"][0]
    assert np.array_equal(physical.object_poses[0], first["object_pose"])
    assert np.array_equal(physical.grasp_poses[0], first["gripper_pose"])
    assert np.array_equal(physical.grasp_poses[5], doc["trials"][10]["gripper_pose"])
    assert manifest["gripper"] == "yumi" and manifest["objects"]["box_3cm"]["grasp_ids"] == list(range(6))
    assert manifest["objects"]["box_3cm"]["mesh_repair"] is None  # it passed the check as given
    assert json.loads((dest / MANIFEST).read_text())["complete"] is True


def test_the_bundled_reach_cube_survives_a_round_trip_through_the_own_format(tmp_path):
    """Write the REACH cube's grasps as a trials file, import them: the loader returns the same."""
    try:
        data = resolve_data_dir()
    except FileNotFoundError as exc:
        pytest.skip(f"no bundled REACH data: {exc}")
    original = load_physical_grasps(data, "cube_3cm")
    trials = [{"object": "cube", "grasp": g, "gripper": "yumi", "success": int(r),
               "object_pose": original.object_poses[g].tolist(), "gripper_pose": original.grasp_poses[g].tolist()}
              for g in range(original.n_grasps) for r in original.results[g]]
    source = tmp_path / "cube.json"
    source.write_text(json.dumps({"format": "ipcgrasp-physical-trials", "version": 1, "trials": trials, "objects": {
        "cube": {"mesh": str(load_object(data, "cube_3cm")[0]), "mass_kg": 0.003}}}))
    import_trials(source, tmp_path / "own")
    copy = load_physical_grasps(tmp_path / "own", "cube")
    assert np.array_equal(copy.results, original.results)
    assert np.array_equal(copy.object_poses, original.object_poses)
    assert np.array_equal(copy.grasp_poses, original.grasp_poses)


def broken(doc, edit):
    doc = json.loads(json.dumps(doc))
    edit(doc)
    return doc


def set_pose(index, field, value):
    def edit(doc):
        doc["trials"][index][field] = value
    return edit


def two_held_out_objects(doc):
    doc["objects"]["box_b"] = dict(doc["objects"]["box_3cm"])
    for trial in doc["trials"][:4]:
        trial["object"] = "box_b"


def moved_gripper(scale=1.0, up=0.0):
    """Trials 0 and 1 (grasp 0) with the gripper pose's translation times `scale`, raised `up` m."""
    def edit(doc):
        for trial in doc["trials"][:2]:
            pose = np.array(trial["gripper_pose"])
            pose[:3, 3] = pose[:3, 3] * scale + [0.0, 0.0, up]
            trial["gripper_pose"] = pose.tolist()
    return edit


def string_ids_for_grasp_0(doc):
    for trial in doc["trials"][:2]:
        trial["grasp"] = "0"


SHEARED = [[1, 0.2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]


@pytest.mark.parametrize("edit, expected", [
    (set_pose(3, "gripper_pose", SHEARED), r"trials\[3\]\.gripper_pose: not a rigid transform.*fix: give an orthonormal"),
    (set_pose(4, "object_pose", [[1, 0, 0], [0, 1, 0]]), r"trials\[4\]\.object_pose: expected a 4x4.*fix:"),
    (set_pose(2, "success", 2), r"trials\[2\]\.success: must be 0 or 1.*got 2; fix: record 1 when"),
    (set_pose(2, "success", 0.5), r"trials\[2\]\.success: must be 0 or 1"),
    (set_pose(1, "gripper", "robotiq_2f140"), r"trials\[1\]\.gripper: unknown gripper 'robotiq_2f140'; fix: use one "
                                              r"of the grippers ipcgrasp simulates: franka_hand, robotiq_2f85, yumi"),
    (set_pose(0, "object", "mug"), r"trials\[0\]\.object: unknown object 'mug'; fix: use one of the names"),
    (lambda d: d["objects"]["box_3cm"].update(mass_kg=0), r"objects\.box_3cm\.mass_kg: must be a positive finite mass"),
    (lambda d: d["objects"]["box_3cm"].update(mass_kg=-1.0), r"objects\.box_3cm\.mass_kg: must be a positive"),
    (lambda d: d["objects"]["box_3cm"].update(mass_kg=30.0), r"objects\.box_3cm\.mass_kg: .*density.*fix: check the "
                                                             r"mass is in kg"),
    (lambda d: d["objects"]["box_3cm"].update(mesh="meshes/nothing.stl"),
     r"objects\.box_3cm\.mesh: mesh file .*nothing\.stl.* not found; fix: give the mesh's path relative"),
    (lambda d: d["objects"]["box_3cm"].update(split="test"), r"objects\.box_3cm\.split: must be one of"),
    (lambda d: d["trials"].pop(), r"objects\.box_3cm: its grasps have different numbers of trials.*grasp 5: 1"),
    (lambda d: d["trials"][1].update(gripper_pose=d["trials"][2]["gripper_pose"]),
     r"trials\[1\]\.gripper_pose: differs from trials\[0\], an "
                                                      r"earlier trial of box_3cm grasp 0; fix:"),
    (lambda d: d["trials"][0].pop("success"), r"trials\[0\]: field\(s\) success missing"),
    (lambda d: d.update(version=2), r"fields 'format', 'version'"),
    (two_held_out_objects, r"objects: with several objects the study splits by object, but every object has split "
                           r"'heldout'; fix: mark at least one object"),
    (lambda d: d["objects"]["box_3cm"].update(spilt="training"),
     r"objects\.box_3cm: unknown field 'spilt' \(the fields: mesh, mass_kg, split\); fix: rename it 'split' \(the "
     r"nearest known field\) or remove it"),
    (lambda d: d["trials"][4].update(sucess=1), r"trials\[4\]: unknown field 'sucess' .*fix: rename it 'success'"),
    (lambda d: d.update(trails=[]), r"top level: unknown field 'trails' \(the fields: format, version, objects, "
                                    r"trials\); fix: rename it 'trials'"),
    (lambda d: d["trials"][4].update(colour="red"), r"trials\[4\]: unknown field 'colour' .*; fix: remove it"),
    (moved_gripper(scale=1000.0), r"trials\[0\]\.gripper_pose: the translation \(80\.1, -46\.94, 160\) is 185 m from the world "
                                  r"origin, more than 10 m: it looks like millimetres; fix: give translations in "
                                  r"metres \(divide millimetres by 1000\)"),
    (moved_gripper(up=0.3), r"trials\[0\]\.gripper_pose: a tooltip of the yumi \(jaws open to its 50 mm stroke\) is "
                            r"\d+\.\d cm from the object's bounding box, farther than the stroke \+ 5 cm \(10 cm\): "
                            r"no trial could touch the object; fix: give the gripper pose at the grasp, in metres"),
    (string_ids_for_grasp_0, r"trials: the grasp ids mix integers and strings \(trials\[0\]\.grasp '0', "
                             r"trials\[2\]\.grasp 1\).*fix: give every grasp id the same type"),
])
def test_each_bad_input_is_refused_naming_the_file_the_field_and_the_fix(own_trials, tmp_path, edit, expected):
    source, doc = own_trials(tmp_path / "lab")
    source.write_text(json.dumps(broken(doc, edit)))
    dest = tmp_path / "own"
    with pytest.raises(OwnDataError, match=expected) as error:
        import_trials(source, dest)
    assert str(source) in str(error.value)
    assert not dest.exists()  # nothing written


@pytest.mark.parametrize("encode, expected", [
    (lambda text: text.replace('"mass_kg"', '"split": "training", "split": "heldout", "mass_kg"').encode(),
     r"trials\.json: objects\.box_3cm\.split: the key is given twice in one object; fix: keep one of them"),
    (lambda text: text.encode("utf-16"), r"trials\.json: not UTF-8 text \(it starts with a UTF-16 byte order mark\): "
                                         r"byte 0 cannot be decoded; fix: save the trials file as UTF-8"),
    (lambda text: text.replace("box_3cm", "boîte").encode("latin-1"), r"trials\.json: not UTF-8 text: byte \d+ "
                                                                       r"cannot be decoded; fix: save the trials"),
], ids=["duplicate key", "UTF-16", "Latin-1"])
def test_a_file_the_import_cannot_read_unambiguously_is_refused(own_trials, tmp_path, encode, expected):
    source, _ = own_trials(tmp_path / "lab")
    source.write_bytes(encode(source.read_text()))
    with pytest.raises(OwnDataError, match=expected):
        import_trials(source, tmp_path / "own")
    assert not (tmp_path / "own").exists()


def test_a_mesh_with_a_hole_is_refused_and_every_problem_is_listed_at_once(own_trials, tmp_path):
    source, doc = own_trials(tmp_path / "lab")
    box = trimesh.creation.box(extents=[0.03, 0.03, 0.03])
    box.update_faces(np.arange(len(box.faces)) != 0)
    box.export(source.parent / "meshes" / "box_3cm.stl")
    doc["trials"][3]["success"] = "yes"
    doc["trials"][7]["gripper"] = "franka"
    source.write_text(json.dumps(doc))
    with pytest.raises(OwnDataError) as error:
        import_trials(source, tmp_path / "own")
    message = str(error.value)
    assert message.startswith("3 problem(s)")
    assert "objects.box_3cm.mesh: " in message and "not watertight" in message and "fix: close the holes" in message
    assert "trials[3].success" in message and "trials[7].gripper" in message


def test_a_mesh_with_a_hole_is_imported_repaired_with_repair_and_the_source_file_is_unchanged(own_trials, tmp_path,
                                                                                              capsys):
    source, _ = own_trials(tmp_path / "lab")
    mesh_file = source.parent / "meshes" / "box_3cm.stl"
    box = trimesh.creation.box(extents=[0.03, 0.03, 0.03])
    box.update_faces(np.arange(len(box.faces)) != 0)
    box.export(mesh_file)
    original = mesh_file.read_bytes()
    dest = tmp_path / "own"
    with pytest.raises(OwnDataError, match=r"objects\.box_3cm\.mesh: .*not watertight.*--repair on .*`data import`"
                       ) as error:
        import_trials(source, dest)
    assert str(mesh_file) in str(error.value)
    assert not dest.exists()

    assert main(["data", "import", str(source), str(dest), "--repair"]) == 0
    err = capsys.readouterr().err
    assert f"--repair: {mesh_file.resolve()}: filled 1 hole(s)" in err and "volume 27 -> 27 cm^3" in err
    written = trimesh.load(dest / "object_meshes" / "box_3cm.obj", process=False, force="mesh")
    written.merge_vertices()
    assert written.is_watertight and written.is_winding_consistent
    assert written.volume == pytest.approx(0.03**3, rel=1e-6)
    assert mesh_file.read_bytes() == original  # the user's file is only read
    record = json.loads((dest / MANIFEST).read_text())["objects"]["box_3cm"]["mesh_repair"]
    assert record["holes_filled"] == 1 and record["volume_after_m3"] == pytest.approx(0.03**3, rel=1e-6)
    assert record["summary"].startswith("filled 1 hole(s)")
    assert load_physical_grasps(dest, "box_3cm").robustness.tolist() == ROBUST


@pytest.mark.parametrize("vertices, faces, reason", [
    ([[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0], [0.03, 0.03, 0]], [[0, 1, 2], [1, 3, 2]],
     r"a piece of 2 faces .* could not be closed: MeshFix found no closed surface for it"),
    ([[0, 0, 0], [0.01, 0, 0], [0.02, 0, 0], [0.03, 0, 0]], [[0, 1, 2], [1, 2, 3], [0, 2, 3]],
     r"every face has zero area; fix: export the solid object"),
], ids=["flat sheet", "line"])
def test_a_mesh_the_repair_cannot_fix_is_refused_and_nothing_is_written(own_trials, tmp_path, vertices, faces,
                                                                        reason):
    source, _ = own_trials(tmp_path / "lab")
    mesh_file = source.parent / "meshes" / "box_3cm.stl"
    trimesh.Trimesh(vertices, faces, process=False).export(mesh_file)
    dest = tmp_path / "own"
    with pytest.raises(OwnDataError, match=rf"objects\.box_3cm\.mesh: {re.escape(str(mesh_file))}: {reason}"):
        import_trials(source, dest, repair=True)
    assert not dest.exists()


def test_the_import_never_touches_files_it_did_not_create(own_trials, tmp_path):
    source, doc = own_trials(tmp_path / "lab")
    foreign = tmp_path / "someone"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(OwnDataError, match="not empty and not made by `ipcgrasp data import`"):
        import_trials(source, foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]

    dest = tmp_path / "own"
    import_trials(source, dest)
    (dest / "notes.txt").write_text("mine")  # the user's file beside an import
    doc["objects"]["box_b"] = dict(doc["objects"]["box_3cm"], split="training")
    for trial in doc["trials"][:4]:
        trial["object"] = "box_b"
    for trial in doc["trials"][4:]:
        trial["grasp"] += 10
    source.write_text(json.dumps(doc))
    manifest = import_trials(source, dest)  # again, into its own output: replaces what it made
    assert list_objects(dest) == ["box_3cm", "box_b"]
    assert manifest["objects"]["box_3cm"]["grasp_ids"] == [12, 13, 14, 15]
    assert (dest / "notes.txt").read_text() == "mine"
    del doc["objects"]["box_3cm"]
    doc["trials"] = doc["trials"][:4]
    doc["objects"]["box_b"]["split"] = "heldout"
    source.write_text(json.dumps(doc))
    import_trials(source, dest)  # box_3cm's files were made by an import: removed with it
    assert list_objects(dest) == ["box_b"] and not (dest / "object_meshes" / "box_3cm.obj").exists()
    (dest / "phys_grasps_json" / "box_c.json").write_text("[]")  # the user's file where an import would write
    doc["objects"]["box_c"] = doc["objects"].pop("box_b")
    for trial in doc["trials"]:
        trial["object"] = "box_c"
    source.write_text(json.dumps(doc))
    with pytest.raises(OwnDataError, match=r"phys_grasps_json/box_c\.json already exist\(s\) and no earlier import"):
        import_trials(source, dest)
    assert (dest / "phys_grasps_json" / "box_c.json").read_text() == "[]"


@pytest.mark.parametrize("entry", ["../victim.txt", "ABSOLUTE", "object_meshes/../../victim.txt",
                                   "notes.txt", "object_meshes/"])
def test_a_crafted_manifest_cannot_make_the_import_delete_anything_it_names(own_trials, tmp_path, capsys, entry):
    """A DEST holding a crafted ipcgrasp_import.json: the import refuses it, naming the entry, and
    deletes nothing, neither outside DEST nor inside it."""
    source, _ = own_trials(tmp_path / "lab")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    absolute = tmp_path / "elsewhere" / "file.txt"
    absolute.parent.mkdir()
    absolute.write_text("mine too")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "notes.txt").write_text("the user's")
    listed = str(absolute) if entry == "ABSOLUTE" else entry
    (dest / MANIFEST).write_text(json.dumps({"files": [listed, "objects.yaml"]}))
    assert main(["data", "import", str(source), str(dest)]) == 2
    err = capsys.readouterr().err
    assert MANIFEST in err and repr(listed) in err and "fix:" in err
    assert victim.read_text() == "mine" and absolute.read_text() == "mine too"
    assert (dest / "notes.txt").read_text() == "the user's"
    assert sorted(p.name for p in dest.iterdir()) == sorted(["notes.txt", MANIFEST])


def test_the_import_neither_writes_nor_deletes_through_a_link_out_of_its_directory(own_trials, tmp_path):
    source, _ = own_trials(tmp_path / "lab")
    dest = tmp_path / "own"
    import_trials(source, dest)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "box_3cm.obj").write_text("not a mesh of ours")
    mesh_dir = dest / "object_meshes"
    for f in mesh_dir.iterdir():
        f.unlink()
    mesh_dir.rmdir()
    mesh_dir.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OwnDataError, match="resolves outside the directory"):
        import_trials(source, dest)
    assert (outside / "box_3cm.obj").read_text() == "not a mesh of ours"


def test_the_gripper_names_come_from_one_hook():
    assert known_grippers() == tuple(shipped_grippers()) and "yumi" in known_grippers()


def test_cli_import_and_objects_marks_the_objects_with_local_data(own_trials, tmp_path, capsys):
    source, doc = own_trials(tmp_path / "lab")
    dest = tmp_path / "own"
    assert main(["data", "import", str(source), str(dest)]) == 0
    assert "box_3cm: 6 grasp(s) x 2 trial(s), 3 g, heldout" in capsys.readouterr().out
    assert main(["objects", "--registry", str(dest / "objects.yaml"), "--data", str(dest)]) == 0
    out = capsys.readouterr().out
    assert "box_3cm" in out and "mesh + physical grasps" in out
    assert main(["objects", "--data", str(dest)]) == 0  # the shipped registry: no REACH object is here
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("cube_3cm")]
    assert lines and lines[0].rstrip().endswith("-")
    doc["trials"][0]["success"] = 3
    source.write_text(json.dumps(doc))
    assert main(["data", "import", str(source), str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ipcgrasp: error: 1 problem(s)") and "\n  " in err  # one problem per line


def test_the_study_refuses_a_gripper_other_than_the_one_the_trials_were_recorded_with(own_trials, tmp_path):
    from ipcgrasp.study.config import ConfigError, check_data_gripper

    source, doc = own_trials(tmp_path / "lab")
    for trial in doc["trials"]:
        trial["gripper"] = "franka_hand"
    source.write_text(json.dumps(doc))
    dest = tmp_path / "own"
    import_trials(source, dest)
    check_data_gripper({"gripper": "franka_hand"}, dest)
    with pytest.raises(ConfigError, match=r"recorded with 'franka_hand'.*fix: set gripper: franka_hand"):
        check_data_gripper({"gripper": "yumi"}, dest)
    check_data_gripper({"gripper": "yumi"}, resolve_data_dir())  # REACH data: no manifest, nothing to check


def test_a_gripper_description_file_is_imported_as_simulate_and_the_study_take_it(own_trials, tmp_path, capsys):
    """A trial's gripper may be a description file (relative to the trials file), as `simulate
    --gripper FILE` and the study's `gripper: FILE` take it; the manifest keeps its name and path,
    the printed study command sets it, and the study's check accepts that file."""
    import shlex

    from ipcgrasp.grasp.description import load_description
    from ipcgrasp.study.config import ConfigError, check_data_gripper

    source, doc = own_trials(tmp_path / "lab")
    description = (Path(str(shipped_grippers()["franka_hand"].path))).read_text().replace("name: franka_hand",
                                                                                           "name: lab_hand")
    (tmp_path / "lab" / "grippers").mkdir()
    (tmp_path / "lab" / "grippers" / "lab_hand.yaml").write_text(description)
    for trial in doc["trials"]:
        trial["gripper"] = "grippers/lab_hand.yaml"
    source.write_text(json.dumps(doc))
    dest = tmp_path / "own"
    assert main(["data", "import", str(source), str(dest)]) == 0
    out = capsys.readouterr().out
    gripper_file = str((tmp_path / "lab" / "grippers" / "lab_hand.yaml").resolve())
    manifest = json.loads((dest / MANIFEST).read_text())
    assert manifest["gripper"] == "lab_hand" and manifest["gripper_file"] == gripper_file
    assert {r["gripper"] for r in json.loads((dest / "phys_grasps_json" / "box_3cm.json").read_text())} == {"lab_hand"}
    assert load_description(gripper_file).name == "lab_hand"
    command = shlex.split(out.splitlines()[-1])
    assert f"gripper={gripper_file}" in command and "evaluation={models: []}" in command
    check_data_gripper({"gripper": gripper_file}, dest)
    with pytest.raises(ConfigError, match=rf"recorded with 'lab_hand'.*fix: set gripper: {gripper_file}"):
        check_data_gripper({"gripper": "franka_hand"}, dest)
    from ipcgrasp.data.recorded import other_gripper_warning

    assert other_gripper_warning(dest, "box_3cm", "lab_hand") is None
    warning = other_gripper_warning(dest, "box_3cm", "yumi")  # what simulate --gripper yumi on this data warns
    assert "recorded with the lab_hand, but --gripper is yumi" in str(warning)
    assert f"fix: --gripper {gripper_file}," in str(warning)


def test_a_gripper_file_that_does_not_load_is_a_problem_of_its_trial(own_trials, tmp_path):
    source, doc = own_trials(tmp_path / "lab")
    doc["trials"][2]["gripper"] = "grippers/missing.yaml"
    source.write_text(json.dumps(doc))
    with pytest.raises(OwnDataError, match=r"trials\[2\]\.gripper: .*missing\.yaml: no such gripper description file"):
        import_trials(source, tmp_path / "own")


def test_the_printed_study_command_names_only_what_differs_from_own_data_example(tmp_path):
    from ipcgrasp.data.own import study_command

    repo = tmp_path / "repo"
    plain = "./run.sh study --configfile config/own_data_example.yaml"
    assert study_command({"gripper": "yumi"}, repo / "resources" / "own_data", repo) == plain
    assert study_command({"gripper": "yumi"}, tmp_path / "my data", repo) == (
        f"{plain} --config 'data_dir={tmp_path}/my data' 'registry={tmp_path}/my data/objects.yaml'")
    assert study_command({"gripper": "franka_hand"}, repo / "resources" / "own_data", repo) == (
        f"{plain} --config gripper=franka_hand 'evaluation={{models: []}}'")
