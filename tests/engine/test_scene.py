"""engine.scene: whole-scene kernels. Their sums must be NumPy's and SciPy's to the bit (the line
search compares energies evaluated both ways). Positions and steps over all bodies at once:
tests/physics/test_compliant_mount.py."""

import numpy as np
import pytest
import scipy.sparse as sp

from ipcgrasp.engine.scene import _csr_product, _pairwise_sum


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 4099, 20000])
def test_pairwise_sum_is_numpys_sum_to_the_bit(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
        assert _pairwise_sum(a) == a.sum()


def test_csr_product_is_scipys_to_the_bit():
    rng = np.random.default_rng(4)
    for density in (0.01, 0.1, 0.5):
        A = sp.random(300, 200, density=density, random_state=rng, format="csr")
        v = rng.standard_normal(200) * 10.0 ** rng.uniform(-6, 6, 200)
        np.testing.assert_array_equal(_csr_product(A.indptr, A.indices, A.data, v), A @ v)



def test_step_norm_is_the_largest_position_or_contact_displacement_and_nan_stays_nan():
    from ipcgrasp.engine.scene import _step_norm

    rng = np.random.default_rng(6)
    P = sp.random(30, 20, density=0.2, random_state=rng, format="csr")
    p = rng.standard_normal(20)
    positions = np.arange(0, 20, 2)
    norm, dx = _step_norm(p, P.indptr, P.indices, P.data, positions)
    np.testing.assert_array_equal(dx, (P @ p).reshape(-1, 3))
    assert norm == max(np.abs(p[positions]).max(), np.abs(P @ p).max())
    p[positions[3]] = np.nan
    assert np.isnan(_step_norm(p, P.indptr, P.indices, P.data, positions)[0])
