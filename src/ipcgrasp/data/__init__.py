"""Datasets: the object registry, where the REACH data lives, its loaders, and the import of a
user's own physical trials into that layout (`data.own`; `data.recorded`: the gripper that
recorded a data directory's trials)."""

from ipcgrasp.data.location import DataNotFoundError, resolve_data_dir
from ipcgrasp.data.reach import (
    DataFormatError,
    MissingDataError,
    PhysicalGrasps,
    list_objects,
    load_object,
    load_physical_grasps,
    object_mesh_path,
)
from ipcgrasp.data.registry import ObjectInfo, load_registry

__all__ = [
    "DataFormatError",
    "DataNotFoundError",
    "MissingDataError",
    "ObjectInfo",
    "PhysicalGrasps",
    "list_objects",
    "load_object",
    "load_physical_grasps",
    "load_registry",
    "object_mesh_path",
    "resolve_data_dir",
]
