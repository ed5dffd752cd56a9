"""`ipcgrasp generate` as workflow/generate.smk jobs through a real SLURM (profiles/slurm, the
throw-away cluster of tests/workflow/local_slurm.sh; skipped, or failed with
IPCGRASP_REQUIRE_SLURM=1, without it, as test_slurm.py says). A module of its own, apart from
test_slurm.py, whose tests share the session's smoke study and so one pytest-xdist worker
(tests/conftest.py): this one needs no study and runs beside it."""

import json
import subprocess

import pytest

from .conftest import copy_of_the_repository
from .test_slurm import LOCAL_SLURM_ARGS, SLURM_SNAKEMAKE, elapsed_seconds, require_slurm, submitted_jobs

pytestmark = pytest.mark.slow


def test_sharded_generate_through_slurm_writes_the_single_process_index(tmp_path, capsys):
    """`ipcgrasp generate` as workflow/generate.smk jobs through sbatch (profiles/slurm): the
    records and index.csv equal a single-process run's but for creation stamps and timings."""
    require_slurm()
    import trimesh
    import yaml

    from ipcgrasp import GraspObject
    from ipcgrasp.dataset import generate_dataset

    work = copy_of_the_repository(tmp_path / "repo")
    mesh = tmp_path / "box.stl"
    trimesh.creation.box(extents=[0.03, 0.03, 0.03]).export(mesh)
    single = tmp_path / "single"
    generate_dataset(GraspObject.from_file(mesh, 0.003), single, 3, n_trials=1, seed=4, images=False, mesh=str(mesh))
    config = tmp_path / "generate.yaml"
    config.write_text(yaml.safe_dump({"mesh": str(mesh), "mass": 0.003, "n": 3, "trials": 1, "seed": 4,
                                      "images": False, "shard_size": 2, "out": str(tmp_path / "sharded")}))
    run = subprocess.run([*SLURM_SNAKEMAKE, "-s", "workflow/generate.smk", "--profile", "profiles/slurm",
                          *LOCAL_SLURM_ARGS, "--configfile", str(config)], cwd=work, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    log = run.stdout + run.stderr
    assert sorted(rule for rule, _ in submitted_jobs(log).values()) == ["generate_shard", "generate_shard"]
    sharded = tmp_path / "sharded"
    assert (sharded / "index.csv").read_bytes() == (single / "index.csv").read_bytes()
    for path in sorted(single.glob("grasp_*.json")):
        a, b = (json.loads((d / path.name).read_text()) for d in (single, sharded))
        for record in (a, b):
            record.pop("created")
            for trial in record["trials"]:
                trial.pop("wall_time")
        assert a == b, path.name
    with capsys.disabled():
        print(f"\nsharded generate through SLURM: 2 sbatch jobs, index.csv identical to one process's; "
              f"wall time {elapsed_seconds(log)} s")
