"""Evidence for the check-kind tests, and each registry hook called the way its consumer calls it.

States are copies of `rich_spec()`'s initial state changed by mutators; a hook gets the check as plain JSON data (as
the battery and the repairers hold it) and the rich spec as the task.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from coworkenv.checks import CHECKS, evaluate
from coworkenv.checks.base import Fixing, References
from coworkenv.episode.evidence import Evidence
from tests.support.builders import check, evidence, rich_spec, spec_dict

SPEC = rich_spec()

State = dict[str, Any]
Mutate = Callable[[State], None]
Build = Callable[[], Evidence]
Row = tuple[str, dict[str, Any], Build, Build]
"""(label, check fields, passing evidence, failing evidence)."""


# --- evidence ------------------------------------------------------------------------------------------------


def state(*mutations: Mutate) -> State:
    s = copy.deepcopy(SPEC.initial_state)
    for mutate in mutations:
        mutate(s)
    return s


def episode(*mutations: Mutate, calls: tuple = (), answer: str = "done", says: tuple[str, ...] = ()) -> Evidence:
    return evidence(SPEC, state(*mutations), calls=list(calls), answer=answer, says=says)


def with_state(*mutations: Mutate) -> Build:
    return lambda: episode(*mutations)


def with_calls(*calls) -> Build:
    return lambda: episode(calls=calls)


def with_answer(answer: str, says: tuple[str, ...] = ()) -> Build:
    return lambda: episode(answer=answer, says=says)


def unchanged_state() -> Evidence:
    return episode()


# --- state mutators ------------------------------------------------------------------------------------------


def set_file(path: str, content: str) -> Mutate:
    return lambda s: s["files"].__setitem__(path, content)


def del_file(path: str) -> Mutate:
    return lambda s: s["files"].pop(path)


def sent(**fields) -> Mutate:
    message = {
        "id": "m99",
        "folder": "sent",
        "from": "me@acme.test",
        "to": [],
        "cc": [],
        "subject": "",
        "body": "",
        "date": "2026-12-01T09:00:01Z",
    } | fields
    return lambda s: s["mail"]["messages"].append(copy.deepcopy(message))


def drafted(**fields) -> Mutate:
    """A draft the agent saved (`mail_draft`)."""
    return sent(**{"folder": "drafts", **fields})


def add_event(**fields) -> Mutate:
    event = {
        "id": "e99",
        "title": "",
        "start": "2026-12-09T14:00:00Z",
        "end": "2026-12-09T15:00:00Z",
        "attendees": [],
        "location": "",
    } | fields
    return lambda s: s["calendar"]["events"].append(copy.deepcopy(event))


def del_event(eid: str) -> Mutate:
    return lambda s: s["calendar"].__setitem__("events", [e for e in s["calendar"]["events"] if e["id"] != eid])


def move(mid: str, folder: str) -> Mutate:
    def mutate(s: State) -> None:
        next(m for m in s["mail"]["messages"] if m["id"] == mid)["folder"] = folder

    return mutate


def ticket(tid: str, **fields) -> Mutate:
    def mutate(s: State) -> None:
        next(t for t in s["tickets"]["tickets"] if t["id"] == tid).update(fields)

    return mutate


def cell(sheet: str, row: int, col: int, value: Any) -> Mutate:
    return lambda s: s["sheets"][sheet]["rows"][row].__setitem__(col, value)


def add_sheet(name: str, columns: list[str], rows: list[list[Any]]) -> Mutate:
    return lambda s: s["sheets"].__setitem__(name, {"columns": columns, "rows": rows})


# --- evaluation ----------------------------------------------------------------------------------------------


@contextmanager
def evidence_kept(*evs: Evidence) -> Iterator[None]:
    """Checks and hooks must leave the evidence alone: the spec's initial state is shared by every episode."""
    before = copy.deepcopy([(ev.initial_state, ev.final_state) for ev in evs])
    yield
    assert [(ev.initial_state, ev.final_state) for ev in evs] == before


def cases(rows: list[Row]) -> list[Any]:
    return [pytest.param(fields, passing, failing, id=label) for label, fields, passing, failing in rows]


def assert_pass_fail(fields: dict[str, Any], passing: Build, failing: Build) -> None:
    ch = check(**fields)
    yes_ev, no_ev = passing(), failing()
    with evidence_kept(yes_ev, no_ev):
        yes, reason_yes = evaluate(ch, yes_ev)
        no, reason_no = evaluate(ch, no_ev)
    assert yes is True, reason_yes
    assert no is False, reason_no
    assert isinstance(reason_no, str) and reason_no
    # pure: same evidence, same outcome
    assert evaluate(ch, passing()) == (yes, reason_yes)


def holds(fields: dict[str, Any], ev: Evidence) -> bool:
    return evaluate(check(**fields), ev)[0]


def only_after(fields: dict[str, Any], ev: Evidence) -> bool:
    """What a strengthened check must do: hold on the oracle's evidence and not on an untouched workspace."""
    return holds(fields, ev) and not holds(fields, unchanged_state())


# --- registry hooks ------------------------------------------------------------------------------------------

HOOKS = ("references", "recompute", "strengthen", "fix_reference", "leaks")


def registered(kind: str) -> dict[str, Any]:
    """The registry entry of a kind, less its model and evaluator: which hooks it has, and its flags."""
    entry = CHECKS.get(kind)
    return {
        "hooks": {h for h in HOOKS if getattr(entry, h) is not None},
        "guard": entry.guard,
        "answer": entry.answer,
        "evidence_for": set(entry.evidence_for),
    }


def as_data(fields: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"chk-{fields['kind']}", **fields}


def missing(
    fields: dict[str, Any], *oracle: Mutate, tools: list[str] | None = None, named_paths: tuple[str, ...] = ()
) -> list[tuple]:
    """(ref, problem, where suffix) the kind's `references` hook reports, against the initial state and, when
    mutators are given, the state the oracle leaves."""
    return references_of(check(**fields), *oracle, tools=tools, named_paths=named_paths)


def references_of(
    built: Any, *oracle: Mutate, tools: list[str] | None = None, named_paths: tuple[str, ...] = ()
) -> list[tuple]:
    """`missing` for a check model already built (e.g. with `model_construct`, as a spec that skipped validation)."""
    states = [SPEC.initial_state, *([state(*oracle)] if oracle else [])]
    refs = References(
        tools=frozenset(SPEC.tools if tools is None else tools), states=states, named_paths=frozenset(named_paths)
    )
    CHECKS.get(built.kind).references(built, refs)
    return refs.found


def _repair_hook(hook: str, fields: dict[str, Any], ev: Evidence, *extra: Any) -> Any:
    data = as_data(fields)
    original = copy.deepcopy(data)
    with evidence_kept(ev):
        result = getattr(CHECKS.get(fields["kind"]), hook)(data, ev, *extra)
    # the repairer keeps the check it passed in when the result is unusable, so the hook must not change it
    assert data == original
    return result


def recompute(fields: dict[str, Any], ev: Evidence, spec: Any = SPEC) -> Any:
    return _repair_hook("recompute", fields, ev, spec)


def strengthen(fields: dict[str, Any], ev: Evidence) -> dict[str, Any] | None:
    return _repair_hook("strengthen", fields, ev)


def fix(
    fields: dict[str, Any], *oracle: Mutate, entry: dict[str, Any] | None = None, **spec: Any
) -> tuple[str | None, dict[str, Any], Fixing]:
    """(why to drop it or None, the check as fixed in place, the Fixing with its notes and spec). The entry is the
    first one the `references` hook reports unless given; `spec` overrides the repaired spec's fields."""
    if entry is None:
        ref, problem, at = missing(fields, *oracle, tools=spec.get("tools"))[0]
        entry = {"where": f"checks[0]{at}", "ref": ref, "problem": problem, "kind": fields["kind"]}
    data = as_data(fields)
    fixing = Fixing(spec=spec_dict(**spec), states=lambda: [SPEC.initial_state, state(*oracle)])
    return CHECKS.get(fields["kind"]).fix_reference(data, entry, fixing), data, fixing


def leaked(fields: dict[str, Any], instruction: str, workspace: str = "") -> list[Any]:
    """What the kind's `leaks` hook finds in the instruction, as written there."""
    found = CHECKS.get(fields["kind"]).leaks(check(**fields), instruction, lambda: workspace.lower())
    return [f["found"] for f in found]
