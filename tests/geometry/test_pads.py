"""Parametric jaw pads, backing plates and their tetrahedral meshes."""

import numpy as np
import pytest
import shapely
import trimesh
from shapely.geometry import MultiPoint, Polygon

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.geometry import (
    PAD_KINDS,
    TetMeshError,
    backing_plate,
    make_pad,
    pad_outline,
    pad_surface,
    tet_volumes,
    tetrahedralize,
)

MM = 1e-3
SCALE = 0.8
DEPTH = 3 * MM * SCALE


@pytest.fixture(scope="module")
def yumi_dir():
    return resolve_data_dir() / "yumi_meshes"


def footprint(mesh):
    """Projection of a surface mesh onto the xy-plane (union of its projected triangles)."""
    triangles = mesh.triangles[:, :, :2]
    e1, e2 = triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]
    area = np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]) / 2
    return shapely.union_all([Polygon(t) for t in triangles[area > 1e-16]])


def assert_same_footprint(a, b, tol=1e-7):
    """Same outline to `tol` metres (round_pad.obj stores 8 decimals: 10 nm)."""
    assert a.exterior.hausdorff_distance(b.exterior) <= tol
    assert a.symmetric_difference(b).area <= tol * a.length


def test_bundled_round_pad_frame_is_unscaled_metres_in_the_tooltip_frame(yumi_dir):
    bundled = trimesh.load(yumi_dir / "round_pad.obj", process=True)
    np.testing.assert_allclose(bundled.bounds, [[-17.5 * MM, -10 * MM, -3 * MM], [10 * MM, 10 * MM, 0.0]],
                               atol=1e-12)
    assert bundled.is_watertight and bundled.volume > 0


def test_generated_rounded_pad_matches_bundled_round_pad(yumi_dir):
    bundled = trimesh.load(yumi_dir / "round_pad.obj", process=True)
    bundled.apply_scale(SCALE)  # the original study scaled it by 0.8 about the tooltip origin
    generated = pad_surface("rounded")
    np.testing.assert_allclose(generated.bounds, bundled.bounds, atol=1e-12)
    np.testing.assert_allclose(generated.bounds, [[-14 * MM, -8 * MM, -DEPTH], [8 * MM, 8 * MM, 0.0]],
                               atol=1e-12)
    assert generated.volume == pytest.approx(bundled.volume, rel=1e-9)
    bundled_footprint = footprint(bundled)
    assert_same_footprint(footprint(generated), bundled_footprint)
    assert_same_footprint(pad_outline("rounded"), bundled_footprint)
    # the comparison can tell outlines apart: a coarser arc differs by more than the tolerance
    coarse = pad_outline("rounded", arc_segments=8)
    assert coarse.exterior.hausdorff_distance(bundled_footprint.exterior) > 1e-5


def test_tet_mesh_of_rounded_pad_keeps_the_bundled_geometry(yumi_dir):
    bundled = trimesh.load(yumi_dir / "round_pad.obj", process=True)
    bundled.apply_scale(SCALE)
    pad = make_pad("rounded")
    assert pad.volume == pytest.approx(bundled.volume, rel=1e-9)
    assert_same_footprint(footprint(pad.surface_mesh()), footprint(bundled))


def test_outline_areas_are_closed_form():
    r, length = 10 * MM, 17.5 * MM
    half_16gon = 16 * 0.5 * r**2 * np.sin(np.pi / 16)
    assert pad_outline("rounded").area == pytest.approx(SCALE**2 * (2 * r * length + half_16gon), rel=1e-12)
    assert pad_outline("rounded", arc_segments=400).area == pytest.approx(
        SCALE**2 * (2 * r * length + np.pi * r**2 / 2), rel=1e-4)
    assert pad_outline("rectangular").area == pytest.approx(22 * MM * 16 * MM, rel=1e-12)


def test_rectangular_pad_fills_the_rounded_bounding_box_with_square_corners():
    surface = pad_surface("rectangular")
    np.testing.assert_allclose(surface.bounds, pad_surface("rounded").bounds, atol=1e-15)
    assert surface.is_watertight and surface.volume == pytest.approx(22 * MM * 16 * MM * DEPTH, rel=1e-12)
    outline = pad_outline("rectangular")
    assert outline.area == pytest.approx(outline.envelope.area, rel=1e-12)
    corners = {(x, y) for x in (-14 * MM, 8 * MM) for y in (-8 * MM, 8 * MM)}
    for corner in corners:
        assert np.min(np.linalg.norm(surface.vertices[:, :2] - corner, axis=1)) < 1e-15


@pytest.mark.parametrize("kind", PAD_KINDS)
def test_pad_surface_is_closed_and_outward(kind):
    surface = pad_surface(kind)
    assert surface.is_watertight and surface.is_winding_consistent and surface.volume > 0
    front = surface.face_normals[:, 2] > 0.99
    assert np.allclose(surface.triangles_center[front, 2], 0.0)
    back = surface.face_normals[:, 2] < -0.99
    assert np.allclose(surface.triangles_center[back, 2], -DEPTH)


@pytest.mark.parametrize("kind", PAD_KINDS)
@pytest.mark.parametrize("resolution", [3e-3, 1.5e-3])
def test_pad_tets_are_positive_and_fill_the_surface(kind, resolution):
    pad = make_pad(kind, resolution=resolution)
    volumes = tet_volumes(pad.nodes, pad.tets)
    assert volumes.min() > 0
    bound = resolution**3 / (6 * np.sqrt(2))
    # TetGen's final mesh optimisation may leave some tets somewhat above the bound
    assert volumes.max() <= 1.5 * bound and volumes.mean() <= bound
    assert volumes.sum() == pytest.approx(pad_surface(kind).volume, rel=1e-9)
    assert np.array_equal(np.unique(pad.tets), np.arange(len(pad.nodes)))
    surface = pad.surface_mesh()
    assert surface.is_watertight and surface.is_winding_consistent
    assert surface.volume == pytest.approx(volumes.sum(), rel=1e-9)
    np.testing.assert_allclose(pad.dimensions, (22 * MM, 16 * MM, DEPTH), rtol=1e-12)
    assert pad.kind == kind


@pytest.mark.parametrize("kind", PAD_KINDS)
def test_back_face_nodes_are_exactly_the_nodes_at_min_z_and_cover_it(kind):
    pad = make_pad(kind)
    z = pad.nodes[:, 2]
    back = np.zeros(len(z), dtype=bool)
    back[pad.back_nodes] = True
    np.testing.assert_allclose(z[back], -DEPTH, atol=1e-15)
    assert np.all(z[~back] > -DEPTH + 1e-6)
    assert back.sum() >= 40
    hull = MultiPoint(pad.nodes[back, :2]).convex_hull
    assert hull.area == pytest.approx(pad_outline(kind).area, rel=1e-9)


def test_default_resolution_is_close_to_the_original_pad_mesh():
    # the original round_pad.msh: 212 nodes, 497 tets
    pad = make_pad("rounded")
    assert 150 <= len(pad.nodes) <= 300
    assert 400 <= len(pad.tets) <= 900


def test_finer_resolution_gives_more_tets():
    counts = [len(make_pad("rounded", resolution=h).tets) for h in (4e-3, 2e-3, 1e-3)]
    assert counts[0] < counts[1] < counts[2]


def test_make_pad_is_cached_and_read_only():
    pad = make_pad("rounded")
    assert make_pad("rounded") is pad
    with pytest.raises(ValueError):
        pad.nodes[0, 0] = 1.0


def test_tetrahedralize_orients_tets_positively_for_an_inside_out_surface():
    surface = pad_surface("rounded")
    surface.invert()
    nodes, tets = tetrahedralize(surface)
    volumes = tet_volumes(nodes, tets)
    assert volumes.min() > 0 and volumes.sum() == pytest.approx(-surface.volume, rel=1e-9)


def test_tetrahedralize_rejects_open_and_self_intersecting_surfaces():
    box = trimesh.creation.box(extents=[0.01] * 3)
    open_box = box.copy()
    open_box.update_faces(np.arange(1, 12))
    with pytest.raises(TetMeshError, match="watertight"):
        tetrahedralize(open_box)
    shifted = box.copy()
    shifted.apply_translation([0.004, 0.003, 0.002])
    overlapping = trimesh.util.concatenate([box, shifted])
    assert overlapping.is_watertight
    with pytest.raises(TetMeshError, match="self-intersect"):
        tetrahedralize(overlapping)
    # the process is still healthy after TetGen's failure (it ran in a child process)
    assert len(tetrahedralize(box, max_volume=1e-7)[1]) > 0


def test_unknown_kind_and_bad_parameters():
    with pytest.raises(ValueError, match="unknown pad kind"):
        make_pad("oval")
    with pytest.raises(ValueError, match="resolution"):
        make_pad("rounded", resolution=0.0)
    with pytest.raises(ValueError, match="gap"):
        backing_plate(gap=-1e-4)


def test_backing_plate_touches_the_pad_back_face_without_overlap():
    plate = backing_plate()
    pad = pad_surface("rounded")
    np.testing.assert_allclose(plate.extents, [37.5 * MM, 15 * MM, 2 * MM], rtol=1e-12)
    np.testing.assert_allclose(plate.bounds[:, :2], [[-35 * MM, -7.5 * MM], [2.5 * MM, 7.5 * MM]], atol=1e-15)
    assert plate.bounds[1, 2] == pad.bounds[0, 2] == -DEPTH
    assert plate.is_watertight and plate.volume > 0


def test_backing_plate_with_the_original_gap_is_the_original_placed_cube(yumi_dir):
    # the original: unit cube.obj scaled by (3.75, 1.5, 0.2) cm, moved by (-3.5, -0.75, -0.5) cm
    cube = trimesh.load(yumi_dir / "cube.obj", process=True)
    np.testing.assert_allclose(cube.bounds, [[0, 0, 0], [1, 1, 1]])
    cube.apply_transform(np.diag([0.0375, 0.015, 0.002, 1.0]))
    cube.apply_translation([-0.035, -0.0075, -0.005])
    np.testing.assert_allclose(backing_plate(gap=0.6 * MM).bounds, cube.bounds, atol=1e-15)
    np.testing.assert_allclose(cube.bounds[:, 2], [-5 * MM, -3 * MM], atol=1e-15)
