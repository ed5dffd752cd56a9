# Stage 3: grid search on the training set. One job per (jaw, rule, E, object) simulates the row
# of cells at every mu, one file per cell (a job's start, imports and numba's cache, costs about
# 2.5 s: a job per cell spent a tenth of the grid on it); jobs run in parallel, on a cluster too;
# merged into one cube per jaw; paper-shaped F1 tables; the best setting.


def grid_cell_inputs(wildcards):
    inputs = {"registry": REGISTRY, "split": "results/split.json", "meshes": "results/meshes/report.json"}
    if wildcards.rule == "psi":
        inputs["psi_th"] = "results/calibration/psi_th.json"
    return inputs


rule grid_row:
    input:
        object_data,
        unpack(grid_cell_inputs),
    output:
        expand(GRID_CELL, mu=MU_LABELS, allow_missing=True),
    params:
        data_dir=str(DATA_DIR),
        E=lambda wc: float(wc.E),
        mu=[float(mu) for mu in GRID["mu"]],
        E_ref=CALIBRATION["E_ref"],
        sim=SIM,
        gripper=GRIPPER,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/grid/{jaw}/{rule}/E{E}/{object}.log",
    benchmark:
        "results/benchmarks/grid/{jaw}/{rule}/E{E}/{object}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/grid_row.py"


rule grid_merge:
    input:
        lambda wc: grid_cells(wc.jaw),
    output:
        "results/grid/{jaw}.nc",
    params:
        seed=SEED,
    log:
        "results/logs/grid/merge_{jaw}.log",
    script:
        "../scripts/grid_merge.py"


rule grid:
    input:
        cubes=expand("results/grid/{jaw}.nc", jaw=GRID["jaws"]),
        split="results/split.json",
        registry=REGISTRY,
    output:
        tables=grid_tables(),
        scores="results/grid/scores.csv",
        best="results/grid/best.json",
    params:
        jaws=GRID["jaws"],
        rules=GRID["rules"],
        trials=TRIALS,
        table=lambda wc: F1_TABLE,
    log:
        "results/logs/grid/tables.log",
    script:
        "../scripts/grid_tables.py"
