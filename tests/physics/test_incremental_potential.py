"""The full incremental potential of a small scene against finite differences."""

import numpy as np

from .scenes import box_pad_scene


def test_incremental_potential_gradient_matches_finite_differences():
    sim = box_pad_scene()
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
