import itertools

import numpy as np
import pandas as pd
import pytest

from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.study.cube import merge_cells, prediction_cell, simulation_cell
from ipcgrasp.study.metrics import paper_ap_ar_f1, per_grasp_metrics
from ipcgrasp.study.tables import (
    choose_best,
    evaluation_table,
    f1_table,
    failure_counts,
    grid_scores,
    markdown_table,
    with_intervals,
)

# DATA.md section 2: per-grasp physical robustness of cube_3cm
CUBE = np.array([1, .8, .2, 1, .8, 1, .2, 1, .4, 1, .8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1])
PHYSICAL = np.arange(5)[None, :] < np.round(5 * CUBE)[:, None]
E_VALUES, MU_VALUES, RULES = [1e7, 1e8, 1e9], [0.3, 0.6], ["psi", "force"]


def sim_cell(success, scalars, wall_time=1.0):
    results = [[GraspResult(success=bool(s), failure_mode=None if s else "slip", wall_time=wall_time) for s in row]
               for row in success]
    seeds = np.zeros(success.shape, dtype=np.int64)
    return simulation_cell(results, np.arange(len(success)), seeds, PHYSICAL, scalars,
                           9e-6 if scalars.get("rule") == "psi" else float("nan"))


@pytest.fixture(scope="module")
def grid():
    rng = np.random.default_rng(0)
    cells, truth = [], {}
    for E, mu, rule in itertools.product(E_VALUES, MU_VALUES, RULES):
        success = rng.random((25, 5)) < rng.uniform(0.3, 1.0)
        truth[E, mu, rule] = success.mean(axis=1)
        cells.append(sim_cell(success, {"jaw": "rounded", "rule": rule, "E": E, "mu": mu, "object": "cube_3cm"}))
    return merge_cells(cells, ("E", "mu", "rule", "object")), truth


def test_f1_table_has_the_paper_shape_and_values(grid):
    cube, truth = grid
    scores = grid_scores({"rounded": cube})
    assert len(scores) == len(E_VALUES) * len(MU_VALUES) * len(RULES)
    for rule in RULES:
        table = f1_table(scores, "rounded", rule)
        assert table.shape == (3, 2)
        assert table.index.tolist() == E_VALUES and table.columns.tolist() == MU_VALUES
        for E, mu in itertools.product(E_VALUES, MU_VALUES):
            assert table.loc[E, mu] == pytest.approx(paper_ap_ar_f1(truth[E, mu, rule], CUBE)[2])
    row = scores[(scores.rule == "psi") & (scores.E == 1e8) & (scores.mu == 0.3)].iloc[0]
    assert row.f1 == pytest.approx(per_grasp_metrics(truth[1e8, 0.3, "psi"], CUBE).get("f1").value)
    assert row.psi_th == 9e-6 and row.n_grasps == 25 and row.n_trials == 5
    with pytest.raises(ValueError, match="no grid scores"):
        f1_table(scores, "rectangular", "psi")


def test_best_is_the_highest_paper_f1_with_tie_breaks():
    scores = pd.DataFrame({
        "jaw": ["rounded"] * 5, "rule": ["psi", "psi", "force", "force", "psi"], "E": [1e7, 1e8, 1e8, 1e9, 1e10],
        "mu": [0.3] * 5, "psi_th": [9e-6, 9e-6, np.nan, np.nan, 9e-6],
        "paper_f1": [0.8, 0.9, 0.9, 0.9, np.nan], "f1": [1.0, 0.7, 0.8, 0.8, 1.0], "mae": [0.1, 0.1, 0.3, 0.2, 0.0],
    })
    best = choose_best(scores)
    assert (best["E"], best["rule"]) == (1e9, "force")  # F1 0.9 tie -> per-grasp F1 0.8 tie -> lower MAE
    assert best["psi_th"] is None  # NaN becomes null in best.json
    assert isinstance(best["E"], float)
    assert choose_best(scores.iloc[[0, 4]])["E"] == 1e7  # NaN paper F1 ranks last


def test_evaluation_table_always_success_reproduces_the_paper_reference():
    grasps, seeds = np.arange(25), np.zeros((25, 5), dtype=np.int64)
    always = prediction_cell(np.ones((25, 5), bool), np.ones((25, 5)), np.zeros((25, 5)), np.full((25, 5), ""),
                             grasps, seeds, PHYSICAL, {"model": "always_success", "object": "cube_3cm"})
    never = prediction_cell(np.zeros((25, 5), bool), np.zeros((25, 5)), np.full((25, 5), 0.5),
                            np.full((25, 5), ""), grasps, seeds, PHYSICAL, {"model": "never", "object": "cube_3cm"})
    wall = np.linspace(1.0, 3.0, 25)[:, None] * np.ones((1, 5))
    sim = sim_cell(PHYSICAL, {"object": "cube_3cm"}, wall_time=2.0)
    sim["wall_time"].values[:] = wall
    cubes = {name: merge_cells([c], ("object",)) for name, c in
             (("ipcgrasp", sim), ("always_success", always), ("never", never))}
    table = evaluation_table(cubes, n_boot=200, seed=0)
    assert table.index.tolist() == ["ipcgrasp", "always_success", "never"]
    assert tuple(table.loc["always_success", ["paper_ap", "paper_ar"]]) == (0.81, 1.0)
    assert table.loc["always_success", "paper_f1"] == pytest.approx(0.895, abs=5e-4)
    assert tuple(table.loc["never", ["paper_ap", "paper_ar"]]) == (0.81, 0.09)
    assert table.loc["ipcgrasp", "paper_f1"] == 1.0 and table.loc["ipcgrasp", "mae"] == 0.0
    assert table.loc["ipcgrasp", "runtime_s"] == pytest.approx(2.0)
    assert table.loc["never", "runtime_s"] == 0.5
    low, high = table.loc["always_success", ["mcc_low", "mcc_high"]]
    assert low <= table.loc["always_success", "mcc"] <= high


def test_markdown_and_intervals():
    frame = pd.DataFrame({"f1": [0.5, np.nan], "f1_low": [0.25, np.nan], "f1_high": [0.75, np.nan],
                          "E": [1e8, 2e9]}, index=pd.Index(["a", "b"], name="model"))
    text = markdown_table(with_intervals(frame, ["f1"]), "Caption with the split.")
    lines = text.strip().splitlines()
    assert lines[0] == "Caption with the split." and lines[1] == ""
    assert lines[2] == "| model | f1 | E |" and lines[3] == "|---|---|---|"
    assert lines[4] == "| a | 0.500 [0.250, 0.750] | 1e+08 |"
    assert lines[5] == "| b | n/a [n/a, n/a] | 2e+09 |"


def test_failure_counts_cover_every_trial(grid):
    cube, _ = grid
    counts = failure_counts(cube, by=("rule", "E"))
    assert len(counts) == len(RULES) * len(E_VALUES)
    modes = counts.drop(columns=["rule", "E"])
    assert (modes.sum(axis=1) == len(MU_VALUES) * 25 * 5).all()
    assert modes.none.sum() == int(cube.success.sum()) and modes.slip.sum() == int((~cube.success).sum())
