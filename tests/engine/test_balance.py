"""solver.balance: the net force and torque on an affine body against finite differences of the
incremental potential under rigid motions of that body."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from ipcgrasp.engine.bodies import AffineBody, Ground
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings
from ipcgrasp.geometry.mesh import mass_properties


def tilted_box_on_ground():
    """A 4 x 3 x 2 cm box of 50 g, its mesh shifted off its own origin (so the centre of mass is
    not the body-frame origin), tilted and moving, one corner 20 um above the ground (inside the
    contact layer), under gravity with friction."""
    box = trimesh.creation.box(extents=(0.04, 0.03, 0.02))
    box.apply_translation((0.011, -0.007, 0.004))
    props = mass_properties(box, 0.05)
    body = AffineBody("box", box.vertices, box.faces, props.mass, props.center_of_mass, props.second_moment,
                      props.volume)
    rotation = Rotation.from_euler("xyz", (0.3, -0.2, 0.5)).as_matrix()
    T = np.eye(4)
    T[:3, :3] = rotation
    T[2, 3] = 2e-5 - (box.vertices @ rotation.T)[:, 2].min()
    settings = SolverSettings(dt=0.01, dhat=1e-4, eps_v=1e-3, newton_tolerance=1e-5)
    sim = Simulation([body], poses={"box": T}, ground=Ground(mu=0.4), settings=settings)
    sim.set_affine_velocity("box", (0.02, -0.01, -0.005))
    return sim, props.center_of_mass


def rigidly_moved(z, off, center, translation, rotation):
    """z with the affine body at `off` translated by `translation` (m) and rotated by `rotation`
    about its centre of mass (body-frame `center`)."""
    z = z.copy()
    p, a = z[off:off + 3].copy(), z[off + 3:off + 12].reshape(3, 3).copy()
    c = p + a @ center
    z[off + 3:off + 12] = (rotation @ a).ravel()
    z[off:off + 3] = c + translation - rotation @ (a @ center)
    return z


def test_wrench_matches_finite_differences_of_the_incremental_potential():
    sim, center = tilted_box_on_ground()
    energy, gradient, z = sim.incremental_potential()
    z = z + 1e-6 * np.random.default_rng(0).standard_normal(z.shape)  # off the previous state
    forces, torques = sim.model.balance.wrenches(gradient(z), z, sim.settings.dt)
    off, h2, eps = sim.model.dofs.affine_offset[0], sim.settings.dt ** 2, 1e-8
    for k in range(3):
        e = np.eye(3)[k]
        push = [energy(rigidly_moved(z, off, center, s * eps * e, np.eye(3))) for s in (1, -1)]
        turn = [energy(rigidly_moved(z, off, center, np.zeros(3), Rotation.from_rotvec(s * eps * e).as_matrix()))
                for s in (1, -1)]
        assert forces[0, k] == pytest.approx(-(push[0] - push[1]) / (2 * eps) / h2, rel=1e-4, abs=1e-6)
        assert torques[0, k] == pytest.approx(-(turn[0] - turn[1]) / (2 * eps) / h2, rel=1e-4, abs=1e-8)
    assert np.linalg.norm(forces) > 0.1 and np.linalg.norm(torques) > 1e-3  # the contact is loaded


def test_largest_counts_a_torque_at_the_body_radius():
    sim, center = tilted_box_on_ground()
    _, gradient, z = sim.incremental_potential()
    g = gradient(z)
    forces, torques = sim.model.balance.wrenches(g, z, sim.settings.dt)
    radius = np.linalg.norm(sim.affines[0].vertices - center, axis=1).max()
    expected = max(np.linalg.norm(forces[0]), np.linalg.norm(torques[0]) / radius)
    assert sim.model.balance.largest(g, z, sim.settings.dt) == pytest.approx(expected, rel=1e-12)
