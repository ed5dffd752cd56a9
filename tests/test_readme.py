"""The README's first grasp runs as printed and prints what the README shows: its command line
and its Python, each followed by the output it gives."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import reach_data

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def first_grasp_blocks() -> list[tuple[str, str]]:
    """The fenced blocks of the README's "Your first grasp" section, as (language, text)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Your first grasp\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def blocks(language: str) -> list[str]:
    return [body for lang, body in first_grasp_blocks() if lang == language]


def run(args, tmp_path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def without_wall_time(line: str) -> tuple[str, ...]:
    """A line's table cells, stripped, with a row's last cell, the trial's wall time, left out (it
    varies from run to run, and so does the padding rich gives the column)."""
    cells = tuple(cell.strip() for cell in line.strip().split("│"))
    return cells[:-2] if len(cells) > 2 and re.fullmatch(r"[\d.]+", cells[-2]) else cells


def test_the_readme_shows_one_command_two_outputs_and_the_python():
    assert [lang for lang, _ in first_grasp_blocks()] == ["bash", "text", "python", "text"]


def test_the_readme_command_line_prints_what_the_readme_shows(tmp_path):
    reach_data()
    [command] = blocks("bash")
    args = command.split()
    assert args[0] == ".venv/bin/ipcgrasp"
    out = run([sys.executable, "-m", "ipcgrasp", *args[1:]], tmp_path)
    printed = {without_wall_time(line) for line in out.splitlines()}
    shown = blocks("text")[0].strip().splitlines()
    for line in shown:
        assert without_wall_time(line) in printed, f"the README shows {line!r}; the command printed:\n{out}"


def test_the_readme_python_prints_what_the_readme_shows(tmp_path):
    reach_data()
    [code] = blocks("python")
    script = tmp_path / "first_grasp.py"
    script.write_text(code)
    out = run([sys.executable, "-W", "ignore", str(script)], tmp_path)
    assert out.strip() == blocks("text")[1].strip()
