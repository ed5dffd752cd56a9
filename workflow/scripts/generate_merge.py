"""Merge a labelling run's shards into index.csv (snakemake script: reads only the `snakemake` object)."""

import sys

from ipcgrasp.dataset.shards import merge_shards

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
merged = merge_shards(sm.config["out"], list(sm.input))
print(f"{merged['records']} record(s) for {merged['candidates']} sampled grasp(s); index written")
