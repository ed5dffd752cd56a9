import itertools
import math

import numpy as np
import pytest

from ipcgrasp.baselines.mujoco_flex import MujocoSettings
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.study.cube import prediction_cell
from ipcgrasp.study.metrics import paper_ap_ar_f1
from ipcgrasp.study.sweeps import (
    SWEEP_COORDINATES,
    choose_setting,
    merge_sweep,
    sweep_scores,
    sweep_settings,
    sweep_table,
)

PHYSICAL = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=bool)
STIFFNESS, MARGIN = [1e4, 1e6], [2.5e-4, 5e-4]


def test_penalty_settings_are_simparams_fields():
    settings = sweep_settings("penalty", 1e5, 5e-4, {"clusters": 4})
    assert settings == {"params": {"penalty_stiffness": 1e5, "penalty_margin": 5e-4, "penalty_clusters": 4}}
    SimParams(**settings["params"])  # valid


def test_mujoco_settings_are_keywords_with_damping_from_the_ratio():
    settings = sweep_settings("mujoco_flex", 1e8, 0.0, {"damping_ratio": 0.5, "dt": 1e-3})
    keywords = settings["keywords"]  # MuJoCo's dt, not the simulator's: a keyword, not a SimParams field
    assert set(settings) == {"keywords"}
    # the documented direct-form pair -1e8 -1e4 is damping ratio 0.5: b = 2 * 0.5 * sqrt(1e8)
    assert keywords == {"stiffness": 1e8, "margin": 0.0, "damping": pytest.approx(1e4), "dt": 1e-3}
    assert MujocoSettings(**keywords).damping == pytest.approx(1e4)
    assert sweep_settings("mujoco_flex", 1e6, 0.0, {"damping_ratio": 1.0, "dt": 1e-3})["keywords"]["damping"] == 2e3
    with pytest.raises(ValueError, match="no contact-parameter sweep"):
        sweep_settings("reach", 1.0, 0.0, {})


def cell(success, stiffness, margin, penetration, gap=None):
    shape = success.shape
    info = [[{"failure_mode": None if s else "slip", "close_forces": (20.0, 20.0), "max_penetration": penetration,
              "max_force_gap": 2 * margin if gap is None else gap} for s in row] for row in success]
    return prediction_cell(success, np.full(shape, np.nan), np.full(shape, 3.0), np.where(success, "held", "x"),
                           np.arange(shape[0]), np.arange(success.size).reshape(shape), PHYSICAL,
                           {"model": "penalty", "stiffness": stiffness, "margin": margin, "object": "cube_3cm"},
                           info=info, variables=("failure_mode", "max_penetration", "max_force_gap"))


@pytest.fixture(scope="module")
def sweep():
    rng = np.random.default_rng(3)
    truth, cells = {}, []
    for k, (stiffness, margin) in enumerate(itertools.product(STIFFNESS, MARGIN)):
        success = rng.random((4, 3)) < 0.6
        truth[stiffness, margin] = success
        cells.append(cell(success, stiffness, margin, penetration=1e-3 / math.sqrt(stiffness)))
    return merge_sweep(cells[::-1], "penalty"), truth


def test_merged_sweep_has_the_settings_as_dims_with_the_models_units(sweep):
    cube, truth = sweep
    assert cube.success.dims == ("stiffness", "margin", "object", "grasp", "trial")
    assert cube.stiffness.values.tolist() == STIFFNESS and cube.margin.values.tolist() == MARGIN
    assert cube.stiffness.attrs["units"] == "N/m" == SWEEP_COORDINATES["penalty"]["stiffness"]["units"]
    assert cube.max_penetration.attrs["units"] == "m"
    for (stiffness, margin), success in truth.items():
        np.testing.assert_array_equal(cube.success.sel(stiffness=stiffness, margin=margin, object="cube_3cm"), success)


def test_sweep_scores_and_table_shape(sweep):
    cube, truth = sweep
    scores = sweep_scores(cube)
    assert len(scores) == 4
    physical = PHYSICAL.mean(axis=1)
    for row in scores.itertuples():
        expected = paper_ap_ar_f1(truth[row.stiffness, row.margin].mean(axis=1), physical)[2]
        assert row.paper_f1 == pytest.approx(expected, nan_ok=True)
        assert row.penetration_m_median == pytest.approx(1e-3 / math.sqrt(row.stiffness))
        assert row.force_gap_m_max == pytest.approx(2 * row.margin)
        assert row.runtime_s == 3.0
        assert row.slip == (~truth[row.stiffness, row.margin]).sum() and row.none == truth[row.stiffness,
                                                                                           row.margin].sum()
    table = sweep_table(scores)
    assert table.index.tolist() == STIFFNESS and table.columns.tolist() == MARGIN
    assert table.loc[1e6, 5e-4] == scores.set_index(["stiffness", "margin"]).loc[(1e6, 5e-4), "paper_f1"]


def test_choose_setting_prefers_f1_then_less_interpenetration_then_the_softer_setting():
    success = np.array([[True] * 3, [True] * 3, [False] * 3, [False] * 3])
    worse = np.array([[True] * 3, [False] * 3, [False] * 3, [True] * 3])
    cells = [cell(success, 1e6, 5e-4, penetration=1e-5), cell(success, 1e4, 5e-4, penetration=1e-4),
             cell(worse, 1e4, 2.5e-4, penetration=0.0), cell(success, 1e6, 2.5e-4, penetration=1e-5)]
    scores = sweep_scores(merge_sweep(cells, "penalty"))
    best = choose_setting(scores)
    # the three perfect settings tie on F1 and MAE; less interpenetration beats the soft one,
    # and of the two stiff ones the smaller margin comes first
    assert (best["stiffness"], best["margin"]) == (1e6, 2.5e-4)
    assert best["paper_f1"] == scores.paper_f1.max() > scores.paper_f1.min()
