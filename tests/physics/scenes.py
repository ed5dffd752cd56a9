"""Small scenes for the physics tests: boxes as affine bodies, blocks as tet meshes."""

import ipctk
import numpy as np
import trimesh

from ipcgrasp.engine.bodies import AffineBody, DeformableBody, Ground, KinematicBody
from ipcgrasp.engine.neohookean import min_jacobian
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings
from ipcgrasp.geometry.mesh import mass_properties


def affine_box(name, extents, mass, stiffness=1e9):
    box = trimesh.creation.box(extents=extents)
    props = mass_properties(box, mass)
    return AffineBody(name, box.vertices, box.faces, props.mass, props.center_of_mass,
                      props.second_moment, props.volume, stiffness)


def kinematic_box(name, extents):
    box = trimesh.creation.box(extents=extents)
    return KinematicBody(name, box.vertices, box.faces)


def block_tets(extents, divisions):
    """Structured tet mesh of a box centred at the origin: each grid cell split into 6 tets."""
    nx, ny, nz = divisions
    axes = [np.linspace(-e / 2, e / 2, n + 1) for e, n in zip(extents, divisions)]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    idx = np.arange(len(X)).reshape(nx + 1, ny + 1, nz + 1)
    tets = []
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                c = [idx[i + a, j + b, k + d] for a, b, d in
                     [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]]
                for t in ([0, 1, 2, 6], [0, 2, 3, 6], [0, 3, 7, 6], [0, 7, 4, 6], [0, 4, 5, 6], [0, 5, 1, 6]):
                    tets.append([c[m] for m in t])
    tets = np.array(tets)
    vol = np.einsum("ij,ij->i", np.cross(X[tets[:, 1]] - X[tets[:, 0]], X[tets[:, 2]] - X[tets[:, 0]]),
                    X[tets[:, 3]] - X[tets[:, 0]])
    tets[vol < 0] = tets[vol < 0][:, [0, 2, 1, 3]]
    return X, tets


def deformable_block(name, extents, divisions, E, nu=0.45, density=1000.0, prescribed_side=None):
    """A Neo-Hookean block; prescribed_side ('-z', '+z', '-x', ...) glues that face's vertices."""
    X, tets = block_tets(extents, divisions)
    prescribed = np.zeros(0, dtype=np.int64)
    if prescribed_side:
        axis = "xyz".index(prescribed_side[1])
        value = X[:, axis].min() if prescribed_side[0] == "-" else X[:, axis].max()
        prescribed = np.flatnonzero(np.isclose(X[:, axis], value))
    return DeformableBody(name, X, tets, E, nu, density, prescribed)


def pose(translation=(0, 0, 0), rotation=None):
    T = np.eye(4)
    if rotation is not None:
        T[:3, :3] = rotation
    T[:3, 3] = translation
    return T


def assert_intersection_free(sim):
    """No edge-triangle intersection between bodies, nothing below the ground, no inverted tet."""
    x = sim.collision_positions()
    mesh = sim.mesh
    cmesh = ipctk.CollisionMesh(x, mesh.edges, mesh.faces)
    assert not ipctk.has_intersections(cmesh, x), f"intersection at t={sim.state.time:.4f}"
    if sim.ground is not None:
        on_plane = mesh.plane_body_mask[mesh.vertex_body]
        heights = (x[on_plane] - sim.ground.origin) @ sim.ground.normal
        assert heights.min(initial=np.inf) > 0.0, f"vertex below the ground at t={sim.state.time:.4f}"
    for body in sim.deformables:
        assert min_jacobian(sim.vertices(body.name), body.tets, body.Dm_inv) > 0.0, f"inverted tet in {body.name}"


def rotation_z(angle):
    """Rotation matrix (3, 3) by `angle` (rad) about the world z axis."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def box_pad_scene():
    """A box sliding on the ground against a pad whose back face is prescribed: contacts active,
    friction lagged, inertia nonzero."""
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (2, 2, 2), E=1e5, prescribed_side="-x")
    settings = SolverSettings(dt=0.01, dhat=1e-3, eps_v=1e-3, newton_tolerance=1e-4)
    sim = Simulation([box, pad], poses={"box": pose((0, 0, 0.0105)), "pad": pose((-0.0125, 0.001, 0.011))},
                     ground=Ground(mu=0.3), friction={("box", "pad"): 0.5}, settings=settings)
    sim.state.affine_qdot[0][:3] = (0.01, -0.02, 0.0)
    return sim


def box_between_pads(mu, pad_E, contact_force_scale, mass=1.0, on_step=None, box_offset=(0.0, 0.0, 0.0),
                     **solver_options):
    """A 2 cm rigid box (mass kg) squeezed between two 16 x 16 x 4 mm Neo-Hookean pads glued to
    their outer faces, gravity off: the pads close 0.55 mm over 15 of 30 steps of 10 ms.
    on_step(sim) runs after every step; box_offset: the box's initial translation (m); solver_options:
    further SolverSettings fields. Returns
    the simulation, the drivers that hold the pads there, and each pad's normal force on the box
    (N, left and right)."""
    half, t, gap = 0.01, 0.004, 5e-4
    box = affine_box("box", (2 * half,) * 3, mass)
    left = deformable_block("left", (t, 0.016, 0.016), (2, 3, 3), E=pad_E, density=1000.0, prescribed_side="-x")
    right = deformable_block("right", (t, 0.016, 0.016), (2, 3, 3), E=pad_E, density=1000.0, prescribed_side="+x")
    xl, xr = -(half + gap + t / 2), half + gap + t / 2
    settings = SolverSettings(dt=0.01, gravity=(0, 0, 0), dhat=2e-5, eps_v=1e-4, newton_tolerance=1e-5,
                              contact_force_scale=contact_force_scale, **solver_options)
    sim = Simulation([box, left, right],
                     poses={"box": pose(box_offset), "left": pose((xl, 0, 0)), "right": pose((xr, 0, 0))},
                     friction={("box", "left"): mu, ("box", "right"): mu}, settings=settings)
    squeeze = gap + 5e-5
    for k in range(30):
        d = squeeze * min(1.0, (k + 1) / 15)
        stats = sim.step({"left": pose((xl + d, 0, 0)), "right": pose((xr - d, 0, 0))})
        if on_step:
            on_step(sim)
    forces = (float(np.linalg.norm(stats.contact_force[0, 1])), float(np.linalg.norm(stats.contact_force[0, 2])))
    return sim, {"left": pose((xl + squeeze, 0, 0)), "right": pose((xr - squeeze, 0, 0))}, forces
