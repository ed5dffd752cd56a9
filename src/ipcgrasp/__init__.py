"""ipcgrasp: grasp simulation for parallel-jaw grippers with compliant pads, by IPC.

Public API::

    from ipcgrasp import GraspObject, SimParams, simulate_grasp, robustness
    from ipcgrasp import Gripper, shipped_grippers   # gripper descriptions (docs/grippers.md)

The names are imported on first use (PEP 562), so `import ipcgrasp` and the command line's help
load neither numba nor xarray nor trimesh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcgrasp.lazy import lazy_names

if TYPE_CHECKING:
    from ipcgrasp.grasp.description import shipped_grippers
    from ipcgrasp.grasp.gripper import Gripper
    from ipcgrasp.grasp.object import GraspObject
    from ipcgrasp.grasp.params import SimParams
    from ipcgrasp.grasp.simulate import robustness, simulate_grasp

    __version__: str

_HOMES = {
    "GraspObject": "ipcgrasp.grasp.object",
    "Gripper": "ipcgrasp.grasp.gripper",
    "SimParams": "ipcgrasp.grasp.params",
    "robustness": "ipcgrasp.grasp.simulate",
    "shipped_grippers": "ipcgrasp.grasp.description",
    "simulate_grasp": "ipcgrasp.grasp.simulate",
}
"""Public name -> the module that defines it."""

__all__ = ["GraspObject", "Gripper", "SimParams", "__version__", "robustness", "shipped_grippers", "simulate_grasp"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ipcgrasp")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0+unknown"


_lazy_getattr, __dir__ = lazy_names(globals(), _HOMES)


def __getattr__(name: str):
    if name == "__version__":
        globals()[name] = value = _version()  # later look-ups skip __getattr__
        return value
    return _lazy_getattr(name)
