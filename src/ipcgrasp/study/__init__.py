"""The study: paper-exact and per-grasp metrics (DESIGN.md section 5, DATA.md section 6)."""

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
