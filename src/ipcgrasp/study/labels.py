"""Names the study's files and models are spelled with: grid values as they appear in file names
and the trivial predictor's name.

With no import beyond the standard library: the workflow's Snakefile (workflow/rules/common.smk)
imports it to parse, and every snakemake process, cluster jobs' included, parses it.
"""

from __future__ import annotations

ALWAYS_SUCCESS = "always_success"
"""Name of the trivial predictor that is always in the evaluation table (`runs.predictor`)."""


def value_label(value: float) -> str:
    """Short, exact text for a grid value in file names: 1e8 -> "1e8", 0.4 -> "0.4", 2.5e10 -> "2.5e10"."""
    v = float(value)
    if v != 0.0 and not 1e-3 <= abs(v) < 1e4:
        mantissa, exponent = f"{v:.12e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{v:.12g}"
