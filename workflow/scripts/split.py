"""Write results/split.json (snakemake script: reads only the `snakemake` object)."""

import sys

from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.data.registry import load_registry
from ipcgrasp.io import write_json_atomic
from ipcgrasp.study.split import make_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
physical = {name: load_physical_grasps(sm.params.data_dir, name).robustness for name in sm.params.objects}
split = make_split(physical, load_registry(sm.input.registry), seed=sm.params.seed, **sm.params.split)
write_json_atomic(sm.output[0], split)
print(split["description"])
