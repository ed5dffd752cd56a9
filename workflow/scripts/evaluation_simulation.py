"""The simulator on one part of one object's held-out grasps (split.grasp_part) with the best training
setting (snakemake script)."""

import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import load_json
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import best_params, load_study_object, simulate_cell
from ipcgrasp.study.split import grasp_part, load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p, name = sm.params, sm.wildcards.object
best = load_json(sm.input.best)
params = best_params({**p.sim, "critical_mass": p.critical_mass}, best)
print(params)
obj, physical = load_study_object(p.data_dir, name, load_registry(sm.input.registry))
grasps = grasp_part(load_split(sm.input.split)["heldout"][name], int(sm.wildcards.part), p.parts)
cell = simulate_cell(obj, physical, grasps, params, p.trials, p.seed,
                     scalars={"model": "ipcgrasp", "object": name, "jaw": params.jaw, "rule": params.close_rule,
                              "E": params.E, "mu": params.mu},
                     attrs={**provenance_attrs(sm.config, p.seed), "stage": "evaluation"}, log=print, gripper=p.gripper)
write_netcdf_atomic(cell, sm.output[0])
