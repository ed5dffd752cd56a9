"""The study: paper-exact and per-grasp metrics (docs/data.md, "The paper's metric and the per-grasp metrics").

The names are imported on first use (PEP 562), so importing a light module of the package (what
the workflow's Snakefile imports to parse: `study.config`, `study.labels`, `study.split`,
`study.sweeps`) loads neither scipy nor xarray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcgrasp.lazy import lazy_names

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

__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(__all__, "ipcgrasp.study.metrics"))
