"""engine.ldlt against qdldl's own Python solver (the same C routines behind its bindings: the
solutions must agree bit for bit) and SciPy's sparse LU (an independent solver)."""

import numba
import numpy as np
import pytest
import qdldl
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ipcgrasp.engine.ldlt import Ldlt, _factor_values, _solve_with


def spd_upper(n, density, seed):
    """Upper triangle (CSC, sorted rows, diagonal stored) of a random sparse SPD matrix."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng)
    A = A @ A.T + sp.diags(rng.uniform(0.5, 2.0, n))
    upper = sp.triu(A).tocsc()
    upper.sort_indices()
    return upper


def full(upper):
    return (upper + sp.triu(upper, 1).T).tocsc()


@pytest.mark.parametrize("n, density, seed", [(5, 0.4, 0), (60, 0.05, 1), (300, 0.01, 2)])
def test_solutions_equal_qdldls_and_scipys(n, density, seed):
    upper = spd_upper(n, density, seed)
    rhs = np.random.default_rng(seed + 10).normal(size=n)
    ldlt = Ldlt(upper.indptr, upper.indices, n)
    assert ldlt.factor(upper.data)
    x = ldlt.solve(rhs)
    np.testing.assert_array_equal(x, qdldl.Solver(upper, upper=True).solve(rhs))
    expected = spla.spsolve(full(upper), rhs)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_refactoring_on_the_same_pattern_solves_the_new_matrix():
    upper = spd_upper(80, 0.04, 3)
    ldlt = Ldlt(upper.indptr, upper.indices, 80)
    rhs = np.arange(80.0)
    assert ldlt.factor(upper.data)
    first = ldlt.solve(rhs)
    scaled = upper.copy()
    scaled.data = 3.0 * upper.data
    scaled.data[upper.indptr[1:] - 1] += 1.0  # the last entry of each column is its diagonal
    assert ldlt.factor(scaled.data)
    np.testing.assert_allclose(ldlt.solve(rhs), spla.spsolve(full(scaled), rhs), rtol=1e-10, atol=0)
    assert not np.allclose(ldlt.solve(rhs), first)


def test_a_singular_matrix_is_reported_and_not_solved_with():
    upper = spd_upper(10, 0.2, 4)
    cols = np.repeat(np.arange(10), np.diff(upper.indptr))
    data = upper.data.copy()
    data[(upper.indices == 6) | (cols == 6)] = 0.0  # row and column 6 zero, its diagonal included
    ldlt = Ldlt(upper.indptr, upper.indices, 10)
    assert not ldlt.factor(data)
    with pytest.raises(RuntimeError, match="no factorisation"):
        ldlt.solve(np.ones(10))


def test_a_pattern_of_the_wrong_size_is_refused():
    upper = spd_upper(10, 0.2, 5)
    with pytest.raises(ValueError, match="column pointers"):
        Ldlt(upper.indptr[:-1], upper.indices, 10)


def test_a_numba_kernel_factors_and_solves_without_python():
    """What the module is for: a kernel that assembles, factors and solves in one call."""

    @numba.njit
    def doubled_and_solved(data, rhs, where, Cp, Ci, Cx, Lp, Li, Lx, D, Dinv, Lnz, etree, bwork, iwork, fwork, perm,
                           x):
        twice = 2.0 * data
        if _factor_values(twice, where, Cp, Ci, Cx, Lp, Li, Lx, D, Dinv, Lnz, etree, bwork, iwork, fwork) < 0:
            return np.full(rhs.shape[0], np.nan)
        return _solve_with(rhs, perm, Lp, Li, Lx, Dinv, x)

    upper = spd_upper(40, 0.08, 6)
    rhs = np.linspace(-1.0, 1.0, 40)
    s = Ldlt(upper.indptr, upper.indices, 40)
    x = doubled_and_solved(upper.data, rhs, s.where, s.Cp, s.Ci, s.Cx, s.Lp, s.Li, s.Lx, s.D, s.Dinv, s.Lnz,
                           s.etree, s.bwork, s.iwork, s.fwork, s.perm, s.x)
    np.testing.assert_allclose(x, spla.spsolve(2.0 * full(upper), rhs), rtol=1e-10, atol=0)


def test_positive_definite_follows_the_eigenvalues():
    """positive_definite after factor() says whether every eigenvalue is positive (numpy's
    eigvalsh), for SPD matrices and for the same ones shifted to be indefinite."""
    for seed in range(5):
        upper = spd_upper(40, 0.08, seed)
        ldlt = Ldlt(upper.indptr, upper.indices, 40)
        eigenvalues = np.linalg.eigvalsh(full(upper).toarray())
        for shift in (0.0, 0.5 * (eigenvalues[0] + eigenvalues[1])):  # the second: one eigenvalue negative
            shifted = upper.copy()
            shifted.data[upper.indptr[1:] - 1] -= shift  # the last entry of each column is its diagonal
            assert ldlt.factor(shifted.data)
            assert ldlt.positive_definite == (np.linalg.eigvalsh(full(shifted).toarray())[0] > 0.0)
            assert ldlt.positive_definite == (shift == 0.0)
