"""The real-object set for tests and benchmarks: meshes nobody here made, read from pybullet_data.

pybullet_data ships with the `pybullet` package from PyPI (the `bench` extra of pyproject.toml,
not a runtime dependency). Each mesh is read as it is in the package (geometry only: texture
coordinates and normals are dropped), then scaled by one rule:

- size: uniformly, so that its longest bounding-box side is SIZE (60 mm), and moved so its
  bounding-box centre is the origin;
- mass (`object_mass`): DENSITY (500 kg/m^3, wood or a hollow plastic toy) times the enclosed
  volume of the closed mesh the intake makes of it, clipped to MASS_RANGE (20-200 g).

The meshes are not repaired here: half of them are refused by `validate_mesh` as they are, which
is what `repair_mesh` is measured on (docs/own_objects.md). `objects()` returns them in the order
of OBJECTS; `skip_without_pybullet()` skips a pytest test when pybullet_data is missing.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.geometry.repair import MeshRepairError, RepairReport, repair_mesh

SIZE = 0.06
"""Longest bounding-box side (m) every object is scaled to."""
DENSITY = 500.0
"""Mean density (kg/m^3) giving each object's mass from its enclosed volume."""
MASS_RANGE = (0.02, 0.2)
"""Smallest and largest mass (kg) of an object: DENSITY x volume clipped to it."""

OBJECTS = {
    "bunny": "bunny.obj",
    "duck": "duck.obj",
    "mug": "objects/mug.obj",
    "teddy": "teddy2_VHACD_CHs.obj",
    "lego": "lego/lego.obj",
    "domino": "domino/domino.obj",
    "soccerball": "soccerball.obj",
    "stone": "stone.obj",
    "random_000": "random_urdfs/000/000.obj",
    "random_001": "random_urdfs/001/001.obj",
    "random_002": "random_urdfs/002/002.obj",
    "random_003": "random_urdfs/003/003.obj",
    "random_006": "random_urdfs/006/006.obj",
    "random_008": "random_urdfs/008/008.obj",
}
"""Name -> path inside pybullet_data. Six everyday shapes (the Stanford bunny, a duck, a mug with
a handle, a teddy made of 15 convex pieces, a lego brick, a domino), a finely tessellated ball, a
flat stone, and six of the procedurally generated `random_urdfs` (each several overlapping convex
pieces)."""


@dataclass(frozen=True)
class RealObject:
    """One mesh of the set: `name`, `path` (the file in pybullet_data), `mesh` (scaled, m, not
    validated) and `scale` (metres per file unit)."""

    name: str
    path: str
    mesh: trimesh.Trimesh = field(repr=False)
    scale: float


def data_path() -> str | None:
    """pybullet_data's directory, or None when pybullet is not installed."""
    try:
        import pybullet_data
    except ImportError:
        return None
    return pybullet_data.getDataPath()


def skip_without_pybullet() -> str:
    """pybullet_data's directory; skips the calling pytest test when it is missing."""
    import pytest

    path = data_path()
    if path is None:
        pytest.skip("needs pybullet_data: pip install -e '.[bench]' (the pybullet package from PyPI)")
    return path


def load(name: str, root: str | None = None) -> RealObject:
    """The object `name` of OBJECTS, scaled (module docstring). FileNotFoundError naming the fix
    when pybullet_data is missing."""
    root = root or data_path()
    if root is None:
        raise FileNotFoundError("the real-object set needs pybullet_data; fix: pip install -e '.[bench]' "
                                "(the pybullet package from PyPI)")
    path = os.path.join(root, OBJECTS[name])
    raw = trimesh.load(path, process=False, force="mesh")
    mesh = trimesh.Trimesh(np.asarray(raw.vertices, dtype=np.float64), np.asarray(raw.faces), process=False)
    scale = SIZE / float(mesh.extents.max())
    mesh.apply_translation(-mesh.bounds.mean(axis=0))
    mesh.apply_scale(scale)
    return RealObject(name, path, mesh, scale)


def objects(names=None, root: str | None = None) -> list[RealObject]:
    """The objects `names` (default: all of OBJECTS, in its order)."""
    return [load(name, root) for name in (names or OBJECTS)]


def object_mass(volume: float) -> float:
    """Mass (kg) of an object enclosing `volume` (m^3): DENSITY x volume clipped to MASS_RANGE."""
    return float(np.clip(DENSITY * volume, *MASS_RANGE))


def grasp_object(name: str, root: str | None = None) -> tuple[GraspObject | None, RepairReport | str]:
    """The object `name` of OBJECTS repaired (`repair_mesh`, its warnings silenced), scaled and
    weighed (`object_mass` of the repaired volume), with the repair's report; (None, why) when the
    repair refuses it."""
    raw = load(name, root)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = repair_mesh(raw.mesh, name)
    except MeshRepairError as exc:
        return None, f"refused: {exc}"
    return GraspObject.from_mesh(report.mesh, object_mass(report.volume_after), name), report
