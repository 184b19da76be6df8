"""Declarative check kinds: one module per kind in `kinds/` (its model, evaluator, references and repair hooks),
all registered in `CHECKS`. `Check` is the discriminated union of their models that `TaskSpec.checks` holds; group
kinds (`groups.py`) nest it, so their models are completed here, once, after every kind has registered.

Checks are data and pure functions of the evidence: nothing here runs an episode or imports the runtime.
"""

from typing import Annotated, Union

from pydantic import Field

from coworkenv.checks import kinds as _kinds  # noqa: F401  (registers every kind)
from coworkenv.checks.base import CHECKS, DROP, CheckBase, CheckKind, Evidence, Outcome
from coworkenv.checks.groups import evidence_of, is_answer, is_guard, members, walk

CHECK_KINDS: tuple[str, ...] = tuple(CHECKS.names())
CHECK_MODELS: tuple[type[CheckBase], ...] = tuple(kind.model for _, kind in CHECKS.items())

Check = Annotated[Union[CHECK_MODELS], Field(discriminator="kind")]  # noqa: UP007  (a union built from a tuple)

for _model in CHECK_MODELS:
    if not _model.__pydantic_complete__:  # a group: its `checks` field names `Check`
        _model.model_rebuild(_types_namespace={"Check": Check})


def evaluate(check: CheckBase, ev: Evidence) -> Outcome:
    """(passed, reason) of one check on one episode's evidence; passed is None when the check is not graded."""
    return CHECKS.get(check.kind).evaluate(check, ev)  # type: ignore[attr-defined]


__all__ = [
    "CHECKS",
    "CHECK_KINDS",
    "CHECK_MODELS",
    "DROP",
    "Check",
    "CheckBase",
    "CheckKind",
    "Evidence",
    "Outcome",
    "evaluate",
    "evidence_of",
    "is_answer",
    "is_guard",
    "members",
    "walk",
]
