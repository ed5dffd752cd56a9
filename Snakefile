# ipcgrasp study: from meshes to held-out evaluation (docs/study.md).
# Run from the repository root:  snakemake -c2 --configfile config/config.yaml   (or ./run.sh study)
# Stages (one file each in workflow/rules/): data (manifest, split), meshes, calibration, grid,
# fingers (compliant-finger sweep, off by default), baselines (contact-parameter sweeps of the
# dynamic baselines), evaluation, benchmarks, notebooks.
# Stage target rules: split, meshes, calibration, psi_sensitivity, grid, fingers, baselines, evaluation,
# benchmarks, notebooks (e.g. `snakemake -c2 --configfile config/config.yaml --until grid`).

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/meshes.smk"
include: "workflow/rules/calibration.smk"
include: "workflow/rules/grid.smk"
include: "workflow/rules/fingers.smk"
include: "workflow/rules/baselines.smk"
include: "workflow/rules/evaluation.smk"
include: "workflow/rules/benchmarks.smk"
include: "workflow/rules/notebooks.smk"


# Jobs that take seconds run in the main snakemake process, also under a cluster executor; the
# simulation jobs (calibration, psi_sensitivity_row, grid_row, finger_row, baseline_cell,
# evaluation_simulation, evaluation_dynamic, benchmark_resolution) are the ones submitted.
localrules:
    all,
    data_manifest,
    split,
    meshes,
    psi_sensitivity,
    grid_merge,
    grid,
    finger_merge,
    fingers,
    baseline_sweep,
    baselines,
    evaluation_merge,
    evaluation_baseline,
    evaluation,
    benchmarks,
    notebook_calibration,
    notebook_grid_search,
    notebook_evaluation,
    notebook_failure_modes,
    notebook_runtime,
    notebooks,


rule all:
    input:
        "results/data/manifest.json",
        "results/meshes/report.json",
        "results/split.json",
        "results/calibration/psi_th.json",
        sensitivity_outputs(),
        grid_tables(),
        "results/grid/best.json",
        finger_outputs(),
        sweep_outputs(),
        "results/evaluation/table.csv",
        "results/evaluation/table.md",
        "results/benchmarks/resolution.csv",
        "results/benchmarks/trial_wall_time.csv",
        NOTEBOOK_OUTPUTS,
    default_target: True
