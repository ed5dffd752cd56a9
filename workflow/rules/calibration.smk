# Stage 2: Psi_th calibration. One pad squeezed against a flat rigid block at the closing speed
# for every E: strain energy and normal force over time, Psi_th(E) where the force reaches
# F_close. Then the Psi_th sensitivity: the training grasps under the psi rule with multiples of
# the calibrated Psi_th at E_ref (the paper's Figure 3.3 question), one job per object for every
# multiple (the multiples of a trial share its simulation until both pads touch the object).


rule calibration:
    output:
        squeeze="results/calibration/squeeze.nc",
        psi_th="results/calibration/psi_th.json",
    params:
        E=CALIBRATION_E,
        jaw=CALIBRATION["jaw"],
        sim=SIM,
        gripper=GRIPPER,
    log:
        "results/logs/calibration.log",
    benchmark:
        "results/benchmarks/calibration.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/calibration.py"


rule psi_sensitivity_row:
    input:
        object_data,
        registry=REGISTRY,
        split="results/split.json",
        meshes="results/meshes/report.json",
        psi_th="results/calibration/psi_th.json",
    output:
        expand("results/calibration/sensitivity/x{factor}/{object}.nc", factor=FACTOR_LABELS, allow_missing=True),
    params:
        data_dir=str(DATA_DIR),
        factors=[float(f) for f in CALIBRATION["sensitivity_factors"]],
        E_ref=CALIBRATION["E_ref"],
        mu=CALIBRATION["sensitivity_mu"],
        jaw=CALIBRATION["jaw"],
        sim=SIM,
        gripper=GRIPPER,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/calibration/sensitivity/{object}.log",
    benchmark:
        "results/benchmarks/calibration/sensitivity/{object}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/sensitivity_row.py"


rule psi_sensitivity:
    input:
        cells=expand("results/calibration/sensitivity/x{factor}/{object}.nc", factor=FACTOR_LABELS,
                     object=TRAINING_OBJECTS),
        split="results/split.json",
    output:
        cube="results/calibration/sensitivity.nc",
        csv="results/calibration/sensitivity.csv",
        md="results/calibration/sensitivity.md",
    params:
        seed=SEED,
    log:
        "results/logs/calibration/sensitivity.log",
    script:
        "../scripts/sensitivity.py"
