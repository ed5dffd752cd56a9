"""The one process pool (ipcgrasp.workers): its workers end when the process that made the pool
is killed, with the kernel's parent-death signal and with the fallback watcher thread, and they
are killed, not waited for, when the block using the pool raises."""

import subprocess
import sys
import textwrap
import time

import pytest

from ipcgrasp.workers import process_pool

from .conftest import child_pids, running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from Linux /proc")

POOL_SCRIPT = """
import sys, time
import ipcgrasp.workers
if sys.argv[1] == "no-prctl":
    ipcgrasp.workers._set_parent_death_signal = lambda signum: False
with ipcgrasp.workers.process_pool(2) as pool:
    futures = [pool.submit(time.sleep, 120) for _ in range(2)]
    print("ready", flush=True)
    time.sleep(120)
"""


def wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.parametrize("mode", ["prctl", "no-prctl"], ids=["parent-death signal", "watcher thread"])
def test_workers_end_when_the_pools_process_is_killed(mode):
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(POOL_SCRIPT), mode], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout.readline().strip() == "ready"
        workers = child_pids(parent.pid)
        assert len(workers) == 2 and all(running(pid) for pid in workers)
    finally:
        parent.kill()
        parent.wait()
    assert wait_until(lambda: not any(running(pid) for pid in workers), timeout=5), \
        f"workers {sorted(pid for pid in workers if running(pid))} outlived their parent"


def test_a_block_that_raises_kills_the_workers_instead_of_waiting_for_them():
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with process_pool(2) as pool:
            pool.submit(time.sleep, 120)
            pool.submit(time.sleep, 120)
            workers = set(pool._processes)
            raise KeyboardInterrupt
    assert time.monotonic() - started < 20
    assert len(workers) == 2 and not any(running(pid) for pid in workers)


def test_simulate_and_generate_default_to_the_usable_cores(tmp_path, monkeypatch):
    """One default for both commands' --workers: the cores this process may use (its affinity)."""
    import os

    from ipcgrasp.cli import _workers, build_parser
    from ipcgrasp.workers import usable_cores

    assert usable_cores() == len(os.sched_getaffinity(0))
    parser = build_parser()
    simulate = parser.parse_args(["simulate", "--object", "cube_3cm", "--grasp", "0"])
    generate = parser.parse_args(["generate", "--mesh", "box.obj", "--mass", "0.05", "--n", "1",
                                  "--out", str(tmp_path / "out")])
    assert simulate.workers is None and generate.workers is None
    monkeypatch.setattr("ipcgrasp.workers.usable_cores", lambda: 3)
    assert _workers(simulate) == _workers(generate) == 3
    assert _workers(parser.parse_args(["simulate", "--object", "cube_3cm", "--grasp", "0", "--workers", "1"])) == 1
    for command in ("simulate", "generate"):
        assert "default: the cores this process may use" in " ".join(
            parser._subparsers._group_actions[0].choices[command].format_help().split())
