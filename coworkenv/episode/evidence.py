"""Evidence: everything grading may look at, produced by an episode (live or replayed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from typing import Any

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.workspace.audit import AuditEntry
from coworkenv.workspace.snapshot import diff_states


@dataclass(frozen=True)
class Evidence:
    """Plain frozen dataclass rather than a pydantic model: built once per episode on the hot path."""

    task_id: str
    calls: tuple[AuditEntry, ...]
    """The audit log: every tool call, rejected and fault-injected ones included."""
    answer: str
    says: tuple[str, ...]
    """Assistant messages to the simulated user (the final answer excluded)."""
    user_rounds: int
    initial_state: dict[str, Any]
    final_state: dict[str, Any]
    final_hash: InitVar[str | None] = None
    """SHA-256 of the final state's canonical JSON. Read as `evidence.final_hash` (a property, like `diff`); left out,
    it is computed on first read: only the evidence hash needs it, and grading does not."""
    diff: InitVar[dict[str, Any] | None] = None
    """Per service, what changed (`diff_states`). Read as `evidence.diff` (the property below); left out, it is
    computed on first read: grading never reads it, only stored rollouts do."""
    texts: tuple[str, ...] = ()
    """The text of every assistant message in order, the final answer last: the `says`, the text that came with tool
    calls (empty ones left out) and the answer. Left empty, it is `(*says, answer)`."""
    written: InitVar[tuple[str, ...] | None] = None
    """The services that can differ (an episode's successful writes), in the order the diff lists them; None: all."""
    judge: Any = field(default=None, compare=False, repr=False)
    """The rubric judge the episode was played under (`checks.base.Judge`; None: none). Not part of what happened:
    no hash or stored record includes it."""
    final_json: InitVar[Callable[[], str] | None] = None
    """Makes the final state's canonical JSON for `final_hash` (an episode's `Prepared.state_json` reuses the
    unwritten sections' text); None: `canonical_json(final_state)`."""

    def __post_init__(
        self,
        final_hash: str | None,
        diff: dict[str, Any] | None,
        written: tuple[str, ...] | None,
        final_json: Callable[[], str] | None,
    ) -> None:
        if not self.texts:
            object.__setattr__(self, "texts", (*self.says, self.answer))
        self.__dict__["_final_hash"] = final_hash
        self.__dict__["_final_json"] = final_json
        self.__dict__["_diff"] = diff
        self.__dict__["_written"] = written

    def _final_hash(self) -> str:
        known = self.__dict__.get("_final_hash")
        if known is None:
            make = self.__dict__.get("_final_json")
            known = self.__dict__["_final_hash"] = content_hash(
                make() if make is not None else canonical_json(self.final_state)
            )
            self.__dict__["_final_json"] = None
        return known

    def _diff(self) -> dict[str, Any]:
        known = self.__dict__.get("_diff")
        if known is None:
            known = self.__dict__["_diff"] = diff_states(
                self.initial_state, self.final_state, self.__dict__.get("_written")
            )
        return known

    @property
    def narrated(self) -> bool:
        """Whether `texts` holds more than the `says` and the answer (text that came with tool calls)."""
        return self.texts != (*self.says, self.answer)

    @property
    def empty(self) -> bool:
        """No tool call, no message to the user, no answer: nothing was attempted."""
        return not self.calls and not self.says and not self.answer.strip()

    @property
    def evidence_hash(self) -> str:
        """Identifies the whole outcome; two runs of a deterministic task give the same hash. `texts` counts only
        where it adds text to the `says` and the answer, so the hash of every other run stays what it was."""
        # Kept in the instance by hand: `functools.cached_property` takes a lock on each first use (Python 3.11).
        known = self.__dict__.get("_evidence_hash")
        if known is None:
            known = self.__dict__["_evidence_hash"] = self._outcome_hash()
        return known

    def _outcome_hash(self) -> str:
        outcome: dict[str, Any] = {
            "calls": [c.to_dict() for c in self.calls],
            "answer": self.answer,
            "says": list(self.says),
            "user_rounds": self.user_rounds,
            "final_hash": self.final_hash,
        }
        if self.narrated:
            outcome["texts"] = list(self.texts)
        return content_hash(canonical_json(outcome))

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "calls": [c.to_dict() for c in self.calls],
            "answer": self.answer,
            "says": list(self.says),
            "texts": list(self.texts),
            "user_rounds": self.user_rounds,
            "final_hash": self.final_hash,
            "diff": self.diff,
            "evidence_hash": self.evidence_hash,
        }


# `final_hash` and `diff` are init-only arguments of the dataclass and, on the instance, these lazy properties: set
# once the class is built, so that the generated `__init__` (and `dataclasses.replace`) keep the arguments' defaults.
Evidence.final_hash = property(
    Evidence._final_hash, doc="SHA-256 of the final state's canonical JSON; made on first read."
)  # type: ignore[assignment,method-assign]
Evidence.diff = property(Evidence._diff, doc="Per service, what changed (`diff_states`); computed on first read.")  # type: ignore[assignment,method-assign]
