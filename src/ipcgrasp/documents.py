"""The one reader of YAML and JSON files: gripper descriptions, the object registry, study and
generate configs, trials files, and every JSON file the project reads back.

`load_yaml(path)`, `load_json(path)` and `parse_json(text, source)` (JSON kept inside another
file, e.g. a NetCDF attribute) return plain data, or raise `DocumentError` naming the file, the
key and the fix when the text

- is not valid YAML / JSON;
- gives a key twice in one mapping (the parsers would keep the last one silently);
- repeats more than MAX_ALIAS_VALUES values through YAML aliases (`*name`), or has an alias that
  contains itself: a few lines of nested aliases ("billion laughs") expand to billions of values.
  This is checked on the composed node graph, before any value is constructed, so such a file
  fails in milliseconds.

NaN and infinity load as floats (YAML `.nan`, `.inf`; JSON `NaN`, `Infinity`): files the project
writes hold them where a value is undefined. Where a schema means a number, validate with
`finite_validator(schema)`, whose "number" and "integer" exclude them (JSON schema's range
checks let NaN through, every comparison with it being false).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import jsonschema
import yaml

MAX_ALIAS_VALUES = 10_000
"""Values (scalars, lists, mappings) a YAML file may repeat through aliases, counted with
everything inside each repeated node; project files need a few dozen at most."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class DocumentError(ValueError):
    """A YAML or JSON file cannot be read as data; the message names the file, the key and the fix."""


def load_yaml(path: str | os.PathLike):
    """The data of the YAML file `path` (safe types only: mappings, lists, strings, numbers,
    booleans, null, timestamps); DocumentError for the cases of the module docstring; OSError
    when the file cannot be read."""
    path = Path(path)
    return parse_yaml(path.read_text(encoding="utf-8"), str(path))


def parse_yaml(text: str, source: str):
    """The data of YAML `text` read from `source` (named in errors); see `load_yaml`."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        where = " ".join(str(exc).split()).replace('in "<unicode string>", ', "at ")
        raise DocumentError(f"{source}: not valid YAML ({where}); fix: correct the syntax at that line") from None
    except RecursionError:
        raise DocumentError(f"{source}: nested too deeply to read; fix: flatten the file's lists and mappings") from None
    finally:
        loader.dispose()


def _check_graph(root: yaml.Node, source: str) -> None:
    """DocumentError for a duplicate key, an alias inside itself, or more than MAX_ALIAS_VALUES
    values repeated through aliases. A node met again is an alias (anchors are YAML's only way
    to share a node): it adds its expanded size, known from its first visit."""
    sizes: dict[int, int] = {}  # id(node) -> its values, aliases expanded
    open_nodes: set[int] = set()
    repeated = 0

    def visit(node: yaml.Node, key: str) -> int:
        nonlocal repeated
        if id(node) in open_nodes:
            raise DocumentError(f"{source}: {key}: an alias refers to a node that contains it (line "
                                f"{node.start_mark.line + 1}); fix: write the value out")
        if id(node) in sizes:
            repeated += sizes[id(node)]
            if repeated > MAX_ALIAS_VALUES:
                raise DocumentError(f"{source}: {key}: the aliases (*name) repeat more than {MAX_ALIAS_VALUES} "
                                    "values (nested aliases multiply); fix: write the values out, or use fewer "
                                    "aliases")
            return sizes[id(node)]
        open_nodes.add(id(node))
        size = 1
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE:
                    if (key_node.tag, key_node.value) in seen:
                        raise DocumentError(f"{source}: {_child(key, key_node.value)}: the key is given twice in one "
                                            f"mapping (again at line {key_node.start_mark.line + 1}); fix: keep one "
                                            "of them")
                    seen.add((key_node.tag, key_node.value))
                size += visit(key_node, key) + visit(value_node, _child(key, getattr(key_node, "value", "?")))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                size += visit(item, f"{key}[{index}]")
        open_nodes.discard(id(node))
        sizes[id(node)] = size
        return size

    visit(root, "")


def _child(key: str, name) -> str:
    """The key path of `name` inside `key` ("" for the top level): `a.b`, `a[2].b`."""
    return f"{key}.{name}" if key else str(name)


def load_json(path: str | os.PathLike):
    """The data of the JSON file `path`; DocumentError for invalid JSON or a duplicate key;
    OSError when the file cannot be read."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{path}: not valid JSON (not UTF-8 text: {exc}); fix: save the file as UTF-8") from None
    return parse_json(text, str(path))


class _Repeats(dict):
    """A JSON object that gave `key` twice (the last value kept, as json does)."""

    key: str


def _pairs(pairs: list) -> dict:
    """json's object_pairs_hook: a dict, or a `_Repeats` when a key comes twice."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    names = [name for name, _ in pairs]
    repeats = _Repeats(pairs)
    repeats.key = next(name for i, name in enumerate(names) if name in names[:i])
    return repeats


def parse_json(text: str | bytes, source: str):
    """The data of JSON `text` read from `source` (named in errors); see `load_json`."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DocumentError(f"{source}: not valid JSON ({exc}); fix: correct the syntax there") from None
    except RecursionError:
        raise DocumentError(f"{source}: nested too deeply to read; fix: flatten the file's lists and objects") from None
    repeat = _find_repeat(data, "")
    if repeat is not None:
        raise DocumentError(f"{source}: {repeat}: the key is given twice in one object; fix: keep one of them")
    return data


def _find_repeat(value, key: str) -> str | None:
    """The key path of the first key given twice in `value`, else None."""
    if isinstance(value, _Repeats):
        return _child(key, value.key)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for name, item in items:
        found = _find_repeat(item, f"{key}[{name}]" if isinstance(name, int) else _child(key, name))
        if found is not None:
            return found
    return None


def _finite_number(checker, instance) -> bool:
    return _DRAFT.TYPE_CHECKER.is_type(instance, "number") and math.isfinite(instance)


_DRAFT = jsonschema.Draft202012Validator
_FiniteValidator = jsonschema.validators.extend(
    _DRAFT, type_checker=_DRAFT.TYPE_CHECKER.redefine("number", _finite_number))


def finite_validator(schema: dict) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator of `schema` whose "number" is finite: NaN and infinity fail the
    `type` check (its "integer" already excludes them)."""
    return _FiniteValidator(schema)
