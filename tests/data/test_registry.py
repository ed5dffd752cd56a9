import time

import pytest

from ipcgrasp.data.registry import RegistryError, load_registry, object_info

PAPER_MASSES_G = {
    "bar_clamp": 18.5, "book": 34.8, "bowl": 15.7, "cat": 9.9, "cube_3cm": 3.0, "endstop_holder": 16.3,
    "engine_part": 28.6, "fan_extruder": 7.4, "gearbox": 7.4, "large_marker": 3.2, "mount1": 10.4,
    "mug": 20.2, "nozzle": 6.3, "part1": 6.8, "part3": 13.6, "pawn": 18.6, "pear": 6.5,
    "pipe_connector": 23.5, "sardines": 11.2, "sulfur_neutron": 7.0, "vase": 13.1, "yoda": 20.4,
}


def test_default_registry_has_all_reach_objects_in_kilograms():
    registry = load_registry()
    assert set(registry) == set(PAPER_MASSES_G)
    for name, grams in PAPER_MASSES_G.items():
        assert registry[name].mass == pytest.approx(grams / 1000.0)


def test_default_registry_has_the_paper_split():
    registry = load_registry()
    assert {n for n, i in registry.items() if i.split == "training"} == {"cat", "pear", "vase"}


def test_unknown_object_names_the_known_ones():
    with pytest.raises(RegistryError, match="unknown object 'teapot'.*cube_3cm"):
        object_info(load_registry(), "teapot")


@pytest.mark.parametrize("body, field", [
    ("objects:\n  cube: {mass_g: -1, split: training}\n", "objects.cube.mass_g"),
    ("objects:\n  cube: {mass_g: 3, split: test}\n", "objects.cube.split"),
    ("things: []\n", "top-level mapping"),
])
def test_malformed_registry_names_file_and_field(tmp_path, body, field):
    path = tmp_path / "objects.yaml"
    path.write_text(body)
    with pytest.raises(RegistryError) as err:
        load_registry(path)
    assert str(path) in str(err.value) and field in str(err.value)


def test_missing_registry_names_the_path(tmp_path):
    with pytest.raises(RegistryError, match="not found"):
        load_registry(tmp_path / "nope.yaml")


def test_a_registry_key_given_twice_is_refused(tmp_path):
    path = tmp_path / "objects.yaml"
    path.write_text("objects:\n  cube: {mass_g: 3, split: training}\n  cube: {mass_g: 30, split: heldout}\n")
    with pytest.raises(RegistryError, match=rf"^{path}: objects\.cube: the key is given twice in one mapping \(again at "
                                            r"line 3\); fix: keep one of them"):
        load_registry(path)


def test_a_registry_alias_bomb_fails_fast(tmp_path):
    path = tmp_path / "objects.yaml"
    keys = "abcdefghij"
    laughs = ["l0: &l0 {" + ", ".join(f"{k}: lol" for k in keys) + "}"]
    laughs += [f"l{i}: &l{i} {{" + ", ".join(f"{k}: *l{i - 1}" for k in keys) + "}" for i in range(1, 9)]
    path.write_text("\n".join(laughs) + "\nobjects:\n  cube: {mass_g: 3, split: training, source: *l8}\n")
    started = time.perf_counter()
    with pytest.raises(RegistryError, match=rf"^{path}: l3\.\w: the aliases .* fix: write the values out"):
        load_registry(path)
    assert time.perf_counter() - started < 0.1
