"""Runtime tables: runtime vs mesh resolution and per-trial wall time (snakemake script)."""

import sys

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.study.cube import merge_cells, read_cube, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.tables import resolution_table, trial_time_table

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
cube = merge_cells([read_cube(path) for path in sm.input.resolution], dims=("subdivisions",),
                   attrs={**provenance_attrs(sm.config, sm.params.seed), "stage": "benchmarks"})
write_netcdf_atomic(cube, sm.output.cube)
resolution = resolution_table(cube)
write_bytes_atomic(sm.output.resolution, resolution.to_csv().encode())
cubes = {f"grid {jaw}": read_cube(path) for jaw, path in zip(sm.params.jaws, sm.input.grid)}
cubes["evaluation"] = read_cube(sm.input.evaluation)
trials = trial_time_table(cubes)
write_bytes_atomic(sm.output.trials, trials.to_csv(index=False).encode())
print(resolution.to_string(), trials.to_string(), sep="\n\n")
