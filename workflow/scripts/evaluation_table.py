"""The held-out evaluation table (CSV + Markdown) (snakemake script)."""

import sys

from ipcgrasp.documents import load_json
from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.study.cube import read_cube
from ipcgrasp.study.split import load_split
from ipcgrasp.study.tables import evaluation_caption, evaluation_table, markdown_table, with_intervals

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p = sm.params
best = load_json(sm.input.best)
table = evaluation_table({m: read_cube(path) for m, path in zip(p.models, sm.input.cubes)}, p.n_boot, p.seed)
write_bytes_atomic(sm.output.csv, table.to_csv().encode())
baselines = {}
for model, path in zip(p.swept, sm.input.settings):
    baselines[model] = load_json(path)
caption = evaluation_caption(best, p.trials, p.n_boot, load_split(sm.input.split)["description"], baselines)
write_bytes_atomic(sm.output.md, markdown_table(with_intervals(table), caption).encode())
print(caption, table.to_string(), sep="\n")
