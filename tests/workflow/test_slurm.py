"""The smoke study's jobs through a real SLURM: profiles/slurm with snakemake-executor-plugin-slurm
against the throw-away single-node cluster tests/workflow/local_slurm.sh starts. The study does not
run a second time: a copy of the finished local run (the `study` fixture, profiles/local-cluster)
loses the outputs of one job of every rule the Snakefile submits (RESUBMITTED: calibration, a Psi_th
sensitivity row, a grid row, a finger row, a baseline sweep cell, a held-out simulation part, a
held-out dynamic-baseline part, a resolution benchmark), and snakemake, asked for those outputs
through `--executor slurm`, plans exactly those jobs again, plus the local rules between them (the
grid's merge and tables, the penalty sweep).

It proves that every rule the study submits runs as an sbatch job that SLURM sees COMPLETED, that no
local rule is submitted, and that each job's outputs equal the local run's: the same verdicts, the
same numbers in every cube (xarray), the same tables. Timings (wall times, runtimes) and creation
stamps differ between any two runs and are left out.

Where no such cluster answers (a laptop), the test skips and says why; with
IPCGRASP_REQUIRE_SLURM=1 (set by .ci/run, which starts the cluster) it fails instead, so CI never
skips it silently."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ipcgrasp.study.cube import read_cube

from .conftest import run_smoke_study

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
START = "tests/workflow/local_slurm.sh start"
TEST_CLUSTER = "ipcgrasp-test"  # ClusterName in the slurm.conf local_slurm.sh writes
# profiles/slurm is the profile users edit; these describe the throw-away cluster: no accounting
# (so no `sacct` and no account to charge) and short status intervals.
LOCAL_SLURM_ARGS = ["--slurm-no-account", "--slurm-status-command", "squeue",
                    "--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1"]
# snakemake whose SLURM executor checks its jobs every second: the plugin's own back-off (10 s longer
# after each check that finds no job finished, whatever the flags above say) left finished jobs
# unnoticed for up to half a minute, about a quarter of this test's wall time
SLURM_SNAKEMAKE = (sys.executable, str(Path(__file__).with_name("snakemake_slurm_fast_poll.py")))
# the rules the Snakefile does not list in localrules: the ones sbatch must run
SUBMITTED_RULES = {"calibration", "psi_sensitivity_row", "grid_row", "finger_row", "baseline_cell",
                   "evaluation_simulation", "evaluation_dynamic", "benchmark_resolution"}
# rule -> an output of the job of that rule the test reruns through SLURM: where a rule has several
# jobs, a penalty one (a MuJoCo held-out part would also rerun the MuJoCo sweep cell, as the sweep's
# cells read the grid's best setting)
RESUBMITTED = {"calibration": "results/calibration/psi_th.json",
               "psi_sensitivity_row": "results/calibration/sensitivity/x2/cube_3cm.nc",
               "grid_row": "results/grid/rounded/psi/E1e8_mu0.4/cube_3cm.nc",
               "finger_row": "results/fingers/rounded/psi/k2000_E1e8_mu0.4/cube_3cm.nc",
               "baseline_cell": "results/baselines/penalty/stiffness1e5_margin5e-4.nc",
               "evaluation_simulation": "results/evaluation/ipcgrasp/cube_3cm/part0.nc",
               "evaluation_dynamic": "results/evaluation/penalty/cube_3cm/part1.nc",
               "benchmark_resolution": "results/benchmarks/resolution/sub0.nc"}
# the local rules between those jobs, whose inputs the rerun replaces: the grid's merge and tables
# (its best setting, which the sweep cell and the held-out jobs read) and the penalty sweep (its best
# setting, which the held-out penalty part reads)
RERUN_LOCALLY = {"grid_merge", "grid", "baseline_sweep"}
# what differs between any two runs of the same study: timings and creation stamps
TIMING_VARIABLES = {"wall_time", "grasp_wall_time", "runtime"}
TIMING_COLUMNS = {"runtime_s", "wall_time_s", "median_s", "mean_s", "max_s", "ms_per_newton_iteration"}
# when the cube was written, and the work tree's commit then (equal in CI; an edit during the test
# would mark one run's "+dirty")
RUN_ATTRS = {"created", "git_commit"}
VERDICTS = {"success", "failure_mode", "reason"}


def slurm_unavailable() -> str | None:
    """Why the test cannot run here, or None when the throw-away test cluster takes jobs."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')"
    missing = [tool for tool in ("sbatch", "squeue", "scontrol", "sinfo") if shutil.which(tool) is None]
    if missing:
        return (f"no SLURM client here ({', '.join(missing)} not on PATH); as root: apt-get install slurmctld "
                f"slurmd slurm-client munge && eval \"$({START})\"")
    config = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=30)
    if config.returncode != 0:
        last = (config.stderr.strip().splitlines() or ["no output"])[-1]
        return f"no SLURM controller answers ({last}); as root: eval \"$({START})\""
    cluster = re.search(r"^ClusterName\s*=\s*(\S+)", config.stdout, re.MULTILINE)
    if cluster is None or cluster.group(1) != TEST_CLUSTER:
        return (f"the SLURM here is cluster {cluster.group(1) if cluster else '?'}, not the throw-away "
                f"{TEST_CLUSTER} that {START} runs; this test submits only to that one")
    nodes = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30).stdout.split()
    if not any(state.rstrip("*~#") in ("idle", "mixed", "allocated", "completing") for state in nodes):
        return f"the {TEST_CLUSTER} cluster has no node up (sinfo: {' '.join(nodes) or 'nothing'})"
    return None


def require_slurm() -> None:
    """Skip the test, saying why, where the throw-away cluster does not take jobs (fail instead
    with IPCGRASP_REQUIRE_SLURM=1)."""
    reason = slurm_unavailable()
    if reason is not None:
        if os.environ.get("IPCGRASP_REQUIRE_SLURM") == "1":
            pytest.fail(f"IPCGRASP_REQUIRE_SLURM=1 but SLURM is not usable: {reason}")
        pytest.skip(f"SLURM test skipped: {reason}")


def copy_of_the_study(work: Path, dest: Path) -> Path:
    """The finished study in `work`, results and snakemake's metadata included (file times kept, so
    snakemake finds it up to date), without the locks, incomplete markers and logs of its runs."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {"locks", "incomplete", "log"} & set(names) if Path(directory) == work / ".snakemake" else set()
    shutil.copytree(work, dest, symlinks=True, ignore=ignore)
    return dest


@pytest.fixture(scope="module")
def slurm_rerun(study, tmp_path_factory):
    """One job of every submitted rule rerun through `--executor slurm` (profiles/slurm) in a copy of
    the finished local study whose RESUBMITTED outputs are deleted: (work tree, log, wall time in s,
    the results files the run wrote, relative to results/)."""
    require_slurm()
    work = copy_of_the_study(study.work, tmp_path_factory.mktemp("slurm_study") / "repo")
    results = work / "results"
    before = {path: path.stat().st_mtime_ns for path in results.rglob("*") if path.is_file()}
    for output in RESUBMITTED.values():
        (work / output).unlink()
    start = time.monotonic()
    run = run_smoke_study(work, "--profile", "profiles/slurm", *LOCAL_SLURM_ARGS, *RESUBMITTED.values(), check=False,
                          snakemake=SLURM_SNAKEMAKE)
    wall_time = time.monotonic() - start
    if run.returncode != 0:  # the failed jobs' SLURM logs (kept by the plugin) say why
        job_logs = "".join(f"\n--- {path}\n{path.read_text()[-2000:]}"
                           for path in sorted((work / ".snakemake/slurm_logs").rglob("*.log")))
        pytest.fail(f"the smoke study's jobs through SLURM failed:\n{run.stdout[-3000:]}{run.stderr[-5000:]}{job_logs}")
    written = sorted(str(path.relative_to(results)) for path in results.rglob("*")
                     if path.is_file() and before.get(path) != path.stat().st_mtime_ns)
    return work, run.stdout + run.stderr, wall_time, written


def submitted_jobs(log: str) -> dict[int, tuple[str, int]]:
    """Snakemake job id -> (rule, SLURM job id) from the executor's log (the last submission of a job)."""
    rules = {int(m.group(2)): m.group(1) for m in re.finditer(r"^(?:local)?rule (\w+):\n(?:\s+.*\n)*?\s+jobid: (\d+)$",
                                                              log, re.MULTILINE)}
    return {int(job): (rules[int(job)], int(slurm_id))
            for job, slurm_id in re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", log)}


def elapsed_seconds(log: str) -> str:
    """Snakemake's "Elapsed time" in seconds, or "n/a" when the log lacks it."""
    match = re.search(r"Elapsed time: (\d+):(\d+):(\d+(?:\.\d+)?)", log)
    if match is None:
        return "n/a"
    return f"{3600 * int(match.group(1)) + 60 * int(match.group(2)) + float(match.group(3)):.0f}"


def test_one_job_of_every_submitted_rule_ran_as_a_slurm_job(slurm_rerun, capsys):
    work, log, wall_time, _ = slurm_rerun
    assert set(RESUBMITTED) == SUBMITTED_RULES
    jobs = submitted_jobs(log)
    by_rule = {}
    for rule, slurm_id in jobs.values():
        by_rule.setdefault(rule, []).append(slurm_id)
    planned = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^(\w+)\s+(\d+)$", log.split("Job stats:")[1].split("total")[0], re.MULTILINE)}
    # the deleted outputs' jobs and the local rules between them, nothing else of the finished study
    assert planned == {**dict.fromkeys(SUBMITTED_RULES, 1), **dict.fromkeys(RERUN_LOCALLY, 1)}
    assert {rule: len(ids) for rule, ids in by_rule.items()} == dict.fromkeys(SUBMITTED_RULES, 1)  # no local rule
    # SLURM itself knows every job and saw it complete (finished jobs stay in squeue for MinJobAge)
    ids = sorted(slurm_id for _, slurm_id in jobs.values())
    states = subprocess.run(["squeue", "-h", "-t", "all", "-j", ",".join(map(str, ids)), "-o", "%i %T"],
                            capture_output=True, text=True, timeout=30).stdout.split("\n")
    states = dict(line.split() for line in states if line.strip())
    assert all(states.get(str(i)) == "COMPLETED" for i in ids), states
    assert all((work / output).is_file() for output in RESUBMITTED.values())
    with capsys.disabled():
        print(f"\nSLURM: {len(jobs)} jobs of the smoke study submitted through sbatch, all COMPLETED in squeue; "
              f"wall time {wall_time:.0f} s")
        for job, (rule, slurm_id) in sorted(jobs.items(), key=lambda item: item[1][1]):
            print(f"  SLURM job {slurm_id:>4}  snakemake job {job:>3}  rule {rule}")


def compare_cube(path: str, a: xr.Dataset, b: xr.Dataset) -> bool:
    """Equal up to timings: verdicts exactly, numbers to 1e-9 relative, the same attributes.
    True when also identical (every number to the bit)."""
    timing = [name for name in TIMING_VARIABLES if name in a.data_vars]
    a, b = a.drop_vars(timing, errors="ignore"), b.drop_vars(timing, errors="ignore")
    for cube in (a, b):
        for name in RUN_ATTRS:
            cube.attrs.pop(name, None)
    assert set(a.data_vars) == set(b.data_vars), path
    verdicts = [name for name in VERDICTS if name in a.data_vars]
    xr.testing.assert_equal(a[verdicts], b[verdicts])
    xr.testing.assert_allclose(a, b, rtol=1e-9, atol=0)
    assert a.attrs == b.attrs, path
    return a.identical(b)


def compare_markdown(path: str, a: str, b: str) -> None:
    """Markdown tables: the same text with the timing columns cut out."""
    def without_timings(text: str) -> list[str]:
        lines, drop = [], set()
        for line in text.splitlines():
            if not line.startswith("|"):
                drop = set()  # between tables
            else:
                cells = [cell.strip() for cell in line.strip("|").split("|")]
                if not drop and TIMING_COLUMNS & set(cells):  # a header row
                    drop = {i for i, cell in enumerate(cells) if cell in TIMING_COLUMNS}
                line = "|".join(cell for i, cell in enumerate(cells) if i not in drop)
            lines.append(line)
        return lines
    assert without_timings(a) == without_timings(b), path


def test_the_slurm_jobs_outputs_equal_the_local_runs(slurm_rerun, study, capsys):
    slurm_work, slurm_log, _, written = slurm_rerun
    slurm_results, local_results = slurm_work / "results", study.work / "results"
    files = [name for name in written if Path(name).suffix in (".nc", ".csv", ".md", ".json")]
    # every resubmitted job's output written again (and the merges' results), by SLURM's jobs
    assert {str(Path(output).relative_to("results")) for output in RESUBMITTED.values()} <= set(files)
    assert {"grid/rounded.nc", "grid/best.json", "grid/scores.csv", "baselines/penalty.nc"} <= set(files)
    counts = dict.fromkeys((".nc", ".csv", ".md", ".json"), 0)
    identical = 0
    for name in files:
        a, b = local_results / name, slurm_results / name
        suffix = Path(name).suffix
        if suffix == ".nc":
            identical += compare_cube(name, read_cube(a), read_cube(b))
        elif suffix == ".csv":
            ta, tb = pd.read_csv(a), pd.read_csv(b)
            timing = [c for c in ta.columns if c in TIMING_COLUMNS]
            pd.testing.assert_frame_equal(ta.drop(columns=timing), tb.drop(columns=timing), rtol=1e-9, obj=name)
        elif suffix == ".md":
            compare_markdown(name, a.read_text(), b.read_text())
        else:
            ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
            if isinstance(ja, dict) and isinstance(jb, dict):
                ja, jb = ({k: v for k, v in d.items() if k not in TIMING_COLUMNS} for d in (ja, jb))
            assert ja == jb, name
        counts[suffix] += 1
    held_out = "evaluation/ipcgrasp/cube_3cm/part0.nc"
    local_eval, slurm_eval = read_cube(local_results / held_out), read_cube(slurm_results / held_out)
    assert np.array_equal(local_eval.success.values, slurm_eval.success.values)
    with capsys.disabled():
        print(f"\nSLURM jobs vs the local run: {counts['.nc']} NetCDF cubes (xarray: verdicts equal, numbers to "
              f"1e-9; {identical} of them identical but for timings), {counts['.csv']} CSV and {counts['.md']} "
              f"Markdown tables (timing columns left out), {counts['.json']} JSON files: equal; held-out "
              f"ipcgrasp verdicts {slurm_eval.success.values.ravel().astype(int).tolist()} both ways; wall time "
              f"(snakemake's Elapsed time) through SLURM {elapsed_seconds(slurm_log)} s")
