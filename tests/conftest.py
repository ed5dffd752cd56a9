"""Fixtures shared across test directories."""

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from ipcgrasp.data.location import DataNotFoundError, resolve_data_dir

STUDY_MODULES = {"tests/workflow/test_study.py", "tests/workflow/test_slurm.py"}
"""The test modules that read the session's smoke study (tests/workflow/conftest.py): one worker
runs them all, so the study runs once."""

ROBUST_LABELS = [[1, 1], [1, 1], [0, 0], [0, 0], [1, 1], [1, 0]]
"""Physical results (grasps x trials) of the own-data test set: robustness 1, 1, 0, 0, 1, 0.5."""


def reach_data() -> Path:
    """The REACH data directory (`resolve_data_dir`); without one, skips the calling test with
    the reason and where to get the data (collection never needs the data)."""
    try:
        return resolve_data_dir()
    except DataNotFoundError as exc:
        pytest.skip(f"needs the REACH data: {exc}")


@pytest.fixture(scope="session")
def own_trials(tmp_path_factory):
    """A trials file in the own-data format (docs/own_data.md): a 3 cm box (trimesh, STL, 3 g) and
    six antipodal grasps on it with two physical trials each (ROBUST_LABELS). Returns a function
    writing it into a directory: (trials file path, the document)."""
    import trimesh

    from ipcgrasp import GraspObject
    from ipcgrasp.dataset import sample_antipodal_grasps

    box = trimesh.creation.box(extents=[0.03, 0.03, 0.03])
    sampling = sample_antipodal_grasps(GraspObject.from_mesh(box, 0.003, name="box_3cm"), len(ROBUST_LABELS), seed=0)
    trials = [{"object": "box_3cm", "grasp": g, "gripper": "yumi", "success": result,
               "object_pose": sampling.object_pose.tolist(), "gripper_pose": candidate.grasp_pose.tolist()}
              for g, (candidate, labels) in enumerate(zip(sampling.candidates, ROBUST_LABELS)) for result in labels]
    doc = {"format": "ipcgrasp-physical-trials", "version": 1,
           "objects": {"box_3cm": {"mesh": "meshes/box_3cm.stl", "mass_kg": 0.003}}, "trials": trials}

    def write(directory: Path, document: dict | None = None) -> tuple[Path, dict]:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "meshes").mkdir(exist_ok=True)
        box.export(directory / "meshes" / "box_3cm.stl")
        document = json.loads(json.dumps(doc if document is None else document))
        path = directory / "trials.json"
        path.write_text(json.dumps(document))
        return path, document

    return write


class ForkServer:
    """A console script (`script`, whose entry point is `entry`, "module:function") run from
    fork_server.py, started on first use and kept for the test session (one per pytest-xdist
    worker): `run` is `subprocess.run([script, *args], cwd=cwd, env=env, capture_output=True,
    text=True, timeout=timeout)`, its process forked from one that has imported the entry point's
    module and the `preload` modules already (seconds of CPU less a run)."""

    SERVER = Path(__file__).with_name("fork_server.py")

    def __init__(self, script: Path, entry: str, preload: Sequence[str] = ()) -> None:
        self.command = [sys.executable, str(self.SERVER), str(script), entry, *preload]
        self.script = str(script)
        self.process: subprocess.Popen | None = None
        self.log = None
        atexit.register(self.stop)

    def start(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            self.log = tempfile.TemporaryFile()
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self.log, text=True, start_new_session=True)
        return self.process

    def stop(self) -> None:
        """Ends the server and whatever it runs (its process group)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def run(self, args: Sequence[object], cwd: Path, timeout: float,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        server = self.start()
        command = [self.script, *map(str, args)]
        with tempfile.TemporaryDirectory(prefix="ipcgrasp-fork-") as scratch:
            out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
            request = {"args": command[1:], "cwd": str(cwd), "env": dict(os.environ if env is None else env),
                       "stdout": str(out), "stderr": str(err)}
            try:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                if not select.select([server.stdout], [], [], timeout)[0]:
                    raise subprocess.TimeoutExpired(command, timeout)
                answer = server.stdout.readline()
            except BaseException:  # a timeout or an interrupt: no answer left pending for the next run
                self.stop()
                raise
            if not answer:
                self.log.seek(0)
                log = self.log.read().decode(errors="replace")
                self.stop()
                raise RuntimeError(f"{self.SERVER.name} ended without answering:\n{log[-3000:]}")
            return subprocess.CompletedProcess(command, json.loads(answer)["returncode"], out.read_text(),
                                               err.read_text())


def child_pids(pid: int) -> set[int]:
    """The processes `pid` started that are still its children (Linux: /proc/PID/task/*/children)."""
    found = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found |= {int(child) for child in children.read_text().split()}
        except OSError:  # the thread ended meanwhile
            continue
    return found


def running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie, ended but not reaped, has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def worker_group(nodeid: str) -> str:
    """The pytest-xdist work unit of a test: its module, or "smoke study" for STUDY_MODULES."""
    module = nodeid.split("::")[0]
    return "smoke study" if module in STUDY_MODULES else module


def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadscope` (pyproject.toml's addopts): a worker takes a whole worker_group at a
    time, so a module-scoped fixture (often a simulation) is computed once and the smoke study once; the
    groups go out in collection order (`--no-loadscope-reorder`, pytest_collection_modifyitems)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """The smoke study's group first (the longest chain: the study, then its jobs through SLURM),
    then the modules with a `slow` test, then the rest, each in collection order: the order the
    pytest-xdist workers take them in, and the order of a run in one process (`-n 0`)."""
    slow = {worker_group(item.nodeid) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: (worker_group(item.nodeid) != "smoke study", worker_group(item.nodeid) not in slow))
