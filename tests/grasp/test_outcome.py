"""Outcome rules on hand-made distances, and the scalar summary of a GraspResult."""

import json
import math

import numpy as np
import pytest

from ipcgrasp.grasp.outcome import FAILURE_MEANINGS, FAILURE_MODES, GraspResult, HoldCheck, judge_hold

TOL = 5e-4  # m, contact tolerance
DHAT = 2e-4  # m, barrier activation distance
LIFT = 0.02  # m, the lift height asked for
HELD = HoldCheck(object_height=0.02, lift_height=0.02, pad_object=(1e-5, 2e-5), pad_pad=0.03)


def judge(**changes):
    fields = {"object_height": HELD.object_height, "lift_height": HELD.lift_height, "pad_object": HELD.pad_object,
              "pad_pad": HELD.pad_pad}
    fields.update(changes)
    return judge_hold(HoldCheck(**fields), LIFT, TOL, DHAT)


def test_failure_modes_are_the_design_ones_each_with_its_meaning():
    assert set(FAILURE_MODES) == {"miss", "graze", "pushed_out", "no_clearance", "stall", "end_of_travel",
                                  "unequal_effort", "jaws_meet", "slip", "solver", "error"}
    assert all(len(FAILURE_MEANINGS[mode]) > 20 for mode in FAILURE_MODES)


@pytest.mark.parametrize("reached", [0.0, 0.013, LIFT * (1 - 1e-9), math.nan])
def test_an_object_short_of_the_lift_height_fails_even_if_still_in_the_pads(reached):
    """A heavy object that slid down the pads while they rose 13 of 20 mm is not lifted."""
    success, reason = judge(lift_height=reached, object_height=max(reached, 0.001) if reached == reached else 0.001)
    assert success is False
    assert "not lifted to 20.0 mm" in reason


def test_the_lift_height_reached_exactly_counts():
    assert judge(lift_height=LIFT)[0] is True


def test_held_object_succeeds():
    success, reason = judge()
    assert success is True and reason


@pytest.mark.parametrize("height", [0.0, -1e-4, 1e-5, TOL, math.nan])
def test_object_on_or_near_the_ground_fails(height):
    success, reason = judge(object_height=height)
    assert success is False
    assert "ground" in reason


def test_object_just_clear_of_the_ground_succeeds():
    assert judge(object_height=TOL * (1 + 1e-9))[0] is True


@pytest.mark.parametrize("pad", [0, 1])
@pytest.mark.parametrize("distance", [TOL * (1 + 1e-9), 0.01, math.inf, math.nan])
def test_a_pad_away_from_the_object_fails_and_is_named(pad, distance):
    pad_object = [1e-5, 1e-5]
    pad_object[pad] = distance
    success, reason = judge(pad_object=tuple(pad_object))
    assert success is False
    assert f"pad {pad}" in reason


def test_pad_exactly_at_the_tolerance_counts_as_touching():
    assert judge(pad_object=(TOL, TOL))[0] is True


@pytest.mark.parametrize("pad_pad", [0.0, 1e-6, DHAT])
def test_pads_touching_each_other_fail(pad_pad):
    success, reason = judge(pad_pad=pad_pad)
    assert success is False
    assert "touch" in reason


def test_pads_just_beyond_the_barrier_range_do_not_touch():
    assert judge(pad_pad=DHAT * (1 + 1e-9))[0] is True
    assert judge(pad_pad=math.inf)[0] is True


def test_every_rule_must_hold():
    rng = np.random.default_rng(5)
    for _ in range(500):
        height = rng.choice([0.0, 0.5 * TOL, 2 * TOL, 0.02])
        pads = tuple(rng.choice([0.0, 0.5 * TOL, TOL, 2 * TOL, math.inf], size=2))
        pad_pad = rng.choice([0.0, 0.5 * DHAT, 2 * DHAT, math.inf])
        reached = rng.choice([0.0, 0.5 * LIFT, LIFT, 2 * LIFT])
        expected = reached >= LIFT and height > TOL and max(pads) <= TOL and pad_pad > DHAT
        assert judge(object_height=height, lift_height=reached, pad_object=pads, pad_pad=pad_pad)[0] == expected


def _result():
    return GraspResult(success=False, failure_mode="slip", reason="object not lifted", seed=7,
                       close_time=0.84, psi=(np.float64(1.5e-5), 1.4e-5), close_forces=(20.5, np.float64(21.0)),
                       start_opening=0.032, close_opening=0.0301, object_translation=1e-4,
                       object_rotation=0.01, lift_height=3e-4, min_distance=2e-6, newton_iterations=120,
                       steps=60, wall_time=3.5, phase_wall_time={"initialise": 0.5, "squeeze": 2.0, "lift": 1.0},
                       grasp_pose=np.eye(4), frames=[{"time": 0.0, "object": np.zeros((8, 3))}],
                       faces={"object": np.zeros((12, 3), dtype=int)})


def _same(a, b):
    """Equal, with nan equal to nan."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_summary_drops_arrays_and_flattens_phase_times():
    s = _result().summary()
    assert not {"frames", "faces", "grasp_pose", "phase_wall_time"} & set(s)
    assert s["wall_time_initialise"] == 0.5 and s["wall_time_squeeze"] == 2.0 and s["wall_time_lift"] == 1.0
    assert s["failure_mode"] == "slip" and s["seed"] == 7 and s["steps"] == 60
    assert (s["psi_0"], s["psi_1"]) == (1.5e-5, 1.4e-5)
    assert (s["close_force_0"], s["close_force_1"]) == (20.5, 21.0)


@pytest.mark.parametrize("result", [_result(), GraspResult()], ids=["filled", "default"])
def test_summary_round_trips_through_json(result):
    s = result.summary()
    back = json.loads(json.dumps(s))
    assert set(back) == set(s)
    assert all(_same(back[k], s[k] if not isinstance(s[k], float) else float(s[k])) for k in s), (back, s)


def test_summary_values_are_scalars():
    s = _result().summary()
    assert all(v is None or isinstance(v, (bool, int, float, str)) for v in s.values()), s


def test_post_hold_fields_are_scalars_that_survive_json():
    from ipcgrasp.grasp.outcome import SHAKE_OUTCOMES

    result = GraspResult(success=True, s_cf=0.04, s_cp=1.8e-4, s_cn=4.5e-3, shake_outcome="held",
                         shake_reason="held after lift", critical_mass=math.inf, critical_mass_force=11.5,
                         critical_mass_reason="no slip up to max_mass = 5 kg", max_penetration=0.0,
                         max_force_gap=8.5e-5, phase_wall_time={"shake": 1.0, "critical_mass": 2.0})
    s = result.summary()
    assert s["shake_outcome"] in SHAKE_OUTCOMES and s["critical_mass"] == math.inf
    assert s["wall_time_shake"] == 1.0 and s["wall_time_critical_mass"] == 2.0
    back = json.loads(json.dumps(s))
    assert all(_same(back[k], s[k]) for k in s), (back, s)
    defaults = GraspResult().summary()
    assert defaults["shake_outcome"] is None and math.isnan(defaults["critical_mass"]) and math.isnan(defaults["s_cf"])
    assert set(s) - set(defaults) == {"wall_time_shake", "wall_time_critical_mass"}
