"""BLEM penalty contact (engine/penalty/) and the interpenetration measure (penetration.py).

Oracles: central finite differences of our own totals (gradient, exact Hessian, the distance
gradient in the Gauss-Newton Hessian); closed forms (a vertex at a known height over a plane or a
big triangle: force k (D - s) along the normal; a tetrahedron tip pushed a known depth into a
box, exact inside/outside and depths in an L-shaped prism from shapely);
the IPC collision set of engine/collisions/, which the penalty contacts must equal. The scenes of
test_collisions.py (every contact kind) are reused with margin r = dhat / 2.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import shapely
import trimesh
from scipy.spatial.transform import Rotation

from ipcgrasp.engine import collisions as col
from ipcgrasp.engine import penalty as pen
from ipcgrasp.engine import penetration
from ipcgrasp.engine.penetration import PenetrationProbe, penetration_depths, winding_number
from ipcgrasp.engine.solver.settings import SolverSettings

from .test_collisions import DHAT, GROUND, SCENES

MARGIN = DHAT / 2  # meshes touch below 2 r = dhat: the same pairs as the barrier tests
K = 3.0e2  # N/m


@pytest.fixture(params=[(s, seed) for s in SCENES for seed in range(2)],
                ids=lambda p: f"{p[0].__name__.removeprefix('scene_')}-{p[1]}")
def scene(request):
    builder, seed = request.param
    data = builder(np.random.default_rng(seed))
    data["mesh"] = col.CollisionMesh.build(data["rest"], data["faces"], data["body"], plane=data["plane"],
                                           mu=0.4, mu_plane=0.3)
    data["contacts"] = pen.build_contacts(data["mesh"], data["x"], MARGIN)
    return data


def _central(f, x, h=1e-7):
    x = np.asarray(x, dtype=float)
    out = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        out.append((f((x.ravel() + e).reshape(x.shape)) - f((x.ravel() - e).reshape(x.shape))) / (2 * h))
    return np.array(out)


def _dense(triplets, n):
    rows, cols, vals = triplets
    return sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).toarray()


# -- contact set -----------------------------------------------------------------------------------


def test_contacts_are_the_ipc_collisions_within_2r_plus_the_ground_within_r(scene):
    mesh, x, contacts = scene["mesh"], scene["x"], scene["contacts"]
    ipc = col.build_collisions(mesh, x, 2 * MARGIN)
    ipc_mesh = ipc.kind != col.VERTEX_PLANE
    ours_mesh = contacts.kind != col.VERTEX_PLANE
    np.testing.assert_array_equal(contacts.kind[ours_mesh], ipc.kind[ipc_mesh])
    np.testing.assert_array_equal(contacts.vertices[ours_mesh], ipc.vertices[ipc_mesh])
    np.testing.assert_array_equal(contacts.weight[ours_mesh], ipc.weight[ipc_mesh])
    if mesh.has_plane:
        heights = x[:, 2]
        expected = np.flatnonzero(heights < MARGIN)
        np.testing.assert_array_equal(np.sort(contacts.vertices[~ours_mesh, 0]), expected)
    assert len(contacts) > 0


def test_a_vertex_below_the_ground_is_pushed_up_by_k_times_its_depth():
    mesh = col.CollisionMesh.build(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), [[0, 1, 2]], [0, 0, 0],
                                   plane=GROUND)
    x = np.array([[0.0, 0, -0.3], [1, 0, 5.0], [0, 1, 5.0]])  # far below: still in contact (signed height)
    contacts = pen.build_contacts(mesh, x, 0.01)
    assert contacts.kind.tolist() == [col.VERTEX_PLANE] and contacts.vertices[0, 0] == 0
    force = pen.contact_forces(contacts, mesh, x, 0.01, K)[0, 0]
    np.testing.assert_allclose(force, [0.0, 0.0, K * 0.31], rtol=1e-12)
    np.testing.assert_allclose(pen.contact_distances(contacts, mesh, x), [-0.3])


@pytest.mark.parametrize("height", [0.3, 0.9, 1.2, 1.99])
def test_vertex_over_a_triangle_feels_k_times_the_overlap_of_the_layers(height):
    r = 1.0  # a big triangle in z = 0 (body 0) and a steep one (body 1) with one corner over it
    rest = np.array([[-10.0, -10, 0], [10, -10, 0], [0, 10, 0],
                     [0.1, 0.2, height], [0.5, 0.2, height + 3.0], [0.1, 0.6, height + 3.0]])
    mesh = col.CollisionMesh.build(rest, [[0, 1, 2], [3, 4, 5]], [0, 0, 0, 1, 1, 1])
    contacts = pen.build_contacts(mesh, rest, r)
    assert contacts.kind.tolist() == [col.FACE_VERTEX]
    forces = pen.contact_forces(contacts, mesh, rest, r, K)[0]
    np.testing.assert_allclose(forces[0], [0.0, 0.0, K * (2 * r - height)], rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(forces.sum(axis=0), 0.0, atol=1e-9 * K)  # action = reaction
    np.testing.assert_allclose(pen.normal_force_magnitudes(contacts, mesh, rest, r, K), [K * (2 * r - height)])
    far = rest.copy()
    far[3:, 2] += 2 * r - height + 1e-9  # just beyond the layers: nothing
    assert np.all(pen.contact_forces(pen.build_contacts(mesh, rest, r), mesh, far, r, K) == 0.0)


# -- derivatives -----------------------------------------------------------------------------------


def test_gradient_matches_finite_differences(scene):
    mesh, x, contacts = scene["mesh"], scene["x"], scene["contacts"]
    grad = pen.penalty_potential_gradient(contacts, mesh, x, MARGIN, K)
    fd = _central(lambda y: pen.penalty_potential(contacts, mesh, y, MARGIN, K), x).reshape(x.shape)
    assert np.abs(grad).max() > 0.1 * K * MARGIN  # not vacuous
    np.testing.assert_allclose(grad, fd, atol=1e-6 * np.abs(grad).max())
    forces = pen.contact_forces(contacts, mesh, x, MARGIN, K)
    total = np.zeros_like(x)
    np.add.at(total, np.where(contacts.vertices >= 0, contacts.vertices, 0), np.where(
        (contacts.vertices >= 0)[..., None], forces, 0.0))
    np.testing.assert_allclose(total, -grad, atol=1e-12 * np.abs(grad).max())


def test_exact_hessian_matches_finite_differences(scene):
    mesh, x, contacts = scene["mesh"], scene["x"], scene["contacts"]
    H = _dense(pen.penalty_potential_hessian(contacts, mesh, x, MARGIN, K, gauss_newton=False), x.size)
    fd = _central(lambda y: pen.penalty_potential_gradient(contacts, mesh, y, MARGIN, K).ravel(), x)
    np.testing.assert_allclose(H, fd, atol=1e-5 * np.abs(H).max())


def test_gauss_newton_hessian_is_psd_and_k_w_m_grad_s_squared(scene):
    mesh, x, contacts = scene["mesh"], scene["x"], scene["contacts"]
    H = _dense(pen.penalty_potential_hessian(contacts, mesh, x, MARGIN, K), x.size)
    np.testing.assert_allclose(H, H.T, atol=1e-12 * np.abs(H).max())
    assert np.linalg.eigvalsh(H).min() >= -1e-9 * np.abs(H).max()
    # reference: sum over active contacts of k w m (grad s . p)^2, grad s by finite differences
    reach = np.where(contacts.kind == col.VERTEX_PLANE, MARGIN, 2 * MARGIN)
    s = pen.contact_distances(contacts, mesh, x)
    weight = pen.normal_force_magnitudes(contacts, mesh, x, MARGIN, 1.0) / np.maximum(reach - s, 1e-300)
    grad_s = _central(lambda y: pen.contact_distances(contacts, mesh, y), x)  # (3N, K)
    p = np.random.default_rng(1).standard_normal(x.size)
    expected = K * np.sum(np.where(s < reach, weight, 0.0) * (p @ grad_s) ** 2)
    assert p @ H @ p == pytest.approx(expected, rel=1e-5)


def test_friction_contacts_carry_the_penalty_normal_force(scene):
    mesh, x, contacts = scene["mesh"], scene["x"], scene["contacts"]
    friction = pen.build_friction_collisions(contacts, mesh, x, MARGIN, K)
    magnitude = dict(zip(map(tuple, contacts.vertices), pen.normal_force_magnitudes(contacts, mesh, x, MARGIN, K)))
    assert len(friction.kind) > 0
    for vertices, force, mu, kind in zip(friction.vertices, friction.normal_force, friction.mu, friction.kind):
        assert force == magnitude[tuple(vertices)]
        assert mu == (0.3 if kind == col.VERTEX_PLANE else 0.4)


# -- clustering ------------------------------------------------------------------------------------


def _pressed_grid(n=9, depth=0.4, tilt=0.0):
    """A flat n x n grid (0.5 wide, body 0, turned 0.3 rad about z so that no edge parallels the
    box's) whose plane is 2 r (1 - depth) above the top of a 2 x 2 x 0.5 box (body 1) resting 0.5 r above
    the ground z = -0.5 (then tilted by `tilt` along x): many parallel face-vertex and edge-edge
    contacts and four vertex-plane ones. Returns the collision mesh and the positions."""
    s = np.linspace(-0.25, 0.25, n)
    gx, gy = np.meshgrid(s, s, indexing="ij")
    c, t = np.cos(0.3), np.sin(0.3)
    # over the middle of one triangle of the box's top, away from its diagonal (-1, -1)-(1, 1)
    grid = np.stack([0.42 + c * gx.ravel() - t * gy.ravel(), -0.42 + t * gx.ravel() + c * gy.ravel(),
                     2 * MARGIN * (1 - depth) + tilt * gx.ravel()], 1)
    faces = [[i * n + j, (i + 1) * n + j, (i + 1) * n + j + 1] for i in range(n - 1) for j in range(n - 1)]
    faces += [[i * n + j, (i + 1) * n + j + 1, i * n + j + 1] for i in range(n - 1) for j in range(n - 1)]
    box = trimesh.creation.box(extents=(2.0, 2.0, 0.5))
    square = box.vertices.copy()
    square[:, 2] = np.where(square[:, 2] > 0, 0.0, -0.5 + 0.5 * MARGIN)
    x = np.vstack([grid, square])
    mesh = col.CollisionMesh.build(x, np.vstack([faces, box.faces + n * n]), np.repeat([0, 1], [n * n, 8]),
                                   plane=(np.array([0, 0, -0.5]), np.array([0, 0, 1.0])), mu=0.5, mu_plane=0.2)
    return mesh, x


@pytest.mark.parametrize("max_clusters", [1, 3, 5])
def test_clusters_keep_at_most_k_contacts_per_pair_and_the_total_force(max_clusters):
    mesh, x = _pressed_grid()
    contacts = pen.build_contacts(mesh, x, MARGIN)
    pairs = {tuple(b) for b in np.sort(contacts.bodies, axis=1)}
    assert len(pairs) == 2 and len(contacts) > 5 * max_clusters
    clusters = pen.cluster_contacts(contacts, mesh, x, MARGIN, max_clusters, K)
    for pair in pairs:
        count = np.sum(np.all(np.sort(clusters.bodies, axis=1) == pair, axis=1))
        assert 1 <= count <= max_clusters
    force = pen.normal_force_magnitudes(contacts, mesh, x, MARGIN, K)
    for ground in (True, False):
        rows = (contacts.kind == col.VERTEX_PLANE) == ground
        cl = (clusters.bodies[:, 1] < 0) == ground
        # parallel contacts: the representatives carry the members' total force and weight
        assert K * np.sum(clusters.weight[cl] * clusters.depth[cl]) == pytest.approx(force[rows].sum(), rel=1e-9)
        assert clusters.weight[cl].sum() == pytest.approx(contacts.weight[rows].sum())
    np.testing.assert_allclose(np.linalg.norm(clusters.normal, axis=1), 1.0)
    np.testing.assert_allclose(np.abs(clusters.normal[:, 2]), 1.0, atol=1e-9)
    np.testing.assert_allclose(pen.cluster_depths(clusters, x), clusters.depth, atol=1e-15)
    # deterministic
    again = pen.cluster_contacts(contacts, mesh, x, MARGIN, max_clusters, K)
    np.testing.assert_array_equal(again.member_cluster, clusters.member_cluster)
    # and the summed cluster forces are the force on each body
    f = pen.cluster_forces(clusters, x, K)
    on_grid = mesh.vertex_body[clusters.vertices] == 0
    assert f[on_grid, 2].sum() == pytest.approx(force[contacts.kind != col.VERTEX_PLANE].sum(), rel=1e-9)


def test_few_contacts_are_their_own_clusters():
    mesh, x = _pressed_grid(n=2)
    contacts = pen.build_contacts(mesh, x, MARGIN)
    clusters = pen.cluster_contacts(contacts, mesh, x, MARGIN, 50, K)
    assert len(clusters) == len(clusters.members.kind) == len(contacts) > 4
    np.testing.assert_allclose(np.sort(K * clusters.weight * clusters.depth),
                               np.sort(pen.normal_force_magnitudes(contacts, mesh, x, MARGIN, K)), rtol=1e-9)


def test_cluster_potential_derivatives_match_finite_differences():
    mesh, x = _pressed_grid(n=5, tilt=0.05)
    x = x + 1e-3 * MARGIN * np.random.default_rng(2).standard_normal(x.shape)
    contacts = pen.build_contacts(mesh, x, MARGIN)
    clusters = pen.cluster_contacts(contacts, mesh, x, MARGIN, 2, K)
    grad = pen.cluster_potential_gradient(clusters, x, K)
    fd = _central(lambda y: pen.cluster_potential(clusters, y, K), x).reshape(x.shape)
    assert np.abs(grad).max() > 0
    np.testing.assert_allclose(grad, fd, atol=1e-6 * np.abs(grad).max())
    H = _dense(pen.cluster_potential_hessian(clusters, x, K), x.size)
    fdH = _central(lambda y: pen.cluster_potential_gradient(clusters, y, K).ravel(), x)
    np.testing.assert_allclose(H, fdH, atol=1e-6 * np.abs(H).max())
    gaps = pen.cluster_member_gaps(clusters, x)
    assert np.all(gaps < 2 * MARGIN) and np.all(gaps > 0)


def test_contacts_beginning_outside_the_clusters_are_detected():
    mesh, x = _pressed_grid(n=5, depth=0.9, tilt=8 * MARGIN)  # half the grid above the layers
    contacts = pen.build_contacts(mesh, x, MARGIN)
    clusters = pen.cluster_contacts(contacts, mesh, x, MARGIN, 2, K)
    assert not pen.has_unclustered_contacts(clusters, contacts, mesh, x, MARGIN)
    moved = x.copy()
    moved[mesh.vertex_body == 0, 2] -= 2 * MARGIN  # now all of it is in contact
    assert pen.has_unclustered_contacts(clusters, pen.build_contacts(mesh, moved, MARGIN), mesh, moved, MARGIN)


# -- settings --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, field", [
    (dict(contact_model="springs"), "contact_model"),
    (dict(penalty_stiffness=0.0), "penalty_stiffness"),
    (dict(penalty_stiffness=float("nan")), "penalty_stiffness"),
    (dict(penalty_margin=-1e-4), "penalty_margin"),
    (dict(penalty_clusters=-1), "penalty_clusters"),
    (dict(penalty_clusters=2.5), "penalty_clusters"),
])
def test_bad_penalty_settings_are_refused_by_name(kwargs, field):
    with pytest.raises(ValueError, match=f"SolverSettings.{field}"):
        SolverSettings(**kwargs)


# -- interpenetration measure ----------------------------------------------------------------------


L_SHAPE = shapely.Polygon([(0, 0), (1.0, 0), (1.0, 0.3), (0.3, 0.3), (0.3, 1.0), (0, 1.0)])
HEIGHT = 0.4


def _l_prism():
    """A non-convex solid: the L-shaped outline extruded from z = 0 to HEIGHT."""
    return trimesh.creation.extrude_polygon(L_SHAPE, HEIGHT)


def _inside_depth(points):
    """Exact depth of points inside the L prism (0 outside): the distance to its nearer cap or to
    the outline (shapely), whichever is less."""
    depth = np.zeros(len(points))
    for i, p in enumerate(points):
        if 0 < p[2] < HEIGHT and L_SHAPE.contains(shapely.Point(p[:2])):
            depth[i] = min(p[2], HEIGHT - p[2], L_SHAPE.exterior.distance(shapely.Point(p[:2])))
    return depth


@pytest.mark.parametrize("flip", [False, True])
def test_winding_number_is_one_inside_and_zero_outside(flip):
    solid = _l_prism()
    points = np.random.default_rng(3).uniform([-0.1, -0.1, -0.1], [1.1, 1.1, HEIGHT + 0.1], (400, 3))
    faces = solid.faces[:, ::-1] if flip else solid.faces
    w = winding_number(points, solid.vertices, faces)
    inside = _inside_depth(points) > 0
    assert 50 < inside.sum() < 350
    np.testing.assert_allclose(w, np.where(inside, -1.0 if flip else 1.0, 0.0), atol=1e-9)


def _ray_probe_points(mesh, rng):
    """Points to decide inside / outside `mesh` by: uniform in and around its box, its vertices
    nudged by 1e-12 m, on the vertical lines through its vertices (the ray meets edges and
    corners there), and 1 um and 1e-15 m (on the surface, to rounding) off the centres of its
    faces on either side."""
    lo, hi = mesh.bounds
    pad = 0.1 * (hi - lo)
    vertical = mesh.vertices[rng.integers(len(mesh.vertices), size=200)].copy()
    vertical[:, 2] = rng.uniform(lo[2] - pad[2], hi[2] + pad[2], size=200)
    side = rng.choice([-1.0, 1.0], size=(len(mesh.faces), 1)) * mesh.face_normals
    return np.vstack([rng.uniform(lo - pad, hi + pad, (500, 3)),
                      mesh.vertices + rng.normal(scale=1e-12, size=mesh.vertices.shape), vertical,
                      mesh.triangles_center + 1e-6 * side, mesh.triangles_center + 1e-15 * side])


@pytest.mark.parametrize("shape", ["L prism", "rotated box", "icosphere", "torus"])
def test_the_ray_count_decides_inside_a_closed_surface_as_the_winding_number_does(shape):
    """Inside a closed, consistently oriented surface the vertical ray's crossing count stands in
    for the winding number's solid angles (penetration._inside): for points anywhere, on the
    surface, on the vertical lines through its corners and a micrometre off its faces, the two
    decide alike (the winding number alone where the ray is ambiguous)."""
    rng = np.random.default_rng(6)
    mesh = {"L prism": _l_prism, "rotated box": lambda: trimesh.creation.box(
        extents=(0.03, 0.02, 0.01), transform=trimesh.transformations.random_rotation_matrix(rng.random(3))),
        "icosphere": lambda: trimesh.creation.icosphere(subdivisions=3, radius=0.02),
        "torus": lambda: trimesh.creation.torus(0.03, 0.01)}[shape]()
    assert mesh.is_watertight and mesh.is_winding_consistent
    x, faces = np.ascontiguousarray(mesh.vertices), np.ascontiguousarray(mesh.faces, dtype=np.int64)
    assert penetration._closed(faces) and not penetration._closed(faces[1:])
    reach = penetration.RAY_REACH * np.abs(x).max()
    points = _ray_probe_points(mesh, rng)
    boxes = penetration._face_boxes(x, faces)
    by_ray = [penetration._inside(p, x, faces, boxes, 0, len(faces), True, reach) for p in points]
    by_angles = np.abs(winding_number(points, x, faces)) > 0.5
    np.testing.assert_array_equal(by_ray, by_angles)
    assert 100 < by_angles.sum() < len(points) - 100
    ambiguous = [penetration._vertical_ray_crossings(p, x, faces, boxes, 0, len(faces), reach)[1] for p in points]
    assert any(ambiguous) and not any(ambiguous[:500])  # the corner lines and the surface, not points anywhere


def test_a_tip_pushed_a_known_depth_into_a_box_measures_that_depth():
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    tet = np.array([[0.1, 0.05, 0.5 - 0.037], [0.3, 0.0, 1.2], [-0.2, 0.3, 1.2], [0.0, -0.3, 1.2]])
    x = np.vstack([box.vertices, tet])
    faces = np.vstack([box.faces, np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]) + 8])
    body = np.repeat([0, 1], [8, 4])
    depths = penetration_depths(x, faces, body)
    np.testing.assert_allclose(depths[8], 0.037, rtol=1e-12)
    assert np.count_nonzero(depths) == 1
    # pairs that may not touch are not measured; the ground measures depth below it
    assert np.all(penetration_depths(x, faces, body, can_collide=np.zeros((2, 2), bool)) == 0)
    low = x + [0, 0, 0.5 - 0.0042]  # the box's bottom 4.2 mm below the ground
    ground = penetration_depths(low, faces, body, can_collide=np.zeros((2, 2), bool), plane=GROUND)
    np.testing.assert_allclose(ground.max(), 0.0042, rtol=1e-9)


def test_penetration_depths_match_the_exact_depth_in_a_non_convex_solid():
    """Random points (each a vertex of its own tiny triangle, a body of its own) in and around the
    L prism: their depth is the exact distance to its surface inside, 0 outside."""
    solid = _l_prism()
    rng = np.random.default_rng(4)
    points = rng.uniform([-0.1, -0.1, -0.1], [1.1, 1.1, HEIGHT + 0.1], (300, 3))
    tiny = np.array([[0, 0, 0], [1e-6, 0, 0], [0, 1e-6, 0]])
    probes = (points[:, None, :] + tiny).reshape(-1, 3)
    n = len(solid.vertices)
    x = np.vstack([solid.vertices, probes])
    faces = np.vstack([solid.faces, n + np.arange(len(probes)).reshape(-1, 3)])
    body = np.concatenate([np.zeros(n, int), 1 + np.repeat(np.arange(len(points)), 3)])
    can = np.zeros((len(points) + 1,) * 2, bool)
    can[0, 1:] = can[1:, 0] = True
    probe = PenetrationProbe.build(faces, body, can)
    depth = probe.depths(x)[n::3]
    expected = _inside_depth(points)
    assert np.count_nonzero(expected) > 50
    np.testing.assert_allclose(depth, expected, atol=1e-12)
    assert probe.max_depth(x) == pytest.approx(depth.max())


def test_the_convex_hull_of_an_affinely_moved_body_changes_no_depth():
    """The hull pre-test of a body that moves by affine maps only (here the non-convex L prism,
    sheared, scaled, rotated and shifted) skips solid angles, not depths: every depth equals the
    winding-number measure's without it, for points inside, outside, between the hull and the
    solid (the notch of the L) and on the surface."""
    solid = _l_prism()
    rng = np.random.default_rng(5)
    points = np.vstack([rng.uniform([-0.1, -0.1, -0.1], [1.1, 1.1, HEIGHT + 0.1], (300, 3)),
                        rng.uniform([0.35, 0.35, 0.05], [0.95, 0.95, HEIGHT - 0.05], (50, 3)),  # the notch
                        solid.vertices + rng.normal(scale=1e-12, size=solid.vertices.shape)])
    tiny = np.array([[0, 0, 0], [1e-6, 0, 0], [0, 1e-6, 0]])
    n = len(solid.vertices)
    rest = np.vstack([solid.vertices, (points[:, None, :] + tiny).reshape(-1, 3)])
    faces = np.vstack([solid.faces, n + np.arange(3 * len(points)).reshape(-1, 3)])
    body = np.concatenate([np.zeros(n, int), 1 + np.repeat(np.arange(len(points)), 3)])
    can = np.zeros((len(points) + 1,) * 2, bool)
    can[0, 1:] = can[1:, 0] = True
    affine = np.zeros(len(points) + 1, bool)
    affine[0] = True
    plain = PenetrationProbe.build(faces, body, can)
    hulled = PenetrationProbe.build(faces, body, can, affine=affine, positions=rest)
    # the prism's alone, one facet per plane: the L's hull is a pentagonal prism
    assert hulled.hull_start[1] == 7 and hulled.hull_start[-1] == hulled.hull_start[1]
    rotation = Rotation.random(random_state=rng).as_matrix()
    A = rotation @ np.array([[1.3, 0.2, 0.0], [0.0, 0.8, 0.1], [0.0, 0.0, 1.1]])
    x = rest.copy()
    x[:n] = rest[:n] @ A.T + [0.3, -0.2, 0.5]
    x[n:] = rest[n:] @ A.T + [0.3, -0.2, 0.5]  # the points stay where they were relative to the solid
    depth = hulled.depths(x)
    np.testing.assert_array_equal(depth, plain.depths(x))
    assert np.count_nonzero(depth[n::3]) > 50
    assert hulled.max_depth(x) == plain.max_depth(x)


def test_a_flat_body_has_no_hull_and_is_measured_by_winding_numbers():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0.2]], float)
    faces = np.array([[0, 1, 2], [0, 2, 3], [0, 1, 4]])  # the first four vertices coplanar
    probe = PenetrationProbe.build(faces[:2], np.zeros(5, int), np.zeros((1, 1), bool), affine=[True],
                                   positions=square)
    assert probe.hull_start.tolist() == [0, 0]
    with pytest.raises(ValueError, match="positions of shape"):
        PenetrationProbe.build(faces, np.zeros(5, int), np.zeros((1, 1), bool), affine=[True], positions=square[:3])


def test_a_finely_meshed_box_has_one_hull_facet_per_side():
    """The hull pre-test tests each plane once: a box whose sides are tiled by many triangles
    (subdivided 3 times) has 6 hull facets, one in each side, outward-oriented."""
    box = trimesh.creation.box(extents=(0.03, 0.02, 0.01))
    for _ in range(3):
        box = box.subdivide()
    body = np.zeros(len(box.vertices), int)
    probe = PenetrationProbe.build(box.faces, body, np.zeros((1, 1), bool), affine=np.array([True]),
                                   positions=box.vertices)
    facets = box.vertices[probe.hull]
    normals = np.cross(facets[:, 1] - facets[:, 0], facets[:, 2] - facets[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    assert len(probe.hull) == 6
    np.testing.assert_allclose(np.sort(np.abs(normals).argmax(axis=1)), [0, 0, 1, 1, 2, 2])
    centres = facets.mean(axis=1)
    assert np.all(np.einsum("ij,ij->i", normals, centres) > 0)  # outward from the box's centre
