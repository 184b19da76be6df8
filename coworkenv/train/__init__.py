"""Models and training (docs/design/training.md, "Models"): the offline tiny model."""
