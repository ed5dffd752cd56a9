"""Python's bytecode caches for the modules a process has imported (`ipcgrasp compile`).

Python compiles a module's source on every import unless the module's bytecode cache
(`__pycache__/<name>.<tag>.pyc`) is there and current. It writes that cache itself, except where
PYTHONDONTWRITEBYTECODE is set (as in many container images) or the directory is read-only.
`./run.sh install` installs with pip's --no-compile (pip would compile every module of every
package, about 18 s), so in such an environment every process compiles the 1,700 or so modules a
trial imports again: about 3 s of CPU before any CLI command or study job starts its work.
`write_bytecode` writes the missing or outdated caches of the modules already imported, once;
`write_package_bytecode` those of every module of whole packages, also the modules a command
imports only to print its output, which a process that ran no command has not imported.
Standard library only.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys

__all__ = ["write_bytecode", "write_package_bytecode"]


def _current(source: str, cached: str) -> bool:
    """Whether `cached` is a bytecode cache of this Python for `source` as it is now (the
    timestamp-checked header py_compile writes by default: magic, flags 0, source mtime, size)."""
    try:
        with open(cached, "rb") as f:
            header = f.read(16)
        stat = os.stat(source)
    except OSError:
        return False
    return (len(header) == 16 and header[:4] == importlib.util.MAGIC_NUMBER
            and int.from_bytes(header[4:8], "little") == 0
            and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def write_bytecode(modules=None) -> int:
    """Write the bytecode cache of each module in `modules` (default: every module imported so
    far) whose source is a .py file and whose cache is missing or older than its source; returns
    how many were written. A cache that cannot be written (a read-only directory) is skipped: that
    module compiles on import, as before."""
    written = 0
    for module in list(sys.modules.values() if modules is None else modules):
        spec = getattr(module, "__spec__", None)
        source, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
        if source and cached and source.endswith(".py"):
            written += _write(source, cached)
    return written


def write_package_bytecode(packages) -> int:
    """Write the bytecode cache of every .py module under each package of `packages` (names of
    importable packages; the package is imported to find its directory, its modules are not)
    whose cache is missing or older than its source, as `write_bytecode`; returns how many were
    written."""
    written = 0
    for name in packages:
        for directory in importlib.import_module(name).__path__:
            for root, _, files in os.walk(directory):
                for source in sorted(os.path.join(root, f) for f in files if f.endswith(".py")):
                    written += _write(source, importlib.util.cache_from_source(source))
    return written


def _write(source: str, cached: str) -> bool:
    """Compile `source` into `cached` unless that is current; whether it wrote the cache (not
    when it cannot be written: that module compiles on import, as before)."""
    if _current(source, cached):
        return False
    try:
        py_compile.compile(source, cfile=cached, doraise=True)
    except (OSError, py_compile.PyCompileError):
        return False
    return True
