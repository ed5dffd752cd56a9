"""One sweep job: a dynamic baseline at one (stiffness, margin) on the training grasps, with the
simulator's best training setting and trial seeds (snakemake script)."""

import json
import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import load_json
from ipcgrasp.study.cube import merge_cells, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import best_params, load_study_object, predict_cell, predictor
from ipcgrasp.study.split import load_split

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p, wc = sm.params, sm.wildcards
params = best_params(p.sim, load_json(sm.input.best))
predict = predictor(wc.model, p.settings)
print(params, f"{wc.model} settings: {dict(p.settings)}", sep="\n")
registry, split = load_registry(sm.input.registry), load_split(sm.input.split)
attrs = {**provenance_attrs(sm.config, p.seed), "stage": "baselines", "settings": json.dumps(dict(p.settings))}
scalars = {"model": wc.model, "stiffness": float(wc.stiffness), "margin": float(wc.margin)}
cells = []
for name in p.objects:
    obj, physical = load_study_object(p.data_dir, name, registry)
    cells.append(predict_cell(predict, obj, physical, split["training"][name], params, p.trials, p.seed,
                              scalars={**scalars, "object": name}, attrs=attrs, log=print))
write_netcdf_atomic(merge_cells(cells, dims=("object",), attrs=attrs), sm.output[0])
