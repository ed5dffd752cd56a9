"""The whole study on a user's own physical trials: a trials file made here (a 3 cm box, six
grasps x two trials, tests/conftest.py), `ipcgrasp data import` into resources/own_data of a copy
of the repository, then the smoke settings with config/own_data_example.yaml through the local
executor, as the README's own-data how-to says."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from ipcgrasp.cli import main

from .conftest import SNAKEMAKE, copy_of_the_repository

pytestmark = pytest.mark.slow


def test_the_whole_study_runs_on_imported_own_trials(own_trials, tmp_path, capsys):
    work = copy_of_the_repository(tmp_path / "repo")
    source, _ = own_trials(tmp_path / "lab")
    assert main(["data", "import", str(source), str(work / "resources" / "own_data")]) == 0
    run = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--configfile", "config/smoke.yaml",
                          "config/own_data_example.yaml"], cwd=work, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]

    split = json.loads((work / "results/split.json").read_text())
    assert split["kind"] == "grasp"  # one object: its grasps are split, stratified by physical robustness
    assert set(split["training"]) == set(split["heldout"]) == {"box_3cm"}
    assert not set(split["training"]["box_3cm"]) & set(split["heldout"]["box_3cm"])
    manifest = json.loads((work / "results/data/manifest.json").read_text())
    assert manifest["objects"]["box_3cm"] == {"mesh": True, "physical_grasps": True, "mass_kg": 0.003,
                                              "split": "heldout"}
    table = pd.read_csv(work / "results/evaluation/table.csv")
    assert "ipcgrasp" in set(table.iloc[:, 0]) | set(table.get("model", []))
    per_grasp = pd.read_csv(work / "results/evaluation/per_grasp.csv")
    assert set(per_grasp["grasp"]) <= set(split["heldout"]["box_3cm"])
    with capsys.disabled():
        print(f"\nown-data study: split {split['description']}\n{table.to_string(index=False)}")
