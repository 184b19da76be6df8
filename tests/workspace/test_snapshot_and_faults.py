"""Snapshots are canonical and deterministic; diffs say what changed per service; faults are a pure function."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest

from coworkenv.agents import make_policy
from coworkenv.canonical import canonical_json, content_hash
from coworkenv.episode import replay, run_episode
from coworkenv.episode.episode import Episode
from coworkenv.spec import SERVICE_NAMES
from coworkenv.workspace.faults import FAULT_MESSAGES, fault_for
from coworkenv.workspace.snapshot import diff_states
from tests.support.builders import make_spec, rich_spec, spec_dict

CALLS = [
    ("files_write", {"path": "out/new.txt", "content": "hello"}),
    ("files_write", {"path": "notes/todo.txt", "content": "buy bread\n"}),
    ("files_delete", {"path": "archive/old.txt"}),
    ("mail_send", {"to": "x@acme.test", "subject": "s", "body": "b"}),
    ("mail_move", {"id": "m1", "folder": "archive"}),
    ("mail_delete", {"id": "m2"}),
    ("calendar_create", {"title": "Review", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z"}),
    ("calendar_update", {"id": "e2", "location": "Room 9"}),
    ("calendar_delete", {"id": "e1"}),
    ("sheets_update", {"sheet": "budget", "row": 1, "column": "amount", "value": 1750}),
    ("sheets_append", {"sheet": "budget", "row": ["chairs", 300]}),
    ("docs_create", {"title": "Notes", "body": "text"}),
    ("docs_update", {"id": "d1", "body": "new"}),
    ("tickets_update", {"id": "t1", "status": "closed", "comment": "done"}),
    ("tickets_create", {"title": "Printer", "body": "jammed"}),
    ("chat_post", {"channel": "general", "text": "hi"}),
    ("mail_search", {"query": "invoice"}),
    ("files_read", {"path": "missing"}),
]


def run_calls(spec, calls=CALLS) -> Episode:
    ep = Episode(spec)
    for name, args in calls:
        ep.step(name, args)
    return ep


# --- determinism -------------------------------------------------------------------------------------------


def test_same_spec_same_calls_same_bytes_and_hash():
    a = run_calls(rich_spec()).finish("done")
    b = run_calls(rich_spec()).finish("done")
    assert canonical_json(a.final_state) == canonical_json(b.final_state)
    assert a.final_hash == b.final_hash == content_hash(canonical_json(a.final_state))
    assert a.evidence_hash == b.evidence_hash
    assert a.diff == b.diff
    assert json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


def test_same_spec_same_calls_same_hashes_in_other_processes():
    from tests.support.processes import HASH_SEEDS, python_output

    code = (
        "from tests.workspace.test_snapshot_and_faults import rich_spec, run_calls\n"
        "ep = run_calls(rich_spec()).finish('done')\nprint(ep.final_hash, ep.evidence_hash)"
    )
    ep = run_calls(rich_spec()).finish("done")
    for hash_seed in HASH_SEEDS:
        assert python_output(code, hash_seed).split() == [ep.final_hash, ep.evidence_hash]


def test_spec_from_reordered_json_gives_the_same_initial_state():
    data = spec_dict()
    reordered = json.loads(json.dumps(data, sort_keys=True))
    reordered["workspace"] = dict(reversed(list(reordered["workspace"].items())))
    a, b = make_spec(), make_spec(**{k: v for k, v in reordered.items()})
    assert a.initial_state_json == b.initial_state_json
    assert a.initial_state_hash == b.initial_state_hash


def test_different_calls_different_hash():
    a = run_calls(rich_spec()).finish("done")
    b = run_calls(rich_spec(), CALLS[:-2]).finish("done")
    assert a.final_hash == b.final_hash  # the last two calls only read
    assert a.evidence_hash != b.evidence_hash  # but the calls themselves differ
    c = run_calls(rich_spec(), CALLS[1:]).finish("done")
    assert c.final_hash != a.final_hash


def test_canonical_json_is_key_order_independent_and_compact():
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": "é"}]}) == '{"a":[1,{"c":"é","d":2}],"b":1}'
    assert canonical_json({"a": 1, "b": 2}) == canonical_json({"b": 2, "a": 1})


def test_episodes_do_not_share_state():
    spec = rich_spec()
    initial = spec.initial_state_json
    run_calls(spec).finish("x")
    assert spec.initial_state_json == initial
    assert json.loads(initial) == spec.initial_state
    fresh = Episode(spec)
    assert canonical_json(fresh.workspace.state) == initial


def test_finish_is_idempotent_and_closes_the_episode():
    ep = run_calls(rich_spec())
    ev = ep.finish("one")
    assert ep.finish("two") is ev and ev.answer == "one"
    with pytest.raises(RuntimeError):
        ep.step("mail_search", {})
    with pytest.raises(RuntimeError):
        ep.message("hello")


# --- diffs ---------------------------------------------------------------------------------------------------


def test_diff_per_service():
    ev = run_calls(rich_spec()).finish("done")
    d = ev.diff
    assert set(d) == {"files", "mail", "calendar", "sheets", "docs", "tickets", "chat"}  # contacts untouched
    assert d["files"] == {"added": ["out/new.txt"], "removed": ["archive/old.txt"], "changed": ["notes/todo.txt"]}
    assert d["mail"]["added"] == ["m4"]
    assert d["mail"]["removed"] == ["m2"]
    assert d["mail"]["changed"] == {"m1": {"folder": ["inbox", "archive"]}}
    assert d["calendar"]["added"] == ["e3"]
    assert d["calendar"]["removed"] == ["e1"]
    assert d["calendar"]["changed"] == {"e2": {"location": ["Room 1", "Room 9"]}}
    assert d["sheets"] == {
        "added": [],
        "removed": [],
        "changed": {"budget": {"cells": [[1, "amount", 1500, 1750]], "rows_added": [["chairs", 300]]}},
    }
    assert d["docs"]["added"] == ["d2"] and d["docs"]["changed"] == {
        "d1": {"body": ["Economy class for flights under 6 hours.", "new"]}
    }
    assert d["tickets"]["added"] == ["t3"]
    assert set(d["tickets"]["changed"]["t1"]) == {"status", "comments"}
    assert d["tickets"]["changed"]["t1"]["status"] == ["open", "closed"]
    posted = d["chat"]["posted"]
    assert list(posted) == ["general"] and [m["text"] for m in posted["general"]] == ["hi"]
    assert d["chat"]["added"] == [] and d["chat"]["removed"] == []
    json.dumps(d)


def test_diff_of_identical_states_is_empty():
    state = rich_spec().initial_state
    assert diff_states(state, copy.deepcopy(state)) == {}


def test_diff_sheets_added_and_removed():
    before = rich_spec().initial_state
    after = copy.deepcopy(before)
    after["sheets"]["new"] = {"columns": ["x"], "rows": []}
    del after["sheets"]["empty"]
    assert diff_states(before, after)["sheets"] == {"added": ["new"], "removed": ["empty"], "changed": {}}


def test_diff_chat_channels_added_removed():
    before = rich_spec().initial_state
    after = copy.deepcopy(before)
    after["chat"]["channels"]["new"] = [{"from": "x", "text": "y", "ts": "2026-12-01T00:00:00Z"}]
    del after["chat"]["channels"]["random"]
    d = diff_states(before, after)["chat"]
    assert d["added"] == ["new"] and d["removed"] == ["random"] and list(d["posted"]) == ["new"]


def test_diff_limited_to_given_services():
    ev = run_calls(rich_spec()).finish("done")
    d = diff_states(ev.initial_state, ev.final_state, ("files", "contacts"))
    assert set(d) == {"files"}


@pytest.mark.parametrize("n", [0, 1, 3, len(CALLS)])
def test_episode_optimized_diff_equals_full_diff(n):
    ev = run_calls(rich_spec(), CALLS[:n]).finish("done")
    assert ev.diff == diff_states(ev.initial_state, ev.final_state, SERVICE_NAMES)


def test_optimized_diff_equals_full_diff_with_failed_and_faulted_writes():
    spec = make_spec(faults={"rate": 0.5, "seed": 11})
    calls = CALLS + [
        ("mail_send", {"to": "bad", "subject": "s", "body": "b"}),
        ("calendar_create", {"title": "x", "start": "2026-12-09T15:00:00Z", "end": "2026-12-09T14:00:00Z"}),
        ("files_write", {"path": "../x", "content": "x"}),
    ]
    ev = run_calls(spec, calls * 2).finish("done")
    assert any(c.fault for c in ev.calls) and any(c.ok for c in ev.calls)
    assert ev.diff == diff_states(ev.initial_state, ev.final_state, SERVICE_NAMES)


def test_write_that_changes_nothing_leaves_no_diff():
    ep = Episode(rich_spec())
    ep.step("mail_move", {"id": "m1", "folder": "inbox"})
    ep.step("files_write", {"path": "notes/todo.txt", "content": "buy milk\n"})
    ev = ep.finish("done")
    assert ev.diff == {} == diff_states(ev.initial_state, ev.final_state)


# --- faults --------------------------------------------------------------------------------------------------


def test_fault_is_a_pure_function():
    for seed in (0, 1, 7, 2**40):
        for index in range(200):
            assert fault_for(seed, index, 0.3) == fault_for(seed, index, 0.3)


def test_rate_zero_never_faults_and_rate_one_always():
    assert all(fault_for(s, i, 0.0) is None for s in range(5) for i in range(500))
    assert all(fault_for(s, i, 1.0) in (429, 500) for s in range(5) for i in range(500))


def test_only_429_and_500():
    codes = Counter(fault_for(3, i, 1.0) for i in range(4000))
    assert set(codes) == {429, 500}
    assert 0.45 < codes[429] / 4000 < 0.55
    assert set(FAULT_MESSAGES) == {429, 500}


@pytest.mark.parametrize("rate", [0.05, 0.2, 0.5, 0.8])
def test_observed_rate_matches_configured(rate):
    n = 20_000
    hits = sum(fault_for(42, i, rate) is not None for i in range(n))
    assert abs(hits / n - rate) < 0.015


def test_faults_are_monotone_in_rate():
    """A call that faults at a rate also faults at every higher rate (same seed and index)."""
    for i in range(1000):
        if fault_for(5, i, 0.2) is not None:
            assert fault_for(5, i, 0.6) is not None


def test_seeds_give_different_fault_patterns():
    a = [fault_for(1, i, 0.5) is None for i in range(200)]
    b = [fault_for(2, i, 0.5) is None for i in range(200)]
    assert a != b


def test_episode_faults_follow_the_call_index():
    spec = make_spec(faults={"rate": 0.4, "seed": 9})
    ep = Episode(spec)
    for _ in range(100):
        ep.step("mail_search", {})
    for entry in ep.workspace.audit:
        expected = fault_for(9, entry.index, 0.4)
        assert (entry.code if entry.fault else None) == expected
        assert entry.ok == (expected is None)


def test_replay_reproduces_the_same_faults():
    spec = make_spec(faults={"rate": 0.5, "seed": 4})
    traj, live = run_episode(spec, make_policy("oracle", spec))
    assert any(c.fault for c in live.calls), "the oracle should have met at least one fault at rate 0.5"
    again = replay(spec, traj)
    assert [c.to_dict() for c in again.calls] == [c.to_dict() for c in live.calls]
    assert again.evidence_hash == live.evidence_hash
    assert replay(spec, traj).evidence_hash == live.evidence_hash


def test_oracle_recovers_from_faults():
    from coworkenv.grading import grade

    spec = make_spec(faults={"rate": 0.5, "seed": 4})
    _, ev = run_episode(spec, make_policy("oracle", spec))
    g = grade(spec, ev)
    assert g.completion == 1.0 and g.robustness == 1.0 and g.score == 1.0
