"""Validation: the sandboxed battery that proves every task by running it."""
