"""Capability-guided task synthesis: procedural families, difficulty knobs, planner, LLM generator."""
