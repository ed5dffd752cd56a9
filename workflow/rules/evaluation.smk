# Stage 4: the held-out grasps with the best training setting: the simulator (with the
# critical-mass ramp after every successful trial when evaluation.critical_mass), every baseline and
# the always-success predictor on the same grasps and trial seeds (the dynamic baselines with the
# contact setting their sweep chose on the training grasps); the Table 4.2-style comparison. The
# simulator and the dynamic baselines run as evaluation.parts jobs per object, each every
# parts-th grasp (split.grasp_part), joined again per model (evaluation_merge): the last jobs of
# a study then keep every core busy.


rule evaluation_simulation:
    input:
        object_data,
        registry=REGISTRY,
        split="results/split.json",
        best="results/grid/best.json",
    output:
        "results/evaluation/ipcgrasp/{object}/part{part}.nc",
    params:
        data_dir=str(DATA_DIR),
        sim=SIM,
        gripper=GRIPPER,
        critical_mass=EVALUATION["critical_mass"],
        trials=TRIALS,
        seed=SEED,
        parts=EVALUATION["parts"],
    log:
        "results/logs/evaluation/ipcgrasp/{object}/part{part}.log",
    benchmark:
        "results/benchmarks/evaluation/ipcgrasp/{object}/part{part}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/evaluation_simulation.py"


rule evaluation_merge:
    input:
        parts=expand("results/evaluation/{{model}}/{object}/part{part}.nc", object=HELDOUT_OBJECTS, part=PARTS),
        split="results/split.json",
    output:
        "results/evaluation/{model}.nc",
    wildcard_constraints:
        model=one_of(["ipcgrasp"] + SWEPT_MODELS),
    params:
        seed=SEED,
    log:
        "results/logs/evaluation/merge_{model}.log",
    script:
        "../scripts/evaluation_merge.py"


HELDOUT_MESHES = expand(DATA_DIR / "object_meshes" / "{object}.obj", object=HELDOUT_OBJECTS)


rule evaluation_baseline:
    input:
        HELDOUT_MESHES,
        registry=REGISTRY,
        split="results/split.json",
        best="results/grid/best.json",
    output:
        "results/evaluation/{model}.nc",
    wildcard_constraints:
        model=one_of(QUICK_MODELS),
    params:
        data_dir=str(DATA_DIR),
        objects=HELDOUT_OBJECTS,
        sim=SIM,
        trials=TRIALS,
        seed=SEED,
    log:
        "results/logs/evaluation/{model}.log",
    benchmark:
        "results/benchmarks/evaluation/{model}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    script:
        "../scripts/evaluation_baseline.py"


rule evaluation_dynamic:
    input:
        object_data,
        registry=REGISTRY,
        split="results/split.json",
        best="results/grid/best.json",
        setting="results/baselines/{model}/best.json",
    output:
        "results/evaluation/{model}/{object}/part{part}.nc",
    wildcard_constraints:
        model=one_of(SWEPT_MODELS),
    params:
        data_dir=str(DATA_DIR),
        sim=SIM,
        trials=TRIALS,
        seed=SEED,
        parts=EVALUATION["parts"],
    log:
        "results/logs/evaluation/{model}/{object}/part{part}.log",
    benchmark:
        "results/benchmarks/evaluation/{model}/{object}/part{part}.tsv"
    priority: chain_priority
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    script:
        "../scripts/evaluation_baseline.py"


rule evaluation:
    input:
        cubes=["results/evaluation/ipcgrasp.nc"] + expand("results/evaluation/{model}.nc", model=EVALUATION_MODELS),
        split="results/split.json",
        best="results/grid/best.json",
        settings=expand("results/baselines/{model}/best.json", model=SWEPT_MODELS),
    output:
        csv="results/evaluation/table.csv",
        md="results/evaluation/table.md",
    params:
        models=["ipcgrasp"] + EVALUATION_MODELS,
        swept=SWEPT_MODELS,
        trials=TRIALS,
        n_boot=EVALUATION["n_boot"],
        seed=SEED,
    log:
        "results/logs/evaluation/table.log",
    script:
        "../scripts/evaluation_table.py"
