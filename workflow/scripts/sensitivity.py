"""Merge the Psi_th sensitivity cells; its table (snakemake script)."""

import sys

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.study.cube import merge_cells, read_cube, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.split import load_split
from ipcgrasp.study.tables import markdown_table, sensitivity_table

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
cube = merge_cells([read_cube(path) for path in sm.input.cells], dims=("factor", "object"),
                   attrs={**provenance_attrs(sm.config, sm.params.seed), "stage": "psi_sensitivity"})
write_netcdf_atomic(cube, sm.output.cube)
table = sensitivity_table(cube)
write_bytes_atomic(sm.output.csv, table.to_csv().encode())
caption = (f"Psi_th sensitivity on the training grasps (psi rule, jaw {cube.jaw.item()}, E = {cube.E.item():g} Pa, "
           f"mu = {cube.mu.item():g}, {cube.sizes['trial']} trial(s) per grasp); psi_th in J, forces at closing "
           f"in N (mean over trials that closed). {load_split(sm.input.split)['description']}")
write_bytes_atomic(sm.output.md, markdown_table(table, caption).encode())
print(table.to_string())
