# Stage 0: inventory of the data directory against the object registry.


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
