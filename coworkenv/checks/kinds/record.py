"""`record`: a record of a service's collection (found by `match`) has the expected `fields` (globs allowed).

The collection is the service's one (`tickets`/`tickets`) or one the task declares (`records`/`crm.customers`). A
field the record's JSON leaves out at its default (`workspace.records.sparse`) is read as that default."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, References, register_kind
from coworkenv.checks.matching import args_match, args_matcher, value_matches
from coworkenv.checks.text import glob_literal
from coworkenv.frozen import EMPTY_DICT
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.state import RECORD_SERVICES

RecordService = Literal[RECORD_SERVICES]  # type: ignore[valid-type]


class RecordCheck(CheckBase):
    kind: Literal["record"]
    service: RecordService
    collection: str
    match: dict[str, Any] = Field(min_length=1)
    fields: dict[str, Any] = EMPTY_DICT

    @model_validator(mode="after")
    def _collection(self) -> Self:
        problem = SERVICES.get(self.service).collection_error(self.collection)
        if problem:
            raise ValueError(problem)
        return self


def records_in(state: dict[str, Any], service: str, collection: str) -> list[dict[str, Any]]:
    """The collection's records in a workspace state ([] where it has no such collection), as readers see them:
    absent sparse fields at their defaults."""
    section = state.get(service)
    records = (SERVICES.get(service).records_of(section, collection) or []) if isinstance(section, dict) else []
    full = SERVICES.get(service).full_record
    return [full(r) if isinstance(r, dict) else r for r in records]


def matching_records(
    state: dict[str, Any], service: str, collection: str, match: dict[str, Any]
) -> list[dict[str, Any]]:
    """The collection's records that `match` selects, as readers see them (`records_in`, filtered). Only a record
    that `match` reads a sparse field of is filled before matching: grading runs this on every record."""
    section = state.get(service)
    svc = SERVICES.get(service)
    records = (svc.records_of(section, collection) or []) if isinstance(section, dict) else []
    sparse = match.keys() & svc.record_defaults.keys()
    matches = args_matcher(match)
    if not sparse:  # nothing to fill before matching (the usual case: `match` names an id, a title, …)
        return [svc.full_record(r) if isinstance(r, dict) else r for r in records if matches(r)]
    found = []
    for r in records:
        if not isinstance(r, dict):
            if matches(r):
                found.append(r)
        elif sparse <= r.keys():
            if matches(r):
                found.append(svc.full_record(r))
        elif matches(full := svc.full_record(r)):
            found.append(full)
    return found


def evaluate(check: RecordCheck, ev: Evidence) -> Outcome:
    matching = matching_records(ev.final_state, check.service, check.collection, check.match)
    if not matching:
        return False, f"no {check.collection} record matches {check.match}"
    fields = args_matcher(check.fields)
    for r in matching:
        if fields(r):
            return True, f"{check.collection} record {r.get('id')} has the expected fields"
    got = {k: matching[0].get(k) for k in check.fields}
    return False, f"{check.collection} record {matching[0].get('id')} has {got}, expected {check.fields}"


def references(check: RecordCheck, refs: References) -> None:
    def exists(state: dict[str, Any]) -> bool:
        section = state.get(check.service)
        return (
            isinstance(section, dict) and SERVICES.get(check.service).records_of(section, check.collection) is not None
        )

    def matches(state: dict[str, Any]) -> bool:
        return any(args_match(check.match, r) for r in records_in(state, check.service, check.collection))

    if not refs.in_any_state(exists):
        refs.miss(
            check.collection, f"{check.service} has no collection {check.collection!r}, initially or after the oracle"
        )
    elif not refs.in_any_state(matches):
        refs.miss(check.match, f"no {check.collection} record matches, initially or after the oracle")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Fields the oracle's record does not match take its values (literally, not as globs)."""
    records = records_in(ev.final_state, check["service"], check["collection"])
    matching = [r for r in records if args_match(check["match"], r)]
    if not matching:
        return DROP
    record = matching[0]
    fields = {
        k: v if value_matches(v, record[k]) and v == v else glob_literal(record[k])
        for k, v in check.get("fields", {}).items()
        if k in record
    }
    return {**check, "fields": fields}


def strengthen(check: dict[str, Any], oracle: Evidence) -> dict[str, Any] | None:
    """Also require what the oracle changed in the matching record."""
    service, collection = check["service"], check["collection"]
    before = {r.get("id"): r for r in records_in(oracle.initial_state, service, collection)}
    for r in records_in(oracle.final_state, service, collection):
        if args_match(check["match"], r) and before.get(r.get("id")) != r:
            old = before.get(r.get("id"), SERVICES.get(service).record_defaults)
            delta = {k: glob_literal(v) for k, v in r.items() if old.get(k) != v and k != "id"}
            return {**check, "fields": {**check.get("fields", {}), **delta}}
    return None


KIND = register_kind(
    CheckKind(
        name="record",
        model=RecordCheck,
        evaluate=evaluate,
        references=references,
        recompute=recompute,
        strengthen=strengthen,
    )
)
