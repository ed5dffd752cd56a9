"""docs/own_data.md's worked example runs as printed: its Python, pasted into a fresh folder,
writes the trials file the test suite's `own_trials` builds, and its `data import` command prints
what the page shows."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "own_data.md"


def worked_example() -> list[tuple[str, str]]:
    """The fenced blocks of the page's "A worked example" section, as (language, text)."""
    section = PAGE.read_text(encoding="utf-8").split("\n## A worked example\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def run(args, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_worked_example_runs_as_printed_in_a_fresh_folder(tmp_path, own_trials):
    [(python_lang, code), (bash_lang, session)] = worked_example()
    assert (python_lang, bash_lang) == ("python", "bash")
    (tmp_path / "example.py").write_text(code)
    run([sys.executable, "-W", "ignore", "example.py"], tmp_path)  # no folder made beforehand
    written = json.loads((tmp_path / "lab" / "trials.json").read_text())
    _, expected = own_trials(tmp_path / "suite")
    assert written == expected

    commands = [line[2:] for line in session.splitlines() if line.startswith("$ ")]
    shown = [line for line in session.splitlines() if line and not line.startswith("$ ")]
    assert commands[0].startswith(".venv/bin/ipcgrasp data import ")
    assert commands[1].startswith("./run.sh study ")  # the whole study: tests/workflow/test_own_data.py
    out = run([sys.executable, "-m", "ipcgrasp", *commands[0].split()[1:]], tmp_path).splitlines()
    assert len(out) >= len(shown)
    for line, printed in zip(shown, out):
        assert printed.startswith(line.removesuffix("...").rstrip()), (line, printed)
