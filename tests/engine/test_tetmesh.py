import itertools

import numpy as np
import pytest
import tetgen
import trimesh

from ipcgrasp.engine.tetmesh import boundary_faces, surface_vertices

# Unit cube corners, index = x + 2 y + 4 z.
CUBE = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=float)
# Five tets: four corner tets around the central (odd-parity) one; mixed vertex orientations.
CUBE_5 = np.array([[1, 2, 4, 7], [0, 1, 2, 4], [3, 1, 2, 7], [5, 1, 4, 7], [6, 2, 4, 7]])
# Six tets (Kuhn): one per axis order, all sharing the 0-7 diagonal.
CUBE_6 = np.array(
    [
        [0, 1 << p[0], (1 << p[0]) | (1 << p[1]), 7]
        for p in itertools.permutations(range(3))
    ]
)


def grid_mesh(n):
    """n^3 unit cells, six Kuhn tets each, positively oriented; vertex (i, j, k) has index
    i + (n+1) j + (n+1)^2 k."""
    m = n + 1
    X = np.array([[i, j, k] for k in range(m) for j in range(m) for i in range(m)], dtype=float)
    tets = []
    for i, j, k in itertools.product(range(n), repeat=3):
        base = i + m * j + m * m * k
        corner = [base + (c & 1) + m * ((c >> 1) & 1) + m * m * ((c >> 2) & 1) for c in range(8)]
        tets += [[corner[v] for v in t] for t in CUBE_6]
    tets = np.array(tets)
    negative = signed_volumes(X, tets) < 0
    tets[negative] = tets[negative][:, [0, 2, 1, 3]]
    return X, tets


def signed_volumes(X, tets):
    a, b, c, d = (X[tets[:, k]] for k in range(4))
    return np.einsum("ij,ij->i", b - a, np.cross(c - a, d - a)) / 6.0


def enclosed_volume(X, faces):
    a, b, c = (X[faces[:, k]] for k in range(3))
    return np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0


def assert_closed_and_consistent(faces):
    directed = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    as_set = {tuple(e) for e in directed.tolist()}
    assert len(as_set) == len(directed), "a directed edge appears twice"
    assert all((b, a) in as_set for a, b in as_set), "an edge lacks its opposite half-edge"


@pytest.mark.parametrize("tets", [CUBE_5, CUBE_6], ids=["5 tets", "6 tets"])
def test_cube_boundary_is_outward_and_closed(tets):
    faces = boundary_faces(tets, CUBE)
    assert faces.shape == (12, 3)
    assert_closed_and_consistent(faces)
    tet_volume = np.abs(signed_volumes(CUBE, tets)).sum()
    assert tet_volume == pytest.approx(1.0, rel=1e-14)
    assert enclosed_volume(CUBE, faces) == pytest.approx(tet_volume, rel=1e-14)
    a, b, c = (CUBE[faces[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    centroids = (a + b + c) / 3.0
    assert np.all(np.einsum("ij,ij->i", normals, centroids - 0.5) > 0.0)
    assert len(trimesh.Trimesh(CUBE, faces, process=False).edges_unique) == 18
    np.testing.assert_array_equal(surface_vertices(faces), np.arange(8))


def test_grid_boundary_excludes_interior():
    X, tets = grid_mesh(3)
    X = 0.01 * X + np.array([0.2, -0.1, 0.05])
    faces = boundary_faces(tets, X)
    assert faces.shape == (6 * 9 * 2, 3)
    assert_closed_and_consistent(faces)
    assert enclosed_volume(X, faces) == pytest.approx(signed_volumes(X, tets).sum(), rel=1e-12)
    assert enclosed_volume(X, faces) == pytest.approx(0.03**3, rel=1e-12)
    verts = surface_vertices(faces)
    assert verts.size == 4**3 - 2**3
    interior = [i + 4 * j + 16 * k for i, j, k in itertools.product((1, 2), repeat=3)]
    assert not set(interior) & set(verts.tolist())
    edges = trimesh.Trimesh(X, faces, process=False).edges_unique
    assert len(verts) - len(edges) + len(faces) == 2  # Euler characteristic of a sphere


def test_orientation_ignores_tet_vertex_order():
    X, tets = grid_mesh(2)
    rng = np.random.default_rng(3)
    shuffled = np.array([rng.permutation(t) for t in tets])
    assert np.any(signed_volumes(X, shuffled) < 0) and np.any(signed_volumes(X, shuffled) > 0)

    def canonical(faces):
        # each triangle up to cyclic rotation (which keeps its orientation)
        return sorted(tuple(np.roll(f, -int(np.argmin(f)))) for f in faces.tolist())

    assert canonical(boundary_faces(shuffled, X)) == canonical(boundary_faces(tets, X))


def test_tetgen_mesh_boundary_matches_input_solid():
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.02)
    nodes, elems, *_ = tetgen.TetGen(sphere.vertices, sphere.faces).tetrahedralize(
        order=1, mindihedral=10, minratio=1.5
    )
    faces = boundary_faces(elems, nodes)
    assert_closed_and_consistent(faces)
    surface = trimesh.Trimesh(nodes, faces, process=False)
    assert surface.is_watertight and surface.is_winding_consistent
    assert enclosed_volume(nodes, faces) == pytest.approx(
        np.abs(signed_volumes(nodes, elems)).sum(), rel=1e-10
    )
    assert enclosed_volume(nodes, faces) == pytest.approx(sphere.volume, rel=1e-10)
    # tetgen keeps the input points first and adds only interior ones here
    np.testing.assert_array_equal(surface_vertices(faces), np.arange(len(sphere.vertices)))
    assert len(nodes) > len(sphere.vertices)


def test_vertices_of_two_triangles():
    faces = np.array([[0, 1, 2], [2, 1, 5]])
    np.testing.assert_array_equal(surface_vertices(faces), [0, 1, 2, 5])


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="more than two tets"):
        X = np.vstack([CUBE, [[0.5, 0.5, -1.0]]])
        boundary_faces(np.array([[0, 1, 2, 4], [0, 1, 2, 8], [0, 1, 2, 7]]), X)
    with pytest.raises(ValueError, match="flat"):
        boundary_faces(np.array([[0, 1, 2, 3]]), CUBE)  # four coplanar corners
    with pytest.raises(ValueError, match="outside"):
        boundary_faces(np.array([[0, 1, 2, 9]]), CUBE)
    with pytest.raises(ValueError, match="shape"):
        boundary_faces(np.array([[0, 1, 2]]), CUBE)


def test_boundary_faces_integer_keys_match_row_keys(monkeypatch):
    """The faster path (one int64 key per sorted triple) gives the faces, orientation and order of
    np.unique over rows, which meshes too large for the keys still use."""
    import scipy.spatial

    from ipcgrasp.engine import tetmesh

    points = np.random.default_rng(3).random((400, 3))
    tets = scipy.spatial.Delaunay(points).simplices
    for X, T in ((points, tets), grid_mesh(4)):
        keyed = boundary_faces(T, X)
        monkeypatch.setattr(tetmesh, "_MAX_KEYED_VERTICES", 0)
        rows = boundary_faces(T, X)
        monkeypatch.undo()
        assert len(keyed) > 0
        np.testing.assert_array_equal(keyed, rows)
