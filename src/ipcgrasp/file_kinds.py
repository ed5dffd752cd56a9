"""What a NetCDF file given to `ipcgrasp plot`, `view` or `replay` is, checked before it is read.

ipcgrasp writes three kinds of NetCDF file, told apart by the variables they hold:

- a trial's trajectory (`simulate --trajectory`, `replay --trajectory`): read by `plot` and `view`;
- a study cube of simulated trials (results/grid/, results/evaluation/ipcgrasp.nc): read by
  `replay`;
- a study cube of a baseline's predictions (results/baselines/, results/evaluation/<model>.nc):
  read by the study's tables and figures.

`open_as(path, kind)` returns the file's Dataset (loaded, the file closed) when it is `kind`, and
otherwise raises FileKindError saying what the file is instead (another kind and the command that
reads it, a NetCDF file of other variables, or not NetCDF at all: empty, JSON text, ...) and the
fix, before any work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

NETCDF_SIGNATURES = (b"\x89HDF\r\n\x1a\n", b"CDF\x01", b"CDF\x02", b"CDF\x05")
"""The first bytes of a NetCDF file: NetCDF-4 (HDF5), classic, 64-bit offset, 64-bit data."""


class FileKindError(ValueError):
    """A file is not the kind the command reads; the message names the file, what it is, and the fix."""


@dataclass(frozen=True)
class FileKind:
    """A kind of NetCDF file: its `name`, the `variables` every such file holds, the commands
    that read it and where such files come from."""

    name: str
    variables: tuple[str, ...]
    readers: str
    source: str


TRAJECTORY = FileKind("a trial's trajectory",
                      ("phase", "pad_normal_force", "pad_friction_force", "jaw_opening", "object_height",
                       "object_rotation"),
                      "`ipcgrasp plot`, `ipcgrasp view` and `ipcgrasp frames`",
                      "written by `ipcgrasp simulate --trajectory` or `ipcgrasp replay --trajectory`")
SIMULATION_CUBE = FileKind("a study cube of simulated trials",
                           ("success", "failure_mode", "reason", "seed", "force_1", "force_2", "psi_th"),
                           "`ipcgrasp replay`", "e.g. results/grid/rounded.nc or results/evaluation/ipcgrasp.nc")
PREDICTION_CUBE = FileKind("a study cube of a baseline's predictions", ("success", "score", "runtime", "seed"),
                           "the study's tables and figures (`./run.sh study`)",
                           "e.g. results/baselines/penalty.nc or results/evaluation/penalty.nc")
KINDS = (TRAJECTORY, SIMULATION_CUBE, PREDICTION_CUBE)


def identify(ds) -> FileKind | None:
    """The first of KINDS whose variables `ds` (an xarray Dataset) all holds, else None."""
    return next((kind for kind in KINDS if all(name in ds for name in kind.variables)), None)


def open_as(path: str | os.PathLike, kind: FileKind):
    """The Dataset of the NetCDF file `path` (loaded, the file closed) when it is `kind`;
    FileKindError naming what it is instead and the fix (module docstring)."""
    import xarray as xr

    path = Path(path)
    fix = f"give {kind.name} ({kind.source})"
    if not path.is_file():
        raise FileKindError(f"{path}: no such file; fix: {fix}")
    _check_netcdf_signature(path, fix)
    try:
        with xr.open_dataset(path, engine="netcdf4") as ds:
            ds = ds.load()
    except (OSError, ValueError, RuntimeError) as exc:
        raise FileKindError(f"{path}: a damaged NetCDF file ({exc}); fix: {fix}") from None
    found = identify(ds)
    if found is kind:
        return ds
    if found is not None:
        raise FileKindError(f"{path} is {found.name}, which {found.readers} read, not {kind.name}; fix: {fix}")
    missing = [name for name in kind.variables if name not in ds]
    raise FileKindError(f"{path} is a NetCDF file that ipcgrasp did not write as {kind.name}: it lacks the "
                        f"variable(s) {', '.join(missing)}; fix: {fix}")


def _check_netcdf_signature(path: Path, fix: str) -> None:
    """FileKindError unless `path` starts like a NetCDF file, saying what it looks like instead."""
    with open(path, "rb") as file:
        head = file.read(64)
    if head.startswith(NETCDF_SIGNATURES):
        return
    if not head:
        what = "an empty file"
    elif head.lstrip()[:1] in (b"{", b"["):
        what = "JSON text"
    elif head.startswith(b"\x89PNG"):
        what = "a PNG picture"
    else:
        what = f"a file that starts with {head[:8]!r}"
    raise FileKindError(f"{path} is {what}, not a NetCDF file; fix: {fix}")
