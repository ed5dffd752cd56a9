"""Merge one jaw's compliant-finger cells with the grid's rigid cells into results/fingers/{jaw}.nc
(snakemake script)."""

import sys

from ipcgrasp.study.cube import read_cube, write_netcdf_atomic
from ipcgrasp.study.fingers import merge_finger_cells
from ipcgrasp.study.provenance import provenance_attrs

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
cube = merge_finger_cells([read_cube(path) for path in sm.input.compliant],
                          [read_cube(path) for path in sm.input.rigid],
                          attrs={**provenance_attrs(sm.config, sm.params.seed), "stage": "fingers"})
write_netcdf_atomic(cube, sm.output[0])
print(cube)
