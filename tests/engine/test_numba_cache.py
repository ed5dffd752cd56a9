"""The kernels' on-disk cache (engine._numba): a kernel is recompiled when a module it imports
changes, not only its own file (numba's own cache would load the old machine code), and is
loaded from the cache while nothing changed."""

import os
import subprocess
import sys
import textwrap

import pytest

LEAF = """
from ipcgrasp.engine._numba import njit

SCALE = {scale}


@njit
def scaled(x):
    return SCALE * x
"""

CALLER = """
from ipcgrasp.engine._numba import njit
from {source} import scaled


@njit
def doubled(x):
    return 2.0 * scaled(x)
"""


def _run(root):
    """doubled(1.0) of kpkg.absolute and kpkg.relative in a new process, each with whether it came
    from the cache."""
    code = ("from kpkg import absolute, relative\n"
            "for kernel in (absolute.doubled, relative.doubled):\n"
            "    print(kernel(1.0), sum(kernel.stats.cache_hits.values()) > 0)")
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    return [(float(value), cached == "True") for value, cached in (line.split() for line in out.stdout.splitlines())]


@pytest.mark.slow
def test_a_kernel_is_recompiled_when_a_module_it_imports_changes(tmp_path):
    package = tmp_path / "kpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "leaf.py").write_text(textwrap.dedent(LEAF.format(scale=1.0)))
    (package / "absolute.py").write_text(textwrap.dedent(CALLER.format(source="kpkg.leaf")))
    (package / "relative.py").write_text(textwrap.dedent(CALLER.format(source=".leaf")))
    assert _run(tmp_path) == [(2.0, False)] * 2  # compiled
    assert _run(tmp_path) == [(2.0, True)] * 2  # loaded from the cache
    (package / "leaf.py").write_text(textwrap.dedent(LEAF.format(scale=3.0)))  # the callee's file only
    assert _run(tmp_path) == [(6.0, False)] * 2
    assert _run(tmp_path) == [(6.0, True)] * 2
