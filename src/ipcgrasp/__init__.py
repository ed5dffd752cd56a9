"""ipcgrasp: grasp simulation for parallel-jaw grippers with compliant pads, by IPC.

Public API::

    from ipcgrasp import GraspObject, SimParams, simulate_grasp, robustness
    from ipcgrasp import Gripper, shipped_grippers   # gripper descriptions (docs/grippers.md)
"""

from importlib.metadata import PackageNotFoundError, version

from ipcgrasp.grasp.description import shipped_grippers
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.simulate import robustness, simulate_grasp

try:
    __version__ = version("ipcgrasp")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

__all__ = ["GraspObject", "Gripper", "SimParams", "__version__", "robustness", "shipped_grippers", "simulate_grasp"]
