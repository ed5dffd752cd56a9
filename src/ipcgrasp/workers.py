"""Worker processes that end with the process that started them.

`process_pool` is the one process pool every parallel caller uses (dataset generation,
robustness over N trials). Its workers

- end as soon as the pool's process ends, however it ends (SIGKILL included): on Linux the
  kernel sends them SIGKILL when their parent exits (prctl PR_SET_PDEATHSIG); elsewhere a thread
  in each worker waits on the parent's sentinel and exits the worker when it closes;
- ignore SIGINT, so that Ctrl-C in a terminal (sent to the whole process group) is handled once,
  by the pool's process, instead of printing a KeyboardInterrupt traceback from every worker;
- are killed when the block using the pool raises (KeyboardInterrupt included), instead of being
  waited for: their trials can take minutes, and nothing they would still write is kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["process_pool", "usable_cores"]

_PR_SET_PDEATHSIG = 1
"""prctl option: the signal the calling process gets when its parent exits (linux/prctl.h)."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a SLURM or container limit; else
    the machine's): the default number of worker processes of `simulate` and `generate`."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _set_parent_death_signal(signum: int) -> bool:
    """Ask the Linux kernel to send `signum` to this process when its parent exits; False where
    prctl is unavailable (not Linux, or the call failed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _exit_when_closed(sentinel) -> None:
    """Block until `sentinel` (the parent's end of a pipe) closes, then end this process."""
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _start_worker() -> None:
    """Pool initializer (module docstring): ignore SIGINT and end with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    if os.getppid() == parent.pid and _set_parent_death_signal(signal.SIGKILL):
        if os.getppid() != parent.pid:  # the parent ended before the signal was armed
            os._exit(1)
        return
    # no prctl, or a forkserver between this worker and the pool's process: watch the pool's process
    threading.Thread(target=_exit_when_closed, args=(parent.sentinel,), name="ipcgrasp-parent-watch",
                     daemon=True).start()


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's worker processes now, without waiting for their tasks."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.kill()


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A ProcessPoolExecutor of `workers` processes whose workers end with this process and
    ignore SIGINT (module docstring). Leaving the block normally waits for the submitted tasks;
    leaving it by an exception cancels the pending ones and kills the workers."""
    pool = ProcessPoolExecutor(workers, initializer=_start_worker)
    try:
        yield pool
    except BaseException:
        _kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
