"""Scores of the compliant-finger sweep per (jaw, rule, E, mu, finger stiffness) (snakemake script)."""

import sys

from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.study.cube import read_cube
from ipcgrasp.study.fingers import finger_caption, finger_scores
from ipcgrasp.study.split import load_split
from ipcgrasp.study.tables import markdown_table

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
scores = finger_scores({jaw: read_cube(path) for jaw, path in zip(sm.params.jaws, sm.input.cubes)})
write_bytes_atomic(sm.output.scores, scores.to_csv(index=False).encode())
table = scores[["jaw", "rule", "E", "mu", "finger_stiffness", "success_rate", "paper_f1", "f1", "mcc"]]
caption = finger_caption(sm.params.trials, load_split(sm.input.split)["description"])
write_bytes_atomic(sm.output.table, markdown_table(table, caption, index=False).encode())
print(caption, table.to_string(), sep="\n")
