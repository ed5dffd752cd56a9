"""The study config's extra checks (study.config) and the schema's agreement with SimParams."""

import math
from pathlib import Path

import pytest
import yaml

from ipcgrasp.grasp.params import CLOSE_RULES, FIELD_CHOICES, FIELD_RANGES, FLAGS, NAME_FIELDS, SimParams
from ipcgrasp.study.config import ConfigError, check_config

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"

# schema location (a path of property names; "[]" for an array's items) -> SimParams field
SCHEMA_FIELDS = {
    **{("sim", name): name for name in yaml.safe_load(SCHEMA.read_text())["properties"]["sim"]["properties"]
       if name not in FIELD_CHOICES},
    ("grid", "E", "[]"): "E",
    ("grid", "mu", "[]"): "mu",
    ("fingers", "stiffness", "[]"): "finger_stiffness",
    ("fingers", "E", "[]"): "E",
    ("fingers", "mu", "[]"): "mu",
    ("calibration", "E_ref"): "E",
    ("calibration", "sensitivity_mu"): "mu",
    ("baselines", "penalty", "stiffness", "[]"): "penalty_stiffness",
    ("baselines", "penalty", "margin", "[]"): "penalty_margin",
    ("baselines", "penalty", "clusters"): "penalty_clusters",
}
SCHEMA_CHOICES = {("grid", "rules", "[]"): CLOSE_RULES, ("sim", "grip"): FIELD_CHOICES["grip"]}
SCHEMA_NAMES = {("grid", "jaws", "[]"): "jaw", ("calibration", "jaw"): "jaw"}


def schema_node(path):
    node = yaml.safe_load(SCHEMA.read_text())
    for key in path:
        node = node["items"] if key == "[]" else node["properties"][key]
    return node


def test_every_simparams_field_has_exactly_one_rule():
    tables = [set(FIELD_RANGES), set(FIELD_CHOICES), set(NAME_FIELDS), set(FLAGS)]
    assert set.union(*tables) == set(SimParams.field_names())
    assert sum(map(len, tables)) == len(SimParams.field_names())


@pytest.mark.parametrize("path", sorted(SCHEMA_FIELDS), ids=".".join)
def test_the_schema_range_is_the_simparams_range(path):
    node, interval = schema_node(path), FIELD_RANGES[SCHEMA_FIELDS[path]]
    kind = "integer" if interval.integer else "number"
    assert node["type"] == kind or (interval.optional and node["type"] == [kind, "null"])
    low_key, high_key = ("exclusiveMinimum" if interval.open_low else "minimum",
                         "exclusiveMaximum" if interval.open_high else "maximum")
    assert (node.get(low_key), node.get(high_key)) == (interval.low, interval.high), node
    if node.get("default") is not None:  # scalars; an array's items have none; null: the gripper's
        assert interval.contains(node["default"])


@pytest.mark.parametrize("path", sorted(SCHEMA_CHOICES), ids=".".join)
def test_the_schema_choices_are_the_simparams_choices(path):
    assert tuple(schema_node(path)["enum"]) == SCHEMA_CHOICES[path]


@pytest.mark.parametrize("path", sorted(SCHEMA_NAMES), ids=".".join)
def test_the_schema_name_pattern_is_the_simparams_pattern(path):
    assert schema_node(path)["pattern"] == NAME_FIELDS[SCHEMA_NAMES[path]].pattern


def test_the_schema_exposes_only_simparams_fields_under_sim():
    assert set(schema_node(("sim",))["properties"]) <= set(SimParams.field_names())


def default_config():
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def test_the_default_config_passes():
    check_config(default_config())


@pytest.mark.parametrize("path, value, message", [
    (("sim", "dt"), math.nan, r"config sim\.dt = nan: must be a finite number"),
    (("grid", "mu"), [0.4, math.inf], r"config grid\.mu\[1\] = inf"),
    (("sim", "shake_amplitude"), 0.05, r"config sim\.shake_amplitude: .*keep it below lift_height"),
    (("sim", "newton_budget"), 2.5, r"config sim\.newton_budget: SimParams\.newton_budget must be an integer"),
])
def test_a_bad_value_is_named_by_its_key_path(path, value, message):
    config = default_config()
    config[path[0]][path[1]] = value
    with pytest.raises(ConfigError, match=message):
        check_config(config)


@pytest.mark.parametrize("key, value, message", [
    ("gripper", "franka", r"config gripper: unknown gripper 'franka'; fix: use one of the shipped grippers "
                          r"\(franka_hand, robotiq_2f85, yumi\)"),
    ("calibration", {"jaw": "oval"}, r"config calibration\.jaw = 'oval': the gripper 'yumi' has no such pad; fix: "
                                     r"use one of its pads \(rounded, rectangular\)"),
])
def test_the_gripper_and_its_pads_are_checked(key, value, message):
    config = default_config()
    config[key] = {**config[key], **value} if isinstance(value, dict) else value
    with pytest.raises(ConfigError, match=message):
        check_config(config)


def test_another_gripper_runs_without_the_yumi_only_baselines():
    config = {**default_config(), "gripper": "robotiq_2f85"}
    with pytest.raises(ConfigError, match="baselines model the YuMi"):
        check_config(config)
    check_config({**config, "evaluation": {**config["evaluation"], "models": []}})
