"""Repair: turn battery feedback into patched specs (rule-based first, then an LLM), with lineage."""
