"""One Psi_th sensitivity job: the training grasps of one object under the psi rule with
factor x the calibrated Psi_th at E_ref (snakemake script)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import load_study_object, psi_th_at, simulate_cell, study_params
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p = sm.params
with open(sm.input.psi_th) as stream:
    psi_th = p.factor * psi_th_at(json.load(stream), p.E_ref)
params = study_params(p.sim, E=p.E_ref, mu=p.mu, jaw=p.jaw, close_rule="psi", psi_th=psi_th)
print(params)
obj, physical = load_study_object(p.data_dir, sm.wildcards.object, load_registry(sm.input.registry))
grasps = load_split(sm.input.split)["training"][sm.wildcards.object]
cell = simulate_cell(obj, physical, grasps, params, p.trials, p.seed,
                     scalars={"factor": p.factor, "object": sm.wildcards.object, "jaw": p.jaw, "rule": "psi",
                              "E": p.E_ref, "mu": p.mu},
                     attrs={**provenance_attrs(sm.config, p.seed), "stage": "psi_sensitivity"}, log=print, gripper=p.gripper)
write_netcdf_atomic(cell, sm.output[0])
