"""Numba options for every engine kernel, in one place.

Kernels are private (`_name`) `@njit` functions that take and return NumPy arrays and
floats only; public wrappers validate inputs and call them. `cache=True` keeps cold starts
short after the first run; fastmath stays off (it may reorder the IEEE operations our
tolerances rely on).

A constant passed from one kernel to another is an np.int64 / np.bool_ (np.int64(0), np.True_,
module constants such as distance._V0), not a Python literal: numba compiles a separate
specialisation of the callee for every distinct literal argument, each costing a cold start
another fraction of a second (benchmarks/README.md, ninth pass). LLVM can still inline the
callee and fold the constant; the cube trials ran no slower without the specialisations.

Copying one array into another is a loop, not a slice assignment (a[:] = b, a[:, :] = B): numba
compiles its broadcasting setitem for every such statement's types, up to 2 s each on a cold
start, where the loop costs nothing (filling with a scalar, a[:] = 0.0, is cheap either way).
`_copy_into` is that loop for arrays of any shape; a copy into a reshaped slice inside a hot
loop is written out instead (np.ndindex over a reshaped view measured 5 times slower than two
plain loops: 66 against 14 us for 250 12 x 12 blocks).
"""

import numba
import numpy as np

njit = numba.njit(cache=True, fastmath=False, nogil=True)

__all__ = ["njit"]


@njit
def _copy_into(out, values):
    """out[...] = values for two arrays of one shape, element by element (no slice assignment)."""
    for index in np.ndindex(out.shape):
        out[index] = values[index]
