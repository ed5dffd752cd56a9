"""Compliant mounts (engine.mounts): driven vertices on a spring along one axis, inside the
incremental potential. Derivatives against finite differences and a dense reference assembly,
the closed form u = F / k, and the intersection-free invariant while a mounted pad squeezes."""

import numpy as np
import pytest

from ipcgrasp.engine.bodies import Ground
from ipcgrasp.engine.mounts import CompliantMount
from ipcgrasp.engine.neohookean import elastic_hessians
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings

from .scenes import affine_box, assert_intersection_free, deformable_block, kinematic_box, pose
from .test_assembly import full_from_upper, reference_hessian, step_inputs


def mounted_box_pad_scene():
    """scenes.box_pad_scene with the pad and a kinematic plate behind it on one mount whose axis
    is not a coordinate axis and whose mode shape tilts the pad, deflected and moving: every term
    of E depends on u."""
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (2, 2, 2), E=1e5, prescribed_side="-x")
    plate = kinematic_box("plate", (0.002, 0.016, 0.016))
    shapes = {"pad": 1.0 + 40.0 * pad.rest_positions[:, 2], "plate": 1.0 + 40.0 * plate.vertices[:, 2]}
    mount = CompliantMount("finger", ("pad", "plate"), axis=(1.0, 0.3, -0.2), stiffness=300.0, mass=0.01,
                           shapes=shapes)
    settings = SolverSettings(dt=0.01, dhat=1e-3, eps_v=1e-3, newton_tolerance=1e-4)
    sim = Simulation([box, pad, plate], poses={"box": pose((0, 0, 0.0105)), "pad": pose((-0.0125, 0.001, 0.011)),
                                               "plate": pose((-0.0157, 0.001, 0.011))},
                     ground=Ground(mu=0.3), friction={("box", "pad"): 0.5}, ignore_pairs=[("pad", "plate")],
                     settings=settings, mounts=[mount])
    sim.state.affine_qdot[0][:3] = (0.01, -0.02, 0.0)
    sim.state.mount_u[:] = 2e-4
    sim.state.mount_udot[:] = -0.01
    sim.restore(sim.state)  # places the driven vertices u along the mount axis
    return sim


def test_mounted_vertices_sit_at_their_driver_plus_u_phi_axis():
    """The contact surface (x = P z + c) and the bodies' vertices agree, both u phi a from where
    the drivers put them."""
    sim = mounted_box_pad_scene()
    x = sim.collision_positions()
    u, mount = sim.state.mount_u[0], sim.mounts[0]
    for body, (start, surf) in zip(sim.bodies, sim.model.surface):
        np.testing.assert_allclose(x[start:start + len(surf)], sim.vertices(body.name)[surf], rtol=0, atol=1e-15)
    plate = sim.bodies[sim.index["plate"]]
    placed = plate.vertices + (-0.0157, 0.001, 0.011)
    expected = placed + u * mount.shape("plate", plate.n_vertices)[:, None] * mount.axis
    np.testing.assert_allclose(sim.vertices("plate"), expected, rtol=0, atol=1e-15)
    pad = sim.deformables[0]
    moved = sim.vertices("pad")[pad.prescribed] - sim.state.deformable_x[0][pad.prescribed]
    np.testing.assert_allclose(moved, u * mount.shape("pad", pad.n_vertices)[pad.prescribed, None] * mount.axis,
                               rtol=0, atol=1e-15)


def test_mounted_potential_gradient_matches_finite_differences():
    sim = mounted_box_pad_scene()
    energy, gradient, z0 = sim.incremental_potential()
    u = sim.dofs.mount_offset
    rng = np.random.default_rng(3)
    z = z0 + 1e-5 * rng.standard_normal(z0.size) * (np.abs(z0) > 0)
    g = gradient(z)
    assert abs(g[u]) > 1e-3 * np.abs(g).max()  # the mount's own component is not negligible
    directions = list(rng.standard_normal((4, z0.size))) + [np.eye(z0.size)[u]]
    for direction in directions:
        direction /= np.linalg.norm(direction)
        step = 1e-8
        fd = (energy(z + step * direction) - energy(z - step * direction)) / (2 * step)
        assert np.isclose(g @ direction, fd, rtol=1e-4, atol=1e-9 * np.abs(g).max())


def test_mounted_hessian_matches_a_dense_reference():
    """The assembled Hessian equals J^T (h^2 H_elastic) J + M + h^2 k e_u e_u^T + P^T H_contact P
    with J the dense map from z to every pad coordinate (prescribed ones: phi_v times the axis on
    u), and
    the u-column is what finite differences of the gradient give near the rest shape."""
    rng = np.random.default_rng(4)
    sim = mounted_box_pad_scene()
    z, friction, x_t, x, coll = step_inputs(sim, rng)
    H = full_from_upper(sim, sim.potential.hessian(sim.state, z, friction, x_t, x, coll))
    H_ref, n = reference_hessian(sim, z, friction, x_t, x, coll)  # free-free elastic, mass, contact
    body, dof, u = sim.deformables[0], sim.dofs.vertex_dof[0], sim.dofs.mount_offset
    motion = sim.mounts[0].shape("pad", body.n_vertices)[:, None] * sim.mounts[0].axis
    assert np.ptp(motion[body.prescribed, 0]) > 0.1 * np.abs(motion[:, 0]).max()  # the shape tilts the back face
    h2 = sim.settings.dt ** 2
    J = np.zeros((3 * body.n_vertices, n))
    for v in range(body.n_vertices):
        if dof[v] >= 0:
            J[3 * v:3 * v + 3, dof[v]:dof[v] + 3] = np.eye(3)
        else:
            J[3 * v:3 * v + 3, u] = motion[v]
    H_el = np.zeros((3 * body.n_vertices,) * 2)
    x_def = sim.dofs.deformable_positions(sim.state, z)[0]
    for block, tet in zip(elastic_hessians(x_def, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam,
                                           project=True), body.tets):
        idx = (3 * tet[:, None] + np.arange(3)).ravel()
        H_el[np.ix_(idx, idx)] += block
    free_free = np.zeros_like(H_ref)
    free_idx = np.flatnonzero(J.any(axis=1) & (J[:, u] == 0))
    Jf = J[free_idx]
    free_free += h2 * Jf.T @ H_el[np.ix_(free_idx, free_idx)] @ Jf  # already in H_ref
    H_full = H_ref - free_free + h2 * J.T @ H_el @ J
    H_full[u, u] += h2 * sim.mounts[0].stiffness
    assert abs(H_full[u, u]) > 0 and np.abs(H_full[u, :u]).max() > 0
    np.testing.assert_allclose(H, H_full, rtol=0, atol=1e-12 * np.abs(H_full).max())
    # the same map with the exact (unprojected) element Hessians is the derivative of the gradient
    H_exact = np.zeros_like(H_el)
    for block, tet in zip(elastic_hessians(x_def, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam,
                                           project=False), body.tets):
        idx = (3 * tet[:, None] + np.arange(3)).ravel()
        H_exact[np.ix_(idx, idx)] += block
    column = h2 * J.T @ H_exact @ J[:, u] + sim.model.M.toarray()[:, u]
    column[u] += h2 * sim.mounts[0].stiffness
    z_tilde = sim.potential.predicted(sim.pack(), sim.pack(velocities=True))
    step = 1e-7
    e_u = np.eye(n)[u]
    fd = (sim.potential.gradient_without_contact(sim.state, z + step * e_u, z_tilde)
          - sim.potential.gradient_without_contact(sim.state, z - step * e_u, z_tilde)) / (2 * step)
    np.testing.assert_allclose(column, fd, rtol=1e-5, atol=1e-7 * np.abs(column).max())


def box_on_mounted_pad(stiffness, box_mass=0.2):
    """A rigid 2 cm box resting on a 16 x 16 x 4 mm pad whose bottom face and a plate under it
    ride on a vertical mount (no ground): the only thing holding the box up is the spring."""
    box = affine_box("box", (0.02, 0.02, 0.02), box_mass)
    pad = deformable_block("pad", (0.016, 0.016, 0.004), (2, 2, 2), E=1e6, density=1000.0, prescribed_side="-z")
    plate = kinematic_box("plate", (0.016, 0.016, 0.002))
    mount = CompliantMount("finger", ("pad", "plate"), axis=(0, 0, 1), stiffness=stiffness, mass=0.005)
    settings = SolverSettings(dt=0.02, dhat=2e-5, eps_v=1e-4, newton_tolerance=1e-6)
    return Simulation([box, pad, plate], poses={"box": pose((0, 0, 0.01 + 0.002 + 1e-4)), "pad": pose(),
                                                "plate": pose((0, 0, -0.0032))},
                      friction={("box", "pad"): 0.5}, ignore_pairs=[("pad", "plate")], settings=settings,
                      mounts=[mount])


@pytest.mark.parametrize("stiffness", [200.0, 1000.0, 5000.0])
def test_a_steady_tip_load_deflects_the_mount_by_f_over_k(stiffness):
    """The box's weight plus the free part of the pad's weight, carried through barrier contact
    and the pad's elasticity, deflects the mount by exactly F / k once the oscillation has died
    out (implicit Euler damps it); the driver never moves."""
    sim = box_on_mounted_pad(stiffness)
    pad = sim.deformables[0]
    free = np.setdiff1d(np.arange(pad.n_vertices), pad.prescribed)
    load = (sim.affines[0].mass + pad.masses[free].sum()) * 9.81
    for _ in range(60):
        sim.step()
        assert_intersection_free(sim)
    u = sim.mount_deflection("finger")
    assert u == pytest.approx(-load / stiffness, rel=1e-3)
    # the plate moved with the pad's back face, by the same u
    assert sim.vertices("plate")[:, 2].max() == pytest.approx(-0.0022 + u, abs=1e-12)
    assert abs(sim.state.mount_udot[0]) < 1e-4


def test_a_compliant_finger_squeezing_a_box_stays_intersection_free_and_balances_its_spring():
    """Two pads squeeze a free box (gravity off), the left on a soft mount: every accepted step
    is intersection-free, and at the end the left pad's contact force on the box equals k |u|."""
    half, t, gap, k = 0.01, 0.004, 5e-4, 500.0
    box = affine_box("box", (2 * half,) * 3, 0.05)
    left = deformable_block("left", (t, 0.016, 0.016), (2, 3, 3), E=1e6, density=1000.0, prescribed_side="-x")
    right = deformable_block("right", (t, 0.016, 0.016), (2, 3, 3), E=1e6, density=1000.0, prescribed_side="+x")
    xl, xr = -(half + gap + t / 2), half + gap + t / 2
    settings = SolverSettings(dt=0.01, gravity=(0, 0, 0), dhat=2e-5, eps_v=1e-4, newton_tolerance=1e-6,
                              contact_force_scale=1.0)
    sim = Simulation([box, left, right], poses={"left": pose((xl, 0, 0)), "right": pose((xr, 0, 0))},
                     friction={("box", "left"): 0.5, ("box", "right"): 0.5}, settings=settings,
                     mounts=[CompliantMount("left finger", ("left",), axis=(1, 0, 0), stiffness=k, mass=0.005)])
    squeeze = gap + 2e-3  # far beyond contact: the spring yields about 2 mm
    for step in range(60):
        d = squeeze * min(1.0, (step + 1) / 30)
        stats = sim.step({"left": pose((xl + d, 0, 0)), "right": pose((xr - d, 0, 0))})
        assert_intersection_free(sim)
    u = sim.mount_deflection("left finger")
    force = stats.contact_force[sim.index["left"], sim.index["box"]]  # on the pad, from the box
    assert u < -1e-3  # the soft finger gave way
    assert force[0] == pytest.approx(k * u, rel=1e-3)


def test_mount_errors_name_the_problem():
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (1, 1, 1), E=1e5, prescribed_side="-x")
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    with pytest.raises(ValueError, match="stiffness"):
        CompliantMount("m", ("pad",), (1, 0, 0), stiffness=0.0, mass=1.0)
    with pytest.raises(ValueError, match="axis"):
        CompliantMount("m", ("pad",), (0, 0, 0), stiffness=1.0, mass=1.0)
    with pytest.raises(ValueError, match="not driven"):
        Simulation([box, pad], poses={"box": pose((0.05, 0, 0))},
                   mounts=[CompliantMount("m", ("box",), (1, 0, 0), 1.0, 1.0)])
    sim = Simulation([box, pad], poses={"box": pose((0.05, 0, 0))},
                     mounts=[CompliantMount("m", ("pad",), (1, 0, 0), 1.0, 1.0)])
    turned = pose(rotation=np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="not rotate"):
        sim.driven.targets({"pad": turned})


def test_drive_coupling_reaches_the_mount():
    """Moving the driven vertices by dc pulls on the mount's deflection with a . (H_pc dc) (the
    exact element Hessians): without it the drive's predictor would push the whole pad away."""
    rng = np.random.default_rng(5)
    sim = mounted_box_pad_scene()
    body, dof, u = sim.deformables[0], sim.dofs.vertex_dof[0], sim.dofs.mount_offset
    h2 = sim.settings.dt ** 2
    dx = np.zeros((body.n_vertices, 3))
    dx[body.prescribed] = 1e-4 * rng.standard_normal((len(body.prescribed), 3))
    z = sim.pack()
    out = sim.driven.coupling(sim.state, z, [dx], sim.settings.dt ** 2)
    x_def = sim.dofs.deformable_positions(sim.state, z)[0]
    forces = np.zeros((body.n_vertices, 3))
    for block, tet in zip(elastic_hessians(x_def, body.tets, body.Dm_inv, body.volumes, body.mu, body.lam,
                                           project=False), body.tets):
        forces[tet] += (block @ dx[tet].ravel()).reshape(4, 3)
    free = dof >= 0
    ref = np.zeros(sim.n_dof)
    ref[(dof[free][:, None] + np.arange(3)).ravel()] = h2 * forces[free].ravel()
    motion = sim.mounts[0].shape("pad", body.n_vertices)[:, None] * sim.mounts[0].axis
    ref[u] = h2 * np.sum(forces[body.prescribed] * motion[body.prescribed])
    assert abs(ref[u]) > 0
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_scene_positions_and_steps_are_those_of_each_body():
    """On a pad riding on a deflected compliant mount: all deformable vertices at z are the bodies'
    own positions one after the other (free ones from z, prescribed ones moved by the mount), and
    a step's displacements are the change of those positions."""
    sim = mounted_box_pad_scene()
    rng = np.random.default_rng(5)
    z = sim.pack() + 1e-5 * rng.standard_normal(sim.n_dof)
    p = 1e-5 * rng.standard_normal(sim.n_dof)
    X = sim.dofs.scene_positions(sim.state, z)
    np.testing.assert_array_equal(X, np.concatenate(sim.dofs.deformable_positions(sim.state, z)))
    assert not np.array_equal(X, np.concatenate(sim.dofs.deformable_positions(sim.state, z, deflected=False)))
    np.testing.assert_allclose(sim.dofs.scene_steps(p), sim.dofs.scene_positions(sim.state, z + p) - X, rtol=0,
                               atol=1e-15)
