"""One baseline model (or always-success) on the held-out grasps, same trial seeds as the
simulator; a dynamic baseline with the setting its sweep chose (input `setting`) (snakemake
script)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.study.cube import merge_cells, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import best_params, load_study_object, predict_cell, predictor
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p, model = sm.params, sm.wildcards.model
with open(sm.input.best) as stream:
    params = best_params(p.sim, json.load(stream))
settings = {}
if "setting" in sm.input.keys():
    with open(sm.input.setting) as stream:
        settings = json.load(stream)["settings"]
print(params, f"{model} settings: {settings}", sep="\n")
predict = predictor(model, settings)
registry, split = load_registry(sm.input.registry), load_split(sm.input.split)
attrs = {**provenance_attrs(sm.config, p.seed), "stage": "evaluation"}
if settings:
    attrs["settings"] = json.dumps(settings)
cells = []
for name in p.objects:
    obj, physical = load_study_object(p.data_dir, name, registry)
    cells.append(predict_cell(predict, obj, physical, split["heldout"][name], params, p.trials, p.seed,
                              scalars={"model": model, "object": name}, attrs=attrs, log=print))
write_netcdf_atomic(merge_cells(cells, dims=("object",), attrs=attrs), sm.output[0])
