import itertools
import os
import stat

import numpy as np
import pytest
import xarray as xr

from ipcgrasp.grasp.outcome import FAILURE_MODES, GraspResult
from ipcgrasp.study.cube import (
    FAILURE_FLAG_MEANINGS,
    MODEL_INFO,
    SIMULATION_VARIABLES,
    failure_mode_names,
    mean_critical_mass,
    merge_cells,
    physical_robustness,
    prediction_cell,
    read_cube,
    robustness,
    simulation_cell,
    write_netcdf_atomic,
)
from ipcgrasp.study.labels import value_label

GRASPS = [3, 8, 11]
TRIALS = 2


def fake_result(rng, mode):
    return GraspResult(success=mode is None, failure_mode=mode, reason=f"reason {mode}",
                       close_time=float("nan") if mode == "miss" else rng.uniform(0.2, 2.0),
                       psi=tuple(rng.uniform(1e-6, 1e-4, 2)), close_forces=tuple(rng.uniform(15, 25, 2)),
                       start_opening=0.04, close_opening=0.03, object_translation=rng.uniform(0, 0.01),
                       object_rotation=rng.uniform(0, 0.3), lift_height=rng.uniform(0, 0.02),
                       min_distance=float("inf") if mode == "miss" else rng.uniform(1e-7, 1e-5),
                       newton_iterations=int(rng.integers(50, 500)), steps=100, wall_time=rng.uniform(1, 10),
                       **(dict(slip_kind="pivoted", grip_pivot=rng.uniform(0.1, 0.5), grip_slide=rng.uniform(0, 1e-3),
                               gravity_torque=rng.uniform(1e-4, 5e-4), torsional_capacity=rng.uniform(0, 1e-4),
                               contact_radius=rng.uniform(0, 1e-3)) if mode == "slip" else {}))


def make_cell(seed=0, physical=None, **scalars):
    rng = np.random.default_rng(seed)
    modes = (None,) + FAILURE_MODES
    results = [[fake_result(rng, modes[rng.integers(len(modes))]) for _ in range(TRIALS)] for _ in GRASPS]
    seeds = np.arange(len(GRASPS) * TRIALS).reshape(len(GRASPS), TRIALS) + 10**18
    if physical is None:
        physical = np.array([[1, 1, 0, 1, 1], [0, 0, 0, 1, 0], [1, 1, 1, 1, 1]], dtype=bool)
    scalars = {"jaw": "rounded", "rule": "force", "E": 1e8, "mu": 0.4, "object": "cube_3cm", **scalars}
    psi_th = 9e-6 if scalars["rule"] == "psi" else float("nan")
    return results, simulation_cell(results, GRASPS, seeds, physical, scalars, psi_th, attrs={"stage": "grid"})


def test_simulation_cell_holds_every_trial_with_units():
    results, cell = make_cell()
    assert dict(cell.sizes) == {"grasp": 3, "trial": TRIALS, "physical_trial": 5}
    assert cell.grasp.values.tolist() == GRASPS
    for variable in SIMULATION_VARIABLES:
        assert cell[variable.name].dims == ("grasp", "trial")
        assert cell[variable.name].attrs["long_name"]
        if variable.units:
            assert cell[variable.name].attrs["units"] == variable.units
    for g, t in itertools.product(range(3), range(TRIALS)):
        r = results[g][t]
        assert cell.success.values[g, t] == r.success
        assert FAILURE_FLAG_MEANINGS[cell.failure_mode.values[g, t]] == (r.failure_mode or "none")
        assert cell.psi_2.values[g, t] == r.psi[1] and cell.force_1.values[g, t] == r.close_forces[0]
        assert cell.newton_iterations.values[g, t] == r.newton_iterations
        assert cell.slip_kind.values[g, t] == r.slip_kind and cell.grip_pivot.values[g, t] == r.grip_pivot
        assert np.array_equal(cell.torsional_capacity.values[g, t], r.torsional_capacity, equal_nan=True)
    flags = cell.failure_mode.attrs
    assert flags["flag_meanings"].split() == list(FAILURE_FLAG_MEANINGS)
    assert flags["flag_values"].tolist() == list(range(len(FAILURE_FLAG_MEANINGS)))
    assert cell.E.item() == 1e8 and cell.E.attrs["units"] == "Pa"
    assert np.isnan(cell.psi_th.item())


def test_merge_places_every_cell_and_keeps_shared_variables_once():
    cells, originals = [], {}
    for k, (E, mu, rule) in enumerate(itertools.product([1e9, 1e7], [0.6, 0.3], ["psi", "force"])):
        _, cell = make_cell(seed=k, E=E, mu=mu, rule=rule)
        cell.attrs["created"] = f"time {k}"  # conflicting attrs are dropped
        cells.append(cell)
        originals[E, mu, rule] = cell
    cube = merge_cells(cells, dims=("E", "mu", "rule", "object"), attrs={"config_hash": "abc"})
    assert cube.success.dims == ("E", "mu", "rule", "object", "grasp", "trial")
    assert cube.E.values.tolist() == [1e7, 1e9] and cube.rule.values.tolist() == ["force", "psi"]
    assert cube.physical_success.dims == ("object", "grasp", "physical_trial")
    assert cube.seed.dims == ("object", "grasp", "trial")
    assert cube.success.dtype == bool and cube.failure_mode.dtype == np.int8
    assert cube.attrs == {"stage": "grid", "config_hash": "abc"}
    for (E, mu, rule), cell in originals.items():
        picked = cube.sel(E=E, mu=mu, rule=rule, object="cube_3cm")
        for name in ("success", "failure_mode", "wall_time", "reason"):
            np.testing.assert_array_equal(picked[name].values, cell[name].values)
        assert picked.psi_th.isnull().item() == (rule == "force")
    assert cube.jaw.item() == "rounded" and cube.E.attrs["units"] == "Pa"


def test_merge_refuses_cells_that_disagree_on_the_physical_data():
    _, a = make_cell(E=1e7)
    _, b = make_cell(E=1e8, physical=np.ones((3, 5), dtype=bool))
    with pytest.raises(ValueError, match="disagree"):
        merge_cells([a, b], dims=("E", "object"))


def test_robustness_is_the_success_fraction():
    _, cell = make_cell()
    np.testing.assert_allclose(robustness(cell).values, cell.success.values.mean(axis=1))
    np.testing.assert_allclose(physical_robustness(cell).values, [0.8, 0.2, 1.0])


def test_netcdf_round_trip_is_identical(tmp_path):
    _, cell = make_cell(seed=5)
    cells = [cell, make_cell(seed=6, mu=0.5)[1]]
    cube = merge_cells(cells, dims=("mu", "object"), attrs={"seed": 0, "created": "now"})
    cube.min_distance.values[0, 0, 0, 0] = np.inf
    cube.close_time.values[0, 0, 1, 1] = np.nan
    path = write_netcdf_atomic(cube, tmp_path / "sub" / "cube.nc")
    back = read_cube(path)
    xr.testing.assert_identical(back, cube)
    assert back.success.dtype == bool and back.seed.dtype == np.int64
    assert np.isinf(back.min_distance.values[0, 0, 0, 0]) and np.isnan(back.close_time.values[0, 0, 1, 1])
    assert os.listdir(tmp_path / "sub") == ["cube.nc"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_prediction_cell_round_trip(tmp_path):
    success = np.array([[True, False], [True, True], [False, False]])
    cell = prediction_cell(success, np.where(success, 2.0, np.nan), np.full((3, 2), 0.01),
                           np.where(success, "held", "slip"), GRASPS, np.zeros((3, 2), dtype=np.int64),
                           np.ones((3, 5), dtype=bool), {"model": "reach", "object": "cube_3cm"})
    xr.testing.assert_identical(read_cube(write_netcdf_atomic(cell, tmp_path / "p.nc")), cell)
    assert cell.runtime.attrs["units"] == "s"


def test_a_failed_write_keeps_the_old_file(tmp_path):
    _, cell = make_cell()
    path = write_netcdf_atomic(cell, tmp_path / "cube.nc")
    before = path.read_bytes()
    broken = cell.assign_attrs(unserialisable={"a": 1})
    with pytest.raises(Exception):
        write_netcdf_atomic(broken, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["cube.nc"]


def test_failure_mode_names_and_value_labels():
    solver = FAILURE_FLAG_MEANINGS.index("solver")
    assert failure_mode_names([0, solver, np.nan]).tolist() == ["none", "solver", ""]
    for value, label in [(1e7, "1e7"), (1e11, "1e11"), (2.5e10, "2.5e10"), (0.4, "0.4"), (20.0, "20"),
                         (0.3, "0.3")]:
        assert value_label(value) == label and float(label) == value


def test_prediction_cell_keeps_the_models_info_numbers_with_units(tmp_path):
    info = [[{"failure_mode": None, "close_forces": (19.0, 21.0), "max_penetration": 1e-4, "force_gap": 5e-4},
             {"failure_mode": "slip", "close_forces": (20.0, 22.0), "max_penetration": 2e-4, "force_gap": 0.0}],
            [None, {"failure_mode": "", "close_forces": (18.0, 17.0), "max_penetration": 0.0}]]
    success = np.array([[True, False], [False, True]])
    cell = prediction_cell(success, np.full((2, 2), np.nan), np.ones((2, 2)), [["", "x"], ["error: boom", ""]],
                           [0, 1], np.zeros((2, 2), dtype=np.int64), np.ones((2, 5), dtype=bool),
                           {"model": "mujoco_flex", "object": "cube_3cm"}, info=info,
                           variables=("failure_mode", "force_2", "max_penetration", "max_force_gap"))
    assert FAILURE_FLAG_MEANINGS[cell.failure_mode.values[0, 1]] == "slip"
    # success (None or ""), and a prediction that raised counts as an error
    assert failure_mode_names(cell.failure_mode.values).tolist() == [["none", "slip"], ["error", "none"]]
    assert cell.failure_mode.attrs["flag_meanings"].split() == list(FAILURE_FLAG_MEANINGS)
    np.testing.assert_array_equal(cell.force_2.values, [[21.0, 22.0], [np.nan, 17.0]])
    assert cell.force_2.attrs["units"] == "N" and cell.max_penetration.attrs["units"] == "m"
    # mujoco's "force_gap" fills max_force_gap; a trial without the key gives NaN
    np.testing.assert_array_equal(cell.max_force_gap.values, [[5e-4, 0.0], [np.nan, np.nan]])
    xr.testing.assert_identical(read_cube(write_netcdf_atomic(cell, tmp_path / "p.nc")), cell)
    with pytest.raises(ValueError, match="unknown prediction info variables \\['nope'\\]"):
        prediction_cell(success, success, success, success, [0, 1], success, success, {}, info=info,
                        variables=("nope",))


def test_image_quality_info_variables():
    info = [[{"translation": 2e-3, "d_t": 0.08, "r_r": 0.1, "s_a": 0.2, "s_f": 1e-3, "miss": False,
              "collision": True}]]
    cell = prediction_cell([[False]], [[0.3]], [[0.002]], [[""]], [4], [[1]], np.ones((1, 5), dtype=bool),
                           {"model": "image_quality"}, info=info, variables=MODEL_INFO["image_quality"])
    assert cell.predicted_translation.item() == 2e-3 and cell.predicted_translation.attrs["units"] == "m"
    assert cell.r_r.attrs["units"] == "rad" and cell.d_t.attrs["units"] == "1"
    assert cell.collision.dtype == bool and cell.collision.item() and not cell.miss.item()


def test_grasp_wall_time_leaves_out_the_phases_after_the_hold():
    result = GraspResult(success=True, wall_time=10.0, phase_wall_time={"squeeze": 3.0, "critical_mass": 4.0,
                                                                        "shake": 1.5})
    cell = simulation_cell([[result]], [0], [[0]], np.ones((1, 5), dtype=bool), {"object": "o"})
    assert cell.wall_time.item() == 10.0 and cell.grasp_wall_time.item() == 4.5


def test_mean_critical_mass_counts_failures_as_zero_and_no_slip_as_the_cap():
    results = [[GraspResult(success=True, critical_mass=1.5), GraspResult(success=False),
                GraspResult(success=True, critical_mass=float("inf"))],
               [GraspResult(success=True, critical_mass=float("nan")), GraspResult(success=True, critical_mass=0.9),
                GraspResult(success=True, critical_mass=1.2)],
               [GraspResult(success=False), GraspResult(success=False), GraspResult(success=True,
                                                                                    critical_mass=float("nan"))]]
    cell = simulation_cell(results, [0, 1, 2], np.zeros((3, 3)), np.ones((3, 5), dtype=bool), {"object": "o"})
    with pytest.raises(ValueError, match="cap"):
        mean_critical_mass(cell)
    # the ramp's NaN after a success (it failed) is left out of the mean
    np.testing.assert_allclose(mean_critical_mass(cell, cap=5.0).values, [(1.5 + 0 + 5) / 3, 1.05, 0.0])
    cell.critical_mass.attrs["max_mass"] = 2.0
    assert mean_critical_mass(cell).values[0] == pytest.approx((1.5 + 2.0) / 3)
    assert mean_critical_mass(cell).attrs["units"] == "kg"


def test_merge_along_an_existing_object_dim():
    # sweep jobs hold every training object; merging them stacks only the scalar settings
    by_object = {}
    for k, obj in enumerate(["a", "b"]):
        _, by_object[obj] = make_cell(seed=k, object=obj)
    jobs = []
    for stiffness in (1e5, 1e4):
        job = merge_cells([c.assign_coords(stiffness=stiffness) for c in by_object.values()], dims=("object",))
        jobs.append(job)
    cube = merge_cells(jobs, dims=("stiffness", "object"))
    assert cube.success.dims == ("stiffness", "object", "grasp", "trial")
    assert cube.stiffness.values.tolist() == [1e4, 1e5]
    assert cube.seed.dims == ("object", "grasp", "trial")
    np.testing.assert_array_equal(cube.success.sel(stiffness=1e5, object="b").values, by_object["b"].success.values)


def test_merged_cube_keeps_full_length_reasons_after_a_round_trip(tmp_path):
    """Cells read back from NetCDF carry a fixed string width; the merge must not truncate to it."""
    long = "the object left the pads during the lift (then the solver failed: " + "x" * 200 + ")"
    paths = []
    for E, reason in ((1e7, "short"), (1e8, long)):
        r = GraspResult(success=False, failure_mode="slip", reason=reason)
        cell = simulation_cell([[r]], [0], [[1]], np.array([[True]]), {"E": E, "object": "cube"})
        paths.append(write_netcdf_atomic(cell, tmp_path / f"{E:g}.nc"))
    merged = merge_cells([read_cube(p) for p in paths], dims=("E", "object"))
    write_netcdf_atomic(merged, tmp_path / "merged.nc")
    reasons = read_cube(tmp_path / "merged.nc").reason.sel(object="cube", grasp=0, trial=0).values
    assert list(reasons) == ["short", long]


def test_a_slip_keeps_how_it_left_the_grip_and_the_pivot_margins_through_a_round_trip(tmp_path):
    """The study's cube carries the slip's kind and the two sides of the pivot condition, as the
    dataset records do, so a slip in the grid or the held-out table can be explained."""
    slip = GraspResult(success=False, failure_mode="slip", reason="pivoted", slip_kind="pivoted", grip_pivot=0.4,
                       grip_slide=1e-4, grip_roll=0.05, gravity_torque=3.9e-4, lever_arm=0.0132,
                       torsional_capacity=1.3e-4, contact_radius=1.1e-5, contact_tilt=0.2)
    held = GraspResult(success=True, reason="held after lift")
    cell = simulation_cell([[slip, held]], [10], [[1, 2]], np.ones((1, 5), dtype=bool), {"object": "cube"})
    back = read_cube(write_netcdf_atomic(cell, tmp_path / "cell.nc"))
    assert back.slip_kind.values.tolist() == [["pivoted", ""]]
    assert back.gravity_torque.values[0, 0] == 3.9e-4 and back.gravity_torque.attrs["units"] == "N m"
    assert back.torsional_capacity.values[0, 0] == 1.3e-4 and back.grip_pivot.values[0, 0] == 0.4
    assert np.isnan(back.gravity_torque.values[0, 1]) and back.grip_pivot.values[0, 1] == 0.0
