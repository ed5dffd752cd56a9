"""One grid job: the training grasps of one object at one (jaw, rule, E) and every mu of the
row, one cell file per mu (snakemake's outputs, in the order of params.mu); with compliant
fingers (rule finger_row, params.finger_stiffness in N/m) one job of the finger sweep (snakemake
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
settings = {"E": p.E, "jaw": wc.jaw, "close_rule": wc.rule}
if wc.rule == "psi":
    with open(sm.input.psi_th) as stream:
        settings["psi_th"] = psi_th_at(json.load(stream), p.E_ref)
finger_stiffness = getattr(p, "finger_stiffness", None)  # only the finger sweep's rows have it
if finger_stiffness is not None:
    settings["finger_stiffness"] = finger_stiffness
obj, physical = load_study_object(p.data_dir, wc.object, load_registry(sm.input.registry))
grasps = load_split(sm.input.split)["training"][wc.object]
attrs = {**provenance_attrs(sm.config, p.seed), "stage": "grid" if finger_stiffness is None else "fingers"}
for mu, path in zip(p.mu, sm.output, strict=True):
    params = study_params(p.sim, **settings, mu=mu)
    print(params)
    scalars = {"jaw": wc.jaw, "rule": wc.rule, "E": p.E, "mu": mu, "object": wc.object}
    if finger_stiffness is not None:
        scalars["finger_stiffness"] = finger_stiffness
    cell = simulate_cell(obj, physical, grasps, params, p.trials, p.seed, scalars=scalars, attrs=attrs, log=print,
                         gripper=p.gripper)
    write_netcdf_atomic(cell, path)
