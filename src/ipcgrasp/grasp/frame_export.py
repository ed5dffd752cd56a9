"""A trajectory's bodies as mesh files, one per step and body, for Blender or any renderer
(`ipcgrasp frames`): `<body>_<step>.obj` (or .ply) with the body's world vertex positions (m, z
up) after that step and its surface triangles, and `frames.csv` (step, time in s, phase) to
time them. The trajectory must hold vertex positions (`simulate --trajectory OUT.nc --vertices`).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ipcgrasp.io import write_bytes_atomic

FRAME_FORMATS = ("obj", "ply")
INDEX_FILE = "frames.csv"


def trajectory_bodies(ds) -> list[str]:
    """The bodies whose vertex positions the trajectory Dataset `ds` holds; ValueError naming the
    fix when there are none."""
    bodies = [name[len("vertices_"):] for name in ds.data_vars if name.startswith("vertices_")]
    if not bodies:
        raise ValueError("the trajectory holds no vertex positions; fix: record it with `ipcgrasp simulate ... "
                         "--trajectory OUT.nc --vertices`")
    return bodies


def frame_steps(ds, every: int = 1) -> list[int]:
    """The steps written: every `every`-th from the first, and the last."""
    steps = list(range(0, ds.sizes["time"], every))
    return steps if steps[-1] == ds.sizes["time"] - 1 else steps + [ds.sizes["time"] - 1]


def frame_files(ds, directory: str | os.PathLike, file_format: str = "obj", every: int = 1) -> list[Path]:
    """Every file `write_frames` writes for these arguments: the meshes, then INDEX_FILE."""
    directory = Path(directory)
    width = len(str(ds.sizes["time"] - 1))
    return [directory / f"{body}_{step:0{width}d}.{file_format}" for step in frame_steps(ds, every)
            for body in trajectory_bodies(ds)] + [directory / INDEX_FILE]


def write_frames(ds, directory: str | os.PathLike, file_format: str = "obj", every: int = 1) -> list[Path]:
    """Write `frame_files(ds, directory, file_format, every)`, each atomically; return them."""
    import trimesh

    if file_format not in FRAME_FORMATS:
        raise ValueError(f"frame format {file_format!r}; fix: one of {', '.join(FRAME_FORMATS)}")
    paths = frame_files(ds, directory, file_format, every)
    bodies, steps = trajectory_bodies(ds), frame_steps(ds, every)
    faces = {body: np.asarray(ds[f"faces_{body}"].values, dtype=np.int64) for body in bodies}
    meshes = iter(paths)
    for step in steps:
        for body in bodies:
            mesh = trimesh.Trimesh(ds[f"vertices_{body}"].values[step], faces[body], process=False)
            data = mesh.export(file_type=file_format)
            write_bytes_atomic(next(meshes), data.encode() if isinstance(data, str) else data)
    write_bytes_atomic(paths[-1], _index(ds, steps).encode())
    return paths


def _index(ds, steps: list[int]) -> str:
    """INDEX_FILE's text: one row per step written, its simulated time (s) and phase."""
    names = ds.phase.attrs["flag_meanings"].split()
    out = io.StringIO()
    out.write("step,time_s,phase\n")
    for step in steps:
        out.write(f"{step},{float(ds.time.values[step]):.6f},{names[int(ds.phase.values[step])]}\n")
    return out.getvalue()
