"""Every figure the study draws (ipcgrasp.viz.figures, the trajectory plot, the image-space
picture) carries a caption line with the data, the split and integer N, and axes that count trials
have integer ticks. Checked on the Figure objects, from synthetic cubes shaped like the default
study's (5 E x 4 mu x 2 rules x 2 jaws on 8 training grasps, 17 held-out grasps, 5 trials)."""

import itertools
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from PIL import Image

from ipcgrasp.grasp.outcome import FAILURE_MODES, GraspResult
from ipcgrasp.study.cube import merge_cells, prediction_cell, simulation_cell
from ipcgrasp.study.sweeps import merge_sweep
from ipcgrasp.study.tables import (
    IMAGE_VS_SIMULATION,
    artifact_table,
    correlation_table,
    failure_counts,
    image_vs_simulation,
    outcome_counts,
    ranking_table,
    trial_time_table,
)
from ipcgrasp.viz import figures
from ipcgrasp.viz.figures.caption import (
    ALL,
    HELD_OUT,
    NO_SPLIT,
    OUTSIDE_STUDY,
    SPLITS,
    TRAINING,
    Sample,
    caption_line,
    caption_of,
    cube_sample,
)
from ipcgrasp.viz.trajectory_plot import trajectory_figure

TRIALS = 5
TRAINING_GRASPS = [3, 5, 8, 9, 16, 20, 22, 24]
HELD_OUT_GRASPS = [0, 1, 2, 4, 6, 7, 10, 11, 12, 13, 14, 15, 17, 18, 19, 21, 23]
E_VALUES, MU_VALUES, RULES, JAWS = [1e7, 1e8, 1e9, 1e10, 1e11], [0.3, 0.4, 0.5, 0.6], ["psi", "force"], \
    ["rounded", "rectangular"]
CAPTION = re.compile(r"Data: (?P<data>[^.]+)\. Split: (?P<split>[^.]+)\. N = (?P<n>[^.]+)\.")


def physical(n_grasps, rng):
    return rng.random((n_grasps, 5)) < 0.8


def sim_results(rng, n_grasps, **extra):
    """Trials ending in every failure mode now and then, with the per-trial numbers the figures use."""
    outcomes = (None,) * 6 + FAILURE_MODES
    rows = []
    for _ in range(n_grasps):
        row = []
        for _ in range(TRIALS):
            mode = outcomes[rng.integers(len(outcomes))]
            row.append(GraspResult(success=mode is None, failure_mode=mode, wall_time=float(rng.uniform(2, 8)),
                                   newton_iterations=int(rng.integers(100, 900)), max_penetration=0.0,
                                   max_force_gap=float(rng.uniform(0, 1e-4)),
                                   object_translation=float(rng.uniform(0, 5e-3)),
                                   object_rotation=float(rng.uniform(0, 0.2)),
                                   critical_mass=float(rng.uniform(0.1, 2.0)) if mode is None else float("nan"),
                                   **extra))
        rows.append(row)
    return rows


def seeds(grasps):
    return np.arange(len(grasps) * TRIALS).reshape(len(grasps), TRIALS)


@pytest.fixture(scope="module")
def grid():
    rng = np.random.default_rng(0)
    phys = physical(len(TRAINING_GRASPS), rng)
    cubes = {}
    for jaw in JAWS:
        cells = [simulation_cell(sim_results(rng, len(TRAINING_GRASPS)), TRAINING_GRASPS, seeds(TRAINING_GRASPS), phys,
                                 {"jaw": jaw, "rule": rule, "E": E, "mu": mu, "object": "cube_3cm"},
                                 9e-6 if rule == "psi" else float("nan"))
                 for E, mu, rule in itertools.product(E_VALUES, MU_VALUES, RULES)]
        cubes[jaw] = merge_cells(cells, ("E", "mu", "rule", "object"), attrs={"stage": "grid"})
    return cubes


def prediction(model, grasps, phys, rng, reasons=("slip", "unbalanced", "held"), info=None, variables=(), score=None):
    shape = (len(grasps), TRIALS)
    reason = rng.choice(np.array(reasons, dtype=object), shape)
    success = reason == "held"
    return prediction_cell(success, np.full(shape, np.nan) if score is None else score, np.full(shape, 0.01),
                           reason, grasps, seeds(grasps), phys, {"model": model, "object": "cube_3cm"},
                           info=info, variables=variables)


@pytest.fixture(scope="module")
def evaluation():
    rng = np.random.default_rng(1)
    phys = physical(len(HELD_OUT_GRASPS), rng)
    sim = simulation_cell(sim_results(rng, len(HELD_OUT_GRASPS)), HELD_OUT_GRASPS, seeds(HELD_OUT_GRASPS), phys,
                          {"jaw": "rounded", "rule": "force", "E": 1e7, "mu": 0.3, "object": "cube_3cm"})
    shape = (len(HELD_OUT_GRASPS), TRIALS)
    score = rng.random(shape)
    image_info = [[{"translation": float(rng.uniform(0, 5e-3)), "r_r": float(rng.uniform(0, 0.2)),
                    "miss": bool(rng.random() < 0.1)} for _ in range(TRIALS)] for _ in HELD_OUT_GRASPS]
    dynamic_info = [[{"failure_mode": "slip", "max_penetration": float(rng.uniform(0, 3e-4)), "max_force_gap": 1e-3}
                     for _ in range(TRIALS)] for _ in HELD_OUT_GRASPS]
    cubes = {"ipcgrasp": sim,
             "soft_point": prediction("soft_point", HELD_OUT_GRASPS, phys, rng),
             "reach": prediction("reach", HELD_OUT_GRASPS, phys, rng, ("held", "no_clearance", "error: x")),
             "image_quality": prediction("image_quality", HELD_OUT_GRASPS, phys, rng, ("", "held"), image_info,
                                         ("predicted_translation", "r_r", "miss"), score),
             "penalty": prediction("penalty", HELD_OUT_GRASPS, phys, rng, ("held", ""), dynamic_info,
                                   ("failure_mode", "max_penetration", "max_force_gap")),
             "always_success": prediction("always_success", HELD_OUT_GRASPS, phys, rng, ("held",))}
    cubes = {model: merge_cells([cube], ("object",), attrs={"stage": "evaluation"}) for model, cube in cubes.items()}
    cubes["ipcgrasp"].critical_mass.attrs["max_mass"] = 5.0
    return cubes


@pytest.fixture(scope="module")
def sweeps():
    rng = np.random.default_rng(2)
    phys = physical(len(TRAINING_GRASPS), rng)
    cells = []
    for stiffness, margin in itertools.product([1e4, 1e5, 1e6], [2.5e-4, 5e-4]):
        info = [[{"failure_mode": None, "max_penetration": 0.0 if stiffness > 1e5 else float(rng.uniform(0, 3e-4)),
                  "max_force_gap": margin} for _ in range(TRIALS)] for _ in TRAINING_GRASPS]
        cell = prediction("penalty", TRAINING_GRASPS, phys, rng, ("held", ""), info,
                          ("failure_mode", "max_penetration", "max_force_gap"))
        cells.append(cell.assign_coords(stiffness=stiffness, margin=margin))
    return {"penalty": merge_sweep(cells, "penalty")}


def squeeze():
    force = np.array([[0.0, 3e-11, 2.5, 8.7, 19.0, 30.4, 44.1]] * 2) * [[1.0], [1.5]]
    return xr.Dataset({"force": (("E", "step"), force), "strain_energy": (("E", "step"), 1e-8 * force ** 1.7 + 1e-15),
                       "psi_th": (("E",), [9.3e-6, 6.0e-6])}, coords={"E": [1e8, 1e9], "step": np.arange(7)},
                      attrs={"close_force_N": 20.0, "jaw": "rounded"})


def resolution():
    rng = np.random.default_rng(3)
    phys = physical(1, rng)
    cells = []
    for k in range(5):
        cell = simulation_cell(sim_results(rng, 1), [3], seeds([3]), phys,
                               {"object": "cube_3cm", "subdivisions": k})
        cells.append(cell.assign(n_vertices=((), 8 * 4 ** k), n_faces=((), 12 * 4 ** k)))
    return merge_cells(cells, ("subdivisions",))


def trajectory():
    time = np.arange(1, 76) * 0.02
    phase = np.searchsorted([0.06, 0.5, 1.3], time, side="right").astype(np.int8)
    rotation = np.repeat(np.eye(3)[None], len(time), axis=0)
    return xr.Dataset(
        {"phase": (("step",), phase, {"flag_meanings": "settle squeeze lift hold"}),
         "pad_normal_force": (("step", "pad"), np.outer(np.clip(time - 0.4, 0, None), [200, 200])),
         "pad_friction_force": (("step", "pad"), np.outer(np.clip(time - 0.4, 0, None), [1, 0.5])),
         "jaw_opening": (("step",), np.clip(0.04 - 0.02 * time, 0.03, None)),
         "object_height": (("step",), np.clip(0.025 * (time - 0.5), 0, 0.02)),
         "object_rotation": (("step", "row", "col"), rotation)},
        coords={"time": (("step",), time), "pad": [0, 1]},
        attrs={"object": "cube_3cm", "grasp": 0, "trial": 0, "seed": 7, "success": 1, "close_time": 0.5,
               "params": '{"E": 1e8, "mu": 0.4, "jaw": "rounded", "close_rule": "force"}',
               "ipcgrasp_version": "0"})


def caption_parts(fig):
    match = CAPTION.search(caption_of(fig))
    assert match, f"no caption line with data, split and N: {caption_of(fig)!r}"
    return match["data"], match["split"], match["n"]


def assert_integer_ticks(axis):
    """The counts axis's tick values (as drawn, within its limits) are whole numbers."""
    axis.axes.figure.canvas.draw()
    low, high = sorted(axis.get_view_interval())
    ticks = [t for t in axis.get_majorticklocs() if low - 1e-9 <= t <= high + 1e-9]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks


def test_cube_sample_counts_grasps_and_trials_of_one_setting_without_padding(grid, evaluation):
    assert cube_sample(grid["rounded"]) == Sample(("cube_3cm",), 8, 40)
    assert cube_sample(evaluation["ipcgrasp"]) == Sample(("cube_3cm",), 17, 85)
    a = prediction("reach", [0, 1], physical(2, np.random.default_rng(0)), np.random.default_rng(0))
    b = prediction("reach", [0, 1, 2], physical(3, np.random.default_rng(0)), np.random.default_rng(0))
    merged = merge_cells([a.assign_coords(object="a"), b.assign_coords(object="b")], ("object",))
    assert cube_sample(merged) == Sample(("a", "b"), 5, 25)  # grasp 2 of object a is padding
    assert Sample(("a",), 3, 7).text() == "3 grasps, 7 trials"
    assert Sample(("a",), 1, 1).text() == "1 grasp x 1 trial = 1 trial"
    with pytest.raises(ValueError, match="split"):
        caption_line("cube_3cm", "test grasps", "1 trial")


@pytest.fixture(scope="module")
def figure_cases(grid, evaluation, sweeps):
    """(name, Figure, expected split, expected N text, integer-count axes) of every study figure."""
    sim = evaluation["ipcgrasp"]
    per_grasp = pd.DataFrame({"physical": sim.physical_success.mean("physical_trial").to_series()})
    for model, cube in evaluation.items():
        per_grasp[model] = cube.success.astype(float).mean("trial").to_series()
    ranking = ranking_table(evaluation, n_boot=50)
    frame = image_vs_simulation(evaluation["image_quality"], sim)
    pairs = [(f"predicted_{what}", f"simulated_{what}") for _, _, what, _ in IMAGE_VS_SIMULATION]
    trials = trial_time_table({"grid rounded": grid["rounded"], "evaluation": sim})
    grid_failures = figures.grid_failure_figure(grid)
    evaluation_failures = figures.evaluation_failure_figure(sim)
    return [
        ("calibration", figures.calibration_figure(squeeze()), NO_SPLIT, "2 squeeze", []),
        ("grid_f1", figures.grid_f1_figure(grid), TRAINING, "8 grasps x 5 trials = 40 trials per setting", []),
        ("grid_failure_modes", grid_failures, TRAINING, "8 grasps x 5 trials = 40 trials per setting",
         [ax.xaxis for ax in grid_failures.axes]),
        ("evaluation_robustness", figures.robustness_figure(per_grasp, list(evaluation), sim), HELD_OUT,
         "17 grasps x 5 trials = 85 trials per model", []),
        ("evaluation_ranking", figures.ranking_figure(evaluation, ranking), HELD_OUT, "17 grasps x 5 trials", []),
        ("evaluation_failure_modes", evaluation_failures, HELD_OUT, "17 grasps x 5 trials = 85 trials",
         [evaluation_failures.axes[0].xaxis]),
        ("failure_modes", figures.outcomes_figure(outcome_counts(evaluation), evaluation), HELD_OUT,
         "17 grasps x 5 trials = 85 trials per model", []),
        ("contact_artifacts", figures.artifacts_figure(evaluation, artifact_table(evaluation)), HELD_OUT,
         "17 grasps x 5 trials = 85 trials per model", []),
        ("image_quality_vs_simulation",
         figures.image_vs_simulation_figure(frame, correlation_table(frame, pairs, n_boot=50), sim), HELD_OUT,
         "17 grasps x 5 trials = 85 trials", []),
        ("baseline_sensitivity", figures.sweep_figure(sweeps), TRAINING, "8 grasps x 5 trials = 40 trials per setting",
         []),
        ("runtime", figures.runtime_figure(resolution(), trials), ALL, "1685 trials over 41 settings", []),
        ("trajectory", trajectory_figure(trajectory()), OUTSIDE_STUDY, "1 trial", []),
    ]


def test_every_figure_has_a_caption_with_data_split_and_integer_n_and_integer_count_ticks(figure_cases):
    for name, fig, split, n, count_axes in figure_cases:
        fig.canvas.draw()
        data, caption_split, caption_n = caption_parts(fig)
        assert caption_split == split and split in SPLITS, name
        assert n in caption_n, (name, caption_n)
        assert all(float(x).is_integer() for x in re.findall(r"\d+(?:\.\d+)?", caption_n)), (name, caption_n)
        assert data.strip(), name
        if split != NO_SPLIT:
            assert "cube_3cm" in data, (name, data)
        for axis in count_axes:
            assert axis.get_label_text() == "trials", name
            assert_integer_ticks(axis)


def test_the_caption_is_inside_the_saved_picture(figure_cases, tmp_path):
    """save_figure's tight bounding box grows the picture to hold the caption below the axes."""
    name, fig, *_ = figure_cases[0]
    path = figures.save_figure(fig, tmp_path / f"{name}.png")
    height = fig.get_figheight() * figures.caption.DPI
    assert Image.open(path).size[1] > height  # taller than the figure itself: the caption is below


def test_units_are_on_every_quantitative_axis(figure_cases):
    unit = re.compile(r"\((?:[^()]*\b)?(Pa|N|J|mm|m|s|kg|deg|1|N/m|fraction)\b[^()]*\)|\[(N|mm|deg|s)\]")
    for name, fig, *_ in figure_cases:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>" or not ax.axison:
                continue
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                counts_or_categories = label in ("trials", "model") or label.startswith(("object mesh faces",
                                                                                         "held-out grasp (object"))
                if label and not counts_or_categories:
                    assert unit.search(label), (name, label)


def test_the_failure_counts_drawn_are_the_cube_s_counts(grid):
    fig = figures.grid_failure_figure(grid)
    ax = fig.axes[0]  # the rounded jaw: one bar per setting, one segment per outcome
    counts = failure_counts(grid["rounded"], by=("rule", "E", "mu"))
    assert len(ax.get_yticklabels()) == len(counts) == len(E_VALUES) * len(MU_VALUES) * len(RULES)
    drawn = {container.get_label(): [bar.get_width() for bar in container] for container in ax.containers}
    assert drawn == {("success" if mode == "none" else mode): counts[mode].tolist() for mode in counts.columns
                     if mode not in ("rule", "E", "mu")}
    assert (counts.drop(columns=["rule", "E", "mu"]).sum(axis=1) == 40).all()  # 8 grasps x 5 trials per setting


def test_trial_counts_of_the_smoke_study_get_integer_ticks():
    """2 grasps x 1 trial per setting (config/smoke.yaml): matplotlib's default ticks would be
    0, 0.25, ..., 2 trials."""
    rng = np.random.default_rng(4)
    phys = physical(2, rng)
    cells = [simulation_cell([[GraspResult(success=True)], [GraspResult(success=False, failure_mode="slip")]], [0, 1],
                             np.arange(2).reshape(2, 1), phys,
                             {"jaw": "rounded", "rule": rule, "E": 1e8, "mu": 0.4, "object": "cube_3cm"})
             for rule in RULES]
    cube = merge_cells(cells, ("E", "mu", "rule", "object"))
    grid_failures = figures.grid_failure_figure({"rounded": cube})
    evaluation_failures = figures.evaluation_failure_figure(cube.isel(E=0, mu=0, rule=0))
    for fig in (grid_failures, evaluation_failures):
        assert caption_parts(fig)[2] == "2 grasps x 1 trial = 2 trials" + " per setting" * (fig is grid_failures)
        assert_integer_ticks(fig.axes[0].xaxis)


def test_the_image_space_picture_carries_the_caption_line_it_is_given():
    import trimesh

    from ipcgrasp.baselines.image_quality import grasp_quality, render_silhouette
    from ipcgrasp.data.location import resolve_data_dir
    from ipcgrasp.data.reach import load_object, load_physical_grasps
    from ipcgrasp.viz.quality import image_quality_figure

    data = resolve_data_dir()
    mesh = trimesh.load(load_object(data, "cube_3cm")[0], force="mesh")
    grasps = load_physical_grasps(data, "cube_3cm")
    silhouette = render_silhouette(mesh, grasps.grasp_poses[2], 1e-3, object_pose=grasps.object_poses[2])
    line = caption_line("cube_3cm grasp 2, trial 1", OUTSIDE_STUDY, "1 trial")
    fig = image_quality_figure(silhouette, grasp_quality(silhouette), line)
    assert caption_of(fig) == line and caption_parts(fig)[1] == OUTSIDE_STUDY
    assert fig.axes[0].get_xlabel() == "closing direction [mm]"
