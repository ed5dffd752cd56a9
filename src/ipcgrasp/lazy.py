"""Public names of a package imported on first use (PEP 562): a package's __init__ lists where
each name is defined, and light modules of the package can be imported without the heavy ones.
Standard library only."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(namespace: dict, homes: Mapping[str, str]) -> tuple[Callable, Callable]:
    """(__getattr__, __dir__) for the module whose globals() is `namespace`: a name of `homes`
    (public name -> the module that defines it) is imported on first access and kept in the
    namespace, so later look-ups skip __getattr__; __dir__ lists the globals and __all__."""
    module = namespace["__name__"]

    def __getattr__(name: str):
        if name not in homes:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__
