"""One grid job: the training grasps of one object at one (jaw, rule, E, mu), and with compliant
fingers (rule finger_cell, params.finger_stiffness in N/m) one job of the finger sweep (snakemake
script)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import load_study_object, psi_th_at, simulate_cell, study_params
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
wc, p = sm.wildcards, sm.params
settings = {"E": p.E, "mu": p.mu, "jaw": wc.jaw, "close_rule": wc.rule}
if wc.rule == "psi":
    with open(sm.input.psi_th) as stream:
        settings["psi_th"] = psi_th_at(json.load(stream), p.E_ref)
scalars = {"jaw": wc.jaw, "rule": wc.rule, "E": p.E, "mu": p.mu, "object": wc.object}
finger_stiffness = getattr(p, "finger_stiffness", None)  # only the finger sweep's cells have it
if finger_stiffness is not None:
    settings["finger_stiffness"] = scalars["finger_stiffness"] = finger_stiffness
params = study_params(p.sim, **settings)
print(params)
obj, physical = load_study_object(p.data_dir, wc.object, load_registry(sm.input.registry))
grasps = load_split(sm.input.split)["training"][wc.object]
cell = simulate_cell(obj, physical, grasps, params, p.trials, p.seed,
                     scalars=scalars, attrs={**provenance_attrs(sm.config, p.seed),
                                             "stage": "grid" if finger_stiffness is None else "fingers"},
                     log=print, gripper=p.gripper)
write_netcdf_atomic(cell, sm.output[0])
