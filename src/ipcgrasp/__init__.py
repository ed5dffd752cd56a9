"""ipcgrasp: grasp simulation for parallel-jaw grippers with compliant pads, by IPC."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ipcgrasp")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

__all__ = ["__version__"]
