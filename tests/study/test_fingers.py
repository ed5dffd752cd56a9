"""The compliant-finger sweep's cube and scores (study.fingers): compliant cells and the grid's
rigid cells on one finger_stiffness axis, scored per setting, and replayed with the right
SimParams.finger_stiffness."""

import math

import numpy as np
import pytest

from ipcgrasp.study.fingers import RIGID, finger_scores, finger_stiffness_param, merge_finger_cells
from ipcgrasp.study.replay import fixed_params_attr, stored_trial
from ipcgrasp.study.tables import score
from ipcgrasp.grasp.params import SimParams

from .test_cube import GRASPS, make_cell


def finger_cube():
    cells = {}
    for seed, (k, rule) in enumerate([(2000.0, "force"), (2000.0, "psi"), (RIGID, "force"), (RIGID, "psi")]):
        scalars = {"rule": rule} if math.isinf(k) else {"rule": rule, "finger_stiffness": k}
        cells[k, rule] = make_cell(seed, **scalars)[1]
    compliant = [cell for (k, _), cell in cells.items() if not math.isinf(k)]
    rigid = [cell for (k, _), cell in cells.items() if math.isinf(k)]
    return merge_finger_cells(compliant, rigid), cells


def test_the_finger_cube_puts_compliant_and_rigid_cells_on_one_axis():
    cube, cells = finger_cube()
    assert list(cube.finger_stiffness.values) == [2000.0, math.inf]
    assert cube.finger_stiffness.attrs["units"] == "N/m"
    for (k, rule), cell in cells.items():
        placed = cube.sel(finger_stiffness=k, rule=rule, object="cube_3cm", E=1e8, mu=0.4)
        np.testing.assert_array_equal(placed.success.values, cell.success.values)
    scores = finger_scores({"rounded": cube})
    assert len(scores) == 4 and {"mcc", "f1", "paper_f1"} <= set(scores.columns)
    row = scores[(scores.rule == "psi") & (scores.finger_stiffness == 2000.0)].iloc[0]
    assert row.mcc == pytest.approx(score(cube.sel(rule="psi", finger_stiffness=2000.0, E=1e8, mu=0.4))["mcc"],
                                    nan_ok=True)


def test_a_finger_trial_replays_with_its_stiffness_and_a_rigid_one_without():
    cube, _ = finger_cube()
    fixed = {"lift_height": 0.005}
    for k, expected in ((2000.0, 2000.0), (RIGID, None)):
        stored = stored_trial(cube, "cube_3cm", GRASPS[0], 0, {"rule": "force", "finger_stiffness": k}, fixed)
        assert stored.params.finger_stiffness == expected == finger_stiffness_param(k)
    # a grid cube's stored fixed parameters stay as they were; a fixed compliant finger is kept
    assert "finger_stiffness" not in fixed_params_attr(SimParams())
    assert '"finger_stiffness": 3000.0' in fixed_params_attr(SimParams(finger_stiffness=3000.0))
