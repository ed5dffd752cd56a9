"""The study and the dataset reach the simulator only through the grasp layer: no module of
ipcgrasp.study, ipcgrasp.dataset or workflow/scripts imports ipcgrasp.engine."""

import ast
from pathlib import Path

import pytest

import ipcgrasp

PACKAGE = Path(ipcgrasp.__file__).parent
SCRIPTS = PACKAGE.parents[1] / "workflow" / "scripts"


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


SOURCES = sorted([*(PACKAGE / "study").rglob("*.py"), *(PACKAGE / "dataset").rglob("*.py"), *SCRIPTS.glob("*.py")])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE.parents[1])))
def test_study_and_dataset_code_does_not_import_the_engine(path):
    engine = sorted(m for m in imported_modules(path) if m == "ipcgrasp.engine" or m.startswith("ipcgrasp.engine."))
    assert not engine, f"{path} imports {engine}: go through ipcgrasp.grasp instead"


def test_the_layer_check_sees_an_engine_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ipcgrasp.engine.simulation import Simulation\n    return Simulation\n")
    assert "ipcgrasp.engine.simulation" in imported_modules(module)
