"""Numba options for every engine kernel, in one place.

Kernels are private (`_name`) `@njit` functions that take and return NumPy arrays and
floats only; public wrappers validate inputs and call them. Their machine code is cached on
disk, which keeps every start after the first short; fastmath stays off (it may reorder the
IEEE operations our tolerances rely on).

numba's cache checks a kernel's own source file only: a kernel whose callee in another module
changed would load its old machine code. Our kernels' cache entries are stamped over every
module of the package their module imports (`_ImportsStamp`), so editing, pulling or installing
a change anywhere in that chain recompiles them.

A constant passed from one kernel to another is an np.int64 / np.bool_ (np.int64(0), np.True_,
module constants such as distance._V0), not a Python literal: numba compiles a separate
specialisation of the callee for every distinct literal argument, each costing a cold start
another fraction of a second (docs/performance.md, "Why kernels pass np.int64 constants and
copy arrays with loops"). LLVM can still inline the callee and fold the constant; the cube
trials run no slower without the specialisations.

Copying one array into another is a loop, not a slice assignment (a[:] = b, a[:, :] = B): numba
compiles its broadcasting setitem for every such statement's types, up to 2 s each on a cold
start, where the loop costs nothing (filling with a scalar, a[:] = 0.0, is cheap either way).
`_copy_into` is that loop for arrays of any shape; a copy into a reshaped slice inside a hot
loop is written out instead (np.ndindex over a reshaped view measured 5 times slower than two
plain loops: 66 against 14 us for 250 12 x 12 blocks).

Sorting inside a kernel is `_stable_argsort`, not np.sort or np.argsort: numba compiles its own
quicksort and mergesort from Python source in every process that compiles a kernel calling them,
about 1 s each, where `_stable_argsort` compiles in 0.2 s. An argsort whose equal keys keep their
order has one answer, so every sort gives the same result to the bit.

Compiling ahead of use: `loaded_kernels` and `Compilations` tell which kernels a piece of work
calls and in which order they compile, with their argument types as text, and `compile_listed`
compiles such a list by explicit signatures, so several processes can fill the on-disk cache at
once (grasp.warmup).
"""

import functools
import gc
import hashlib
import importlib
import re
import time
from pathlib import Path

import numba
import numpy as np
from numba.core import caching, event, types

__all__ = ["njit", "Compilations", "compile_listed", "loaded_kernels", "numba_type"]


# An import statement at the start of a line: "from <dots><module> import <names>" (names possibly
# parenthesised over several lines) or "import <modules>". A match inside a docstring only adds a
# file to a stamp; a statement it misses (none in this package) would leave a dependency out.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)|import[ \t]+([^\n#]*))",
                     re.MULTILINE)


@functools.lru_cache(maxsize=None)
def _direct_imports(path: Path, root: Path) -> tuple:
    """The source files of the module's own top-level package (in `root`, the directory that
    holds it) that the module at `path` names in its import statements, absolute or relative."""
    package = path.relative_to(root).with_suffix("").parts[:-1]  # the package the module is in
    top = path.relative_to(root).parts[0]
    found = []
    for dots, module, names, modules in _IMPORT.findall(path.read_text(encoding="utf-8")):
        if modules:
            candidates = [name.split()[0] for name in modules.split(",") if name.strip()]
        else:
            base = ".".join(package[:len(package) - len(dots) + 1]) if dots else ""
            module = ".".join(part for part in (base, module) if part)
            candidates = [module] + [f"{module}.{name.split()[0]}" for name in names.strip("()").split(",")
                                     if name.strip()]
        for name in candidates:
            if name.split(".")[0] != top:
                continue
            stem = root.joinpath(*name.split("."))
            found += [f for f in (stem.with_suffix(".py"), stem / "__init__.py") if f.is_file()]
    return tuple(found)


@functools.lru_cache(maxsize=None)
def _sources_stamp(path: Path, root: Path) -> bytes:
    """SHA-256 over the contents of the module at `path` and of every module under `root` it
    imports, directly or through each other, in a fixed order."""
    sources, pending = set(), [path]
    while pending:
        source = pending.pop()
        if source not in sources:
            sources.add(source)
            pending += _direct_imports(source, root)
    digest = hashlib.sha256()
    for source in sorted(sources):
        digest.update(str(source.relative_to(root)).encode())
        digest.update(hashlib.sha256(source.read_bytes()).digest())
    return digest.digest()


class _ImportsStamp:
    """A cache locator whose freshness stamp covers the kernel's module and every module of its
    package it imports: numba's own stamp covers the kernel's file only, so a kernel whose callee
    (or a constant it reads) changed in another file would load its old machine code from the
    cache."""

    def get_source_stamp(self):
        path = Path(self._py_file).resolve()
        depth = len(self._module_name.split(".")) - 1 + (path.name == "__init__.py")
        if depth >= len(path.parents):  # a module name that does not match its file
            return super().get_source_stamp()
        return _sources_stamp(path, path.parents[depth])

    @classmethod
    def from_function(cls, py_func, py_file):
        locator = super().from_function(py_func, py_file)
        if locator is not None:
            locator._module_name = py_func.__module__
        return locator


class _UserProvidedLocator(_ImportsStamp, caching.UserProvidedCacheLocator):
    """In NUMBA_CACHE_DIR."""


class _InTreeLocator(_ImportsStamp, caching.InTreeCacheLocator):
    """In __pycache__ beside the sources."""


class _UserWideLocator(_ImportsStamp, caching.UserWideCacheLocator):
    """In the user's cache directory, when __pycache__ is not writable."""


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator, caching.IPythonCacheLocator,
                        caching.ZipCacheLocator]


class _KernelCache(caching.FunctionCache):
    """numba's on-disk function cache, located as numba's own (`_KernelCacheImpl`) and stamped
    over the kernel's imports (`_ImportsStamp`)."""

    _impl_class = _KernelCacheImpl


_compile = numba.njit(fastmath=False, nogil=True)


def njit(function):
    """numba.njit with fastmath off, the GIL released and the compiled code cached on disk
    (`_KernelCache`: recompiled when the kernel's module or any module of the package it imports
    changes)."""
    dispatcher = _compile(function)
    dispatcher._cache = _KernelCache(function)  # what Dispatcher.enable_caching does with numba's FunctionCache
    return dispatcher


_ARRAY_TYPE = re.compile(r"(readonly )?array\((\w+), (\d+)d, ([CFA])\)")


def _scalar_type(name: str):
    scalar = types.boolean if name == "bool" else getattr(types, name, None)
    if not isinstance(scalar, (types.Boolean, types.Number)):
        raise ValueError(f"{name!r} is not a numba scalar type")
    return scalar


def numba_type(text: str):
    """The numba type whose str() is `text`, for the types kernels take: booleans, numbers and
    arrays of them ("float64", "array(int64, 2d, C)", "readonly array(float64, 1d, C)");
    ValueError for anything else."""
    array = _ARRAY_TYPE.fullmatch(text)
    if array:
        readonly, dtype, ndim, layout = array.groups()
        return types.Array(_scalar_type(dtype), int(ndim), layout, readonly=bool(readonly))
    return _scalar_type(text)


def _kernel_entry(function, argument_types) -> list:
    """A kernel signature as the lists of this module write it: [module, name, [argument type
    text, ...]] (`numba_type` reads each type back)."""
    return [function.__module__, function.__name__, [str(t) for t in argument_types]]


class Compilations(event.Listener):
    """Within `with Compilations() as compiled:`, compiled.kernels lists every ipcgrasp kernel
    numba compiles, also those compiled as another kernel's callees, in the order their
    compilations end, as [module, name, [argument type, ...]] with the types as text
    (`numba_type` reads them back), and compiled.seconds the CPU s of each compilation, the
    callees it compiled included. Loads from the on-disk cache are not compilations."""

    def __init__(self):
        self.kernels = []
        self.seconds = []
        self._started = []  # CPU s at the start of each compilation under way, nested ones last

    def on_start(self, ev):
        self._started.append(time.process_time())

    def on_end(self, ev):
        seconds = time.process_time() - self._started.pop()
        function = ev.data["dispatcher"].py_func
        if function.__module__.startswith("ipcgrasp."):
            self.kernels.append(_kernel_entry(function, ev.data["args"]))
            self.seconds.append(seconds)

    def __enter__(self):
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)


def loaded_kernels() -> list:
    """Every signature of an ipcgrasp kernel this process has compiled or loaded from the cache, as
    [module, name, [argument type, ...]] (sorted). In a process whose kernels all came from the
    cache these are the kernels called from Python: a kernel compiled from the cache carries its
    callees' machine code, while compiling it registers their signatures too."""
    found = []
    for obj in gc.get_objects():
        if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.py_func.__module__.startswith("ipcgrasp."):
            found += [_kernel_entry(obj.py_func, signature) for signature in obj.signatures]
    return sorted(found)


def compile_listed(kernels, stop=None) -> list[str]:
    """Compile each kernel of `kernels` ([module, name, [argument type text, ...]], as
    loaded_kernels lists them; items after these are ignored) for its signature, or load it from
    the on-disk cache when another process has compiled it since; stop: an Event, checked before
    each kernel, that ends the work early. Returns what could not be compiled, one line each (a kernel renamed or whose
    argument types changed since the list was recorded): the work the list was recorded from
    compiles those on first use."""
    skipped = []
    for module, name, argument_types, *_ in kernels:
        if stop is not None and stop.is_set():
            break
        try:
            dispatcher = getattr(importlib.import_module(module), name)
            dispatcher.compile(tuple(numba_type(t) for t in argument_types))
        except Exception as exc:  # noqa: BLE001 - any failure only leaves the kernel to its first call
            skipped.append(f"{module}.{name}({', '.join(argument_types)}): {type(exc).__name__}: {exc}")
    return skipped


@njit
def _copy_into(out, values):
    """out[...] = values for two arrays of one shape, element by element (no slice assignment)."""
    for index in np.ndindex(out.shape):
        out[index] = values[index]


@njit
def _stable_argsort(keys):
    """The indices that sort the 1-D array `keys` ascending, equal keys in their given order
    (np.argsort(keys, kind="stable")): a bottom-up merge sort."""
    n = keys.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    merged = np.empty(n, dtype=np.int64)
    width = 1
    while width < n:  # merge the sorted runs of `width` pairwise
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j == hi or (i < mid and keys[order[i]] <= keys[order[j]]):
                    merged[k] = order[i]
                    i += 1
                else:
                    merged[k] = order[j]
                    j += 1
        order, merged = merged, order
        width *= 2
    return order
