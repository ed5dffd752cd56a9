"""The object registry (config/objects.yaml): name, mass, split and source of each object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ipcgrasp.documents import DocumentError, load_yaml
from ipcgrasp.paths import DEFAULT_REGISTRY

SPLITS = ("training", "heldout")


@dataclass(frozen=True)
class ObjectInfo:
    """One registered object: `mass` in kilograms (the file stores grams)."""

    name: str
    mass: float
    split: str
    source: str


class RegistryError(ValueError):
    """The registry file is missing, malformed, or lacks an object."""


def load_registry(path: str | Path | None = None) -> dict[str, ObjectInfo]:
    """Read the registry YAML (default: the repository's config/objects.yaml)."""
    path = Path(path) if path is not None else DEFAULT_REGISTRY
    if not path.is_file():
        raise RegistryError(f"{path}: object registry not found; pass the path of an objects.yaml "
                            "(see config/objects.yaml in the ipcgrasp repository for the format)")
    try:
        doc = load_yaml(path)
    except DocumentError as exc:
        raise RegistryError(f"{exc} (the format: config/objects.yaml)") from None
    entries = doc.get("objects") if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise RegistryError(f"{path}: expected a top-level mapping 'objects: {{name: {{mass_g, split, source}}}}'")
    registry = {}
    for name, fields in entries.items():
        where = f"{path}: objects.{name}"
        if not isinstance(fields, dict):
            raise RegistryError(f"{where}: expected a mapping with mass_g, split, source")
        mass_g = fields.get("mass_g")
        if not isinstance(mass_g, (int, float)) or isinstance(mass_g, bool) or not 0 < mass_g < math.inf:
            raise RegistryError(f"{where}.mass_g: must be a positive finite number of grams, got {mass_g!r}")
        split = fields.get("split", "heldout")
        if split not in SPLITS:
            raise RegistryError(f"{where}.split: must be one of {SPLITS}, got {split!r}")
        registry[str(name)] = ObjectInfo(str(name), float(mass_g) / 1000.0, split, str(fields.get("source", "")))
    return registry


def object_info(registry: dict[str, ObjectInfo], name: str) -> ObjectInfo:
    """Look up one object, naming the known ones when it is missing."""
    try:
        return registry[name]
    except KeyError:
        raise RegistryError(f"unknown object {name!r}; registered objects: {', '.join(sorted(registry))}. "
                            "Add it to config/objects.yaml with its mass in grams.") from None
