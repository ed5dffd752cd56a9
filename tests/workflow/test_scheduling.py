"""`./run.sh study` runs `snakemake --cores 2`: at most two simulation jobs share the machine's two
cores, so the wall time each trial records is one core's. snakemake 9.10-9.16 broke that: after a
round in which it selected a single job it released cores it had never reserved, and the study ran
three or four jobs at once on two cores (snakemake issue 3913). This runs the study's pattern in
miniature: quick local rules beside a simulation job, then a batch of one-thread jobs."""

import subprocess
import sys
from pathlib import Path

import pytest

SNAKEMAKE = Path(sys.executable).with_name("snakemake")

SNAKEFILE = """
localrules: all, manifest, split, meshes

rule all:
    input: expand("cell{i}", i=range(6))

rule manifest:
    output: "manifest"
    shell: "sleep 0.5; touch {output}"

rule split:
    input: "manifest"
    output: "split"
    shell: "sleep 0.5; touch {output}"

rule meshes:
    input: "split"
    output: "meshes"
    shell: "sleep 0.5; touch {output}"

rule calibration:
    output: "calibration"
    threads: 1
    shell: "sleep 1; touch {output}"

rule grid_cell:
    input: "meshes", "calibration"
    output: "cell{i}"
    threads: 1
    shell: "date +%s.%N > {output}; sleep 2; date +%s.%N >> {output}"
"""


@pytest.mark.slow
def test_the_study_s_scheduler_never_runs_more_jobs_than_cores(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    run = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    spans = [tuple(map(float, (tmp_path / f"cell{i}").read_text().split())) for i in range(6)]
    busiest = max(sum(start <= t < end for start, end in spans) for t, _ in spans)
    assert busiest == 2, f"{busiest} jobs ran at once on --cores 2 (spans {spans})"
