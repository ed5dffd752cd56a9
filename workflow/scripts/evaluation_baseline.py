"""One baseline model (or always-success) on the held-out grasps, same trial seeds as the
simulator; a dynamic baseline with the setting its sweep chose (input `setting`), on one part of
one object's grasps (wildcards object and part, split.grasp_part) (snakemake script)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import load_json
from ipcgrasp.study.cube import merge_cells, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import best_params, load_study_object, predict_cell, predictor
from ipcgrasp.study.split import grasp_part, load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p, model = sm.params, sm.wildcards.model
params = best_params(p.sim, load_json(sm.input.best))
settings = {}
if "setting" in sm.input.keys():
    settings = load_json(sm.input.setting)["settings"]
print(params, f"{model} settings: {settings}", sep="\n")
predict = predictor(model, settings)
registry, split = load_registry(sm.input.registry), load_split(sm.input.split)
attrs = {**provenance_attrs(sm.config, p.seed), "stage": "evaluation"}
if settings:
    attrs["settings"] = json.dumps(settings)
if "part" in sm.wildcards.keys():  # a dynamic baseline: one part of one object's grasps
    jobs = [(sm.wildcards.object, grasp_part(split["heldout"][sm.wildcards.object], int(sm.wildcards.part),
                                             p.parts))]
else:
    jobs = [(name, split["heldout"][name]) for name in p.objects]
cells = []
for name, grasps in jobs:
    obj, physical = load_study_object(p.data_dir, name, registry)
    cells.append(predict_cell(predict, obj, physical, grasps, params, p.trials, p.seed,
                              scalars={"model": model, "object": name}, attrs=attrs, log=print))
write_netcdf_atomic(cells[0] if "part" in sm.wildcards.keys() else merge_cells(cells, dims=("object",), attrs=attrs),
                    sm.output[0])
