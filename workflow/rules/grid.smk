# Stage 3: grid search on the training set. One job per (jaw, E, object) simulates the row of
# cells at every mu and close rule, one file per cell: a job's start (imports, numba's cache) costs
# about 2.5 s, and a trial's settling is shared by every mu and its squeeze until both pads touch
# the object by the close rules (grasp.simulate.run_variants); jobs run in parallel, on a cluster
# too; merged into one cube per jaw; paper-shaped F1 tables; the best setting.


def grid_row_inputs(wildcards):
    inputs = {"registry": REGISTRY, "split": "results/split.json", "meshes": "results/meshes/report.json"}
    if "psi" in GRID["rules"]:
        inputs["psi_th"] = "results/calibration/psi_th.json"
    return inputs


def row_cells(pattern, mu_labels):
    """A row's cell files, mu-major then close rule, in the order grid_row.py writes them."""
    return [path for mu in mu_labels for rule in GRID["rules"]
            for path in expand(pattern, mu=mu, rule=rule, allow_missing=True)]


rule grid_row:
    input:
        object_data,
        unpack(grid_row_inputs),
    output:
        row_cells(GRID_CELL, MU_LABELS),
    params:
        data_dir=str(DATA_DIR),
        E=lambda wc: float(wc.E),
        mu=[float(mu) for mu in GRID["mu"]],
        rules=GRID["rules"],
        E_ref=CALIBRATION["E_ref"],
        sim=SIM,
        gripper=GRIPPER,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/grid/{jaw}/E{E}/{object}.log",
    benchmark:
        "results/benchmarks/grid/{jaw}/E{E}/{object}.tsv"
    priority: GRID_PRIORITY
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
