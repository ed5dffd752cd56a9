# Stage: compliant fingers (docs/compliant_fingers.md), off while fingers.stiffness is empty. The
# grid's training cells rerun with each finger tip stiffness beside E and mu, one job per (jaw,
# stiffness, E, object) simulating the cells at every mu and close rule, like the grid's rows;
# merged per jaw with the grid's rigid-finger cells at the same E and mu; scored per setting
# (paper F1, per-grasp F1 and MCC).


rule finger_row:
    input:
        object_data,
        unpack(grid_row_inputs),
    output:
        row_cells(FINGER_CELL, FINGER_MU_LABELS),
    params:
        data_dir=str(DATA_DIR),
        E=lambda wc: float(wc.E),
        mu=[float(mu) for mu in FINGERS["mu"] or GRID["mu"]],
        rules=GRID["rules"],
        finger_stiffness=lambda wc: float(wc.stiffness),
        E_ref=CALIBRATION["E_ref"],
        sim=SIM,
        gripper=GRIPPER,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/fingers/{jaw}/k{stiffness}_E{E}/{object}.log",
    benchmark:
        "results/benchmarks/fingers/{jaw}/k{stiffness}_E{E}/{object}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/grid_row.py"


rule finger_merge:
    input:
        unpack(lambda wc: finger_cells(wc.jaw)),
    output:
        "results/fingers/{jaw}.nc",
    params:
        seed=SEED,
    log:
        "results/logs/fingers/merge_{jaw}.log",
    script:
        "../scripts/fingers_merge.py"


rule fingers:
    input:
        cubes=expand("results/fingers/{jaw}.nc", jaw=GRID["jaws"]),
        split="results/split.json",
    output:
        scores="results/fingers/scores.csv",
        table="results/fingers/scores.md",
    params:
        jaws=GRID["jaws"],
        trials=TRIALS,
    log:
        "results/logs/fingers/scores.log",
    script:
        "../scripts/fingers_scores.py"
