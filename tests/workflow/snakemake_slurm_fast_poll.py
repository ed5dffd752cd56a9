"""`snakemake ARGS` whose SLURM executor checks its jobs' states every POLL_SECONDS, for the tests
that run jobs on the throw-away cluster of local_slurm.sh (test_slurm.py, test_slurm_generate.py):
`python tests/workflow/snakemake_slurm_fast_poll.py ARGS` in place of `snakemake ARGS`.

snakemake-executor-plugin-slurm (2.x) waits --slurm-init-seconds-before-status-checks before a
status check only after a check that found a job finished; after one that found none, each wait
is 10 s longer than the last (up to 180 s), and no setting changes that step. On a real cluster
that spares slurmctld; on the test's one-node cluster, whose jobs take 20-40 s, the waits of
1, 11, 21, 31 s left a finished job unnoticed for up to 30 s, a quarter of test_slurm.py's rerun
(test_slurm_generate.py's two jobs of about 30 s were noticed 33 s or 64 s after submission).
Here no wait exceeds POLL_SECONDS (one `squeue` a second, on a cluster no one else uses).
Everything else is snakemake's and the plugin's own: every job is still submitted with sbatch and
its state read from squeue. profiles/slurm, for real clusters, keeps the plugin's back-off."""

import sys

from snakemake.cli import main
from snakemake_executor_plugin_slurm import Executor

POLL_SECONDS = 1

# the plugin sets this property (snakemake_interface_executor_plugins' RemoteExecutor) after every
# status check, and the executor sleeps that long before the next one
_interval = Executor.next_seconds_between_status_checks
if not isinstance(_interval, property) or _interval.fset is None:  # fail loudly should the plugin change
    raise RuntimeError("snakemake_executor_plugin_slurm.Executor.next_seconds_between_status_checks is no "
                       "settable property any more: update tests/workflow/snakemake_slurm_fast_poll.py")
Executor.next_seconds_between_status_checks = property(
    _interval.fget, lambda executor, seconds: _interval.fset(executor, min(seconds, POLL_SECONDS)))

if __name__ == "__main__":
    sys.exit(main())
