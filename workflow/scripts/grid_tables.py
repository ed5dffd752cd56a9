"""Grid F1 tables (paper Tables 3.1/3.2 shape), all scores, and the best setting (snakemake script)."""

import sys

from ipcgrasp.data.registry import load_registry
from ipcgrasp.io import write_bytes_atomic, write_json_atomic
from ipcgrasp.study.cube import read_cube
from ipcgrasp.study.split import load_split
from ipcgrasp.study.tables import (choose_best, f1_caption, f1_table, grid_scores, hold_margin_text, hold_margins,
                                   markdown_table)

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
p = sm.params
split = load_split(sm.input.split)
cubes = {jaw: read_cube(path) for jaw, path in zip(p.jaws, sm.input.cubes)}
scores = grid_scores(cubes)
masses = {name: info.mass for name, info in load_registry(sm.input.registry).items()}
write_bytes_atomic(sm.output.scores, scores.to_csv(index=False).encode())
for jaw in p.jaws:
    for rule in p.rules:
        table = f1_table(scores, jaw, rule)
        psi_th = scores[(scores.jaw == jaw) & (scores.rule == rule)].psi_th.max()
        margins = hold_margins(cubes[jaw].sel(rule=rule), masses)
        caption = f1_caption(jaw, rule, p.trials, split["description"], psi_th) + " " + hold_margin_text(margins)
        write_bytes_atomic(p.table.format(jaw=jaw, rule=rule, ext="csv"), table.to_csv().encode())
        write_bytes_atomic(p.table.format(jaw=jaw, rule=rule, ext="md"), markdown_table(table, caption).encode())
        print(caption, table.to_string(), sep="\n", end="\n\n")
best = {**choose_best(scores), "selected_on": "training grasps", "split": split["description"]}
write_json_atomic(sm.output.best, best)
print("best:", best)
