"""One grid job simulates a row of cells, one per mu: each file holds its own mu's trials."""

import re

import numpy as np
import pytest
import yaml

from ipcgrasp.study.cube import read_cube

from .conftest import REPO, copy_of_the_repository, run_smoke_study

pytestmark = pytest.mark.slow

MU = [0.4, 0.9]


def test_a_grid_row_writes_one_cell_per_mu_with_its_own_friction(tmp_path):
    work = copy_of_the_repository(tmp_path / "repo")
    config = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    config["grid"].update(mu=MU, rules=["force"])
    config["split"]["max_training_grasps"] = 1
    (work / "config/smoke.yaml").write_text(yaml.safe_dump(config))  # the copy's, which run_smoke_study uses
    cells = [f"results/grid/rounded/force/E1e8_mu{mu}/cube_3cm.nc" for mu in MU]
    run = run_smoke_study(work, "--cores", "1", *cells)
    log = run.stdout + run.stderr
    assert re.search(r"^grid_row\s+1$", log, re.MULTILINE), log[-3000:]  # one job for the row
    first, second = (read_cube(work / path) for path in cells)
    assert np.atleast_1d(first.mu.values).tolist() == [MU[0]] and np.atleast_1d(second.mu.values).tolist() == [MU[1]]
    np.testing.assert_array_equal(first.seed.values, second.seed.values)  # the same perturbed trials
    # each cell's trial ran at its own friction coefficient: the logged SimParams say so
    row_log = (work / "results/logs/grid/rounded/force/E1e8/cube_3cm.log").read_text()
    assert [float(m) for m in re.findall(r"SimParams\(.*?, mu=([0-9.]+),", row_log)] == MU
