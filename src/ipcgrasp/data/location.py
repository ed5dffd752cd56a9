"""Where the REACH-layout data directory is (docs/data.md, "Directory layout"), and how to get it."""

from __future__ import annotations

import os
from pathlib import Path

from ipcgrasp.paths import RESOURCES_REACH, SHARED_REACH

ENV_VAR = "IPCGRASP_DATA"
REQUIRED_SUBDIRS = ("object_meshes", "phys_grasps_json")
FETCH_HINT = (
    "The data is the public archive data.zip of github.com/BerkeleyAutomation/ipc-graspsim "
    "(commit 90c8b9b198fce13646454da8c3c199d4abc02e4d). Fetch it into resources/reach with "
    "`ipcgrasp data fetch`, or point ipcgrasp at an existing copy with "
    f"`--config data_dir=DIR` (snakemake), `--data DIR` (CLI) or the environment variable {ENV_VAR}."
)


class DataNotFoundError(FileNotFoundError):
    """No directory in the REACH layout was found where we looked."""


def is_reach_dir(path: Path) -> bool:
    """True when `path` holds the REACH layout's object_meshes/ and phys_grasps_json/."""
    return all((path / sub).is_dir() for sub in REQUIRED_SUBDIRS)


def candidate_dirs(explicit: str | os.PathLike | None = None, environ=None) -> list[tuple[str, Path, bool]]:
    """The places searched, in order, as (label, path, chosen_by_user).

    Order: explicit setting, $IPCGRASP_DATA, ../shared/data/reach, resources/reach.
    """
    environ = os.environ if environ is None else environ
    found = []
    if explicit:
        found.append(("data_dir setting", Path(explicit), True))
    if environ.get(ENV_VAR):
        found.append((f"${ENV_VAR}", Path(environ[ENV_VAR]), True))
    found.append(("bundled shared data", SHARED_REACH, False))
    found.append(("fetched data", RESOURCES_REACH, False))
    return found


def resolve_data_dir(explicit: str | os.PathLike | None = None, environ=None) -> Path:
    """Return the first REACH-layout directory among `candidate_dirs`.

    An explicit directory (or $IPCGRASP_DATA) that lacks the layout is an error rather than
    silently skipped, so a typo never falls back to other data.
    """
    tried = []
    for label, path, chosen_by_user in candidate_dirs(explicit, environ):
        if is_reach_dir(path):
            return path.resolve()
        if chosen_by_user:
            raise DataNotFoundError(
                f"{path} ({label}) is not a REACH data directory: it needs "
                f"{' and '.join(s + '/' for s in REQUIRED_SUBDIRS)}. {FETCH_HINT}")
        tried.append(f"{path} ({label})")
    raise DataNotFoundError("no REACH data directory found; looked in " + ", ".join(tried) + ". " + FETCH_HINT)


def describe_data_dir(path: Path, registry: dict) -> dict:
    """Inventory of a REACH directory: which objects have a mesh, physical grasps, a registry mass."""
    path = Path(path)
    meshes = {p.stem for p in (path / "object_meshes").glob("*.obj")}
    grasps = {p.stem for p in (path / "phys_grasps_json").glob("*.json")}
    objects = {}
    for name in sorted(meshes | grasps):
        info = registry.get(name)
        objects[name] = {
            "mesh": name in meshes,
            "physical_grasps": name in grasps,
            "mass_kg": info.mass if info else None,
            "split": info.split if info else None,
        }
    return {"data_dir": str(path.resolve()), "objects": objects,
            "jaw_meshes": sorted(p.name for p in (path / "yumi_meshes").glob("*"))}
