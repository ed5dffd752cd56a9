"""The study: paper-exact and per-grasp metrics (docs/data.md, "The paper's metric and the per-grasp metrics").

The names are imported on first use (PEP 562), so importing a light module of the package (what
the workflow's Snakefile imports to parse: `study.config`, `study.labels`, `study.split`,
`study.sweeps`) loads neither scipy nor xarray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ipcgrasp.study.metrics import (
        Estimate,
        average_precision,
        average_recall,
        correlation_with_interval,
        expand_trials,
        finite_pairs,
        paper_ap_ar_f1,
        per_grasp_metrics,
        spearman_with_interval,
    )

__all__ = [
    "Estimate",
    "average_precision",
    "average_recall",
    "correlation_with_interval",
    "expand_trials",
    "finite_pairs",
    "paper_ap_ar_f1",
    "per_grasp_metrics",
    "spearman_with_interval",
]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ipcgrasp.study import metrics

    value = getattr(metrics, name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
