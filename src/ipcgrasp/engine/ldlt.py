"""Sparse LDL^T of the Newton Hessian with qdldl's C routines, callable from numba kernels.

The qdldl wheel exports the routines of its C library: the AMD fill-reducing ordering
(`amd_l_order`), the elimination tree (`QDLDL_etree`), the numeric factorisation
(`QDLDL_factor`) and the triangular solves (`QDLDL_solve`), all on 64-bit indices. They are
loaded into the process once and declared to numba by symbol name, so kernels call them without
a Python round trip and stay cacheable (the symbols are resolved when the cached code loads).
`Ldlt` does what `qdldl.Solver` does, with the same ordering and the same arithmetic: its
solutions equal qdldl.Solver's bit for bit (tests/engine/test_ldlt.py), and a Newton loop
written as one kernel can factor and solve inside it.

A symmetric matrix is given by the upper triangle of one fixed CSC pattern (indptr, indices,
sorted row indices per column, the diagonal present); the ordering, the permuted pattern and the
elimination tree are computed once per pattern, each `factor` places new values and refactors.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
import qdldl
from numba import types

from ipcgrasp.engine._numba import njit

__all__ = ["Ldlt"]

_ROUTINES = ("amd_l_order", "QDLDL_etree", "QDLDL_factor", "QDLDL_solve")
llvm.load_library_permanently(qdldl.__file__)
_missing = [name for name in _ROUTINES if llvm.address_of_symbol(name) is None]
if _missing:
    raise ImportError(f"the installed qdldl ({qdldl.__file__}) does not export {', '.join(_missing)}; "
                      "ipcgrasp calls qdldl's C routines directly: install qdldl>=0.1.9 (pip install -U qdldl)")
_i64, _ptr = types.int64, types.voidptr
_amd_order = types.ExternalFunction("amd_l_order", _i64(_i64, _ptr, _ptr, _ptr, _ptr, _ptr))
_etree = types.ExternalFunction("QDLDL_etree", _i64(_i64, _ptr, _ptr, _ptr, _ptr, _ptr))
_factor = types.ExternalFunction(
    "QDLDL_factor", _i64(_i64, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr))
_solve = types.ExternalFunction("QDLDL_solve", types.void(_i64, _ptr, _ptr, _ptr, _ptr, _ptr))


@njit
def _analyse(n, indptr, indices):
    """Ordering and symbolic factorisation of the upper-triangle pattern: (perm, the permuted
    upper-triangle pattern Cp, Ci, where (entry k of the pattern goes to Ci/Cx slot where[k]),
    the elimination tree, the column counts of L and nnz(L)); nnz(L) < 0 if AMD or the tree
    failed (an invalid pattern)."""
    perm = np.empty(n, dtype=np.int64)
    status = _amd_order(n, indptr.ctypes, indices.ctypes, perm.ctypes, 0, 0)
    iperm = np.empty(n, dtype=np.int64)
    for i in range(n):
        iperm[perm[i]] = i
    count = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        for k in range(indptr[j], indptr[j + 1]):
            count[max(iperm[indices[k]], iperm[j]) + 1] += 1
    Cp = np.cumsum(count)
    fill = Cp[:-1].copy()
    Ci = np.empty(indptr[n], dtype=np.int64)
    where = np.empty(indptr[n], dtype=np.int64)
    for j in range(n):
        for k in range(indptr[j], indptr[j + 1]):
            a, b = iperm[indices[k]], iperm[j]
            column = max(a, b)
            where[k] = fill[column]
            Ci[fill[column]] = min(a, b)
            fill[column] += 1
    work = np.empty(n, dtype=np.int64)
    Lnz = np.empty(n, dtype=np.int64)
    etree = np.empty(n, dtype=np.int64)
    nnz_L = _etree(n, Cp.ctypes, Ci.ctypes, work.ctypes, Lnz.ctypes, etree.ctypes) if status >= 0 else -1
    return perm, Cp, Ci, where, etree, Lnz, nnz_L


@njit
def _factor_values(data, where, Cp, Ci, Cx, Lp, Li, Lx, D, Dinv, Lnz, etree, bwork, iwork, fwork):
    """Numeric LDL^T of the matrix with upper-triangle values `data` (in the unpermuted pattern);
    returns the number of positive entries of D, or -1 if a pivot is zero."""
    for k in range(data.shape[0]):
        Cx[where[k]] = data[k]
    return _factor(D.shape[0], Cp.ctypes, Ci.ctypes, Cx.ctypes, Lp.ctypes, Li.ctypes, Lx.ctypes, D.ctypes,
                   Dinv.ctypes, Lnz.ctypes, etree.ctypes, bwork.ctypes, iwork.ctypes, fwork.ctypes)


@njit
def _solve_with(rhs, perm, Lp, Li, Lx, Dinv, x):
    """x = H^-1 rhs from the factorisation (x: scratch, n)."""
    n = perm.shape[0]
    for i in range(n):
        x[i] = rhs[perm[i]]
    _solve(n, Lp.ctypes, Li.ctypes, Lx.ctypes, Dinv.ctypes, x.ctypes)
    out = np.empty(n)
    for i in range(n):
        out[perm[i]] = x[i]
    return out


class Ldlt:
    """LDL^T factorisations of n x n symmetric matrices on one upper-triangle CSC pattern."""

    def __init__(self, indptr, indices, n):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        if indptr.shape != (n + 1,) or indices.shape != (indptr[-1],):
            raise ValueError(f"an n x n CSC pattern needs n + 1 = {n + 1} column pointers and indptr[-1] row indices")
        self.perm, self.Cp, self.Ci, self.where, self.etree, self.Lnz, nnz_L = _analyse(n, indptr, indices)
        if nnz_L < 0:
            raise ValueError("the Hessian pattern is not an upper-triangle CSC pattern with sorted rows")
        self.Cx = np.empty(indices.shape[0])
        self.Lp = np.empty(n + 1, dtype=np.int64)
        self.Li = np.empty(nnz_L, dtype=np.int64)
        self.Lx = np.empty(nnz_L)
        self.D, self.Dinv, self.fwork, self.x = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        self.bwork = np.empty(n, dtype=np.uint8)
        self.iwork = np.empty(3 * n, dtype=np.int64)
        self.factored = False
        self.positive_definite = False

    def factor(self, data) -> bool:
        """Factor the matrix with upper-triangle values `data` (in the pattern's order); False if
        a pivot is zero (the matrix is singular), and nothing to solve with until a factor
        succeeds. Sets positive_definite: True when every pivot of D is positive."""
        positive = _factor_values(data, self.where, self.Cp, self.Ci, self.Cx, self.Lp, self.Li, self.Lx, self.D,
                                  self.Dinv, self.Lnz, self.etree, self.bwork, self.iwork, self.fwork)
        self.factored = positive >= 0
        self.positive_definite = positive == self.D.shape[0]  # every pivot positive (Sylvester's law)
        return self.factored

    def solve(self, rhs) -> np.ndarray:
        """H^-1 rhs for the last matrix factored."""
        if not self.factored:
            raise RuntimeError("no factorisation to solve with: the last factor() failed or none was made")
        return _solve_with(np.ascontiguousarray(rhs, dtype=np.float64), self.perm, self.Lp, self.Li, self.Lx,
                           self.Dinv, self.x)
