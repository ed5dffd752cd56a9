"""The contact set and the potentials summed over it (engine/collisions/).

Oracles: ipctk 1.6.1 (NormalCollisions.build, BarrierPotential, TangentialCollisions.build,
FrictionPotential) on a CollisionMesh with the same vertices and faces; central finite
differences of our own totals; Coulomb's law and force balance for a cube on the ground.
Scenes are small meshes closer than dhat, built so that every collision kind occurs: a vertex
closest to a face, an edge or a vertex of the other body, crossing and nearly parallel edges,
and vertices near the ground plane.
"""

from dataclasses import fields

import ipctk
import numpy as np
import pytest
import scipy.sparse as sp

from ipcgrasp.engine import collisions as col
from ipcgrasp.engine.barrier import barrier_first_derivative
from ipcgrasp.engine.friction import (
    _friction_potential,
    _point_triangle_relative_displacement_matrix,
)

DHAT = 0.1
KINDS = (col.VERTEX_VERTEX, col.EDGE_VERTEX, col.EDGE_EDGE, col.FACE_VERTEX, col.VERTEX_PLANE)
GROUND = (np.zeros(3), np.array([0.0, 0.0, 1.0]))


# -- Scenes ----------------------------------------------------------------------------------------


def _rotation(axis, angle):
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _cube(size=1.0, rotation=np.eye(3), center=np.zeros(3)):
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    faces = np.array([
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
        [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
    ])
    return (corners - 0.5) * size @ rotation.T + center, faces


def _grid(n=6, spacing=0.4):
    """Triangulated square grid in z = 0, centred at the origin, n x n vertices."""
    s = (np.arange(n) - (n - 1) / 2) * spacing
    gx, gy = np.meshgrid(s, s, indexing="ij")
    vertices = np.stack([gx.ravel(), gy.ravel(), np.zeros(n * n)], axis=1)
    faces = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, (i + 1) * n + j, (i + 1) * n + j + 1, i * n + j + 1
            faces += [[a, b, c], [a, c, d]]
    return vertices, np.array(faces)


def _tet(rotation=np.eye(3), center=np.zeros(3)):
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float) - 0.25
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    return vertices @ rotation.T + center, faces


def _lift_to_gap(vertices, gap, floor=0.0):
    """Translate vertices along z so that their lowest point is at floor + gap."""
    return vertices + np.array([0.0, 0.0, floor + gap - vertices[:, 2].min()])


def _scene(parts, rng, jitter=1e-4, plane=None):
    """Stack (vertices, faces) parts into one mesh, one body per part; jitter the positions."""
    offsets = np.cumsum([0] + [len(v) for v, _ in parts])
    rest = np.vstack([v for v, _ in parts])
    faces = np.vstack([f + o for (_, f), o in zip(parts, offsets)])
    body = np.repeat(np.arange(len(parts)), [len(v) for v, _ in parts])
    x = rest + jitter * rng.standard_normal(rest.shape)
    return {"rest": rest, "x": x, "faces": faces, "body": body, "plane": plane}


def scene_random_cubes(rng):
    """A cube resting on a randomly rotated, shifted cube: mostly face-vertex and edge-edge."""
    lower = _cube()
    upper, faces = _cube(rotation=_rotation(rng.standard_normal(3), rng.uniform(0.1, 0.4)))
    upper = _lift_to_gap(upper + [*rng.uniform(-0.2, 0.2, 2), 0.0], rng.uniform(0.3, 0.6) * DHAT,
                         floor=0.5)
    return _scene([lower, (upper, faces)], rng)


def scene_stacked_cubes(rng):
    """Aligned stacked cubes turned by 5 mrad: nearly parallel (mollified) edges, merged
    vertex-vertex and edge-vertex collisions from several candidates."""
    lower = _cube()
    upper, faces = _cube(rotation=_rotation([0, 0, 1], 0.005), center=[0.1, -0.05, 0.0])
    upper = _lift_to_gap(upper, 0.5 * DHAT, floor=0.5)
    return _scene([lower, (upper, faces)], rng, jitter=1e-6)


def _corner_down_cube(target_xy, gap):
    """A cube of side 0.5 balanced on a corner whose lowest point is gap above target_xy."""
    rotation = _rotation(np.cross([1, 1, 1], [0, 0, -1]), np.arccos(-1 / np.sqrt(3)))
    cube, faces = _cube(size=0.5, rotation=rotation)
    lowest = cube[np.argmin(cube[:, 2])]
    return _lift_to_gap(cube + [*(np.asarray(target_xy) - lowest[:2]), 0.0], gap), faces


def scene_corner_on_grid_vertex(rng):
    """A cube balanced on a corner just above a grid vertex: vertex-vertex collisions."""
    return _scene([_grid(), _corner_down_cube([0.2, 0.2], 0.4 * DHAT)], rng, jitter=1e-5)


def scene_corner_on_grid_edge(rng):
    """A cube corner above the interior of a grid edge (grid lines at +-0.2, +-0.6, +-1):
    edge-vertex collisions."""
    target = [rng.uniform(-0.1, 0.1), 0.2]
    return _scene([_grid(), _corner_down_cube(target, 0.4 * DHAT)], rng, jitter=1e-5)


def scene_edge_on_grid(rng):
    """A cube on one edge, 10 mrad off a grid line: nearly parallel and crossing edges."""
    rotation = _rotation([0, 0, 1], 0.01) @ _rotation([1, 0, 0], np.pi / 4)
    cube, faces = _cube(size=0.5, rotation=rotation, center=[0.03, 0.2, 0.0])
    return _scene([_grid(), (_lift_to_gap(cube, 0.5 * DHAT), faces)], rng, jitter=1e-5)


def scene_tets(rng):
    """Two randomly turned tetrahedra, the lowest vertex of one just above and beside the
    highest vertex of the other."""
    lower, faces = _tet(rotation=_rotation(rng.standard_normal(3), rng.uniform(0, np.pi)))
    upper, _ = _tet(rotation=_rotation(rng.standard_normal(3), rng.uniform(0, np.pi)))
    offset = lower[np.argmax(lower[:, 2]), :2] - upper[np.argmin(upper[:, 2]), :2]
    upper = _lift_to_gap(upper + [*(offset + rng.uniform(-0.03, 0.03, 2)), 0.0], 0.5 * DHAT,
                         floor=lower[:, 2].max())
    return _scene([(lower, faces), (upper, faces)], rng)


def scene_cube_on_plane(rng):
    """A slightly tilted cube above the ground with its lowest corners within dhat."""
    cube, faces = _cube(rotation=_rotation(rng.standard_normal(3), 0.02))
    return _scene([(_lift_to_gap(cube, 0.3 * DHAT), faces)], rng, plane=GROUND)


def scene_cubes_on_plane(rng):
    """Two cubes side by side on the ground, 0.05 apart, one tilted: edge-vertex, edge-edge,
    face-vertex and vertex-plane collisions at once."""
    left, faces = _cube(rotation=_rotation([1, 1, 0], 0.05))
    right, _ = _cube(center=[1.05, 0.2, 0.0])
    return _scene([(_lift_to_gap(left, 0.4 * DHAT), faces),
                   (_lift_to_gap(right, 0.6 * DHAT), faces)], rng, plane=GROUND)


SCENES = [
    scene_random_cubes,
    scene_stacked_cubes,
    scene_corner_on_grid_vertex,
    scene_corner_on_grid_edge,
    scene_edge_on_grid,
    scene_tets,
    scene_cube_on_plane,
    scene_cubes_on_plane,
]


@pytest.fixture(params=[(s, seed) for s in SCENES for seed in range(2)],
                ids=lambda p: f"{p[0].__name__.removeprefix('scene_')}-{p[1]}")
def scene(request):
    builder, seed = request.param
    data = builder(np.random.default_rng(seed))
    data["mesh"] = col.CollisionMesh.build(
        data["rest"], data["faces"], data["body"], plane=data["plane"], mu=0.4, mu_plane=0.4
    )
    return data


def _brute_force_candidates(mesh):
    n_faces, n_edges = mesh.faces.shape[0], mesh.edges.shape[0]
    vf = np.array([(v, f) for v in range(mesh.num_vertices) for f in range(n_faces)])
    ee = np.array([(a, b) for a in range(n_edges) for b in range(a + 1, n_edges)])
    return vf, ee, np.arange(mesh.num_vertices)


def _ipctk(data):
    """ipctk CollisionMesh and NormalCollisions for a scene (bodies = connected components).

    The candidates are built with inflation radius dhat: ipctk's own build(mesh, x, dhat)
    inflates by dhat / 2, which is complete for element pairs (both boxes grow) but drops
    vertices between dhat / 2 and dhat from a plane, whose barrier is nonzero.
    """
    x = data["x"]
    mesh = ipctk.CollisionMesh(data["rest"], ipctk.edges(data["faces"]), data["faces"])
    mesh.can_collide = ipctk.make_connected_components_filter(data["faces"])
    if data["plane"] is not None:
        mesh.planes = [ipctk.Hyperplane(data["plane"][1], data["plane"][0])]
    candidates = ipctk.Candidates()
    candidates.build(mesh, x, DHAT)
    collisions = ipctk.NormalCollisions()
    collisions.build(candidates, mesh, x, DHAT)
    return mesh, collisions


def _dense(triplets, n_dof):
    rows, cols, vals = triplets
    return sp.coo_matrix((vals, (rows, cols)), shape=(n_dof, n_dof)).toarray()


def _assert_close(ours, reference, rtol):
    ours, reference = np.asarray(ours), np.asarray(reference)
    scale = np.abs(reference).max()
    assert scale > 0.0
    np.testing.assert_allclose(ours, reference, rtol=0, atol=rtol * scale)


# -- Building the set ------------------------------------------------------------------------------


def _nearly_parallel(collisions, x):
    """Edge-edge collisions whose edges are within the mollifier threshold |ea x eb|^2 < eps_x."""
    v = collisions.vertices
    cross = np.cross(x[v[:, 1]] - x[v[:, 0]], x[v[:, 3]] - x[v[:, 2]])
    return (collisions.kind == col.EDGE_EDGE) & (
        np.einsum("ij,ij->i", cross, cross) < collisions.eps_x
    )


def _take(records, index):
    """The same dataclass of arrays restricted to the rows `index`."""
    return type(records)(**{f.name: getattr(records, f.name)[index] for f in fields(records)})


def test_scenes_cover_every_kind():
    counts = np.zeros(5, dtype=int)
    parallel = merged = 0
    for builder in SCENES:
        data = builder(np.random.default_rng(0))
        mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"],
                                       plane=data["plane"])
        collisions = col.build_collisions(mesh, data["x"], DHAT)
        assert len(collisions) > 0, builder.__name__
        counts += np.bincount(collisions.kind, minlength=5)
        parallel += np.count_nonzero(_nearly_parallel(collisions, data["x"]))
        merged += np.count_nonzero(collisions.weight > 1)
    assert np.all(counts > 0), counts
    assert parallel > 0 and merged > 0


def test_collision_counts_and_weights_match_ipctk(scene):
    collisions = col.build_collisions(scene["mesh"], scene["x"], DHAT)
    _, reference = _ipctk(scene)
    lists = [reference.vv_collisions, reference.ev_collisions, reference.ee_collisions,
             reference.fv_collisions, reference.pv_collisions]
    for kind, items in zip(KINDS, lists):
        ours = collisions.weight[collisions.kind == kind]
        assert len(ours) == len(items), f"kind {kind}"
        np.testing.assert_array_equal(np.sort(ours), np.sort([c.weight for c in items]))


def test_default_broad_phase_equals_brute_force_candidates(scene):
    mesh = scene["mesh"]
    default = col.build_collisions(mesh, scene["x"], DHAT)
    brute = col.build_collisions(mesh, scene["x"], DHAT, _brute_force_candidates(mesh))
    for name in ("kind", "vertices", "weight", "eps_x", "edge_edge_type", "bodies"):
        np.testing.assert_array_equal(getattr(default, name), getattr(brute, name), err_msg=name)


def test_collision_records():
    data = scene_cubes_on_plane(np.random.default_rng(3))
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"], plane=GROUND)
    collisions = col.build_collisions(mesh, data["x"], DHAT)
    n = col.NUM_KIND_VERTICES[collisions.kind]
    slots = np.arange(4)
    assert np.all((collisions.vertices >= 0) == (slots < n[:, None]))
    assert np.all(np.diff(collisions.kind) >= 0)
    plane = collisions.kind == col.VERTEX_PLANE
    np.testing.assert_array_equal(collisions.bodies[plane, 1], -1)
    pair = ~plane
    assert np.all(collisions.bodies[pair, 0] != collisions.bodies[pair, 1])
    ee = collisions.kind == col.EDGE_EDGE
    assert np.all(collisions.eps_x[ee] > 0) and np.all(collisions.eps_x[~ee] == 0)
    assert np.all(collisions.edge_edge_type[ee] >= 0)
    assert np.all(collisions.edge_edge_type[~ee] == -1)
    distances = [col.min_distance(_take(collisions, [k]), mesh, data["x"])
                 for k in range(len(collisions))]
    assert max(distances) < DHAT


def test_no_collisions_far_apart():
    cube, faces = _cube()
    x = np.vstack([cube, cube + [3.0, 0, 0]])
    mesh = col.CollisionMesh.build(x, np.vstack([faces, faces + 8]), np.repeat([0, 1], 8),
                                   plane=(np.array([0, 0, -5.0]), np.array([0, 0, 1.0])))
    collisions = col.build_collisions(mesh, x, DHAT)
    assert len(collisions) == 0
    assert col.barrier_potential(collisions, mesh, x, DHAT) == 0.0
    assert col.min_distance(collisions, mesh, x) == np.inf
    assert col.barrier_potential_gradient(collisions, mesh, x, DHAT).shape == (16, 3)
    assert all(a.size == 0 for a in col.barrier_potential_hessian(collisions, mesh, x, DHAT))


def test_self_contact_only_when_allowed():
    data = scene_corner_on_grid_vertex(np.random.default_rng(0))
    both = np.zeros_like(data["body"])  # one body: no contact by default
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], both)
    assert len(col.build_collisions(mesh, data["x"], DHAT)) == 0
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], both, can_collide=[[True]])
    separate = col.CollisionMesh.build(data["rest"], data["faces"], data["body"])
    ours = col.build_collisions(mesh, data["x"], DHAT)
    reference = col.build_collisions(separate, data["x"], DHAT)
    np.testing.assert_array_equal(ours.vertices, reference.vertices)
    np.testing.assert_array_equal(ours.weight, reference.weight)


# -- Barrier potential -----------------------------------------------------------------------------


def test_barrier_potential_gradient_hessian_match_ipctk(scene):
    mesh, x = scene["mesh"], scene["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    ipc_mesh, reference = _ipctk(scene)
    barrier = ipctk.BarrierPotential(DHAT, 1.0)
    # at the build positions and, with both sets fixed, at a nearby configuration
    shift = 1e-3 * DHAT * np.random.default_rng(1).standard_normal(x.shape)
    for y in (x, x + shift):
        value = col.barrier_potential(collisions, mesh, y, DHAT)
        assert value == pytest.approx(barrier(reference, ipc_mesh, y), rel=1e-10, abs=0)
        _assert_close(col.barrier_potential_gradient(collisions, mesh, y, DHAT).ravel(),
                      barrier.gradient(reference, ipc_mesh, y), 1e-10)
        hessian = col.barrier_potential_hessian(collisions, mesh, y, DHAT, project_to_psd=False)
        _assert_close(_dense(hessian, x.size),
                      barrier.hessian(reference, ipc_mesh, y).toarray(), 1e-10)
    projected = col.barrier_potential_hessian(collisions, mesh, x, DHAT)
    _assert_close(_dense(projected, x.size),
                  barrier.hessian(reference, ipc_mesh, x, ipctk.PSDProjectionMethod.CLAMP)
                  .toarray(), 1e-9)
    assert col.min_distance(collisions, mesh, x) == pytest.approx(
        np.sqrt(reference.compute_minimum_distance(ipc_mesh, x)), rel=1e-12)


def test_barrier_derivatives_match_finite_differences(scene):
    mesh, x = scene["mesh"], scene["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    h = 1e-7
    grad = col.barrier_potential_gradient(collisions, mesh, x, DHAT).ravel()
    hess = _dense(col.barrier_potential_hessian(collisions, mesh, x, DHAT, project_to_psd=False),
                  x.size)
    fd_grad = np.empty(x.size)
    fd_hess = np.empty((x.size, x.size))
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = h
        plus, minus = x + step.reshape(x.shape), x - step.reshape(x.shape)
        fd_grad[i] = (col.barrier_potential(collisions, mesh, plus, DHAT)
                      - col.barrier_potential(collisions, mesh, minus, DHAT)) / (2 * h)
        fd_hess[:, i] = (col.barrier_potential_gradient(collisions, mesh, plus, DHAT)
                         - col.barrier_potential_gradient(collisions, mesh, minus, DHAT)
                         ).ravel() / (2 * h)
    _assert_close(grad, fd_grad, 1e-6)
    _assert_close(hess, fd_hess, 1e-6)
    np.testing.assert_allclose(hess, hess.T, rtol=0, atol=1e-12 * np.abs(hess).max())


def test_projected_hessian_is_psd_and_differs_only_where_needed():
    indefinite = 0
    for builder in SCENES:
        data = builder(np.random.default_rng(5))
        mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"],
                                       plane=data["plane"])
        x = data["x"]
        collisions = col.build_collisions(mesh, x, DHAT)
        raw = _dense(col.barrier_potential_hessian(collisions, mesh, x, DHAT, False), x.size)
        projected = _dense(col.barrier_potential_hessian(collisions, mesh, x, DHAT), x.size)
        scale = np.abs(raw).max()
        assert np.linalg.eigvalsh(projected).min() >= -1e-10 * scale
        if np.linalg.eigvalsh(raw).min() < -1e-8 * scale:
            indefinite += 1
            assert np.abs(projected - raw).max() > 1e-8 * scale
        else:
            _assert_close(projected, raw, 1e-9)
    assert indefinite > 0, "no scene exercised the projection"


def test_contact_forces_sum_to_minus_stiffness_times_gradient(scene):
    mesh, x = scene["mesh"], scene["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    kappa = 37.0
    forces = col.contact_forces(collisions, mesh, x, DHAT, kappa)
    assert forces.shape == (len(collisions), 4, 3)
    padding = collisions.vertices < 0
    assert np.all(forces[padding] == 0.0)
    total = np.zeros_like(x)
    np.add.at(total, collisions.vertices[~padding], forces[~padding])
    _assert_close(total, -kappa * col.barrier_potential_gradient(collisions, mesh, x, DHAT), 1e-13)
    # the forces of each pair collision balance (distances and mollifier are translation
    # invariant); the plane takes the reaction of vertex-plane collisions
    magnitudes = col.normal_force_magnitudes(collisions, mesh, x, DHAT, kappa)
    assert np.all(magnitudes >= 0.0)
    pair = collisions.kind != col.VERTEX_PLANE
    np.testing.assert_allclose(forces[pair].sum(axis=1), 0.0, atol=1e-12 * magnitudes.max())


def test_cube_on_plane_normal_forces():
    data = scene_cube_on_plane(np.random.default_rng(7))
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"], plane=GROUND)
    x = data["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    assert np.all(collisions.kind == col.VERTEX_PLANE) and len(collisions) >= 1
    kappa = 1e4
    heights = x[collisions.vertices[:, 0], 2]
    np.testing.assert_array_less(heights, DHAT)
    expected = kappa * np.array(
        [abs(barrier_first_derivative(z * z, DHAT**2)) * 2 * z for z in heights]
    )
    magnitudes = col.normal_force_magnitudes(collisions, mesh, x, DHAT, kappa)
    np.testing.assert_allclose(magnitudes, expected, rtol=1e-12)
    forces = col.contact_forces(collisions, mesh, x, DHAT, kappa)[:, 0]
    np.testing.assert_allclose(forces[:, 2], magnitudes, rtol=1e-12)  # pushes up, along +z
    np.testing.assert_allclose(forces[:, :2], 0.0, atol=1e-12 * magnitudes.max())
    assert forces[:, 2].sum() == pytest.approx(magnitudes.sum(), rel=1e-12)
    assert col.min_distance(collisions, mesh, x) == pytest.approx(heights.min(), rel=1e-12)


def test_normal_force_magnitudes_match_ipctk_times_weight(scene):
    mesh, x = scene["mesh"], scene["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    kappa = 3.0
    ipc_mesh, reference = _ipctk(scene)
    magnitudes = col.normal_force_magnitudes(collisions, mesh, x, DHAT, kappa)
    expected = []
    for c in reference.vv_collisions, reference.ev_collisions, reference.ee_collisions, \
            reference.fv_collisions, reference.pv_collisions:
        for item in c:
            dof = item.dof(x, ipc_mesh.edges, ipc_mesh.faces)
            d = item.compute_distance(dof)
            expected.append(item.weight * item.mollifier(dof) * ipctk.barrier_force_magnitude(
                d, ipctk.ClampedLogBarrier(), DHAT, kappa))
    np.testing.assert_allclose(np.sort(magnitudes), np.sort(expected), rtol=1e-10, atol=0)


# -- Friction --------------------------------------------------------------------------------------


def _displacement(rng, x, eps):
    """Step displacements of mixed size: below and above the smoothing threshold eps."""
    scale = rng.choice([0.2 * eps, 3 * eps], size=(x.shape[0], 1))
    return scale * rng.standard_normal(x.shape)


def test_friction_matches_ipctk(scene):
    mesh, x = scene["mesh"], scene["x"]
    kappa, mu, eps = 25.0, 0.4, 1e-3
    collisions = col.build_collisions(mesh, x, DHAT)
    friction = col.build_friction_collisions(collisions, mesh, x, DHAT, kappa)
    ipc_mesh, normal = _ipctk(scene)
    tangential = ipctk.TangentialCollisions()
    tangential.build(ipc_mesh, x, normal, ipctk.BarrierPotential(DHAT, kappa), mu)
    for kind, items in zip(KINDS, [tangential.vv_collisions, tangential.ev_collisions,
                                   tangential.ee_collisions, tangential.fv_collisions]):
        assert np.count_nonzero(friction.kind == kind) == len(items), f"kind {kind}"
    np.testing.assert_array_equal(friction.mu, mu)
    potential = ipctk.FrictionPotential(eps)
    u = _displacement(np.random.default_rng(2), x, eps)
    assert col.friction_potential(friction, mesh, u, eps) == pytest.approx(
        potential(tangential, ipc_mesh, u), rel=1e-10, abs=0)
    _assert_close(col.friction_potential_gradient(friction, mesh, u, eps).ravel(),
                  potential.gradient(tangential, ipc_mesh, u), 1e-10)
    _assert_close(_dense(col.friction_potential_hessian(friction, mesh, u, eps), x.size),
                  potential.hessian(tangential, ipc_mesh, u).toarray(), 1e-10)
    # ipctk's velocity form: v = u / h with eps_v = eps / h gives D(u) / h, the same gradient
    h = 0.01
    by_velocity = ipctk.FrictionPotential(eps / h)
    assert h * by_velocity(tangential, ipc_mesh, u / h) == pytest.approx(
        col.friction_potential(friction, mesh, u, eps), rel=1e-10, abs=0)
    _assert_close(col.friction_potential_gradient(friction, mesh, u, eps).ravel(),
                  by_velocity.gradient(tangential, ipc_mesh, u / h), 1e-10)


def test_friction_derivatives_match_finite_differences(scene):
    mesh, x = scene["mesh"], scene["x"]
    eps = 1e-3
    friction = col.build_friction_collisions(col.build_collisions(mesh, x, DHAT), mesh, x,
                                             DHAT, 5.0)
    u = _displacement(np.random.default_rng(4), x, eps)
    h = 1e-9
    grad = col.friction_potential_gradient(friction, mesh, u, eps).ravel()
    hess = _dense(col.friction_potential_hessian(friction, mesh, u, eps), x.size)
    fd_grad = np.empty(x.size)
    fd_hess = np.empty((x.size, x.size))
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = h
        plus, minus = u + step.reshape(x.shape), u - step.reshape(x.shape)
        fd_grad[i] = (col.friction_potential(friction, mesh, plus, eps)
                      - col.friction_potential(friction, mesh, minus, eps)) / (2 * h)
        fd_hess[:, i] = (col.friction_potential_gradient(friction, mesh, plus, eps)
                         - col.friction_potential_gradient(friction, mesh, minus, eps)
                         ).ravel() / (2 * h)
    _assert_close(grad, fd_grad, 1e-6)
    _assert_close(hess, fd_hess, 1e-5)
    assert np.linalg.eigvalsh(hess).min() >= -1e-10 * np.abs(hess).max()


def test_friction_forces_sum_to_minus_gradient(scene):
    mesh, x = scene["mesh"], scene["x"]
    eps = 1e-3
    friction = col.build_friction_collisions(col.build_collisions(mesh, x, DHAT), mesh, x,
                                             DHAT, 5.0)
    u = _displacement(np.random.default_rng(6), x, eps)
    forces = col.friction_forces(friction, mesh, u, eps)
    padding = friction.vertices < 0
    assert np.all(forces[padding] == 0.0)
    total = np.zeros_like(x)
    np.add.at(total, friction.vertices[~padding], forces[~padding])
    _assert_close(total, -col.friction_potential_gradient(friction, mesh, u, eps), 1e-13)


def test_sliding_cube_feels_coulomb_friction():
    data = scene_cube_on_plane(np.random.default_rng(8))
    mu_ground = 0.35
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"], plane=GROUND,
                                   mu_plane=mu_ground)
    x, kappa, eps = data["x"], 2e3, 1e-4
    collisions = col.build_collisions(mesh, x, DHAT)
    friction = col.build_friction_collisions(collisions, mesh, x, DHAT, kappa)
    np.testing.assert_allclose(
        friction.normal_force, col.normal_force_magnitudes(collisions, mesh, x, DHAT, kappa))
    direction = np.array([0.6, -0.8, 0.0])
    for slide, expected_factor in ((50 * eps, 1.0), (0.5 * eps, 0.75)):  # f1(y/eps = 1/2) = 3/4
        u = np.tile(slide * direction, (x.shape[0], 1))
        forces = col.friction_forces(friction, mesh, u, eps)[:, 0]
        expected = -expected_factor * mu_ground * friction.normal_force[:, None] * direction
        np.testing.assert_allclose(forces, expected, rtol=1e-10,
                                   atol=1e-12 * friction.normal_force.max())
    # a normal (vertical) displacement produces no friction
    u = np.tile([0.0, 0.0, 1e-2], (x.shape[0], 1))
    assert np.abs(col.friction_forces(friction, mesh, u, eps)).max() <= 1e-12 * kappa


def test_friction_coefficients_per_body_pair():
    rng = np.random.default_rng(9)
    grid, grid_faces = _grid()
    left, faces = _cube(size=0.4, center=[-0.25, 0.0, 0.0])
    right, _ = _cube(size=0.4, center=[0.2, 0.05, 0.0])
    plane = (np.array([0.0, 0.0, -0.04]), np.array([0.0, 0.0, 1.0]))
    data = _scene([(grid, grid_faces), (_lift_to_gap(left, 0.5 * DHAT), faces),
                   (_lift_to_gap(right, 0.4 * DHAT), faces)], rng, plane=plane)
    mu = np.array([[0.0, 0.3, 0.5], [0.3, 0.0, 0.7], [0.5, 0.7, 0.0]])
    mu_plane = np.array([0.1, 0.2, 0.9])
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"], plane=plane,
                                   mu=mu, mu_plane=mu_plane,
                                   plane_body_mask=[True, False, False])
    x = data["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    friction = col.build_friction_collisions(collisions, mesh, x, DHAT, 1.0)
    plane_contacts = friction.kind == col.VERTEX_PLANE
    pairs = {tuple(sorted(b)) for b in friction.bodies[~plane_contacts]}
    assert pairs == {(0, 1), (0, 2), (1, 2)}
    assert plane_contacts.any() and np.all(friction.bodies[plane_contacts, 0] == 0)
    np.testing.assert_array_equal(friction.mu[plane_contacts], 0.1)
    b = friction.bodies[~plane_contacts]
    np.testing.assert_array_equal(friction.mu[~plane_contacts], mu[b[:, 0], b[:, 1]])
    # one face-vertex contact evaluated by hand with the per-contact kernel
    k = int(np.flatnonzero(friction.kind == col.FACE_VERTEX)[0])
    u = 1e-3 * rng.standard_normal(x.shape)
    only = _take(friction, [k])
    du = u[friction.vertices[k]].ravel()
    gamma = _point_triangle_relative_displacement_matrix(friction.closest_point[k])
    assert col.friction_potential(only, mesh, u, 1e-4) == pytest.approx(_friction_potential(
        du, gamma, friction.tangent_basis[k], friction.mu[k], friction.normal_force[k], 1e-4),
        rel=1e-14)


def test_nearly_parallel_edges_carry_no_friction():
    data = scene_stacked_cubes(np.random.default_rng(0))
    mesh = col.CollisionMesh.build(data["rest"], data["faces"], data["body"])
    x = data["x"]
    collisions = col.build_collisions(mesh, x, DHAT)
    friction = col.build_friction_collisions(collisions, mesh, x, DHAT, 1.0)
    parallel = _nearly_parallel(collisions, x)
    assert parallel.any() and not parallel[collisions.kind == col.EDGE_EDGE].all()
    kept = {tuple(r) for r in friction.vertices[friction.kind == col.EDGE_EDGE]}
    ee = collisions.kind == col.EDGE_EDGE
    assert kept == {tuple(r) for r in collisions.vertices[ee & ~parallel]}
    assert len(friction) == len(collisions) - np.count_nonzero(parallel)


# -- Input checks ----------------------------------------------------------------------------------


def test_bad_input_is_rejected():
    cube, faces = _cube()
    body = np.zeros(8, dtype=int)
    with pytest.raises(ValueError, match="rest_positions"):
        col.CollisionMesh.build(cube[:, :2], faces, body)
    with pytest.raises(ValueError, match="faces"):
        col.CollisionMesh.build(cube, faces + 1, body)
    with pytest.raises(ValueError, match="different bodies"):
        col.CollisionMesh.build(cube, faces, np.r_[np.zeros(4, int), np.ones(4, int)])
    collapsed = cube.copy()
    collapsed[1] = collapsed[0]
    with pytest.raises(ValueError, match="zero length"):
        col.CollisionMesh.build(collapsed, faces, body)
    with pytest.raises(ValueError, match="mu"):
        col.CollisionMesh.build(cube, faces, body, mu=-0.1)
    with pytest.raises(ValueError, match="plane"):
        col.CollisionMesh.build(cube, faces, body, plane=(np.zeros(3), np.zeros(3)))
    mesh = col.CollisionMesh.build(cube, faces, body)
    with pytest.raises(ValueError, match="x must have shape"):
        col.build_collisions(mesh, cube[:4], DHAT)
    with pytest.raises(ValueError, match="dhat"):
        col.build_collisions(mesh, cube, -1.0)
    bad = cube.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        col.build_collisions(mesh, bad, DHAT)
