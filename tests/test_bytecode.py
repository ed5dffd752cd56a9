"""ipcgrasp.bytecode writes the bytecode caches Python would otherwise compile on every import."""

import importlib
import os
import sys

from ipcgrasp.bytecode import write_bytecode, write_package_bytecode


def _import_fresh(tmp_path, name, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # as under PYTHONDONTWRITEBYTECODE
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    monkeypatch.delitem(sys.modules, name)
    return module


def test_write_bytecode_writes_a_missing_cache_once_and_python_loads_it(tmp_path, monkeypatch):
    (tmp_path / "bc_probe.py").write_text("VALUE = 41 + 1\n")
    module = _import_fresh(tmp_path, "bc_probe", monkeypatch)
    cached = module.__spec__.cached
    assert not os.path.exists(cached)
    assert write_bytecode([module]) == 1
    assert os.path.exists(cached)
    assert write_bytecode([module]) == 0  # current: left alone
    os.remove(tmp_path / "bc_probe.py")  # only the cache is left: Python must load the bytecode
    again = importlib.util.spec_from_file_location("bc_probe", cached)
    loaded = importlib.util.module_from_spec(again)
    again.loader.exec_module(loaded)
    assert loaded.VALUE == 42


def test_write_bytecode_rewrites_a_cache_older_than_its_source(tmp_path, monkeypatch):
    source = tmp_path / "bc_stale.py"
    source.write_text("VALUE = 1\n")
    module = _import_fresh(tmp_path, "bc_stale", monkeypatch)
    assert write_bytecode([module]) == 1
    source.write_text("VALUE = 22\n")
    stat = source.stat()
    os.utime(source, (stat.st_atime, stat.st_mtime + 10))
    assert write_bytecode([module]) == 1
    assert write_bytecode([module]) == 0


def test_write_bytecode_skips_modules_without_python_source(monkeypatch):
    import math  # built in or an extension module: no .py source

    assert write_bytecode([math, sys]) == 0


def test_write_package_bytecode_writes_every_module_of_a_package_not_imported(tmp_path, monkeypatch):
    package = tmp_path / "bc_package"
    (package / "sub").mkdir(parents=True)
    for path in (package / "__init__.py", package / "shown.py", package / "sub" / "__init__.py",
                 package / "sub" / "deep.py"):
        path.write_text("VALUE = 1\n")
    (package / "notes.txt").write_text("not a module\n")
    _import_fresh(tmp_path, "bc_package", monkeypatch)
    assert "bc_package.shown" not in sys.modules
    assert write_package_bytecode(["bc_package"]) == 4
    assert os.path.exists(importlib.util.cache_from_source(str(package / "sub" / "deep.py")))
    assert write_package_bytecode(["bc_package"]) == 0  # current: left alone
