"""The IPC backend: a step Newton cannot solve is retried as two half steps that end where the
full step would have, and a step that fails both ways leaves the scene at its last good state."""

import numpy as np
import pytest

from ipcgrasp import SimParams
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import StepFailed
from ipcgrasp.grasp.backend import BackendFailed
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.scene import place_scene

from .test_procedure import block, top_down_grasp


@pytest.fixture
def backend():
    gripper, obj = Gripper.yumi(), block(0.01)
    object_pose, grasp_pose = place_scene(obj.mesh, np.eye(4), top_down_grasp())
    tooltips = gripper.tooltip_poses(grasp_pose, 0.034)  # 2 mm either side of the 30 mm block
    return IpcBackend(obj, object_pose, tooltips, SimParams(), gripper)


def test_a_failed_step_is_retried_as_two_half_steps(backend, monkeypatch):
    real, lengths = Simulation.step, []

    def step(sim, drivers=None, dt=None, give_up=None, coarse_rounds=False):
        lengths.append(dt)
        if dt is None:
            raise StepFailed("injected: Newton did not converge", sim.state.copy())
        return real(sim, drivers, dt)

    monkeypatch.setattr(Simulation, "step", step)
    report = backend.step(0.001, 0.0)
    assert lengths == [None, 0.5 * backend.dt, 0.5 * backend.dt]
    assert report.time == pytest.approx(backend.dt)
    assert backend.sim.settings.dt == backend.dt  # the full step length is back for the next step
    # the jaws ended where the full step sends them
    pose = backend.tooltip_poses(0.001, 0.0)[0]
    rest = backend.sim.bodies[backend.sim.index["backing0"]].vertices
    np.testing.assert_allclose(backend.sim.vertices("backing0"), rest @ pose[:3, :3].T + pose[:3, 3], atol=1e-12)
    assert backend.stats.driver_lag == 0.0


def test_a_step_that_fails_twice_raises_and_keeps_the_last_good_state(backend, monkeypatch):
    before = backend.sim.state.copy()

    def step(sim, drivers=None, dt=None, give_up=None, coarse_rounds=False):
        raise StepFailed("injected", sim.state.copy())

    monkeypatch.setattr(Simulation, "step", step)
    with pytest.raises(BackendFailed, match="injected.*two half steps"):
        backend.step(0.001, 0.0)
    assert backend.sim.state.time == before.time
    for a, b in zip(backend.sim.state.deformable_x, before.deformable_x):
        np.testing.assert_array_equal(a, b)


def test_a_step_given_up_leaves_the_jaws_and_the_scene_where_they_were(backend):
    """The jaws sent 0.5 mm into the block's faces in one step: the engine's drive stops at the
    contact and settles there, and give_up is asked with each pad's force and strain energy on
    the block, each jaw's force (its backing plate does not reach the block: the pad's) and how
    far the jaws are short of where they were sent.
    Answering True returns None with nothing moved; the step then runs as usual."""
    asked = []

    def give_up(forces, energies, jaws, lag):
        asked.append((forces, energies, jaws, lag))
        return True

    before = backend.sim.state.copy()
    assert backend.step(0.0025, 0.0, give_up) is None
    forces, energies, jaws, lag = asked[0]
    assert len(asked) == 1 and len(forces) == 2 and len(energies) == 2
    assert all(f >= 0.0 for f in forces) and all(e >= 0.0 for e in energies)
    assert jaws == forces and 0.0 < lag < 0.0025
    assert backend.sim.state.time == before.time and backend._jaws == (0.0, 0.0)
    for a, b in zip(backend.sim.state.deformable_x + backend.sim.state.affine_q,
                    before.deformable_x + before.affine_q):
        np.testing.assert_array_equal(a, b)
    report = backend.step(0.0025, 0.0)
    assert report.time == pytest.approx(backend.dt) and min(report.pad_forces) > 0.0


def test_a_jaws_force_is_the_resultant_of_its_pad_and_its_backing_plate(backend):
    """What the force limit bounds: each jaw's pad and backing plate push the object together."""
    n = len(backend.sim.bodies) + 1
    contact_force = np.zeros((n, n, 3))
    o, p0, p1 = backend._index
    b0, b1 = backend._backings
    contact_force[o, p0], contact_force[o, b0] = (3.0, 0.0, 0.0), (0.0, 4.0, 0.0)
    contact_force[o, p1] = (-2.0, 0.0, 0.0)
    assert backend._jaw_forces(contact_force) == pytest.approx((5.0, 2.0))
