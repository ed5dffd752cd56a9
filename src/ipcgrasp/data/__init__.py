"""Datasets: the object registry, where the REACH data lives, and its loaders."""

from ipcgrasp.data.location import DataNotFoundError, resolve_data_dir
from ipcgrasp.data.registry import ObjectInfo, load_registry

__all__ = ["DataNotFoundError", "ObjectInfo", "load_registry", "resolve_data_dir"]
