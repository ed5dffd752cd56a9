"""The engine stays in small modules with one job each: no module of ipcgrasp.engine over
MAX_MODULE_LINES lines and no class over MAX_CLASS_LINES (benchmarks/engine_map.py prints the map)."""

import ast
from pathlib import Path

import pytest

import ipcgrasp.engine

ENGINE = Path(ipcgrasp.engine.__file__).parent
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300
MODULES = sorted(ENGINE.rglob("*.py"))


def class_lengths(source: str) -> dict[str, int]:
    """Lines of every class defined in `source`, by name (first to last line, decorators out)."""
    return {node.name: node.end_lineno - node.lineno + 1 for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ClassDef)}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_engine_module_and_its_classes_are_small(path):
    source = path.read_text()
    assert len(source.splitlines()) <= MAX_MODULE_LINES, f"{path}: split it by job"
    long = {name: n for name, n in class_lengths(source).items() if n > MAX_CLASS_LINES}
    assert not long, f"{path}: classes over {MAX_CLASS_LINES} lines: {long}"


def test_class_lengths_counts_a_class_from_its_first_to_its_last_line():
    assert class_lengths("class A:\n    x = 1\n\n    def f(self):\n        return 2\n") == {"A": 5}
