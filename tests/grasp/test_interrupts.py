"""An interrupt is never a trial result (ipcgrasp.interrupts): a KeyboardInterrupt or SystemExit,
also one hidden behind another exception (numba's SystemError "returned a result with an
exception set" while it loads a kernel, which the engine reports as a failed step), stops a study
job mid-trial with no cell written and no "solver" or "error" label recorded."""

import numpy as np
import pytest

from ipcgrasp import SimParams
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp.engine.simulation import Simulation, StepFailed
from ipcgrasp.grasp.simulate import run_trial
from ipcgrasp.interrupts import interrupt_behind
from ipcgrasp.paths import DEFAULT_REGISTRY
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.runs import load_study_object, simulate_cells

from .test_procedure import block, top_down_grasp


def numba_error_from(interrupt: BaseException) -> SystemError:
    """What numba raises when a signal arrives while it loads a kernel: a SystemError raised
    while handling the interrupt (its __context__)."""
    try:
        try:
            raise interrupt
        except BaseException:
            raise SystemError("<built-in function _load> returned a result with an exception set")
    except SystemError as error:
        return error


def test_the_interrupt_behind_an_exception_is_found_through_its_causes_and_contexts():
    interrupt = KeyboardInterrupt()
    assert interrupt_behind(numba_error_from(interrupt)) is interrupt
    exit_ = SystemExit(143)
    wrapped = StepFailed("SystemError: ...", None)
    wrapped.__cause__ = numba_error_from(exit_)
    assert interrupt_behind(wrapped) is exit_
    assert interrupt_behind(ValueError("a real failure")) is None


def interrupting_step(after_steps: int, interrupt: BaseException):
    """Simulation.step that takes `after_steps` real steps, then fails as the engine does when
    numba's SystemError (the interrupt its context) reaches it: a StepFailed caused by it."""
    real, taken = Simulation.step, []

    def step(sim, *args, **kwargs):
        if len(taken) == after_steps:
            error = numba_error_from(interrupt)
            raise StepFailed(f"SystemError: {error}", sim.state.copy()) from error
        taken.append(1)
        return real(sim, *args, **kwargs)

    return step


def test_a_grid_job_interrupted_mid_trial_writes_no_cell_and_records_no_solver_label(tmp_path, monkeypatch):
    """A grid_row job (workflow/scripts/grid_row.py: simulate_cells, then one cell file per
    variant) whose trial is interrupted after three steps: the interrupt ends the job."""
    obj, physical = load_study_object(resolve_data_dir(), "cube_3cm", load_registry(DEFAULT_REGISTRY))
    monkeypatch.setattr(Simulation, "step", interrupting_step(3, KeyboardInterrupt()))
    log, cell = [], tmp_path / "E1e8_mu0.4" / "cube_3cm.nc"
    variants = [SimParams(mu=0.4), SimParams(mu=0.5)]
    with pytest.raises(KeyboardInterrupt):
        cells = simulate_cells(obj, physical, [0], variants, 2, 0, [{"mu": 0.4}, {"mu": 0.5}], log=log.append)
        write_netcdf_atomic(cells[0], cell)
    assert not cell.parent.exists()
    assert not any("solver" in line or "error" in line for line in log), log


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), SystemExit(143)], ids=["Ctrl-C", "SIGTERM"])
def test_the_trial_runner_reraises_an_interrupt_instead_of_recording_an_error(interrupt):
    """A backend whose construction raises numba's SystemError with the interrupt as its context:
    run_trial, which records any other exception as an "error" trial, re-raises the interrupt."""
    def backend(*args):
        raise numba_error_from(interrupt)

    with pytest.raises(type(interrupt)):
        run_trial(block(0.01), np.eye(4), top_down_grasp(), SimParams(), 0, backend=backend)
    failed = run_trial(block(0.01), np.eye(4), top_down_grasp(), SimParams(), 0,
                       backend=lambda *args: (_ for _ in ()).throw(SystemError("a real bug")))
    assert failed.failure_mode == "error" and "a real bug" in failed.reason
