# Stage: contact-parameter sweeps of the dynamic baselines (penalty, mujoco_flex) on the training
# grasps. One job per (model, stiffness, margin) so a cluster runs them in parallel, with the
# simulator's best training setting (E, mu, jaw, close rule) and its trial seeds; merged into one
# cube per model; F1 over stiffness x margin (the grid's table shape), interpenetration and force
# gap per setting, and the setting with the best training F1 (results/baselines/{model}/best.json),
# the one the evaluation stage runs on the held-out grasps.


rule baseline_cell:
    input:
        training_data,
        registry=REGISTRY,
        split="results/split.json",
        best="results/grid/best.json",
    output:
        SWEEP_CELL,
    wildcard_constraints:
        model=one_of(SWEPT_MODELS),
    params:
        data_dir=str(DATA_DIR),
        objects=TRAINING_OBJECTS,
        settings=sweep_cell_settings,
        sim=SIM,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/baselines/{model}/stiffness{stiffness}_margin{margin}.log",
    benchmark:
        "results/benchmarks/baselines/{model}/stiffness{stiffness}_margin{margin}.tsv"
    priority: chain_priority
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/baseline_cell.py"


rule baseline_sweep:
    input:
        cells=lambda wc: sweep_cells(wc.model),
        split="results/split.json",
        best="results/grid/best.json",
    output:
        cube="results/baselines/{model}.nc",
        f1_csv="results/baselines/{model}/f1.csv",
        f1_md="results/baselines/{model}/f1.md",
        sensitivity_csv="results/baselines/{model}/sensitivity.csv",
        sensitivity_md="results/baselines/{model}/sensitivity.md",
        best="results/baselines/{model}/best.json",
    wildcard_constraints:
        model=one_of(SWEPT_MODELS),
    params:
        options=lambda wc: BASELINES[wc.model],
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/baselines/{model}/sweep.log",
    script:
        "../scripts/baseline_sweep.py"


rule baselines:
    input:
        sweep_outputs(),
