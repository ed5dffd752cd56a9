# Stage 6: runtime. The paper's Table V question (runtime vs mesh resolution: the object mesh
# subdivided 0..4 times, one grasp, force rule), and per-trial wall time of every simulation
# cube. Each job's own wall time and memory are in results/benchmarks/**/*.tsv (benchmark:).


rule benchmark_resolution:
    input:
        registry=REGISTRY,
        split="results/split.json",
        meshes="results/meshes/report.json",
    output:
        "results/benchmarks/resolution/sub{subdivisions}.nc",
    params:
        data_dir=str(DATA_DIR),
        object=TRAINING_OBJECTS[0],
        subdivisions=lambda wc: int(wc.subdivisions),
        E=CALIBRATION["E_ref"],
        mu=CALIBRATION["sensitivity_mu"],
        jaw=CALIBRATION["jaw"],
        sim=SIM,
        gripper=GRIPPER,
        trials=config["benchmarks"]["trials"],
        seed=SEED,
    log:
        "results/logs/benchmarks/resolution/sub{subdivisions}.log",
    benchmark:
        "results/benchmarks/resolution/sub{subdivisions}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    script:
        "../scripts/benchmark_resolution.py"


rule benchmarks:
    input:
        resolution=expand("results/benchmarks/resolution/sub{subdivisions}.nc",
                          subdivisions=config["benchmarks"]["subdivisions"]),
        grid=expand("results/grid/{jaw}.nc", jaw=GRID["jaws"]),
        evaluation="results/evaluation/ipcgrasp.nc",
    output:
        cube="results/benchmarks/resolution.nc",
        resolution="results/benchmarks/resolution.csv",
        trials="results/benchmarks/trial_wall_time.csv",
    params:
        jaws=GRID["jaws"],
        seed=SEED,
    log:
        "results/logs/benchmarks/tables.log",
    script:
        "../scripts/benchmarks.py"
