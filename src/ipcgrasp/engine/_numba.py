"""Numba options for every engine kernel, in one place.

Kernels are private (`_name`) `@njit` functions that take and return NumPy arrays and
floats only; public wrappers validate inputs and call them. `cache=True` keeps cold starts
short after the first run; fastmath stays off (it may reorder the IEEE operations our
tolerances rely on).
"""

import numba

njit = numba.njit(cache=True, fastmath=False, nogil=True)

__all__ = ["njit"]
