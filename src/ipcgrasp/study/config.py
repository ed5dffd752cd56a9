"""Checks of the study config beyond its JSON schema (workflow/schemas/config.schema.yaml), run
when the workflow is parsed so a bad value stops the study before any job, naming its key path.

JSON schema cannot refuse NaN (every comparison with NaN is false, so `.nan` passes `minimum`
and `maximum`), the `sim:` block has cross-field rules that only SimParams knows, and the
`gripper:` description (and so which pad variants `grid.jaws` and `calibration.jaw` may name)
is a file of its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from ipcgrasp.grasp.description import DEFAULT_GRIPPER, GripperDescriptionError, load_description
from ipcgrasp.grasp.params import SimParams, SimParamsError


class ConfigError(ValueError):
    """A study config value is wrong; the message starts with its key path (e.g. `sim.dt`)."""


def check_config(config: Mapping) -> None:
    """ConfigError for the first non-finite number anywhere in `config`, else for the first `sim`
    value SimParams refuses (its field ranges and cross-field rules), else for a gripper
    description that does not load or lacks a pad the config names, or baselines asked for with
    a gripper other than the YuMi (they model the YuMi's pads only)."""
    for path, value in _numbers(config, ""):
        if not math.isfinite(value):
            raise ConfigError(f"config {path} = {value!r}: must be a finite number; fix: set {path} in the config "
                              "file (or --config) to a finite value in the range the schema states")
    try:
        SimParams(**config.get("sim", {}))
    except SimParamsError as exc:
        raise ConfigError(f"config sim.{exc.field}: {exc}") from None
    _check_gripper(config)


def _check_gripper(config: Mapping) -> None:
    name = config.get("gripper", DEFAULT_GRIPPER)
    try:
        description = load_description(name)
    except GripperDescriptionError as exc:
        raise ConfigError(f"config gripper: {exc}") from None
    pads = description.pad_names
    named = [("calibration.jaw", config.get("calibration", {}).get("jaw"))]
    named += [(f"grid.jaws[{i}]", jaw) for i, jaw in enumerate(config.get("grid", {}).get("jaws", []))]
    for path, jaw in named:
        if jaw is not None and jaw not in pads:
            raise ConfigError(f"config {path} = {jaw!r}: the gripper {description.name!r} has no such pad; fix: use "
                              f"one of its pads ({', '.join(pads)})")
    models = config.get("evaluation", {}).get("models", [])
    if description.name != DEFAULT_GRIPPER and models:
        raise ConfigError(f"config evaluation.models = {list(models)}: the baselines model the YuMi's pads only, but "
                          f"gripper is {description.name!r}; fix: set evaluation.models: [] (the simulator itself is "
                          "still evaluated)")


def check_data_gripper(config: Mapping, data_dir) -> None:
    """ConfigError when `data_dir` was written by `ipcgrasp data import` (docs/own_data.md) from
    trials recorded with another gripper than the config's `gripper:`: the study would compare
    that gripper's physical outcomes with a simulation of a different one."""
    from pathlib import Path

    from ipcgrasp.data.recorded import recorded_gripper, recorded_gripper_setting

    recorded = recorded_gripper(Path(data_dir))
    if recorded is None:
        return
    name = load_description(config.get("gripper", DEFAULT_GRIPPER)).name
    if name != recorded:
        raise ConfigError(f"config gripper = {name!r}, but the physical trials in {data_dir} were recorded with "
                          f"{recorded!r} (its ipcgrasp_import.json); fix: set gripper: "
                          f"{recorded_gripper_setting(Path(data_dir))}")


def _numbers(value, path: str) -> Iterator[tuple[str, float]]:
    """(key path, value) of every float in a nested config (lists as `key[i]`)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _numbers(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, f"{path}[{index}]")
    elif isinstance(value, float):
        yield path, value
