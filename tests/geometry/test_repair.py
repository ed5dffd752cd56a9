"""Opt-in mesh repair (`geometry.repair.repair_mesh`, `--repair`): each kind of defect made on a
known solid and repaired to a closed, outward-oriented surface with the change reported; what
cannot be repaired refused; the refusals without it name --repair."""

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.geometry.mesh import MeshError, validate_mesh
from ipcgrasp.geometry.repair import MeshRepairError, repair_mesh, surface_distance

SIDE = 0.03  # m


def sphere():
    return trimesh.creation.icosphere(subdivisions=3, radius=SIDE / 2)  # 642 vertices


def test_holes_are_filled_and_reported():
    solid = sphere()
    holed = solid.copy()
    holed.update_faces(np.arange(len(holed.faces)) % 97 != 0)  # 14 triangles removed
    holed.remove_unreferenced_vertices()
    assert not holed.is_watertight
    with pytest.raises(MeshError, match="not watertight.*--repair"):
        validate_mesh(holed, "holed")
    report = repair_mesh(holed, "holed")
    assert report.mesh.is_watertight and report.mesh.is_winding_consistent and report.mesh.volume > 0
    boundary = holed.edges_sorted[trimesh.grouping.group_rows(holed.edges_sorted, require_count=1)]
    loops = len(trimesh.graph.connected_components(boundary))  # adjacent removed faces make one hole
    assert report.holes_filled == loops >= 10
    assert abs(report.volume_after / solid.volume - 1.0) < 0.01  # the holes were small triangles
    assert f"filled {loops} hole(s)" in report.summary() and "cm^3" in report.summary()


def test_zero_area_faces_that_close_t_junctions_are_rebuilt():
    """A box whose top face is split at an edge midpoint m: the neighbour across that edge keeps
    the long edge, and a zero-area triangle (a, m, b) closes the T-junction."""
    box = trimesh.creation.box([SIDE] * 3)
    vertices = np.vstack([box.vertices, box.vertices[[0, 1]].mean(axis=0)])
    m = len(vertices) - 1
    faces = [list(f) for f in box.faces]
    # split the face holding edge (0, 1) into two through m, and close with a sliver (0, 1, m)
    holder = next(i for i, f in enumerate(faces) if {0, 1} <= set(f))
    a, b, c = faces[holder]
    rolled = [a, b, c]
    while {rolled[0], rolled[1]} != {0, 1}:
        rolled = rolled[1:] + rolled[:1]
    u, v, w = rolled
    faces[holder] = [u, m, w]
    faces.append([m, v, w])
    faces.append([u, v, m][::-1])  # the zero-area triangle
    mesh = trimesh.Trimesh(vertices, np.array(faces), process=False)
    with pytest.raises(MeshError, match="zero-area.*--repair"):
        validate_mesh(mesh, "t-junction")
    report = repair_mesh(mesh, "t-junction")
    assert report.faces_removed >= 1
    assert report.mesh.is_watertight
    assert report.volume_after == pytest.approx(SIDE**3, rel=1e-6)


def test_flipped_faces_are_turned_outward():
    solid = sphere()
    flipped = solid.copy()
    flipped.faces[::3] = flipped.faces[::3, ::-1]
    assert not flipped.is_winding_consistent
    report = repair_mesh(flipped, "flipped")
    assert report.mesh.is_winding_consistent and report.mesh.volume > 0
    assert report.volume_after == pytest.approx(solid.volume, rel=1e-9)
    assert surface_distance(report.mesh, solid) < 1e-9


def test_overlapping_and_touching_pieces_become_one_solid_counting_shared_volume_once():
    """Two 3 cm cubes overlapping by half (union 40.5 cm^3, 54 cm^3 summed) and a third 0.02 mm
    beside the second, within the weld gap."""
    one = trimesh.creation.box([SIDE] * 3)
    two = one.copy().apply_translation([SIDE / 2, 0, 0])
    three = one.copy().apply_translation([SIDE / 2 + SIDE + 2e-5, 0, 0])  # 0.02 mm apart
    mesh = trimesh.util.concatenate([one, two, three])
    with pytest.raises(MeshError, match="3 separate closed surfaces.*--repair"):
        validate_mesh(mesh, "cubes")
    report = repair_mesh(mesh, "cubes")
    assert report.pieces == 3 and report.welded
    assert report.volume_before == pytest.approx(3 * SIDE**3)
    union = 2.5 * SIDE**3 + 2e-5 * SIDE**2
    assert report.volume_after == pytest.approx(union, rel=0.01)  # the weld grows it by <= 0.05 mm
    assert report.distance <= 0.5e-4 + 1e-9
    assert "joined 3 pieces" in report.summary()


def test_separate_objects_and_sheets_are_refused_naming_the_mesh_and_the_fix():
    far = trimesh.util.concatenate([trimesh.creation.box([SIDE] * 3),
                                    trimesh.creation.box([SIDE] * 3).apply_translation([3 * SIDE, 0, 0])])
    with pytest.raises(MeshRepairError, match=r"^apart: .*2 separate solids.*fix: export one object per file"):
        repair_mesh(far, "apart")
    sheet = trimesh.Trimesh([[0, 0, 0], [SIDE, 0, 0], [0, SIDE, 0], [SIDE, SIDE, 0]], [[0, 1, 2], [1, 3, 2]])
    with pytest.raises(MeshRepairError, match=r"^sheet: .*fix"):
        repair_mesh(sheet, "sheet")


@pytest.mark.slow
def test_a_large_surface_is_simplified_within_the_stated_bound():
    fine = trimesh.creation.icosphere(subdivisions=5, radius=SIDE)  # 10242 vertices
    report = repair_mesh(fine, "fine", max_vertices=2000, tolerance=1e-4)
    assert report.vertices_after < len(fine.vertices)
    assert report.simplified_distance is not None and report.simplified_distance <= 1e-4
    assert surface_distance(report.mesh, fine) <= 1e-4 + 1e-6
    assert repair_mesh(fine, "fine", max_vertices=None).vertices_after == len(fine.vertices)


def test_an_object_from_a_repaired_file(tmp_path):
    holed = sphere()
    holed.update_faces(np.arange(len(holed.faces)) % 97 != 0)
    path = tmp_path / "holed.stl"
    holed.export(path)
    with pytest.raises(MeshError, match="--repair"):
        GraspObject.from_file(path, 0.02)
    with pytest.warns(UserWarning, match="filled"):
        obj = GraspObject.from_file(path, 0.02, repair=True)
    assert obj.repair.holes_filled > 0 and obj.mesh.is_watertight
