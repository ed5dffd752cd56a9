import numpy as np
import pytest
import xarray as xr

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp import robustness
from ipcgrasp.grasp import simulate
from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.perturbation import trial_seed
from ipcgrasp.study import runs, split
from ipcgrasp.study.cube import FAILURE_FLAG_MEANINGS, MODEL_INFO, join_parts


def test_psi_th_at_reads_or_interpolates_in_log_log():
    table = {"E": [1e9, 1e7, 1e8], "psi_th": [1e-6, 1e-4, 1e-5]}
    assert runs.psi_th_at(table, 1e8) == 1e-5
    # psi_th proportional to 1/E between the samples: exact under log-log interpolation
    assert runs.psi_th_at(table, 10**8.5) == pytest.approx(10**-5.5, rel=1e-12)
    with pytest.raises(ValueError, match="outside the calibrated moduli"):
        runs.psi_th_at(table, 1e11)
    with pytest.raises(ValueError, match="no Psi_th at E = 1e\\+08"):
        runs.psi_th_at({"E": [1e8], "psi_th": [float("nan")]}, 1e8)


def test_params_of_a_cell_and_of_the_best_setting():
    params = runs.study_params({"dt": 0.01}, E=1e9, mu=0.5, jaw="rectangular", close_rule="force")
    assert (params.E, params.mu, params.jaw, params.dt) == (1e9, 0.5, "rectangular", 0.01)
    with pytest.raises(ValueError, match="unknown simulation parameters \\['dtt'\\]"):
        runs.study_params({"dtt": 0.01})
    best = runs.best_params({}, {"E": 1e8, "mu": 0.4, "jaw": "rounded", "rule": "psi", "psi_th": 2e-5})
    assert (best.close_rule, best.psi_th) == ("psi", 2e-5)
    assert runs.best_params({}, {"E": 1e8, "mu": 0.4, "jaw": "rounded", "rule": "force", "psi_th": None}).psi_th \
        == SimParams().psi_th


def test_trial_seeds_are_the_shared_per_trial_seeds():
    seeds = runs.trial_seeds(7, [3, 11], 2)
    assert seeds.tolist() == [[trial_seed(7, g, t) for t in range(2)] for g in (3, 11)]


def test_a_study_trial_replays_bit_for_bit_through_the_api_and_its_seed():
    """Trial 1 of cube grasp 4 in a study cell with root seed 3 is trial 1 of robustness(...,
    seed=3, grasp_index=4): the same seed, pose and outcome to the last bit."""
    data = resolve_data_dir()
    obj, physical = runs.load_study_object(data, "cube_3cm", load_registry())
    params = SimParams(lift_height=0.005, hold_time=0.04)
    cell = runs.simulate_cell(obj, physical, [4], params, 2, 3, {"object": "cube_3cm", "rule": "force"})
    replay = robustness(obj, physical.object_poses[4], physical.grasp_poses[4], params, n_trials=2, seed=3,
                        workers=1, grasp_index=4).trials[1]
    assert replay.seed == int(cell.seed.values[0, 1]) == trial_seed(3, 4, 1)
    assert bool(cell.success.values[0, 1]) == replay.success
    assert (float(cell.force_1.values[0, 1]), float(cell.force_2.values[0, 1])) == replay.close_forces
    assert float(cell.close_time.values[0, 1]) == replay.close_time


class FakePhysical:
    grasp_poses = np.tile(np.eye(4), (4, 1, 1))
    object_poses = np.tile(np.eye(4), (4, 1, 1))
    results = np.array([[1, 1], [0, 1], [0, 0], [1, 1]], dtype=bool)


def test_a_trial_that_raises_is_recorded_as_an_error(monkeypatch):
    calls = []

    def fake_simulate(obj, object_pose, grasp_pose, rules, seed, gripper):
        assert gripper.name == "yumi" and gripper.pad_kind == rules[0].jaw
        calls.append(seed)
        if len(calls) == 2:
            raise np.linalg.LinAlgError("singular matrix")
        return [GraspResult(success=True, reason="held", wall_time=0.5) for _ in rules]

    monkeypatch.setattr(simulate, "simulate_variants", fake_simulate)
    lines = []
    cell = runs.simulate_cell(None, FakePhysical, [1, 3], SimParams(), 2, 0,
                              {"object": "x", "rule": "force"}, log=lines.append)
    assert calls == runs.trial_seeds(0, [1, 3], 2).ravel().tolist()
    assert cell.success.values.tolist() == [[True, False], [True, True]]
    assert FAILURE_FLAG_MEANINGS[cell.failure_mode.values[0, 1]] == "error"
    assert cell.reason.values[0, 1] == "LinAlgError: singular matrix"
    assert any("Traceback" in line for line in lines) and len(lines) == 5
    assert cell.physical_success.values.tolist() == [[0, 1], [1, 1]]


def test_predict_cell_uses_the_same_seeds_and_survives_errors():
    seen = []

    def flaky(obj, object_pose, grasp_pose, params, seed):
        seen.append(seed)
        if seed == seen[0]:
            raise RuntimeError("no contact")
        return runs.always_success(obj, object_pose, grasp_pose, params, seed)

    cell = runs.predict_cell(flaky, None, FakePhysical, [0, 2], SimParams(), 2, 5, {"model": "m", "object": "x"})
    assert seen == runs.trial_seeds(5, [0, 2], 2).ravel().tolist()
    assert cell.success.values.tolist() == [[False, True], [True, True]]
    assert cell.reason.values[0, 0] == "error: RuntimeError: no contact" and np.isnan(cell.score.values[0, 0])
    assert runs.predictor(runs.ALWAYS_SUCCESS) is runs.always_success


def test_mesh_report_of_the_bundled_cube_and_both_pads():
    report = runs.mesh_report(resolve_data_dir(), ["cube_3cm"], load_registry(), 3e-3)
    cube = report["objects"]["cube_3cm"]
    assert cube["watertight"] and cube["n_faces"] == 12
    assert cube["volume_m3"] == pytest.approx(0.03**3, rel=1e-6)
    assert cube["mass_kg"] == 0.003 and cube["density_kg_m3"] == pytest.approx(0.003 / 0.03**3)
    for kind in ("rounded", "rectangular"):
        pad = report["pads"][kind]
        assert pad["n_tets"] > 100 and pad["n_nodes"] > pad["n_back_nodes"] > 0 and pad["min_tet_volume_m3"] > 0


def test_predictor_sends_params_to_simparams_and_keywords_to_the_model(monkeypatch):
    seen = {}

    def model(obj, object_pose, grasp_pose, params, seed, stiffness=1.0, dt=0.5):
        seen.update(params=params, seed=seed, stiffness=stiffness, dt=dt)
        return runs.always_success(obj, object_pose, grasp_pose, params, seed)

    monkeypatch.setattr(runs, "MODELS", {"fake": model})
    predict = runs.predictor("fake", {"params": {"penalty_margin": 2.5e-4, "dt": 0.01},
                                      "keywords": {"stiffness": 1e8, "dt": 1e-3}})
    base = SimParams(mu=0.6)
    predict(None, None, None, base, 7)
    # dt under params is the simulator's, dt under keywords the model's own
    assert (seen["params"].penalty_margin, seen["params"].dt, seen["params"].mu) == (2.5e-4, 0.01, 0.6)
    assert (seen["stiffness"], seen["dt"], seen["seed"]) == (1e8, 1e-3, 7)
    assert runs.predictor("fake") is model and runs.predictor("fake", {}) is model
    with pytest.raises(ValueError, match="penalty_margin"):
        runs.predictor("fake", {"params": {"penalty_margin": -1.0}})
    with pytest.raises(ValueError, match="no keyword settings \\['damping'\\]"):
        runs.predictor("fake", {"keywords": {"damping": 1e4}})
    with pytest.raises(ValueError, match="groups \\['stiffness'\\]"):
        runs.predictor("fake", {"stiffness": 1e8})


def test_predict_cell_keeps_the_models_info_variables():
    def penalty_like(obj, object_pose, grasp_pose, params, seed):
        return Prediction(False, float("nan"), 0.1, {"failure_mode": "slip", "reason": "lost it",
                                                     "close_forces": (20.0, 21.0), "max_penetration": 3e-5,
                                                     "max_force_gap": 9e-4})

    cell = runs.predict_cell(penalty_like, None, FakePhysical, [0, 1], SimParams(), 1, 0,
                             {"model": "penalty", "object": "x"})
    assert set(MODEL_INFO["penalty"]) <= set(cell.data_vars)
    assert cell.max_penetration.values.tolist() == [[3e-5], [3e-5]] and cell.force_2.values[0, 0] == 21.0
    assert np.isnan(cell.s_cf.values).all()  # not in this info: NaN, not an error
    assert FAILURE_FLAG_MEANINGS[cell.failure_mode.values[1, 0]] == "slip"


@pytest.mark.parametrize("parts", [1, 2, 3, 5])
def test_parts_of_the_held_out_grasps_join_to_the_cell_of_one_job(monkeypatch, parts):
    """The study's held-out jobs: each simulates every parts-th grasp (a part may hold none, with
    5 parts of 4 grasps); joined, they are the cell one job over all grasps makes, in its order."""
    def fake_simulate(obj, object_pose, grasp_pose, rules, seed, gripper):  # a seed decides the verdict
        return [GraspResult(success=bool(seed % 3), reason=f"seed {seed}", wall_time=0.5, close_forces=(seed % 7, 1.0))
                for _ in rules]

    monkeypatch.setattr(simulate, "simulate_variants", fake_simulate)
    grasps, scalars = [3, 0, 2, 1], {"object": "x", "rule": "force"}
    whole = runs.simulate_cell(None, FakePhysical, grasps, SimParams(), 2, 9, scalars, attrs={"stage": "evaluation"})
    cells = [runs.simulate_cell(None, FakePhysical, split.grasp_part(grasps, k, parts), SimParams(), 2, 9, scalars,
                                attrs={"stage": "evaluation"}) for k in range(parts)]
    assert sorted(g for k in range(parts) for g in split.grasp_part(grasps, k, parts)) == sorted(grasps)
    xr.testing.assert_identical(join_parts(cells, grasps), whole)
    predicted = [runs.predict_cell(runs.always_success, None, FakePhysical, split.grasp_part(grasps, k, parts),
                                   SimParams(), 2, 9, {"model": "m", "object": "x"}) for k in range(parts)]
    joined = join_parts(predicted, grasps)
    assert joined.grasp.values.tolist() == grasps
    assert (joined.seed == whole.seed).all() and joined.success.all()


def test_joining_parts_refuses_missing_or_repeated_grasps():
    cell = runs.predict_cell(runs.always_success, None, FakePhysical, [0, 2], SimParams(), 1, 0, {"model": "m"})
    with pytest.raises(ValueError, match="a part is missing, repeated or from another split"):
        join_parts([cell], [0, 1, 2])
    with pytest.raises(ValueError, match="a part is missing, repeated or from another split"):
        join_parts([cell, cell], [0, 2])
    with pytest.raises(ValueError, match="part must be one of 0 .. parts - 1"):
        split.grasp_part([0, 1], 2, 2)
