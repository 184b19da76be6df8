"""Importers: tasks written for other benchmarks, converted into TaskSpecs (docs/design/evaluation.md, "Importing
Claw-Eval tasks"). An importer reads its input as data (never runs its code) and reports what it could not express."""
