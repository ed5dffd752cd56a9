"""Object mesh loading, validation, repairs and mass properties."""

import re
import warnings
from unittest import mock

import numpy as np
import pytest
import trimesh

from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.geometry.mesh import MIN_GRASP_WIDTH
from ipcgrasp.geometry.tetra import self_intersections
from ipcgrasp.geometry import (
    MeshCheckWarning,
    MeshError,
    MeshRepairWarning,
    load_object_mesh,
    mass_properties,
    validate_mesh,
)

CUBE_SIDE = 0.03
CUBE_MASS = 0.003


@pytest.fixture(scope="module")
def cube_path():
    return resolve_data_dir() / "object_meshes" / "cube_3cm.obj"


def cube(side=CUBE_SIDE):
    return trimesh.creation.box(extents=[side] * 3)


def write(mesh, path):
    mesh.export(path)
    return path


def test_bundled_cube_loads_and_validates_without_repairs(cube_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mesh = load_object_mesh(cube_path)
        report = validate_mesh(mesh, "cube_3cm")
    assert report.watertight and report.winding_consistent
    assert (report.n_vertices, report.n_faces) == (8, 12)
    assert report.volume == pytest.approx(CUBE_SIDE**3, rel=1e-12)
    np.testing.assert_allclose(report.extents, [CUBE_SIDE] * 3, rtol=1e-12)
    assert report.repairs == ()


def test_cube_mass_properties_match_closed_form(cube_path):
    props = mass_properties(load_object_mesh(cube_path), CUBE_MASS)
    a, m = CUBE_SIDE, CUBE_MASS
    assert props.mass == m
    assert props.volume == pytest.approx(a**3, rel=1e-12)
    assert props.density == pytest.approx(m / a**3, rel=1e-12)
    np.testing.assert_allclose(props.center_of_mass, 0.0, atol=1e-15)
    np.testing.assert_allclose(props.inertia, m * a**2 / 6 * np.eye(3), rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(props.second_moment, m * a**2 / 12 * np.eye(3), rtol=1e-12, atol=1e-20)


def test_shifted_box_second_moment_about_origin_is_closed_form():
    # box [0,a]x[0,b]x[0,c]: integral x^2 = m a^2/3, integral x y = m a b/4
    sides = np.array([0.02, 0.03, 0.05])
    mesh = trimesh.creation.box(bounds=[[0, 0, 0], sides])
    m = 0.7
    props = mass_properties(mesh, m)
    expected = m * np.outer(sides, sides) / 4
    np.fill_diagonal(expected, m * sides**2 / 3)
    np.testing.assert_allclose(props.center_of_mass, sides / 2, rtol=1e-12)
    np.testing.assert_allclose(props.second_moment, expected, rtol=1e-12)
    a, b, c = sides
    np.testing.assert_allclose(np.diag(props.inertia), m / 12 * np.array([b*b + c*c, a*a + c*c, a*a + b*b]),
                               rtol=1e-12)


def test_tetrahedron_mass_properties_match_closed_form():
    # integral X X^T dV over a tet = V/20 (sum v_i v_i^T + (sum v_i)(sum v_i)^T)
    rng = np.random.default_rng(5)
    for _ in range(20):
        v = rng.normal(scale=0.02, size=(4, 3))
        if np.linalg.det(v[1:] - v[0]) < 0:
            v[[1, 2]] = v[[2, 1]]
        mesh = trimesh.Trimesh(v, [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], process=False)
        volume = np.linalg.det(v[1:] - v[0]) / 6
        m = rng.uniform(0.001, 1.0)
        props = mass_properties(mesh, m)
        s = v.sum(axis=0)
        second = m / 20 * (v.T @ v + np.outer(s, s))
        center = v.mean(axis=0)
        assert props.volume == pytest.approx(volume, rel=1e-10)
        np.testing.assert_allclose(props.center_of_mass, center, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(props.second_moment, second, rtol=1e-9, atol=1e-14 * m)
        central = second - m * np.outer(center, center)
        np.testing.assert_allclose(props.inertia, np.trace(central) * np.eye(3) - central,
                                   rtol=1e-9, atol=1e-14 * m)


def test_mass_must_be_positive(cube_path):
    mesh = load_object_mesh(cube_path)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="mass"):
            mass_properties(mesh, bad)


def test_open_mesh_is_rejected_naming_the_file(tmp_path):
    mesh = cube()
    mesh.update_faces(np.arange(1, len(mesh.faces)))
    path = write(mesh, tmp_path / "open_box.obj")
    with pytest.raises(MeshError) as err:
        load_object_mesh(path)
    message = str(err.value)
    assert "open_box.obj" in message and "not watertight" in message
    assert "3 boundary edge(s)" in message and "fix" in message


def test_open_or_inside_out_mesh_has_no_mass_properties():
    mesh = cube()
    mesh.update_faces(np.arange(1, len(mesh.faces)))
    with pytest.raises(MeshError, match="validate_mesh"):
        mass_properties(mesh, 0.1)
    inside_out = cube()
    inside_out.invert()
    with pytest.raises(MeshError, match="positive volume"):
        mass_properties(inside_out, 0.1)


@pytest.mark.parametrize("side, unit, scale, size, other", [
    (3.0, "centimetres", 0.01, "30 x 30 x 30 mm",
     "If the file is in millimetres, scale by 0.001 instead (3 x 3 x 3 mm)"),
    (30.0, "millimetres", 0.001, "30 x 30 x 30 mm",
     "If the file is in centimetres, scale by 0.01 instead (300 x 300 x 300 mm)"),
], ids=["3 cm cube in cm", "3 cm cube in mm"])
def test_a_centimetre_or_millimetre_mesh_gets_the_scale_that_makes_it_an_object(tmp_path, side, unit, scale, size,
                                                                                  other):
    """A 3 cm cube exported in centimetres (3 units across) or millimetres (30): the hint names
    the unit that gives a graspable object, the fix's scale and the size it gives, then the other
    unit's."""
    path = write(cube(side), tmp_path / "cube.obj")
    with pytest.raises(MeshError) as err:
        load_object_mesh(path)
    message = str(err.value)
    assert "cube.obj" in message
    assert f"It looks like {unit}: scaled by {scale:g} it measures {size}; fix: convert to metres, e.g. " \
           f"`mesh.apply_scale({scale:g})`" in message
    assert other in message


def test_tiny_and_huge_meshes_are_rejected():
    with pytest.raises(MeshError, match="speck: largest bounding-box side .* narrowest object the pads can grasp"):
        validate_mesh(cube(1e-4), "speck")
    with pytest.raises(MeshError, match="larger than") as err:
        validate_mesh(cube(5000.0), "building")
    assert "millimetres" not in str(err.value)


def test_inverted_winding_is_repaired_with_a_warning(tmp_path):
    inverted = cube()
    inverted.invert()
    path = write(inverted, tmp_path / "inside_out.obj")
    with pytest.warns(MeshRepairWarning, match="inside_out.obj.*flipped all faces"):
        mesh = load_object_mesh(path)
    assert mesh.volume == pytest.approx(CUBE_SIDE**3, rel=1e-12)
    # outward normals: each face normal points away from the centroid
    assert np.all(np.einsum("ij,ij->i", mesh.face_normals, mesh.triangles_center) > 0)


def test_inconsistent_winding_is_made_consistent():
    mesh = cube()
    faces = mesh.faces.copy()
    faces[:3] = faces[:3, ::-1]
    broken = trimesh.Trimesh(mesh.vertices, faces, process=False)
    assert not broken.is_winding_consistent
    with pytest.warns(MeshRepairWarning, match="winding consistent") as record:
        report = validate_mesh(broken, "mixed")
    assert len(record) == 1 and report.repairs == ("made the face winding consistent (3 face(s) re-oriented)",)
    assert report.winding_consistent and report.volume == pytest.approx(CUBE_SIDE**3, rel=1e-12)
    np.testing.assert_array_equal(report.mesh.faces, mesh.faces)
    assert not broken.is_winding_consistent  # the input is left alone


def test_removable_degenerate_face_is_removed_with_a_warning():
    mesh = cube()
    faces = np.vstack([mesh.faces, [[0, 0, 1]]])
    with_degenerate = trimesh.Trimesh(mesh.vertices, faces, process=False)
    with pytest.warns(MeshRepairWarning, match="removed 1 zero-area"):
        report = validate_mesh(with_degenerate, "sliver")
    assert report.n_faces == 12 and report.watertight
    assert any("zero-area" in r for r in report.repairs)


def test_degenerate_face_closing_a_t_junction_is_rejected():
    # split the edge a-b of one face at its midpoint; the zero-area face (a, b, mid) closes it
    mesh = cube()
    vertices, faces = mesh.vertices, mesh.faces.copy()
    a, b, c = faces[0]
    mid = len(vertices)
    vertices = np.vstack([vertices, (vertices[a] + vertices[b]) / 2])
    faces = np.vstack([[[a, mid, c], [mid, b, c]], faces[1:], [[a, b, mid]]])
    t_junction = trimesh.Trimesh(vertices, faces, process=False)
    assert t_junction.is_watertight and t_junction.is_winding_consistent
    with pytest.raises(MeshError, match="T-junction.*zero-area|zero-area.*T-junction"):
        validate_mesh(t_junction, "t_junction")


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.obj"):
        load_object_mesh(tmp_path / "nothing.obj")
    empty = tmp_path / "empty.obj"
    empty.write_text("# no geometry\n")
    with pytest.raises(MeshError, match="empty.obj"):
        load_object_mesh(empty)


def test_non_finite_vertices_are_rejected():
    mesh = cube()
    vertices = mesh.vertices.copy()
    vertices[0, 0] = np.nan
    with pytest.raises(MeshError, match="NaN"):
        validate_mesh(trimesh.Trimesh(vertices, mesh.faces, process=False), "nan")


def test_the_smallest_object_is_the_narrowest_width_the_grasp_sampler_keeps():
    from ipcgrasp.dataset.antipodal import MIN_WIDTH

    assert MIN_WIDTH == MIN_GRASP_WIDTH
    validate_mesh(cube(1.01 * MIN_GRASP_WIDTH), "just graspable")
    with pytest.raises(MeshError, match="narrowest object the pads can grasp"):
        validate_mesh(cube(0.9 * MIN_GRASP_WIDTH), "too small for the pads")


def test_a_nan_vertex_is_reported_before_trimesh_processing_drops_it(tmp_path):
    """trimesh.load(process=True) silently drops a NaN vertex and its faces; the remaining
    tetrahedron would pass as a closed mesh."""
    path = tmp_path / "nan_vertex.obj"
    path.write_text("v 0 0 0\nv 0.03 0 0\nv 0 0.03 0\nv nan 0 0.03\nv 0 0 0.03\n"
                    "f 1 3 2\nf 1 2 5\nf 2 3 5\nf 3 1 5\nf 1 2 4\n")
    with pytest.raises(MeshError, match=r"nan_vertex.obj: 1 vertex\(es\) with NaN .*first: vertex 3"):
        load_object_mesh(path)


@pytest.mark.parametrize("mass", [True, "0.05", None, np.inf, -0.01])
def test_mass_must_be_a_positive_real_number(cube_path, mass):
    with pytest.raises(ValueError, match="cube: mass must be a positive finite number of kilograms"):
        mass_properties(load_object_mesh(cube_path), mass, "cube")


def shells(*placed):
    """One mesh of several boxes, each (side in m, centre in m), as an exporter writes them."""
    return trimesh.util.concatenate([cube(side).apply_translation(centre) for side, centre in placed])


SEVERAL_SOLIDS = {
    # two boxes 10 cm apart: one rigid body whose second box floats beside the first
    "disjoint": (shells((CUBE_SIDE, (0, 0, 0)), (CUBE_SIDE, (0.1, 0, 0))),
                 r"27 cm\^3 in 12 faces, x -15..15, y -15..15, z -15..15 mm; 27 cm\^3 in 12 faces, x 85..115"),
    # two 3 cm boxes overlapping by half: trimesh counts 54 cm^3 for the 40.5 cm^3 of their union
    "overlapping": (shells((CUBE_SIDE, (0, 0, 0)), (CUBE_SIDE, (0.015, 0, 0))), r"x 0..30, y -15..15"),
    # a 1 cm box inside the 3 cm one: its volume added to the outer one's
    "nested": (shells((CUBE_SIDE, (0, 0, 0)), (0.01, (0, 0, 0))),
               r"; 1 cm\^3 in 12 faces, x -5..5, y -5..5, z -5..5 mm"),
}


@pytest.mark.parametrize("case", SEVERAL_SOLIDS)
def test_a_mesh_of_several_solids_is_refused_naming_each_and_the_fix(tmp_path, case):
    mesh, listed = SEVERAL_SOLIDS[case]
    assert mesh.is_watertight and mesh.is_winding_consistent  # every check before this one passes
    path = write(mesh, tmp_path / f"{case}.stl")
    with pytest.raises(MeshError) as error:
        load_object_mesh(path)
    message = str(error.value)
    assert message.startswith(f"{path}: the mesh is 2 separate closed surfaces, not one solid (27 cm^3 in 12 faces")
    assert re.search(listed, message), message
    assert "fix: export one solid" in message and "boolean union" in message


def test_a_mesh_of_many_solids_lists_the_largest():
    mesh = shells(*[(0.01 + 0.002 * k, (0.03 * k, 0, 0)) for k in range(6)])
    with pytest.raises(MeshError, match=r"^row: the mesh is 6 separate closed surfaces") as error:
        validate_mesh(mesh, "row")
    volumes = [float(v) for v in re.findall(r"([\d.]+) cm\^3 in", str(error.value))]
    assert volumes == pytest.approx([8.0, 5.832, 4.096, 2.744], rel=1e-3)  # the 20, 18, 16, 14 mm boxes
    assert "; and 2 more)" in str(error.value)


def _pierced_sphere():
    """An icosphere (3 cm radius) whose top vertex is pulled 5 cm down, through the bottom: one
    closed, consistently wound surface of positive volume whose triangles cross each other."""
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.03)
    vertices = sphere.vertices.copy()
    vertices[np.argmax(vertices[:, 2])] = [0.0, 0.0, -0.05]
    return trimesh.Trimesh(vertices, sphere.faces, process=False)


def test_a_self_intersecting_surface_is_refused_naming_where():
    pierced = _pierced_sphere()
    assert pierced.is_watertight and pierced.is_winding_consistent and pierced.volume > 0
    with pytest.raises(MeshError) as error:
        validate_mesh(pierced, "pierced")
    message = str(error.value)
    assert message.startswith("pierced: the surface intersects itself: 6 of its 320 triangles cross or touch others "
                              "(found by TetGen's diagnosis), all within x -7.886..7.886, y -8.198..8.198, "
                              "z -50..28.86 mm"), message
    assert "fix: remesh that region" in message


@pytest.mark.parametrize("solid", ["cube", "subdivided cube", "cylinder", "torus", "capsule"])
def test_single_solids_are_not_taken_for_self_intersecting(solid):
    mesh = {"cube": lambda: cube(), "subdivided cube": lambda: cube().subdivide().subdivide(),
            "cylinder": lambda: trimesh.creation.cylinder(0.02, 0.05),
            "torus": lambda: trimesh.creation.torus(0.03, 0.01),
            "capsule": lambda: trimesh.creation.capsule(0.05, 0.01)}[solid]()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert validate_mesh(mesh, solid).n_faces == len(mesh.faces)


def test_a_diagnosis_without_a_verdict_is_a_warning_not_a_pass_in_silence():
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=0.03)  # 5120 triangles: about 0.3 s
    outcome = self_intersections(sphere, timeout=1e-3)
    assert outcome.verdict is None and "timeout" in outcome.note
    with pytest.warns(MeshCheckWarning, match="sphere: not checked for self-intersections: .*timeout"):
        with mock.patch("ipcgrasp.geometry.mesh.self_intersections", lambda mesh: outcome):
            validate_mesh(sphere, "sphere")
