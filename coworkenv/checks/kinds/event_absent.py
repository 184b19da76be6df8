"""`event_absent`: no event with this id (or title part) after the episode.

The contract names the event by `id` or `title_contains`; `id` is also the check's own id, so `event_id` names the
event explicitly, and without either the check's `id` is taken as the event id.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, References, outcome, register_kind


class EventAbsent(CheckBase):
    kind: Literal["event_absent"]
    event_id: str | None = None
    title_contains: str | None = None

    @model_validator(mode="after")
    def _not_both(self) -> Self:
        if self.event_id is not None and self.title_contains is not None:
            raise ValueError("give at most one of event_id, title_contains")
        return self

    @property
    def target_id(self) -> str | None:
        if self.title_contains is not None:
            return None
        return self.event_id if self.event_id is not None else self.id


def evaluate(check: EventAbsent, ev: Evidence) -> Outcome:
    events = ev.final_state["calendar"]["events"]
    if check.target_id is not None:
        present = [e["id"] for e in events if e["id"] == check.target_id]
    else:
        title = (check.title_contains or "").lower()
        present = [e["id"] for e in events if title in e["title"].lower()]
    return outcome(not present, "no such event", f"event(s) still present: {', '.join(present)}")


def references(check: EventAbsent, refs: References) -> None:
    target = check.target_id
    if target is not None and not refs.in_any_state(
        lambda s: any(e.get("id") == target for e in s.get("calendar", {}).get("events", []))
    ):
        refs.miss(target, "event id exists neither initially nor after the oracle: the check holds trivially")


KIND = register_kind(CheckKind(name="event_absent", model=EventAbsent, evaluate=evaluate, references=references))
