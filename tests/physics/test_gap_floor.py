"""Newton iterates keep contacts above the gap floor (engine.solver.settings.NEWTON_GAP_FLOOR):
far inside dhat the barrier's Hessian, 2 kappa dhat^4 / d^2, outgrows a light object's inertia past
double precision and the LDL^T of a Hessian positive definite by construction meets a zero pivot
(the 50 mm bunny's "the Newton Hessian is singular"). A zero pivot's reason names where it is."""

import numpy as np
import pytest

from ipcgrasp.engine.solver.potential import IncrementalPotential
from ipcgrasp.engine.solver.settings import NEWTON_GAP_FLOOR, StepFailed

from .scenes import box_between_pads, box_pad_scene


def _recording_gaps(monkeypatch):
    """Record, for every Hessian the solver assembles, its smallest contact distance over dhat."""
    gaps = []
    assemble = IncrementalPotential.hessian

    def hessian(self, state, z, friction, x_t, x, coll, project=True):
        gaps.append(self.min_distance_of(coll, x) / self.dhat)
        return assemble(self, state, z, friction, x_t, x, coll, project)

    monkeypatch.setattr(IncrementalPotential, "hessian", hessian)
    return gaps


def test_newton_iterates_keep_a_light_box_squeezed_between_pads_above_the_gap_floor(monkeypatch):
    """A 0.1 g box squeezed by two pads (gravity off): with CCD alone an iterate put a contact at
    8.8e-6 dhat (each iteration may close 90 % of a gap); with the floor none comes closer than
    NEWTON_GAP_FLOOR dhat = 1e-5 dhat, and the squeeze still ends with the box balanced between
    the pads at the force of its 50 um squeeze. That force depends by a few percent on the path
    the contacts took (the barrier stiffness the steps adapted to, where the pads' faces stuck:
    6.22 N for Newton tolerances 1e-5 to 1e-7 m/s, 6.47 N at a quarter of the scene's dhat; this
    scene has no force servo), so it is checked as a range: a floor that held the pads off would
    leave them far below it."""
    gaps = _recording_gaps(monkeypatch)
    _, _, forces = box_between_pads(0.5, 1e6, None, mass=1e-4)
    assert len(gaps) > 50
    assert min(gaps) >= NEWTON_GAP_FLOOR
    assert forces[0] == pytest.approx(forces[1], rel=1e-4)
    assert 5.7 <= forces[0] <= 6.6


def test_the_floor_changes_nothing_where_iterates_stay_clear_of_it(monkeypatch):
    """A 1 kg box squeezed the same way never comes near the floor: the squeeze ends with the
    same forces, to the bit, as with no floor at all."""
    gaps = _recording_gaps(monkeypatch)
    _, _, forces = box_between_pads(0.5, 1e6, None, mass=1.0)
    assert min(gaps) > 100 * NEWTON_GAP_FLOOR
    _, _, without_floor = box_between_pads(0.5, 1e6, None, mass=1.0, newton_gap_floor=False)
    assert forces == without_floor


def test_a_zero_pivot_names_its_degree_of_freedom_and_the_entries_around_it():
    sim = box_pad_scene()
    sim.step()
    z = sim.pack()
    assembly = sim.potential.hessian_assembly
    data = assembly.without_contact(z, sim.dofs.scene_positions(sim.state, z)).copy()
    dof = int(sim.dofs.vertex_dof[0][np.flatnonzero(sim.dofs.vertex_dof[0] >= 0)[0]]) + 1  # a pad vertex's y
    cols = np.repeat(np.arange(sim.n_dof), np.diff(assembly.indptr))
    data[(cols == dof) | (assembly.indices == dof)] = 0.0
    with pytest.raises(StepFailed) as failed:
        assembly.factorisation.factor_and_solve(data, np.ones(sim.n_dof), sim.state, sim.model.describe_unknown)
    reason = str(failed.value)
    assert "the Newton Hessian is singular (a zero pivot in its LDL^T at pad vertex" in reason
    assert f"{sim.dofs.describe(dof, ['box'])}: its diagonal entry 0" in reason
    assert sim.dofs.describe(sim.dofs.affine_offset[0] + 5, ["box"]) == "box affine coordinate A_02"
