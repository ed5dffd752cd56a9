# Stage 5: analysis notebooks, run through papermill by the notebook directive (first cell
# tagged `parameters`). Executed copies land in results/notebooks/, figures in results/figures/.
# They read the result cubes and compute no physics. Edit one interactively with
#   snakemake --edit-notebook results/figures/grid_f1.png


rule notebook_calibration:
    input:
        squeeze="results/calibration/squeeze.nc",
        psi_th="results/calibration/psi_th.json",
        sensitivity=sensitivity_outputs()[:1],
    output:
        figure="results/figures/calibration.png",
    log:
        notebook="results/notebooks/calibration.ipynb",
    notebook:
        "../../notebooks/calibration.ipynb"


rule notebook_grid_search:
    input:
        cubes=expand("results/grid/{jaw}.nc", jaw=GRID["jaws"]),
    output:
        figure="results/figures/grid_f1.png",
        failures="results/figures/grid_failure_modes.png",
    log:
        notebook="results/notebooks/grid_search.ipynb",
    notebook:
        "../../notebooks/grid_search.ipynb"


rule notebook_evaluation:
    input:
        cubes=["results/evaluation/ipcgrasp.nc"] + expand("results/evaluation/{model}.nc", model=EVALUATION_MODELS),
        table="results/evaluation/table.csv",
    output:
        robustness="results/figures/evaluation_robustness.png",
        failures="results/figures/evaluation_failure_modes.png",
        per_grasp="results/evaluation/per_grasp.csv",
    params:
        models=["ipcgrasp"] + EVALUATION_MODELS,
    log:
        notebook="results/notebooks/evaluation.ipynb",
    notebook:
        "../../notebooks/evaluation.ipynb"


rule notebook_runtime:
    input:
        resolution="results/benchmarks/resolution.nc",
        trials="results/benchmarks/trial_wall_time.csv",
    output:
        figure="results/figures/runtime.png",
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
    "results/evaluation/per_grasp.csv",
    "results/figures/runtime.png",
]


rule notebooks:
    input:
        NOTEBOOK_OUTPUTS,
