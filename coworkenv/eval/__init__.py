"""Evaluation (docs/design/evaluation.md, "Evaluation"): benchmark suites, contamination, metrics with confidence intervals, reports."""
