"""Write results/meshes/report.json (snakemake script: reads only the `snakemake` object)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.io import write_json_atomic
from ipcgrasp.study.runs import mesh_report

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
report = mesh_report(sm.params.data_dir, sm.params.objects, load_registry(sm.input.registry),
                     sm.params.pad_resolution, sm.params.gripper)
write_json_atomic(sm.output[0], report)
print(json.dumps(report, indent=2))
