"""The full incremental potential of a small scene against finite differences."""

import numpy as np

from ipcgrasp.engine.bodies import Ground
from ipcgrasp.engine.simulation import Simulation, SolverSettings

from .scenes import affine_box, deformable_block, pose


def test_incremental_potential_gradient_matches_finite_differences():
    # A box resting between a pad and the ground, with contacts active and friction lagged.
    box = affine_box("box", (0.02, 0.02, 0.02), 0.05)
    pad = deformable_block("pad", (0.004, 0.016, 0.016), (2, 2, 2), E=1e5, prescribed_side="-x")
    settings = SolverSettings(dt=0.01, dhat=1e-3, eps_v=1e-3)
    sim = Simulation([box, pad], poses={"box": pose((0, 0, 0.0105)), "pad": pose((-0.0125, 0.001, 0.011))},
                     ground=Ground(mu=0.3), friction={("box", "pad"): 0.5}, settings=settings)
    sim.state.affine_qdot[0][:3] = (0.01, -0.02, 0.0)  # moving, so friction and inertia terms are nonzero
    energy, gradient, z0 = sim.incremental_potential()
    rng = np.random.default_rng(0)
    z = z0 + 1e-5 * rng.standard_normal(z0.size) * (np.abs(z0) > 0)
    g = gradient(z)
    assert np.abs(g).max() > 0
    for direction in rng.standard_normal((5, z0.size)):
        direction /= np.linalg.norm(direction)
        step = 1e-8
        fd = (energy(z + step * direction) - energy(z - step * direction)) / (2 * step)
        assert np.isclose(g @ direction, fd, rtol=1e-4, atol=1e-9 * np.abs(g).max())
