"""Fixtures shared by the engine tests: central finite differences of scalar and vector functions."""

import numpy as np
import pytest


def _central_differences(f, x, h):
    """Columns (f(x + h e_k) - f(x - h e_k)) / (2 h) for every coordinate k of the flat x (n,)."""
    return [(np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h) for e in np.eye(x.size)]


@pytest.fixture
def fd_gradient():
    """fd_gradient(f, x, h): central-difference gradient (n,) of a scalar function f at x (n,)."""
    return lambda f, x, h: np.array(_central_differences(f, x, h))


@pytest.fixture
def fd_jacobian():
    """fd_jacobian(f, x, h): central-difference Jacobian (m, n) of a function f: (n,) -> (m,) at x."""
    return lambda f, x, h: np.column_stack(_central_differences(f, x, h))
