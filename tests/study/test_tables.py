import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr

from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.study.cube import merge_cells, prediction_cell, simulation_cell
from ipcgrasp.study.metrics import paper_ap_ar_f1, per_grasp_metrics
from ipcgrasp.study.tables import (
    artifact_table,
    choose_best,
    contact_stability_table,
    correlation_table,
    evaluation_table,
    f1_table,
    failure_counts,
    grid_scores,
    hold_margin_text,
    hold_margins,
    image_vs_simulation,
    markdown_table,
    outcome_counts,
    ranking_table,
    trial_outcomes,
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
    sim["grasp_wall_time"].values[:] = wall
    sim["wall_time"].values[:] = wall + 5.0  # a critical-mass ramp after the hold: not the grasp's runtime
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


def quick_cell(model, success, reason, info=None, variables=(), score=None):
    success = np.asarray(success, dtype=bool)
    shape = success.shape
    return prediction_cell(success, np.full(shape, np.nan) if score is None else score, np.full(shape, 0.01),
                           np.asarray(reason, dtype=object), np.arange(shape[0]), np.zeros(shape, dtype=np.int64),
                           PHYSICAL[:shape[0]], {"model": model, "object": "cube_3cm"}, info=info,
                           variables=variables)


def test_outcomes_of_every_kind_of_model():
    sim = simulation_cell([[GraspResult(success=True), GraspResult(success=False, failure_mode="slip")]], [0],
                          np.zeros((1, 2)), PHYSICAL[:1], {"object": "cube_3cm"})
    analytic = quick_cell("reach", [[False, False, True]], [["unbalanced", "error: LinAlgError: x", "held"]])
    info = [[{"miss": True, "collision": False}, {"miss": False, "collision": True}, {"miss": False,
                                                                                    "collision": False}]]
    image = quick_cell("image_quality", [[False, False, False]], [["", "", ""]], info, ("miss", "collision"))
    assert trial_outcomes(analytic).values.tolist() == [["unbalanced", "error", "success"]]
    assert trial_outcomes(image).values.tolist() == [["miss", "collision", "predicted_failure"]]
    counts = outcome_counts({"ipcgrasp": sim, "reach": analytic, "image_quality": image})
    # the simulator's modes in their order, then the others alphabetically
    assert counts.columns.tolist() == ["success", "miss", "slip", "error", "collision", "predicted_failure",
                                       "unbalanced"]
    assert counts.loc["ipcgrasp", "success"] == 1 and counts.loc["ipcgrasp", "slip"] == 1
    assert counts.loc["reach"].to_dict() == {"success": 1, "slip": 0, "collision": 0, "error": 1, "miss": 0,
                                             "predicted_failure": 0, "unbalanced": 1}
    assert (counts.sum(axis=1) == [2, 3, 3]).all()


def test_artifacts_and_contact_stability_tables():
    results = [[GraspResult(success=True, max_penetration=0.0, max_force_gap=g, s_cf=f, s_cp=1e-5, s_cn=0.01)
                for g, f in ((1e-5, 0.1), (2e-5, 0.3), (3e-5, float("nan")))]]
    sim = simulation_cell(results, [0], np.zeros((1, 3)), PHYSICAL[:1], {"object": "cube_3cm"})
    info = [[{"failure_mode": None, "max_penetration": p, "max_force_gap": 1e-3} for p in (1e-4, 0.0, 3e-4)]]
    penalty = quick_cell("penalty", [[True] * 3], [[""] * 3], info, ("failure_mode", "max_penetration",
                                                                     "max_force_gap", "s_cf", "s_cp", "s_cn"))
    cubes = {"ipcgrasp": sim, "penalty": penalty, "reach": quick_cell("reach", [[True]], [["held"]])}
    artifacts = artifact_table(cubes)
    assert artifacts.index.tolist() == ["ipcgrasp", "penalty"]  # reach records no contact artifacts
    assert artifacts.loc["ipcgrasp", "penetration_m_max"] == 0.0 and artifacts.loc["ipcgrasp", "trials"] == 3
    assert artifacts.loc["penalty", "trials_interpenetrating"] == 2
    assert artifacts.loc["penalty", "penetration_m_median"] == 1e-4
    assert artifacts.loc["penalty", "penetration_m_p90"] == pytest.approx(np.percentile([1e-4, 0.0, 3e-4], 90))
    assert artifacts.loc["ipcgrasp", "force_gap_m_max"] == 3e-5
    stability = contact_stability_table(cubes)
    assert stability.index.tolist() == ["ipcgrasp"]  # penalty's S_cf are all NaN: not recorded
    assert stability.loc["ipcgrasp", "trials_with_hold"] == 2
    assert stability.loc["ipcgrasp", "s_cf_median"] == pytest.approx(0.2)
    assert stability.loc["ipcgrasp", "s_cn_max"] == 0.01


def test_ranking_table_is_spearman_of_each_per_grasp_score():
    rng = np.random.default_rng(2)
    physical = PHYSICAL.mean(axis=1)
    results = [[GraspResult(success=bool(rng.random() < 0.8), critical_mass=float(rng.uniform(0.5, 2.0)))
                for _ in range(5)] for _ in range(25)]
    sim = simulation_cell(results, np.arange(25), np.zeros((25, 5)), PHYSICAL, {"object": "cube_3cm"})
    sim.critical_mass.attrs["max_mass"] = 5.0
    score = rng.random((25, 5))
    image = quick_cell("image_quality", score >= 0.5, np.full((25, 5), ""), score=score)
    ranking = ranking_table({"ipcgrasp": sim, "image_quality": image}, n_boot=300, seed=1)
    assert ranking.index.tolist() == [("ipcgrasp", "robustness"), ("ipcgrasp", "mean critical mass"),
                                      ("image_quality", "robustness"), ("image_quality", "mean score")]
    success = np.array([[r.success for r in row] for row in results])
    mass = np.array([[r.critical_mass if r.success else 0.0 for r in row] for row in results]).mean(axis=1)
    row = ranking.loc[("ipcgrasp", "mean critical mass")]
    assert row.spearman == pytest.approx(spearmanr(mass, physical).statistic)
    assert row.spearman_low <= row.spearman <= row.spearman_high and row.n_grasps == 25
    assert ranking.loc[("ipcgrasp", "robustness"), "spearman"] == pytest.approx(
        spearmanr(success.mean(axis=1), physical).statistic)
    assert ranking.loc[("image_quality", "mean score"), "spearman"] == pytest.approx(
        spearmanr(score.mean(axis=1), physical).statistic)


def test_image_space_predictions_beside_the_simulated_squeeze():
    rng = np.random.default_rng(5)
    translation, rotation = rng.uniform(0, 5e-3, (4, 2)), rng.uniform(0, 0.3, (4, 2))
    results = [[GraspResult(success=bool(t < 3e-3), object_translation=t, object_rotation=r)
                for t, r in zip(tr, ro)] for tr, ro in zip(translation, rotation)]
    sim = simulation_cell(results, np.arange(4), np.arange(8).reshape(4, 2), PHYSICAL[:4], {"object": "cube_3cm"})
    predicted = translation + rng.normal(0, 1e-3, (4, 2))
    predicted[0, 0] = np.nan  # a miss: no prediction
    info = [[{"translation": p, "r_r": 2 * r} for p, r in zip(pr, ro)] for pr, ro in zip(predicted, rotation)]
    image = prediction_cell(np.ones((4, 2), bool), np.ones((4, 2)), np.ones((4, 2)), np.full((4, 2), ""),
                            np.arange(4), np.arange(8).reshape(4, 2), PHYSICAL[:4],
                            {"model": "image_quality", "object": "cube_3cm"}, info=info,
                            variables=("predicted_translation", "r_r"))
    frame = image_vs_simulation(image, sim)
    assert len(frame) == 8 and frame.simulated_success.tolist() == (translation < 3e-3).ravel().tolist()
    np.testing.assert_array_equal(frame.simulated_rotation, rotation.ravel())
    table = correlation_table(frame, [("predicted_translation", "simulated_translation"),
                                      ("predicted_rotation", "simulated_rotation")], n_boot=200)
    row = table.loc[("predicted_translation", "simulated_translation")]
    keep = np.isfinite(predicted.ravel())
    assert row.n == 7
    assert row.pearson == pytest.approx(pearsonr(predicted.ravel()[keep], translation.ravel()[keep]).statistic)
    assert table.loc[("predicted_rotation", "simulated_rotation"), "spearman"] == pytest.approx(1.0)
    shifted = image.assign(seed=image.seed + 1)
    with pytest.raises(ValueError, match="same grasps and trial seeds"):
        image_vs_simulation(shifted, sim)


def test_hold_margins_are_2_mu_F_over_m_g_of_the_trials_that_closed():
    """Two cells (mu 0.3 and 0.6) of a 3 g cube: closing forces 20 and 24 N on the pads give
    margins 2 mu min(F) / (m g); a trial that never closed (NaN forces) has none."""
    cells = []
    for mu in (0.3, 0.6):
        results = [[GraspResult(success=True, close_forces=(20.0, 24.0)),
                    GraspResult(success=False, failure_mode="jaws_meet")]]
        cells.append(simulation_cell(results, [0], np.zeros((1, 2), dtype=np.int64), PHYSICAL[:1, :2],
                                     {"jaw": "rounded", "rule": "force", "E": 1e8, "mu": mu, "object": "cube_3cm"},
                                     float("nan")))
    cube = merge_cells(cells, ("mu", "object"))
    margins = np.sort(hold_margins(cube, {"cube_3cm": 0.003}))
    np.testing.assert_allclose(margins, [2 * 0.3 * 20 / (0.003 * 9.81), 2 * 0.6 * 20 / (0.003 * 9.81)])
    text = hold_margin_text(margins)
    assert f"{np.median(margins):.0f}-fold" in text and "2 trials that closed" in text
    assert "No trial closed" in hold_margin_text(np.array([]))
