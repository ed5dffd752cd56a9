"""One Psi_th sensitivity job: the training grasps of one object under the psi rule with each
factor x the calibrated Psi_th at E_ref, one cell file per factor (snakemake's outputs, in the
order of params.factors); the factors of each trial share its simulation until both pads touch
the object (snakemake script)."""

import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import load_json
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import load_study_object, psi_th_at, simulate_cells, study_params
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p, name = sm.params, sm.wildcards.object
psi_th = psi_th_at(load_json(sm.input.psi_th), p.E_ref)
rules = [study_params(p.sim, E=p.E_ref, mu=p.mu, jaw=p.jaw, close_rule="psi", psi_th=factor * psi_th)
         for factor in p.factors]
for params in rules:
    print(params)
obj, physical = load_study_object(p.data_dir, name, load_registry(sm.input.registry))
grasps = load_split(sm.input.split)["training"][name]
scalars = [{"factor": factor, "object": name, "jaw": p.jaw, "rule": "psi", "E": p.E_ref, "mu": p.mu}
           for factor in p.factors]
cells = simulate_cells(obj, physical, grasps, rules, p.trials, p.seed, scalars=scalars,
                       attrs={**provenance_attrs(sm.config, p.seed), "stage": "psi_sensitivity"}, log=print,
                       gripper=p.gripper)
for cell, path in zip(cells, sm.output, strict=True):
    write_netcdf_atomic(cell, path)
