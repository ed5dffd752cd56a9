"""The whole study on a user's own physical trials: a trials file made here (a 3 cm box, six
grasps x two trials, tests/conftest.py), `ipcgrasp data import` into resources/own_data of a copy
of the repository, then the smoke settings with config/own_data_example.yaml through the local
executor, as docs/own_data.md says."""

import json
import re

import pandas as pd
import pytest

from ipcgrasp.cli import main
from ipcgrasp.study.cube import read_cube

from .conftest import SNAKEMAKE_FORKS, copy_of_the_repository

pytestmark = pytest.mark.slow


def test_the_whole_study_runs_on_imported_own_trials(own_trials, tmp_path, capsys):
    work = copy_of_the_repository(tmp_path / "repo")
    source, doc = own_trials(tmp_path / "lab")
    assert main(["data", "import", str(source), str(work / "resources" / "own_data")]) == 0
    run = SNAKEMAKE_FORKS.run(["--cores", "2", "--configfile", "config/smoke.yaml", "config/own_data_example.yaml"],
                              cwd=work, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]

    split = json.loads((work / "results/split.json").read_text())
    assert split["kind"] == "grasp"  # one object: its grasps are split, stratified by physical robustness
    assert set(split["training"]) == set(split["heldout"]) == {"box_3cm"}
    assert not set(split["training"]["box_3cm"]) & set(split["heldout"]["box_3cm"])
    manifest = json.loads((work / "results/data/manifest.json").read_text())
    assert manifest["objects"]["box_3cm"] == {"mesh": True, "physical_grasps": True, "mass_kg": 0.003,
                                              "split": "heldout"}
    # the imported labels reach the study: the held-out cube carries the trials file's results
    labels = {g: [t["success"] for t in doc["trials"] if t["grasp"] == g] for g in {t["grasp"] for t in doc["trials"]}}
    held_out = read_cube(work / "results/evaluation/ipcgrasp.nc").sel(object="box_3cm")
    assert held_out.grasp.values.tolist() == split["heldout"]["box_3cm"]
    assert held_out.physical_success.values.astype(int).tolist() == [labels[g] for g in held_out.grasp.values]
    grid = read_cube(work / "results/grid/rounded.nc")
    assert sorted(grid.grasp.values.tolist()) == split["training"]["box_3cm"]
    best = json.loads((work / "results/grid/best.json").read_text())
    table = pd.read_csv(work / "results/evaluation/table.csv").set_index("model")
    assert {"ipcgrasp", "always_success"} <= set(table.index)
    assert (table["n_grasps"] == len(split["heldout"]["box_3cm"])).all()
    elapsed = re.search(r"Elapsed time: (\S+)", run.stdout + run.stderr)
    with capsys.disabled():
        print(f"\nown-data study (smoke settings): {elapsed.group(1) if elapsed else '?'} with --cores 2; "
              f"{split['description']}\ngrid: verdicts {grid.success.values.astype(int).ravel().tolist()} "
              f"(failure modes {grid.failure_mode.values.ravel().tolist()}); best {best}\nheld-out ipcgrasp "
              f"success {held_out.success.values.astype(int).ravel().tolist()} vs physical "
              f"{held_out.physical_success.values.astype(int).tolist()}\n"
              + table[["success_rate", "paper_f1", "f1", "mae", "mcc"]].to_string())


def test_the_study_command_the_import_prints_plans_for_another_gripper(own_trials, tmp_path, capsys):
    """For trials recorded with the Franka hand the printed command sets `gripper` and
    `evaluation={models: []}` (the baselines model the YuMi's pads only); snakemake accepts it
    (a dry run parses the workflow, which checks the config against the import's gripper)."""
    import shlex

    from .conftest import dry_run

    source, doc = own_trials(tmp_path / "lab")
    for trial in doc["trials"]:
        trial["gripper"] = "franka_hand"
    source.write_text(json.dumps(doc))
    assert main(["data", "import", str(source), str(tmp_path / "own")]) == 0
    command = shlex.split(capsys.readouterr().out.splitlines()[-1])
    assert command[:2] == ["./run.sh", "study"] and "gripper=franka_hand" in command
    result = dry_run(*command[2:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "evaluation_simulation" in result.stdout
