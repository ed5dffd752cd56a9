"""Python's garbage collector paused around work that creates many objects and frees almost none
in cycles (a command's start-up, numba compiling kernels): the collector's passes over them cost
time and find nothing to collect. Standard library only."""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def collector_paused(freeze: bool = False):
    """The garbage collector off inside, and on again after if it was on; with `freeze`,
    everything then alive is first frozen (gc.freeze: left out of the collector's later passes)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()
