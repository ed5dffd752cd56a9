"""The one YAML/JSON reader (`ipcgrasp.documents`): alias bombs fail fast, duplicate keys are
refused, and every error names the file, the key and the fix."""

import time

import pytest

from ipcgrasp.documents import MAX_ALIAS_VALUES, DocumentError, finite_validator, load_json, load_yaml
from ipcgrasp.study.configfiles import main as check_config_files


def alias_bomb(depth: int = 9, mapping: bool = False) -> str:
    """`depth` levels of ten aliases each: 10**depth values once expanded ("billion laughs")."""
    if mapping:
        keys = "abcdefghij"
        lines = ["l0: &l0 {" + ", ".join(f"{k}: lol" for k in keys) + "}"]
        lines += [f"l{i}: &l{i} {{" + ", ".join(f"{k}: *l{i - 1}" for k in keys) + "}" for i in range(1, depth)]
    else:
        lines = ["l0: &l0 [" + ", ".join(["lol"] * 10) + "]"]
        lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


def refused(path, match):
    started = time.perf_counter()
    with pytest.raises(DocumentError, match=match):
        load_yaml(path)
    return time.perf_counter() - started


@pytest.mark.parametrize("mapping", [False, True], ids=["lists", "mappings"])
def test_an_alias_bomb_fails_in_milliseconds_naming_file_key_and_fix(tmp_path, mapping):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(mapping=mapping))
    seconds = refused(path, rf"^{path}: l3[\[.]\w+\]?: the aliases \(\*name\) repeat more than {MAX_ALIAS_VALUES} "
                            r"values .*; fix: write the values out")
    assert seconds < 0.1


def test_a_few_aliases_are_fine(tmp_path):
    path = tmp_path / "shared.yaml"
    path.write_text("base: &base {E: 100000000, mu: 0.4}\nrounded: {<<: *base, mu: 0.5}\nsquare: *base\n")
    assert load_yaml(path) == {"base": {"E": 1e8, "mu": 0.4}, "rounded": {"E": 1e8, "mu": 0.5},
                               "square": {"E": 1e8, "mu": 0.4}}


def test_an_alias_inside_itself_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("sim: &sim {dt: 0.01, again: *sim}\n")
    refused(path, rf"^{path}: sim\.again: an alias refers to a node that contains it .*fix")


@pytest.mark.parametrize("text, key, line", [
    ("seed: 0\ntrials: 5\nseed: 1\n", "seed", 3),
    ("sim:\n  dt: 0.01\n  mu: 0.4\n  dt: 0.02\n", r"sim\.dt", 4),
    ("grid:\n  - {E: 1, E: 2}\n", r"grid\[0\]\.E", 2),
])
def test_a_yaml_key_given_twice_is_refused(tmp_path, text, key, line):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    refused(path, rf"^{path}: {key}: the key is given twice in one mapping \(again at line {line}\); fix: keep one")


def test_a_json_key_given_twice_is_refused(tmp_path):
    path = tmp_path / "trials.json"
    path.write_text('{"objects": {"cube": {"mass_g": 3, "mass_g": 30}}, "trials": []}')
    with pytest.raises(DocumentError, match=rf"^{path}: objects\.cube\.mass_g: the key is given twice in one object; "
                                            "fix: keep one"):
        load_json(path)


def test_invalid_yaml_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("objects:\n  cube: {mass_g: 3\n")
    refused(path, rf"^{path}: not valid YAML \(.*line 3.*\); fix: correct the syntax")


def test_the_finite_validator_refuses_nan_and_infinity_as_numbers():
    validator = finite_validator({"type": "number", "exclusiveMinimum": 0, "maximum": 1})
    assert [e.validator for e in validator.iter_errors(float("nan"))] == ["type"]
    assert [e.validator for e in validator.iter_errors(float("inf"))] == ["type"]
    assert not list(validator.iter_errors(0.5))


def test_run_sh_checks_the_study_config_files_before_snakemake_reads_them(tmp_path, capsys):
    """Snakemake merges --configfile mappings key by key before the workflow runs: a mapping bomb
    would keep it busy for hours, so `./run.sh study` reads the files first."""
    bomb = tmp_path / "study.yaml"
    bomb.write_text(alias_bomb(mapping=True))
    started = time.perf_counter()
    assert check_config_files(["-n", "--configfile", "config/smoke.yaml", str(bomb), "--until", "grid"]) == 2
    assert time.perf_counter() - started < 0.1
    assert f"config file {bomb}: l3." in capsys.readouterr().err
    assert check_config_files(["-n", "--configfile=config/smoke.yaml"]) == 0
