import json
import re
import shutil

import numpy as np
import pytest

from ipcgrasp.data import (
    DataFormatError,
    MissingDataError,
    PhysicalGrasps,
    list_objects,
    load_object,
    load_physical_grasps,
    object_mesh_path,
)
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.grasp.pose import nearest_rotation
from ipcgrasp.data.registry import RegistryError

# DATA.md section 2
CUBE_ROBUSTNESS = [1, .8, .2, 1, .8, 1, .2, 1, .4, 1, .8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1]


@pytest.fixture(scope="module")
def data_dir():
    return resolve_data_dir()


@pytest.fixture(scope="module")
def cube(data_dir) -> PhysicalGrasps:
    return load_physical_grasps(data_dir, "cube_3cm")


@pytest.fixture(scope="module")
def cube_records(data_dir):
    return json.loads((data_dir / "phys_grasps_json" / "cube_3cm.json").read_text())


def test_cube_grasps_are_25_by_5_with_the_physical_labels(cube, cube_records):
    assert cube.object_name == "cube_3cm"
    assert (cube.n_grasps, cube.n_trials) == (25, 5)
    assert cube.grasp_poses.shape == cube.object_poses.shape == (25, 4, 4)
    assert cube.grasp_poses.dtype == cube.object_poses.dtype == np.float64
    assert cube.results.shape == (25, 5) and cube.results.dtype == bool
    assert cube.results.sum() == 101
    np.testing.assert_allclose(cube.robustness, CUBE_ROBUSTNESS)
    for index, record in enumerate(cube_records):
        g, k = divmod(index, 5)
        assert cube.results[g, k] == record["result"]
        assert cube.stable_poses[g] == record["stable_pose"]
        np.testing.assert_array_equal(cube.grasp_poses[g], record["grasp"])


def test_repr_is_one_short_line_of_counts_without_arrays(cube):
    text = repr(cube)
    assert text == ("PhysicalGrasps(object='cube_3cm', grasps=25, trials=5, successes=101/125, "
                    "mean robustness=0.81)")
    assert "\n" not in text and "array" not in text


def test_object_rotations_are_reorthonormalised_near_the_record(cube, cube_records):
    for g in range(25):
        recorded = np.array(cube_records[5 * g]["pose"])
        pose = cube.object_poses[g]
        rotation = pose[:3, :3]
        np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-12)
        assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)
        assert np.abs(rotation - recorded[:3, :3]).max() <= 0.01  # the file rounds to 0.01
        np.testing.assert_array_equal(pose[:3, 3], recorded[:3, 3])
        np.testing.assert_array_equal(pose[3], [0, 0, 0, 1])


def test_cube_grasps_are_top_down_above_the_table(cube):
    gripper_z = cube.grasp_poses[:, :3, 2]
    assert np.all(gripper_z[:, 2] < -0.99)
    heights = cube.grasp_poses[:, 2, 3]
    assert np.all((heights > 0.175) & (heights < 0.202))


def test_nearest_rotation_recovers_a_rotation_from_a_perturbed_copy():
    rng = np.random.default_rng(0)
    for _ in range(50):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        q *= np.sign(np.linalg.det(q))
        noisy = q + rng.uniform(-0.005, 0.005, (3, 3))
        r = nearest_rotation(noisy)
        np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
        assert np.linalg.det(r) == pytest.approx(1.0)
        # closest in Frobenius norm: at least as close as the rotation we started from
        assert np.linalg.norm(r - noisy) <= np.linalg.norm(q - noisy) + 1e-12
        np.testing.assert_allclose(nearest_rotation(q), q, atol=1e-12)


def test_objects_meshes_and_masses(data_dir, tmp_path):
    assert "cube_3cm" in list_objects(data_dir)
    assert object_mesh_path(data_dir, "cube_3cm") == data_dir / "object_meshes" / "cube_3cm.obj"
    mesh, mass = load_object(data_dir, "cube_3cm")
    assert mesh.is_file() and mass == pytest.approx(0.003)
    registry = tmp_path / "objects.yaml"
    registry.write_text("objects:\n  cube_3cm: {mass_g: 4.5, split: training}\n")
    assert load_object(data_dir, "cube_3cm", registry)[1] == pytest.approx(0.0045)
    with pytest.raises(RegistryError, match="unknown object 'cube_3cm'"):
        load_object(data_dir, "cube_3cm", {})


@pytest.fixture
def copy_dir(data_dir, tmp_path):
    """A copy of the cube's REACH files; returns (directory, records, write(records))."""
    root = tmp_path / "reach"
    (root / "object_meshes").mkdir(parents=True)
    (root / "phys_grasps_json").mkdir()
    shutil.copy(data_dir / "object_meshes" / "cube_3cm.obj", root / "object_meshes")
    path = root / "phys_grasps_json" / "cube_3cm.json"
    records = json.loads((data_dir / "phys_grasps_json" / "cube_3cm.json").read_text())

    def write(recs):
        path.write_text(json.dumps(recs))
        return path

    write(records)
    return root, records, write


def test_tf_and_qs_fields_are_not_used(copy_dir, cube):
    root, records, write = copy_dir
    for record in records:
        for field in ("tf", "qs_orig", "qs_cons", "qs_agg"):
            del record[field]
    write(records)
    loaded = load_physical_grasps(root, "cube_3cm")
    for field in ("grasp_poses", "object_poses", "stable_poses", "results"):
        np.testing.assert_array_equal(getattr(loaded, field), getattr(cube, field))


def test_list_objects_needs_both_a_mesh_and_grasps(copy_dir):
    root, _, _ = copy_dir
    (root / "object_meshes" / "teapot.obj").write_text("")
    (root / "phys_grasps_json" / "mug.json").write_text("[]")
    assert list_objects(root) == ["cube_3cm"]


def test_missing_files_are_named(copy_dir, tmp_path):
    root, _, _ = copy_dir
    with pytest.raises(MissingDataError, match=r"teapot\.obj.*cube_3cm") as err:
        object_mesh_path(root, "teapot")
    assert isinstance(err.value, DataFormatError) and isinstance(err.value, FileNotFoundError)
    with pytest.raises(MissingDataError, match=r"phys_grasps_json/teapot\.json.*cube_3cm"):
        load_physical_grasps(root, "teapot")
    with pytest.raises(MissingDataError, match="object_meshes"):
        list_objects(tmp_path / "empty")
    with pytest.raises(MissingDataError, match=r"teapot\.obj"):
        load_object(root, "teapot", {})


def set_field(index, field, value):
    def mutate(records):
        records[index][field] = value
    return mutate


def scaled_rotation(index, field, factor):
    def mutate(records):
        m = np.array(records[index][field])
        m[:3, :3] *= factor
        records[index][field] = m.tolist()
    return mutate


def reflected(index, field):
    def mutate(records):
        m = np.array(records[index][field])
        m[:3, 0] *= -1
        records[index][field] = m.tolist()
    return mutate


def delete_field(index, field):
    def mutate(records):
        del records[index][field]
    return mutate


def shifted_grasp(index):
    def mutate(records):
        m = np.array(records[index]["grasp"])
        m[0, 3] += 1e-3
        records[index]["grasp"] = m.tolist()
    return mutate


def drop_record(index):
    def mutate(records):
        del records[index]
    return mutate


IDENTITY = np.eye(4).tolist()

MALFORMED = {
    "missing result": (delete_field(7, "result"), "record 7, field 'result'", "field missing"),
    "missing grasp": (delete_field(0, "grasp"), "record 0, field 'grasp'", "field missing"),
    "grasp 3x4": (set_field(3, "grasp", IDENTITY[:3]), "record 3, field 'grasp'", r"4x4.*\(3, 4\)"),
    "ragged pose": (set_field(3, "pose", [[1, 0], [0, 1, 0, 0]]), "record 3, field 'pose'", "ragged"),
    "text in pose": (set_field(3, "pose", "identity"), "record 3, field 'pose'", "4x4"),
    "nan in grasp": (set_field(4, "grasp", [[np.nan, 0, 0, 0]] + IDENTITY[1:]), "record 4, field 'grasp'",
                     "non-finite"),
    "scaled grasp": (scaled_rotation(12, "grasp", 1.05), "record 12, field 'grasp'", "rigid.*R\\^T R - I"),
    "scaled pose": (scaled_rotation(12, "pose", 1.02), "record 12, field 'pose'", "rigid"),
    "reflected pose": (reflected(20, "pose"), "record 20, field 'pose'", "det"),
    "bad last row": (set_field(9, "pose", IDENTITY[:3] + [[0, 0, 1, 1]]), "record 9, field 'pose'", "last row"),
    "integer result": (set_field(6, "result", 1), "record 6, field 'result'", "true or false"),
    "boolean trial": (set_field(6, "trial", True), "record 6, field 'trial'", "integer"),
    "negative stable pose": (set_field(6, "stable_pose", -1), "record 6, field 'stable_pose'", "integer"),
    "other object": (set_field(2, "obj", "mug"), "record 2, field 'obj'", "'mug'"),
    "duplicate trial": (set_field(6, "trial", 0), "record 6, field 'trial'", "twice.*record 5"),
    "missing trial": (drop_record(13), "field 'trial'", r"attempt 2 has trials \[0, 1, 2, 4\]"),
    "gap in attempts": (lambda recs: [r.update(attempt=r["attempt"] + 1) for r in recs if r["attempt"] >= 10],
                        "field 'attempt'", r"missing attempt\(s\) \[10\]"),
    "grasp differs in a trial": (shifted_grasp(17), "record 17, field 'grasp'", "different grasp pose.*record 15"),
    "pose differs in a trial": (set_field(18, "pose", IDENTITY), "record 18, field 'pose'", "different object pose"),
    "stable pose differs": (set_field(19, "stable_pose", 5), "record 19, field 'stable_pose'", "stable pose 5"),
    "null result": (set_field(0, "result", None), "record 0, field 'result'", "None"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_records_name_file_record_and_field(copy_dir, case):
    root, records, write = copy_dir
    mutate, where, problem = MALFORMED[case]
    mutate(records)
    path = write(records)
    with pytest.raises(DataFormatError) as err:
        load_physical_grasps(root, "cube_3cm")
    message = str(err.value)
    assert str(path) in message
    assert where in message, message
    assert re.search(problem, message), message


@pytest.mark.parametrize("content, problem", [
    ("[{]", "not valid JSON"),
    ("{}", "non-empty JSON list"),
    ("[]", "non-empty JSON list"),
    ("[1]", "record 0: expected a JSON object"),
])
def test_malformed_files(copy_dir, content, problem):
    root, _, _ = copy_dir
    path = root / "phys_grasps_json" / "cube_3cm.json"
    path.write_text(content)
    with pytest.raises(DataFormatError, match=problem) as err:
        load_physical_grasps(root, "cube_3cm")
    assert str(path) in str(err.value)


def test_rounded_rotations_within_tolerance_are_accepted(copy_dir):
    root, records, write = copy_dir
    for record in records:
        record["grasp"] = np.round(np.array(record["grasp"]), 2).tolist()
    write(records)
    loaded = load_physical_grasps(root, "cube_3cm")
    assert loaded.results.sum() == 101


def test_the_known_rounding_of_the_reach_file_is_repaired_without_a_warning(data_dir, recwarn):
    """The REACH file's rotations are stored to two decimals (docs/data.md); the loader repairs
    them silently, so commands on the bundled data print no PoseRoundingWarning."""
    from ipcgrasp.grasp.pose import PoseRoundingWarning, orthonormality_error

    loaded = load_physical_grasps(data_dir, "cube_3cm")
    assert not [w for w in recwarn if issubclass(w.category, PoseRoundingWarning)]
    assert max(orthonormality_error(pose[:3, :3]) for pose in loaded.object_poses) < 1e-12


def test_other_rounded_rotations_are_warned_about_once_per_file(copy_dir):
    """A file of unknown origin with rounded rotations (here the REACH records, written anew)
    gets one PoseRoundingWarning naming the file and the number of poses."""
    from ipcgrasp.grasp.pose import PoseRoundingWarning

    root, records, write = copy_dir
    path = write(records[:-5])
    with pytest.warns(PoseRoundingWarning) as caught:
        load_physical_grasps(root, "cube_3cm")
    rounding = [w for w in caught if issubclass(w.category, PoseRoundingWarning)]
    assert len(rounding) == 1 and str(path) in str(rounding[0].message)
    assert "pose rotations rounded" in str(rounding[0].message)
