"""Fixtures shared across test directories."""

import json
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
