"""Checks of the study config beyond its JSON schema (workflow/schemas/config.schema.yaml), run
when the workflow is parsed so a bad value stops the study before any job, naming its key path.

JSON schema cannot refuse NaN (every comparison with NaN is false, so `.nan` passes `minimum`
and `maximum`), and the `sim:` block has cross-field rules that only SimParams knows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from ipcgrasp.grasp.params import SimParams, SimParamsError


class ConfigError(ValueError):
    """A study config value is wrong; the message starts with its key path (e.g. `sim.dt`)."""


def check_config(config: Mapping) -> None:
    """ConfigError for the first non-finite number anywhere in `config`, else for the first `sim`
    value SimParams refuses (its field ranges and cross-field rules)."""
    for path, value in _numbers(config, ""):
        if not math.isfinite(value):
            raise ConfigError(f"config {path} = {value!r}: must be a finite number; fix: set {path} in the config "
                              "file (or --config) to a finite value in the range the schema states")
    try:
        SimParams(**config.get("sim", {}))
    except SimParamsError as exc:
        raise ConfigError(f"config sim.{exc.field}: {exc}") from None


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
