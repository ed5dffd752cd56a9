"""Runtime vs mesh resolution: one grasp with the object mesh subdivided k times (snakemake script)."""

import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import load_study_object, resolution_cell, study_params
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p = sm.params
params = study_params(p.sim, E=p.E, mu=p.mu, jaw=p.jaw, close_rule="force")
obj, physical = load_study_object(p.data_dir, p.object, load_registry(sm.input.registry))
grasp = load_split(sm.input.split)["training"][p.object][0]
cell = resolution_cell(obj, physical, grasp, p.subdivisions, params, p.trials, p.seed,
                       scalars={"object": p.object, "jaw": p.jaw, "rule": "force", "E": p.E, "mu": p.mu},
                       attrs={**provenance_attrs(sm.config, p.seed), "stage": "benchmarks"}, log=print, gripper=p.gripper)
write_netcdf_atomic(cell, sm.output[0])
