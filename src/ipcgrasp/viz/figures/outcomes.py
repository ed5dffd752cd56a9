"""One colour per trial outcome, the same in every study figure: success green, each simulator
failure mode and each baseline outcome category its own colour."""

from __future__ import annotations

from ipcgrasp.study.cube import FAILURE_FLAG_MEANINGS

SUCCESS_COLOUR = "tab:green"
OUTCOME_COLOURS = {
    "success": SUCCESS_COLOUR,
    "miss": "tab:orange",
    "graze": "navajowhite",
    "pushed_out": "tab:purple",
    "stall": "tab:brown",
    "end_of_travel": "rosybrown",
    "unequal_effort": "darkkhaki",
    "jaws_meet": "tab:pink",
    "slip": "tab:red",
    "solver": "black",
    "unbalanced": "tab:olive",
    "no_clearance": "tab:cyan",
    "collision": "tab:blue",
    "predicted_failure": "tab:gray",
    "error": "gold",
}
"""Outcome category (`study.tables.trial_outcomes`) -> matplotlib colour."""



def outcome_label(flag_meaning: str) -> str:
    """The outcome category of a failure_mode flag meaning: "none" (flag 0) is a success."""
    return "success" if flag_meaning == "none" else flag_meaning


def outcome_colour(category: str) -> str:
    """The colour of an outcome category (`outcome_label` of a flag meaning, or a baseline's)."""
    return OUTCOME_COLOURS.get(category, "tab:gray")


assert all(outcome_label(m) in OUTCOME_COLOURS for m in FAILURE_FLAG_MEANINGS), "every failure mode needs a colour"
