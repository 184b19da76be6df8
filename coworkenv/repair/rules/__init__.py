"""Rule-based repairers, keyed by battery failure code.

A repairer is `fn(spec, outcome, context) -> patched spec | None`: it gets the spec as plain JSON data (it may not
even parse as a TaskSpec), the failing battery outcome and a `RepairContext`, and returns a new spec dict, or None
when it cannot fix the failure (it says why in `context.notes`). Repairers never trust the outcome's `details`
blindly: they re-run the oracle and an untouched ("Done.") episode themselves and work from that evidence, so
they hold even where the battery's details are terse. The loop (`repair.loop`) re-validates every patch.

Principles:
- The oracle is the ground truth only when it is *trusted*: every one of its own calls succeeded (injected
  faults aside). A check that disagrees with a trusted oracle is recomputed from the oracle's final state or
  answer; with an untrusted oracle nothing is recomputed and the task goes on to the LLM or is rejected.
- A check is dropped only when it is *safe*: another check that the untouched workspace fails remains.
- Every change is recorded in `context.notes` so that lineage says what was done and why.

What a repairer needs to know about one check kind lives with the kind (`coworkenv/checks/kinds/`): `recompute`,
`strengthen`, `fix_reference`, `guard`, `answer`; the repairers ask the registry and never name a kind.
"""

from coworkenv.repair.rules import calibration, instruction, oracle, references, spec_level, trivial  # noqa: F401  (register)
from coworkenv.repair.rules.common import REPAIRERS, RepairContext, Spec
from coworkenv.repair.rules.spec_level import non_finite, repair_determinism

__all__ = ["REPAIRERS", "RepairContext", "Spec", "non_finite", "repair_determinism"]
