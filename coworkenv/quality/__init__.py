"""Great Expectations gates between pipeline stages: suites as code (`suites`), `run_gate()` over tables in memory and
`run_gate_files()` over stored ones, streamed (`gates`).

Importing this package does not import Great Expectations (~3 s); `run_gate` does, on first use.
"""

from coworkenv.quality.gates import FailedExpectation, GateFailed, GateResult, run_gate, run_gate_files, stages
from coworkenv.quality.suites import GATES, StageGate

__all__ = [
    "GATES",
    "FailedExpectation",
    "GateFailed",
    "GateResult",
    "StageGate",
    "run_gate",
    "run_gate_files",
    "stages",
]
