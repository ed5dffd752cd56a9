"""Merge the simulator's held-out cells into results/evaluation/ipcgrasp.nc (snakemake script)."""

import sys

from ipcgrasp.study.cube import merge_cells, read_cube, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
cube = merge_cells([read_cube(path) for path in sm.input], dims=("object",),
                   attrs={**provenance_attrs(sm.config, sm.params.seed), "stage": "evaluation"})
write_netcdf_atomic(cube, sm.output[0])
print(cube)
