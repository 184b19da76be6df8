"""Models and training (docs/architecture.md, "Models"): the offline tiny model."""
