"""The study: paper-exact and per-grasp metrics (docs/data.md, "The paper's metric and the per-grasp metrics")."""

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
