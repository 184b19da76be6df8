"""CoworkEnv: executable, verifiable training environments for tool-using coworker agents."""

__version__ = "0.1.0"

import logging as _logging

# The library logs per-stage summaries (Airflow's task log shows them); a program that configures no logging, such as
# the `coworkenv` command, which prints its own summaries, shows none of them, warnings included.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
