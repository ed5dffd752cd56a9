"""One shard of a labelling run (snakemake script: reads only the `snakemake` object)."""

import sys

from ipcgrasp.dataset.shards import run_shard

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
summary = run_shard(sm.config, int(sm.wildcards.shard), log=print)
print(f"shard {summary['shard']}: grasps {summary['grasps']}, wrote {summary['written']}, "
      f"already there {summary['skipped']}, {summary['wall_time']:.1f} s")
