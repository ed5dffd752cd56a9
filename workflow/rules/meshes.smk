# Stage 1: validate every object mesh (closed, oriented, in metres; mass properties) and mesh
# both pad types; the report says what was checked and repaired.


rule meshes:
    input:
        registry=REGISTRY,
        meshes=expand(DATA_DIR / "object_meshes" / "{object}.obj", object=OBJECTS),
    output:
        "results/meshes/report.json",
    params:
        data_dir=str(DATA_DIR),
        objects=OBJECTS,
        pad_resolution=SIM["pad_resolution"],
        gripper=GRIPPER,
    log:
        "results/logs/meshes.log",
    script:
        "../scripts/meshes.py"
