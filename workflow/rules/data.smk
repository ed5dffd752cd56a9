# Stage 0: inventory of the data directory, and the training / held-out split.


rule data_manifest:
    input:
        registry=REGISTRY,
    output:
        "results/data/manifest.json",
    params:
        data_dir=str(DATA_DIR),
    log:
        "results/logs/data_manifest.log",
    script:
        "../scripts/data_manifest.py"


rule split:
    input:
        registry=REGISTRY,
        grasps=expand(DATA_DIR / "phys_grasps_json" / "{object}.json", object=OBJECTS),
    output:
        "results/split.json",
    params:
        data_dir=str(DATA_DIR),
        objects=OBJECTS,
        seed=SEED,
        split=config["split"],
    log:
        "results/logs/split.log",
    script:
        "../scripts/split.py"
