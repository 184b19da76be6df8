"""Evaluation (docs/architecture.md, "Evaluation"): benchmark suites, contamination, metrics with confidence intervals, reports."""
