"""Join the parts of the held-out jobs of the simulator or a dynamic baseline per object (in the
split's grasp order) and merge the objects into results/evaluation/{model}.nc (snakemake script)."""

import sys
from collections import defaultdict
from pathlib import Path

from ipcgrasp.study.cube import join_parts, merge_cells, read_cube, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
heldout = load_split(sm.input.split)["heldout"]
parts = defaultdict(list)
for path in sm.input.parts:  # results/evaluation/{model}/{object}/part{part}.nc
    parts[Path(path).parent.name].append(read_cube(path))
cells = [join_parts(cells, heldout[name]) for name, cells in parts.items()]
cube = merge_cells(cells, dims=("object",), attrs={**provenance_attrs(sm.config, sm.params.seed), "stage": "evaluation"})
write_netcdf_atomic(cube, sm.output[0])
print(cube)
