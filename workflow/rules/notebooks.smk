# Stage 5: analysis notebooks, run through papermill by the notebook directive (first cell
# tagged `parameters`). Executed copies land in results/notebooks/, figures in results/figures/.
# They read the result cubes and compute no physics. Edit one interactively with
#   snakemake --cores 1 --configfile config/config.yaml --edit-notebook results/figures/grid_f1.png
# Every output is update(): snakemake keeps it while the job runs (instead of deleting it first)
# and puts the previous file back if the job fails, so a failed run or a failed or abandoned
# --edit-notebook session never loses the study's figures and tables.


rule notebook_calibration:
    input:
        squeeze="results/calibration/squeeze.nc",
        psi_th="results/calibration/psi_th.json",
        sensitivity=sensitivity_outputs()[:1],
    output:
        figure=update("results/figures/calibration.png"),
    log:
        notebook="results/notebooks/calibration.ipynb",
    notebook:
        "../../notebooks/calibration.ipynb"


rule notebook_grid_search:
    input:
        cubes=expand("results/grid/{jaw}.nc", jaw=GRID["jaws"]),
        registry=REGISTRY,
    output:
        figure=update("results/figures/grid_f1.png"),
        failures=update("results/figures/grid_failure_modes.png"),
    log:
        notebook="results/notebooks/grid_search.ipynb",
    notebook:
        "../../notebooks/grid_search.ipynb"


EVALUATION_CUBES = ["results/evaluation/ipcgrasp.nc"] + expand("results/evaluation/{model}.nc", model=EVALUATION_MODELS)


rule notebook_evaluation:
    input:
        cubes=EVALUATION_CUBES,
        table="results/evaluation/table.csv",
    output:
        robustness=update("results/figures/evaluation_robustness.png"),
        failures=update("results/figures/evaluation_failure_modes.png"),
        ranking_figure=update("results/figures/evaluation_ranking.png"),
        per_grasp=update("results/evaluation/per_grasp.csv"),
        ranking=update("results/evaluation/ranking.csv"),
    params:
        models=["ipcgrasp"] + EVALUATION_MODELS,
        n_boot=EVALUATION["n_boot"],
        seed=SEED,
    log:
        notebook="results/notebooks/evaluation.ipynb",
    notebook:
        "../../notebooks/evaluation.ipynb"


# the image-space section needs image_quality, the sweep section a swept model
FAILURE_MODE_OUTPUTS = {
    "outcomes_figure": "results/figures/failure_modes.png",
    "outcomes": "results/evaluation/outcomes.csv",
    "artifacts_figure": "results/figures/contact_artifacts.png",
    "artifacts": "results/evaluation/contact_artifacts.csv",
    "stability": "results/evaluation/contact_stability.csv",
}
if "image_quality" in EVALUATION_MODELS:
    FAILURE_MODE_OUTPUTS["image_figure"] = "results/figures/image_quality_vs_simulation.png"
    FAILURE_MODE_OUTPUTS["image_correlations"] = "results/evaluation/image_quality_vs_simulation.csv"
if SWEPT_MODELS:
    FAILURE_MODE_OUTPUTS["sweep_figure"] = "results/figures/baseline_sensitivity.png"


rule notebook_failure_modes:
    input:
        cubes=EVALUATION_CUBES,
        sweeps=expand("results/baselines/{model}.nc", model=SWEPT_MODELS),
    output:
        **{name: update(path) for name, path in FAILURE_MODE_OUTPUTS.items()},
    params:
        models=["ipcgrasp"] + EVALUATION_MODELS,
        swept=SWEPT_MODELS,
        n_boot=EVALUATION["n_boot"],
        seed=SEED,
    log:
        notebook="results/notebooks/failure_modes.ipynb",
    notebook:
        "../../notebooks/failure_modes.ipynb"


rule notebook_runtime:
    input:
        resolution="results/benchmarks/resolution.nc",
        trials="results/benchmarks/trial_wall_time.csv",
    output:
        figure=update("results/figures/runtime.png"),
    log:
        notebook="results/notebooks/runtime.ipynb",
    notebook:
        "../../notebooks/runtime.ipynb"


NOTEBOOK_OUTPUTS = [
    "results/figures/calibration.png",
    "results/figures/grid_f1.png",
    "results/figures/grid_failure_modes.png",
    "results/figures/evaluation_robustness.png",
    "results/figures/evaluation_failure_modes.png",
    "results/figures/evaluation_ranking.png",
    "results/evaluation/per_grasp.csv",
    "results/evaluation/ranking.csv",
    *FAILURE_MODE_OUTPUTS.values(),
    "results/figures/runtime.png",
]


rule notebooks:
    input:
        NOTEBOOK_OUTPUTS,
