"""One grid job simulates a row of cells, one per (mu, close rule): each file holds its own mu's
and rule's trials."""

import re

import numpy as np
import pytest
import yaml

from ipcgrasp.study.cube import read_cube

from .conftest import REPO, copy_of_the_repository, run_smoke_study

pytestmark = pytest.mark.slow

MU = [0.4, 0.9]
RULES = ["psi", "force"]


def test_a_grid_row_writes_one_cell_per_mu_and_rule_with_its_own_settings(tmp_path):
    work = copy_of_the_repository(tmp_path / "repo")
    config = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    config["grid"].update(mu=MU, rules=RULES)
    config["split"]["max_training_grasps"] = 1
    (work / "config/smoke.yaml").write_text(yaml.safe_dump(config))  # the copy's, which run_smoke_study uses
    cells = {(mu, rule): f"results/grid/rounded/{rule}/E1e8_mu{mu}/cube_3cm.nc" for mu in MU for rule in RULES}
    run = run_smoke_study(work, "--cores", "1", *cells.values())
    log = run.stdout + run.stderr
    assert re.search(r"^grid_row\s+1$", log, re.MULTILINE), log[-3000:]  # one job for the row
    seeds = None
    for (mu, rule), path in cells.items():
        cell = read_cube(work / path)
        assert np.atleast_1d(cell.mu.values).tolist() == [mu] and np.atleast_1d(cell.rule.values).tolist() == [rule]
        assert np.isfinite(cell.psi_th.values).all() == (rule == "psi")
        seeds = cell.seed.values if seeds is None else seeds
        np.testing.assert_array_equal(cell.seed.values, seeds)  # the same perturbed trials
    # each cell's trials ran at its own friction coefficient and close rule: the logged SimParams say so
    row_log = (work / "results/logs/grid/rounded/E1e8/cube_3cm.log").read_text()
    logged = re.findall(r"SimParams\(.*?, mu=([0-9.]+),.*?close_rule='(\w+)'", row_log)
    assert [(float(mu), rule) for mu, rule in logged] == list(cells)
