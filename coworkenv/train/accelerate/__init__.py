"""Hardware profiles (docs/design/training.md, "Training"): named accelerate configs shipped with the package, one YAML
file each, for `accelerate launch --config_file`; `profiles.py` lists them and launches a job under one."""
