"""One grid job: the training grasps of one object at one (jaw, E) under every mu and close rule of
the row, one cell file per (mu, rule) (snakemake's outputs: mu-major, then params.rules); each trial
runs once for all of them while mu and the rule do not matter (`grasp.simulate.run_variants`).
With compliant
fingers (rule finger_row, params.finger_stiffness in N/m) one job of the finger sweep (snakemake
script)."""

import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import load_json
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import load_study_object, psi_th_at, simulate_cells, study_params
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
wc, p = sm.wildcards, sm.params
rule_settings = {"force": {"close_rule": "force"}}
if "psi" in p.rules:
    rule_settings["psi"] = {"close_rule": "psi", "psi_th": psi_th_at(load_json(sm.input.psi_th), p.E_ref)}
settings = {"E": p.E, "jaw": wc.jaw}
finger_stiffness = getattr(p, "finger_stiffness", None)  # only the finger sweep's rows have it
if finger_stiffness is not None:
    settings["finger_stiffness"] = finger_stiffness
obj, physical = load_study_object(p.data_dir, wc.object, load_registry(sm.input.registry))
grasps = load_split(sm.input.split)["training"][wc.object]
attrs = {**provenance_attrs(sm.config, p.seed), "stage": "grid" if finger_stiffness is None else "fingers"}
variants = [study_params(p.sim, **settings, **rule_settings[rule], mu=mu) for mu in p.mu for rule in p.rules]
for params in variants:
    print(params)
scalars = [{"jaw": wc.jaw, "rule": rule, "E": p.E, "mu": mu, "object": wc.object} for mu in p.mu for rule in p.rules]
if finger_stiffness is not None:
    scalars = [{**s, "finger_stiffness": finger_stiffness} for s in scalars]
cells = simulate_cells(obj, physical, grasps, variants, p.trials, p.seed, scalars=scalars, attrs=attrs, log=print,
                       gripper=p.gripper)
for cell, path in zip(cells, sm.output, strict=True):
    write_netcdf_atomic(cell, path)
