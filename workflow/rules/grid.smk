# Stage 3: grid search on the training set. One job per (jaw, rule, E, mu, object) so a cluster
# runs them in parallel; merged into one cube per jaw; paper-shaped F1 tables; the best setting.


def grid_cell_inputs(wildcards):
    inputs = {"registry": REGISTRY, "split": "results/split.json", "meshes": "results/meshes/report.json"}
    if wildcards.rule == "psi":
        inputs["psi_th"] = "results/calibration/psi_th.json"
    return inputs


rule grid_cell:
    input:
        object_data,
        unpack(grid_cell_inputs),
    output:
        "results/grid/{jaw}/{rule}/E{E}_mu{mu}/{object}.nc",
    params:
        data_dir=str(DATA_DIR),
        E=lambda wc: float(wc.E),
        mu=lambda wc: float(wc.mu),
        E_ref=CALIBRATION["E_ref"],
        sim=SIM,
        gripper=GRIPPER,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/grid/{jaw}/{rule}/E{E}_mu{mu}/{object}.log",
    benchmark:
        "results/benchmarks/grid/{jaw}/{rule}/E{E}_mu{mu}/{object}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/grid_cell.py"


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
