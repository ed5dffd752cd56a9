import pytest

from ipcgrasp.data import location
from ipcgrasp.data.location import DataNotFoundError, describe_data_dir, resolve_data_dir
from ipcgrasp.data.registry import load_registry


def make_reach(root):
    for sub in ("object_meshes", "phys_grasps_json", "yumi_meshes"):
        (root / sub).mkdir(parents=True)
    (root / "object_meshes" / "cube_3cm.obj").write_text("")
    (root / "phys_grasps_json" / "cube_3cm.json").write_text("[]")
    return root


@pytest.fixture
def no_default_dirs(monkeypatch, tmp_path):
    monkeypatch.setattr(location, "SHARED_REACH", tmp_path / "absent_shared")
    monkeypatch.setattr(location, "RESOURCES_REACH", tmp_path / "absent_resources")


def test_explicit_dir_wins_over_environment(tmp_path, no_default_dirs):
    explicit, env = make_reach(tmp_path / "a"), make_reach(tmp_path / "b")
    assert resolve_data_dir(explicit, {"IPCGRASP_DATA": str(env)}) == explicit.resolve()
    assert resolve_data_dir(None, {"IPCGRASP_DATA": str(env)}) == env.resolve()


def test_falls_back_to_shared_then_resources(tmp_path, monkeypatch):
    shared, resources = tmp_path / "shared", make_reach(tmp_path / "resources")
    monkeypatch.setattr(location, "SHARED_REACH", shared)
    monkeypatch.setattr(location, "RESOURCES_REACH", resources)
    assert resolve_data_dir(None, {}) == resources.resolve()
    make_reach(shared)
    assert resolve_data_dir(None, {}) == shared.resolve()


def test_missing_data_says_where_it_is_published_and_how_to_fetch(no_default_dirs):
    with pytest.raises(DataNotFoundError) as err:
        resolve_data_dir(None, {})
    message = str(err.value)
    assert "BerkeleyAutomation/ipc-graspsim" in message and "ipcgrasp data fetch" in message


def test_a_wrong_explicit_dir_is_an_error_not_a_silent_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr(location, "SHARED_REACH", make_reach(tmp_path / "shared"))
    with pytest.raises(DataNotFoundError, match="typo.*phys_grasps_json"):
        resolve_data_dir(tmp_path / "typo", {})


def test_bundled_data_is_described_with_registry_masses():
    manifest = describe_data_dir(resolve_data_dir(None, {}), load_registry())
    cube = manifest["objects"]["cube_3cm"]
    assert cube == {"mesh": True, "physical_grasps": True, "mass_kg": 0.003, "split": "heldout"}
    assert "round_pad.obj" in manifest["jaw_meshes"]
