"""CoworkEnv: executable, verifiable training environments for tool-using coworker agents."""

__version__ = "0.1.0"
