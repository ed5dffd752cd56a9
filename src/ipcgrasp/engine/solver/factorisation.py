"""The LDL^T factorisation of the Newton Hessian (qdldl through engine.ldlt) and what is known of
the Hessian it holds: its active contacts, where a Newton solve converged with it, and whether it
is the one where the last accepted step ended."""

from __future__ import annotations

import numpy as np

from ipcgrasp.engine.ldlt import Ldlt
from ipcgrasp.engine.solver.settings import StepFailed


class Factorisation:
    """LDL^T of the upper-triangle CSC values of a Hessian pattern (use_pattern); the
    fill-reducing ordering and symbolic analysis are computed at the first factor of a pattern
    and reused while it stays.

    contacts: the active contacts (Collisions.vertices) of the last Hessian assembled to be
    factored; converged: (z, z_tilde, friction, x_t, coll, kappa, g) where the last Newton solve
    converged with the Hessian factored, else None; carried: it holds the Hessian where the last
    accepted step ended."""

    def __init__(self):
        self._pattern = None
        self._ldlt = None
        self.contacts = None
        self.converged = None
        self.carried = False

    def use_pattern(self, indptr, indices, n_dof):
        """Factor the values of the upper-triangle CSC pattern (indptr, indices) over n_dof
        unknowns from now on (nothing is factored until the next `factor`)."""
        self._pattern = (indptr, indices, n_dof)
        self._ldlt = None
        self.converged = None

    @property
    def holds_factors(self) -> bool:
        """Whether a Hessian of the current pattern has been factored."""
        return self._ldlt is not None

    @property
    def positive_definite(self) -> bool:
        """Whether every pivot of the last factorisation is positive."""
        return self._ldlt.positive_definite

    def factor(self, data) -> bool:
        """Factor the Hessian with values `data`; False if it is singular."""
        self.converged = None
        if self._ldlt is None:
            self._ldlt = Ldlt(*self._pattern)
        return self._ldlt.factor(data)

    def solve(self, rhs):
        """H^-1 rhs with the Hessian last factored."""
        return self._ldlt.solve(rhs)

    def factor_and_solve(self, data, rhs, state, describe=None):
        """Solve H p = rhs for the Hessian values `data`; raises StepFailed (with a copy of
        `state`, the last good one) when H is singular, naming where its zero pivot is
        (describe: z index -> words for that unknown, e.g. Dofs.describe)."""
        if not self.factor(data):
            raise StepFailed(f"the Newton Hessian is singular (a zero pivot in its LDL^T{self._zero_pivot(data, describe)})",
                             state.copy())
        return self._ldlt.solve(rhs)

    def _zero_pivot(self, data, describe) -> str:
        """Where the last factorisation met its zero pivot, in words: the unknown, its diagonal
        entry and the largest entry of the Hessian (values `data`); "" when none is found."""
        zero = np.flatnonzero(self._ldlt.D == 0.0)
        if not zero.size:
            return ""
        index = int(self._ldlt.perm[zero[0]])
        indptr = self._pattern[0]
        diagonal = data[indptr[index + 1] - 1]  # upper-triangle CSC: a column's diagonal entry is its last
        where = describe(index) if describe is not None else f"unknown {index}"
        return f" at {where}: its diagonal entry {diagonal:.3g}, the largest entry {np.max(np.abs(data)):.3g}"
