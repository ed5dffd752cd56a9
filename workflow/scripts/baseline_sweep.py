"""Merge one dynamic baseline's sweep; its F1 and sensitivity tables and the chosen setting
(snakemake script)."""

import json
import sys

from ipcgrasp.documents import load_json
from ipcgrasp.io import write_bytes_atomic, write_json_atomic
from ipcgrasp.study.cube import read_cube, write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.split import load_split
from ipcgrasp.study.sweeps import (
    TIE_BREAK,
    choose_setting,
    merge_sweep,
    setting_text,
    sweep_caption,
    sweep_scores,
    sweep_settings,
    sweep_table,
)
from ipcgrasp.study.tables import markdown_table

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
model, p = sm.wildcards.model, sm.params
split = load_split(sm.input.split)
base = load_json(sm.input.best)
cube = merge_sweep([read_cube(path) for path in sm.input.cells], model,
                   attrs={**provenance_attrs(sm.config, p.seed), "stage": "baselines"})
cube.attrs.pop("settings", None)  # per cell; the merged cube's settings are its coordinates
write_netcdf_atomic(cube, sm.output.cube)
scores = sweep_scores(cube)
caption = sweep_caption(model, base, p.trials, split["description"])
f1 = sweep_table(scores)
write_bytes_atomic(sm.output.f1_csv, f1.to_csv().encode())
write_bytes_atomic(sm.output.f1_md,
                   markdown_table(f1, "Paper F1, rows stiffness, columns margin (m). " + caption).encode())
sensitivity = scores.set_index(["stiffness", "margin"])
write_bytes_atomic(sm.output.sensitivity_csv, sensitivity.to_csv().encode())
write_bytes_atomic(sm.output.sensitivity_md, markdown_table(sensitivity, caption).encode())
chosen = choose_setting(scores)
best = {"model": model, **chosen,
        "settings": sweep_settings(model, chosen["stiffness"], chosen["margin"], p.options),
        "setting_text": setting_text(model, chosen["stiffness"], chosen["margin"]),
        "base": {k: base[k] for k in ("E", "mu", "jaw", "rule", "psi_th")},
        "selected_on": "training grasps", "tie_break": TIE_BREAK, "split": split["description"]}
write_json_atomic(sm.output.best, best)
print(caption, sensitivity.to_string(), "best: " + json.dumps(best), sep="\n\n")
