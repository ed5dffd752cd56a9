# ipcgrasp study: from meshes to held-out evaluation (DESIGN.md section 5).
# Run from the repository root:  snakemake -c2   (or ./run.sh study)

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


rule all:
    input:
        "results/data/manifest.json",
    default_target: True
