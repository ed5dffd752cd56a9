"""Grasp records: the shipped JSON schema, what it accepts and rejects, the CSV index, and the
labelling run (resuming, failed trials, settings checks) with an instant stand-in simulator."""

import copy
import json
import math
import os
import re
import subprocess
import sys

import jsonschema
import numpy as np
import pandas as pd
import pytest
import trimesh

import ipcgrasp.grasp.simulate
from ipcgrasp import SimParams
from ipcgrasp.dataset import records as records_module
from ipcgrasp.dataset.antipodal import SamplerSettings, sample_antipodal_grasps
from ipcgrasp.dataset.records import (
    RecordError,
    generate_dataset,
    grasp_record,
    index_table,
    load_schema,
    read_records,
    validate_record,
)
from ipcgrasp.grasp.description import load_description
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.perturbation import trial_seed

NAN = float("nan")


@pytest.fixture(scope="module")
def box():
    return GraspObject.from_mesh(trimesh.creation.box([0.03, 0.03, 0.03]), 0.05, "box")


@pytest.fixture(scope="module")
def sampling(box):
    return sample_antipodal_grasps(box, 3, seed=0)


def _trials():
    held = GraspResult(success=True, reason="held after lift", seed=11, close_time=0.4, psi=(1e-5, 2e-5),
                       close_forces=(20.0, 22.0), start_opening=0.034, close_opening=0.0301, lift_height=0.02,
                       critical_mass=1.25, critical_mass_force=21.0, critical_mass_reason="slipped at 1.25 kg")
    capped = GraspResult(success=True, reason="held after lift", seed=12, close_time=0.42, psi=(1e-5, 1e-5),
                         close_forces=(24.0, 26.0), start_opening=0.034, close_opening=0.0299, lift_height=0.02,
                         critical_mass=math.inf, critical_mass_force=25.0,
                         critical_mass_reason="no slip up to max_mass = 5 kg")
    slipped = GraspResult(success=False, failure_mode="slip", reason="pad 0 lost the object", seed=13,
                          start_opening=0.035, critical_mass_reason="the trial did not hold the object")
    return [held, capped, slipped]


@pytest.fixture
def record(box, sampling):
    return grasp_record(0, box, sampling.object_pose, sampling.candidates[0], Gripper.yumi(), _trials(),
                        SimParams(critical_mass=True), seed=7, mu=0.4, image="grasp_0000.png", mesh="box.obj")


def test_the_schema_is_valid_and_ships_with_the_package():
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == records_module.SCHEMA_VERSION


def test_a_record_of_simulated_trials_validates_and_survives_strict_json(record, sampling):
    validate_record(record)
    text = json.dumps(record, allow_nan=False)  # no NaN or infinity leaks into the file
    again = json.loads(text)
    validate_record(again)
    trials = again["trials"]
    assert [t["critical_mass"] for t in trials] == [1.25, None, None]
    assert [t["critical_mass_capped"] for t in trials] == [False, True, False]
    assert [t["close_forces"] for t in trials] == [[20.0, 22.0], [24.0, 26.0], [None, None]]
    assert [t["failure_mode"] for t in trials] == [None, None, "slip"]
    assert again["robustness"] == pytest.approx(2 / 3)
    assert again["params"] == SimParams(critical_mass=True).to_dict()
    assert np.array_equal(again["gripper"]["pose"], sampling.candidates[0].grasp_pose)
    assert np.array_equal(again["object"]["pose"], sampling.object_pose)


def _set(path, value):
    def mutate(record):
        *parents, last = path
        target = record
        for key in parents:
            target = target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
    return mutate


BAD = {
    "missing robustness": (_set(["robustness"], KeyError), "(top level)"),
    "unknown field": (_set(["comment"], "hi"), "(top level)"),
    "success not boolean": (_set(["trials", 0, "success"], "yes"), "trials/0/success"),
    "unknown failure mode": (_set(["trials", 2, "failure_mode"], "dropped"), "trials/2/failure_mode"),
    "success with a failure mode": (_set(["trials", 0, "failure_mode"], "slip"), "trials/0/failure_mode"),
    "failure without a mode": (_set(["trials", 2, "failure_mode"], None), "trials/2/failure_mode"),
    "capped with a mass": (_set(["trials", 1, "critical_mass"], 5.0), "trials/1/critical_mass"),
    "negative mass": (_set(["object", "mass"], -0.05), "object/mass"),
    "pose last row": (_set(["gripper", "pose", 3], [0, 0, 1, 1]), "gripper/pose/3"),
    "pose not 4x4": (_set(["object", "pose", 0], [1, 0, 0]), "object/pose/0"),
    "one close force": (_set(["trials", 0, "close_forces"], [20.0]), "trials/0/close_forces"),
    "image in another directory": (_set(["image"], "../grasp.png"), "image"),
    "robustness above 1": (_set(["robustness"], 1.5), "robustness"),
    "robustness not the mean success": (_set(["robustness"], 1.0), "robustness"),
    "pose not a rotation": (_set(["gripper", "pose", 0], [2.0, 0.0, 0.0, 0.0]), "gripper/pose"),
    "bad hash": (_set(["object", "mesh_sha256"], "abc"), "object/mesh_sha256"),
}


@pytest.mark.parametrize("mutation, field", BAD.values(), ids=BAD.keys())
def test_bad_records_are_rejected_naming_the_field(record, mutation, field):
    bad = copy.deepcopy(record)
    mutation(bad)
    with pytest.raises(RecordError, match=re.escape(f"grasp_0042.json: field '{field}")):
        validate_record(bad, "grasp_0042.json")


def test_the_index_summarises_each_record(record):
    other = copy.deepcopy(record)
    other["index"], other["image"] = 3, None
    other["trials"] = other["trials"][2:]
    other["robustness"] = 0.0
    table = index_table([other, record])
    assert list(table["index"]) == [0, 3]
    assert list(table["record"]) == ["grasp_0000.json", "grasp_0003.json"]
    assert list(table["image"]) == ["grasp_0000.png", ""]
    assert list(table["successes"]) == [2, 0] and list(table["trials"]) == [3, 1]
    assert list(table["failure_modes"]) == ["slip:1", "slip:1"]
    assert table["close_force_N"][0] == pytest.approx((20 + 22 + 24 + 26) / 4)
    assert table["close_opening_m"][0] == pytest.approx((0.0301 + 0.0299) / 2)
    assert table["critical_mass_kg"][0] == pytest.approx(1.25)
    assert list(table["critical_mass_capped"]) == [1, 0]
    assert math.isnan(table["close_force_N"][1]) and math.isnan(table["critical_mass_kg"][1])


class FakeSimulator:
    """Instant stand-in for simulate_grasp: succeeds on even seeds, records its calls, and raises
    `error` on call number `fail_at` (1-based)."""

    def __init__(self, fail_at=None, error=None):
        self.calls, self.fail_at, self.error = [], fail_at, error

    def __call__(self, obj, object_pose, grasp_pose, params=None, seed=0, record=(), gripper=None):
        self.calls.append({"seed": seed, "grasp_pose": grasp_pose, "record_frames": "frames" in record})
        if len(self.calls) == self.fail_at:
            raise self.error
        success = seed % 2 == 0
        return GraspResult(success=success, failure_mode=None if success else "slip", seed=seed,
                           reason="held after lift" if success else "pad 1 lost the object",
                           close_forces=(20.0, 21.0), close_opening=0.03, start_opening=0.034, close_time=0.4)


def _generate(box, out, monkeypatch, fake, **kwargs):
    monkeypatch.setattr(ipcgrasp.grasp.simulate, "simulate_grasp", fake)
    options = {"n": 3, "n_trials": 2, "seed": 4, "images": False, **kwargs}
    return generate_dataset(box, out, options.pop("n"), **options)


def test_generate_writes_one_record_per_grasp_and_a_rerun_simulates_nothing(box, tmp_path, monkeypatch):
    fake = FakeSimulator()
    started = []
    generation = _generate(box, tmp_path, monkeypatch, fake, on_start=started.append)
    assert started == [6] and sorted(generation.written) == [0, 1, 2] and generation.skipped == []
    # trial k of grasp i: the study's per-trial seed, on the sampled grasp pose
    sampling = sample_antipodal_grasps(box, 3, seed=4)
    assert [c["seed"] for c in fake.calls] == [trial_seed(4, i, k) for i in range(3) for k in range(2)]
    for call, (i, k) in zip(fake.calls, [(i, k) for i in range(3) for k in range(2)]):
        assert np.array_equal(call["grasp_pose"], sampling.candidates[i].grasp_pose)
    records = read_records(tmp_path)
    assert sorted(records) == [0, 1, 2]
    for i, record in records.items():
        assert [t["seed"] for t in record["trials"]] == [trial_seed(4, i, k) for k in range(2)]
        assert record["robustness"] == np.mean([trial_seed(4, i, k) % 2 == 0 for k in range(2)])
        assert record["image"] is None and record["image_note"]
    index = pd.read_csv(tmp_path / "index.csv")
    assert list(index["index"]) == [0, 1, 2]
    assert list(index["robustness"]) == [records[i]["robustness"] for i in range(3)]

    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    again = _generate(box, tmp_path, monkeypatch, FakeSimulator(fail_at=1, error=AssertionError("simulated")))
    assert again.written == [] and again.skipped == [0, 1, 2]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    more = _generate(box, tmp_path, monkeypatch, fake, n=4)
    assert more.written == [3] and more.skipped == [0, 1, 2]
    assert len(pd.read_csv(tmp_path / "index.csv")) == 4


def test_a_trial_that_raises_is_recorded_with_its_reason_and_the_run_goes_on(box, tmp_path, monkeypatch):
    generation = _generate(box, tmp_path, monkeypatch, FakeSimulator(fail_at=3, error=RuntimeError("boom")))
    assert sorted(generation.written) == [0, 1, 2]
    failed = read_records(tmp_path)[1]["trials"][0]
    assert failed["success"] is False and failed["failure_mode"] == "error"
    assert failed["reason"] == "RuntimeError: boom" and failed["seed"] == trial_seed(4, 1, 0)


def test_an_interrupted_run_keeps_the_finished_records_and_resumes(box, tmp_path, monkeypatch):
    with pytest.raises(KeyboardInterrupt):
        _generate(box, tmp_path, monkeypatch, FakeSimulator(fail_at=4, error=KeyboardInterrupt()))
    assert sorted(p.name for p in tmp_path.glob("grasp_*")) == ["grasp_0000.json"]
    assert list(pd.read_csv(tmp_path / "index.csv")["index"]) == [0]
    fake = FakeSimulator()
    generation = _generate(box, tmp_path, monkeypatch, fake)
    assert generation.skipped == [0] and sorted(generation.written) == [1, 2]
    assert [c["seed"] for c in fake.calls] == [trial_seed(4, i, k) for i in (1, 2) for k in range(2)]


@pytest.mark.parametrize("change, key", [({"seed": 5}, "seed"), ({"n_trials": 3}, "trials"),
                                         ({"params": SimParams(mu=0.5)}, "params.mu")])
def test_a_directory_made_with_other_settings_is_refused(box, tmp_path, monkeypatch, change, key):
    _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=1)
    with pytest.raises(RecordError, match=f"different '{key}'.*new output directory"):
        _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=1, **change)


def test_a_trial_without_frames_leaves_a_note_instead_of_a_picture(box, tmp_path, monkeypatch):
    fake = FakeSimulator()
    _generate(box, tmp_path, monkeypatch, fake, n=1, images=True)
    assert [c["record_frames"] for c in fake.calls] == [True, False]  # only the first trial is pictured
    record = read_records(tmp_path)[0]
    assert record["image"] is None and "recorded no frame" in record["image_note"]
    assert not list(tmp_path.glob("*.png"))


def test_damaged_records_are_reported_by_file(box, tmp_path, monkeypatch):
    _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=2)
    path = tmp_path / "grasp_0001.json"
    record = json.loads(path.read_text())
    record["robustness"] = 0.25
    path.write_text(json.dumps(record))
    with pytest.raises(RecordError, match="grasp_0001.json: field 'robustness'"):
        read_records(tmp_path)
    path.write_text("{ truncated")
    with pytest.raises(RecordError, match="grasp_0001.json: not valid JSON"):
        _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=2)


def test_an_object_without_antipodal_grasps_is_an_error_naming_the_rejections(tmp_path, monkeypatch):
    tetra = trimesh.convex.convex_hull(0.02 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1.0]]))
    obj = GraspObject.from_mesh(tetra, 0.01, "tetra")
    fake = FakeSimulator()
    with pytest.raises(RecordError, match=r"tetra: no antipodal grasp found in 200 attempts .*'friction'"):
        _generate(obj, tmp_path, monkeypatch, fake, n=2, sampler=SamplerSettings(max_attempts=200))
    assert not fake.calls
    assert not list(tmp_path.iterdir())  # nothing that would refuse a retry with other settings


FRANKA = load_description("franka_hand").path.read_text()
EDITS = {  # one value of the description file, as a user edits it under the same gripper name
    "force limit": ("force_limit: 70.0", "force_limit: 25.0"),
    "closing speeds": ("closing_speed: {min: 0.01, max: 0.05}", "closing_speed: {min: 0.02, max: 0.04}"),
    "pad width": ("rectangular: {outline: rectangular, x_min: -0.0085, x_max: 0.0085, width: 0.017",
                  "rectangular: {outline: rectangular, x_min: -0.0085, x_max: 0.0085, width: 0.012"),
}


def _franka_file(folder, edit=None):
    """A copy of the shipped franka_hand description in `folder`, with EDITS[edit] applied."""
    text = FRANKA
    if edit is not None:
        old, new = EDITS[edit]
        assert text.count(old) == 1
        text = text.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "franka_hand.yaml"
    path.write_text(text)
    return path


def test_the_gripper_fingerprint_is_the_description_content_in_any_process(tmp_path):
    shipped = Gripper.from_description("franka_hand").settings_sha256()
    assert re.fullmatch(r"[0-9a-f]{64}", shipped)
    # the same content elsewhere, with other free text and comments: the same gripper
    copy = _franka_file(tmp_path / "copy")
    copy.write_text(copy.read_text().replace("source: Franka Hand datasheet", "source: my notes").replace("# ", "#"))
    assert Gripper.from_description(copy).settings_sha256() == shipped
    program = ("from ipcgrasp.grasp.gripper import Gripper; "
               "print(Gripper.from_description('franka_hand').settings_sha256())")
    other_process = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                                   env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert other_process.stdout.strip() == shipped
    fingerprints = {Gripper.from_description(_franka_file(tmp_path / edit, edit)).settings_sha256() for edit in EDITS}
    assert len(fingerprints) == len(EDITS) and shipped not in fingerprints
    assert Gripper.from_description("franka_hand", "rounded").settings_sha256() != shipped  # the other pad


def test_resuming_is_refused_after_the_gripper_description_changed(box, tmp_path, monkeypatch):
    out = tmp_path / "grasps"
    description = _franka_file(tmp_path / "gripper")
    first = _generate(box, out, monkeypatch, FakeSimulator(), n=1, gripper=Gripper.from_description(description))
    assert first.written == [0]
    recorded = json.loads((out / "dataset.json").read_text())["gripper"]
    assert recorded == {"name": "franka_hand", "pad_kind": "rectangular",
                        "settings_sha256": Gripper.from_description(description).settings_sha256()}
    # the same file read again: the run carries on, nothing simulated again
    fake = FakeSimulator()
    again = _generate(box, out, monkeypatch, fake, n=1, gripper=Gripper.from_description(description))
    assert again.skipped == [0] and again.written == [] and not fake.calls

    for edit in EDITS:
        edited = Gripper.from_description(_franka_file(tmp_path / "gripper", edit))
        assert (edited.name, edited.pad_kind) == ("franka_hand", "rectangular")
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        fake = FakeSimulator()
        refused = (rf"^{out / 'dataset.json'}: the records in {out} were made with different 'gripper.settings_sha256' "
                   r"\('[0-9a-f]{64}', now '[0-9a-f]{64}'\); the gripper description's content .* fix: write into a "
                   "new output directory")
        with pytest.raises(RecordError, match=refused):
            _generate(box, out, monkeypatch, fake, n=1, gripper=edited)
        assert not fake.calls and {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_dataset_without_a_gripper_fingerprint_is_not_resumed(box, tmp_path, monkeypatch):
    _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=1)
    dataset = json.loads((tmp_path / "dataset.json").read_text())
    del dataset["gripper"]["settings_sha256"]  # as written before the field existed
    (tmp_path / "dataset.json").write_text(json.dumps(dataset))
    with pytest.raises(RecordError, match=r"different 'gripper.settings_sha256' \(absent, now '[0-9a-f]{64}'\)"):
        _generate(box, tmp_path, monkeypatch, FakeSimulator(), n=1)


def test_the_gripper_fingerprint_follows_the_content_of_a_pad_mesh_file(tmp_path):
    text = FRANKA.replace("\npads:\n", "\npads:\n  disc: {outline: mesh, mesh: disc.stl, scale: 0.001}\n", 1)

    def fingerprint(folder, radius):
        """The fingerprint of the description `text` in `folder` beside a disc pad (mm) of `radius`."""
        folder.mkdir()
        disc = trimesh.creation.cylinder(radius=radius, height=3.0, sections=24).apply_translation([0.0, 0.0, -1.5])
        disc.export(folder / "disc.stl")
        (folder / "franka_hand.yaml").write_text(text)
        return Gripper.from_description(folder / "franka_hand.yaml", "disc").settings_sha256()

    same = fingerprint(tmp_path / "a", 8.0)
    assert fingerprint(tmp_path / "b", 8.0) == same  # another folder, the same files
    assert fingerprint(tmp_path / "c", 7.0) != same  # the same description, another pad in its mesh file


def test_the_dataset_packages_names_resolve_on_first_use():
    import ipcgrasp.dataset

    assert ipcgrasp.dataset.generate_dataset is generate_dataset
    assert ipcgrasp.dataset.SamplerSettings is SamplerSettings
    assert set(ipcgrasp.dataset.__all__) <= set(dir(ipcgrasp.dataset))
    with pytest.raises(AttributeError, match="no attribute 'shard_path'"):
        ipcgrasp.dataset.shard_path  # noqa: B018
