# `ipcgrasp generate` as Snakemake jobs: one job per shard of `shard_size` consecutive grasps,
# then a merge into index.csv; the records and index equal a single-process run's
# (ipcgrasp.dataset.shards). Any executor, as the study. From the repository root:
#   .venv/bin/snakemake -s workflow/generate.smk -c2 --config mesh=my.obj mass=0.05 n=200 out=my_grasps
#   .venv/bin/snakemake -s workflow/generate.smk --profile profiles/slurm --config ...
# or `ipcgrasp generate ... --shard-size 10 [--profile profiles/slurm]`. Every key:
# workflow/schemas/generate.schema.yaml.
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from ipcgrasp.dataset.sharding import LOG_DIR, SHARD_DIR, n_shards, shard_path
from ipcgrasp.documents import DocumentError, load_yaml

try:  # snakemake's own reader keeps a repeated key's last value and expands aliases without bound
    for _configfile in workflow.configfiles:
        load_yaml(_configfile)
except DocumentError as exc:
    raise WorkflowError(f"config file {exc}") from None
validate(config, schema="schemas/generate.schema.yaml")
# The mesh, mass, gripper and simulator settings, and records made with others, checked before any
# job, in the main snakemake process only: it loads the mesh and the simulator's modules, and a shard
# job's own process (cluster, SLURM) runs generate_shard.py, whose generate_dataset makes the same
# check (check_resume) before it samples; the merge job runs in the main process (localrules).
if workflow.is_main_process:
    from ipcgrasp.dataset.records import check_resume
    from ipcgrasp.dataset.shards import generation_inputs

    try:
        check_resume(config["out"], *generation_inputs(config), config["trials"], config["seed"])
    except (OSError, ValueError) as exc:
        raise WorkflowError(f"generate config: {exc}") from None
OUT = Path(config["out"])
SHARDS = [f"{k:04d}" for k in range(n_shards(config["n"], config["shard_size"]))]


localrules:
    all,
    generate_merge,


rule all:
    input:
        OUT / "index.csv",
    default_target: True


rule generate_shard:
    input:
        mesh=config["mesh"],
    output:
        str(OUT / SHARD_DIR / "shard_{shard}.json"),
    log:
        str(OUT / LOG_DIR / "shard_{shard}.log"),
    wildcard_constraints:
        shard=r"\d{4}",
    script:
        "scripts/generate_shard.py"


rule generate_merge:
    input:
        [shard_path(OUT, int(k)) for k in SHARDS],
    output:
        OUT / "index.csv",
    log:
        str(OUT / LOG_DIR / "merge.log"),
    script:
        "scripts/generate_merge.py"
