"""Variants of one trial run together (`simulate_variants`): other friction coefficients share the
initialisation and settling, other close rules the squeeze until both pads touch the object, and
each result is, to the bit, the trial under that variant alone, also when the rules judge the step
that brings both pads on the object differently (they then part at a checkpoint before it), when
a pad touched the object while it settled (the variants then run from the start) and when the
trial is decided before the variants matter."""

import math
from dataclasses import fields, replace

import numpy as np
import pytest

from ipcgrasp import SimParams, simulate_grasp
from ipcgrasp.grasp import procedure
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.grasp.simulate import run_variants, simulate_variants

from .test_procedure import FAST, block, bundled_cube, top_down_grasp

SHORT = dict(lift_height=0.005, hold_time=0.04)  # the study's noise, a shorter lift and hold
PSI_TH = 9.48e-6  # J, the default study's calibrated Psi_th at E 1e8 Pa


def assert_same_trial(joint: GraspResult, alone: GraspResult):
    """Every field but the wall times equal, NaN equal to NaN."""
    for f in fields(GraspResult):
        if f.name in ("wall_time", "phase_wall_time"):
            continue
        a, b = getattr(joint, f.name), getattr(alone, f.name)
        if isinstance(a, float) and math.isnan(a):
            assert isinstance(b, float) and math.isnan(b), f.name
        elif isinstance(a, (tuple, np.ndarray)):
            np.testing.assert_array_equal(a, b, err_msg=f.name)
        else:
            assert a == b, f.name


class CountingBackend(IpcBackend):
    """The IPC backend, counting the steps every instance computes."""

    steps = 0

    def step(self, *args, **kwargs):
        CountingBackend.steps += 1
        return super().step(*args, **kwargs)


def count_divergences(monkeypatch) -> list:
    seen = []
    agreed = procedure.GraspProcedure._agreed

    def counting(self, decide):
        try:
            return agreed(self, decide)
        except procedure._Diverged:
            seen.append(True)
            raise

    monkeypatch.setattr(procedure.GraspProcedure, "_agreed", counting)
    return seen


@pytest.fixture(scope="module")
def cube():
    return bundled_cube()


@pytest.mark.slow
@pytest.mark.parametrize("E, grasp, trial, mu, psi_th, diverges", [
    (1e8, 0, 0, (0.4,), (0.5, 1.0), False),
    (1e9, 3, 0, (0.4,), (1e-6, 1.0), True),  # 1e-6 Psi_th: the step that lands both pads passes it
    (1e8, 5, 1, (0.3, 0.6), (0.5, 1.0), False)])
def test_variants_run_together_give_each_variants_trial_to_the_bit(cube, monkeypatch, E, grasp, trial, mu, psi_th,
                                                                   diverges):
    obj, grasps = cube
    base = SimParams(E=E, **SHORT)
    variants = [replace(base, mu=m, close_rule="psi", psi_th=f * PSI_TH) for m in mu for f in psi_th]
    variants += [replace(base, mu=m) for m in mu]
    seed = trial_seed(0, grasp, trial)
    divergences = count_divergences(monkeypatch)
    CountingBackend.steps = 0
    joint = simulate_variants(obj, grasps.object_poses[grasp], grasps.grasp_poses[grasp], variants, seed,
                              backend=CountingBackend)
    shared_steps = CountingBackend.steps
    assert bool(divergences) == diverges  # the case takes the path it is here for
    CountingBackend.steps = 0
    for variant, result in zip(variants, joint, strict=True):
        alone = simulate_grasp(obj, grasps.object_poses[grasp], grasps.grasp_poses[grasp], variant, seed,
                               backend=CountingBackend)
        assert_same_trial(result, alone)
        assert result.seed == seed and result.wall_time > 0
    # the shared parts were simulated once: fewer steps than the trials one after the other
    assert shared_steps < CountingBackend.steps


def test_variants_of_friction_run_from_the_start_when_a_pad_touched_during_the_settling(monkeypatch):
    params = SimParams(dhat=2e-3, **FAST)  # the barrier reaches past the 1 mm clearance: the pads press at once
    variants = [replace(params, mu=0.2), replace(params, mu=0.8)]
    from_the_start = []
    run = procedure.GraspProcedure.run
    monkeypatch.setattr(procedure.GraspProcedure, "run", lambda self: from_the_start.append(True) or run(self))
    joint = simulate_variants(block(0.01), np.eye(4), top_down_grasp(), variants, seed=0)
    assert len(from_the_start) == 2  # each variant ran alone
    monkeypatch.undo()
    for variant, result in zip(variants, joint, strict=True):
        assert_same_trial(result, simulate_grasp(block(0.01), np.eye(4), top_down_grasp(), variant, seed=0))


def test_a_trial_decided_before_both_pads_touch_gives_every_rule_its_result():
    pad = procedure.Gripper.yumi().pad_mesh().nodes
    sideways = np.abs(pad[:, 1]).max() + 0.5 * 0.02 + 5e-3  # the pads pass beside the block
    rules = [SimParams(close_rule="psi", psi_th=PSI_TH, **FAST), SimParams(**FAST)]
    joint = simulate_variants(block(0.01), np.eye(4), top_down_grasp(sideways), rules, seed=0)
    for rule, result in zip(rules, joint, strict=True):
        assert result.failure_mode == "miss"
        assert_same_trial(result, simulate_grasp(block(0.01), np.eye(4), top_down_grasp(sideways), rule, seed=0))
    assert joint[0] is not joint[1]  # each rule owns its record


@pytest.mark.parametrize("change, named", [({"mu_ground": 0.5}, "mu_ground"),
                                           ({"E": 1e9, "close_force": 10.0}, "close_force")])
def test_variants_that_differ_in_more_than_friction_and_close_rule_are_refused(change, named):
    rules = [SimParams(**FAST), replace(SimParams(**FAST), close_rule="psi", mu=0.9, **change)]
    with pytest.raises(ValueError, match=f"differ only in .*{named}"):
        simulate_variants(block(0.01), np.eye(4), top_down_grasp(), rules, seed=0)
    # the trial runner records the refusal as every rule's failure instead of raising
    results = run_variants(block(0.01), np.eye(4), top_down_grasp(), rules, seed=0)
    assert [r.failure_mode for r in results] == ["error", "error"] and "differ only" in results[0].reason
