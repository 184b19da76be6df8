"""Malformed input: path traversal, control bytes, oversized writes, wrong argument types — each a 400 result,
never an exception, and the workspace left exactly as it was."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.episode.episode import Episode
from coworkenv.episode.trajectory import Trajectory
from coworkenv.grading import grade_trajectory
from coworkenv.spec import TaskSpec
from coworkenv.workspace.paths import MAX_NAME_CHARS, MAX_PATH_CHARS, is_normal_path, normalize_path
from coworkenv.workspace.runtime import DEFAULT_MAX_WRITE_BYTES, Workspace
from coworkenv.workspace.tool_errors import ToolError
from tests.support.builders import (
    assistant_call,
    assistant_text,
    make_spec,
    rich_spec,
    spec_dict,
    state_json,
    trajectory,
)

BAD_PATHS: list[tuple[str, Any]] = [
    ("dotdot", ".."),
    ("dotdot-slash", "../x"),
    ("inner-dotdot", "a/../../etc/passwd"),
    ("harmless-looking-dotdot", "notes/../notes/todo.txt"),
    ("trailing-dotdot", "notes/.."),
    ("absolute", "/etc/passwd"),
    ("absolute-root", "/"),
    ("double-slash-absolute", "//server/share"),
    ("drive", "C:\\x"),
    ("drive-forward", "C:/x"),
    ("drive-lower", "c:x"),
    ("backslash", "notes\\todo.txt"),
    ("backslash-traversal", "..\\..\\etc\\passwd"),
    ("nul", "notes/todo.txt\x00.png"),
    ("nul-only", "\x00"),
    ("newline", "notes/to\ndo.txt"),
    ("tab", "a\tb"),
    ("escape", "a\x1bb"),
    ("del", "a\x7fb"),
    ("long-component", "a/" + "x" * (MAX_NAME_CHARS + 45)),  # a 300-char component
    ("long-path", "/".join(["abcdefghi"] * 200)),  # 2000 chars
    ("int", 5),
    ("float", 1.5),
    ("bool", True),
    ("none", None),
    ("list", ["notes", "todo.txt"]),
    ("dict", {"path": "notes/todo.txt"}),
    ("nested-junk", [{"a": [None, {"b": []}]}]),
]

# (tool, the argument that holds a path, the other arguments)
PATH_TOOLS: list[tuple[str, str, dict[str, Any]]] = [
    ("files_read", "path", {}),
    ("files_write", "path", {"content": "pwned"}),
    ("files_delete", "path", {}),
    ("files_move", "src", {"dst": "moved.txt"}),
    ("files_move", "dst", {"src": "notes/todo.txt"}),
    ("files_list", "dir", {}),
]


def test_the_long_inputs_are_as_long_as_described():
    lengths = dict((label, len(p)) for label, p in BAD_PATHS if isinstance(p, str))
    assert lengths["long-path"] == 1999 and lengths["long-path"] > MAX_PATH_CHARS
    assert len("x" * (MAX_NAME_CHARS + 45)) == 300


@pytest.mark.parametrize(("tool", "key", "rest"), PATH_TOOLS, ids=[f"{t}.{k}" for t, k, _ in PATH_TOOLS])
@pytest.mark.parametrize(("label", "path"), BAD_PATHS, ids=[label for label, _ in BAD_PATHS])
def test_bad_path_is_400_and_changes_nothing(tool, key, rest, label, path):
    if tool == "files_list" and label == "harmless-looking-dotdot":
        pass  # still rejected: '..' is never allowed, even when it would stay inside
    ep = Episode(rich_spec())
    before = state_json(ep)
    args = {key: path, **rest}
    for arguments in (args, json.dumps(args)):
        result = ep.step(tool, arguments)
        assert set(result) == {"error"} and result["error"]["code"] == 400, (label, result)
    assert state_json(ep) == before
    assert all(e.code == 400 and not e.fault for e in ep.workspace.audit)


@pytest.mark.parametrize(("label", "path"), [(label, p) for label, p in BAD_PATHS if isinstance(p, str)])
def test_normalize_path_rejects(label, path):
    with pytest.raises(ToolError) as info:
        normalize_path(path)
    assert info.value.code == 400
    assert not is_normal_path(path)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("a//b", "a/b"),
        ("./a/./b/", "a/b"),
        ("a/b", "a/b"),
        ("x" * MAX_NAME_CHARS, "x" * MAX_NAME_CHARS),
        ("ü/ñ.txt", "ü/ñ.txt"),
    ],
)
def test_normalize_path_accepts(raw, normal):
    assert normalize_path(raw) == normal


def test_root_only_where_allowed():
    assert normalize_path("", allow_root=True) == ""
    assert normalize_path("./", allow_root=True) == ""
    with pytest.raises(ToolError):
        normalize_path("")
    with pytest.raises(ToolError):
        normalize_path("./.")


def test_dotdot_never_escapes_even_through_normalization():
    ep = Episode(rich_spec())
    for path in ["a/./../b", "./..", "a/b/../../../c", "a/%2e%2e/b"]:
        result = ep.step("files_write", {"path": path, "content": "x"})
        if path == "a/%2e%2e/b":  # percent-encoding is just characters: a normal file name
            assert "error" not in result
        else:
            assert result["error"]["code"] == 400


# --- oversized writes ------------------------------------------------------------------------------------

CAP = 64

# (tool, args builder taking the text to write)
SIZED_WRITES: list[tuple[str, Any]] = [
    ("files_write", lambda t: {"path": "big.txt", "content": t}),
    ("docs_create", lambda t: {"title": "Big", "body": t}),
    ("docs_update", lambda t: {"id": "d1", "body": t}),
    ("mail_send", lambda t: {"to": "x@acme.test", "subject": "s", "body": t}),
    ("mail_reply", lambda t: {"id": "m2", "body": t}),
    ("chat_post", lambda t: {"channel": "general", "text": t}),
    ("tickets_update", lambda t: {"id": "t1", "comment": t}),
    ("tickets_create", lambda t: {"title": "Big", "body": t}),
    ("sheets_update", lambda t: {"sheet": "budget", "row": 0, "column": "item", "value": t}),
    ("sheets_append", lambda t: {"sheet": "budget", "row": [t, 1]}),
]


@pytest.mark.parametrize(("tool", "build"), SIZED_WRITES, ids=[t for t, _ in SIZED_WRITES])
def test_write_at_the_cap_succeeds_and_beyond_it_is_400(tool, build):
    ep = Episode(rich_spec(), max_write_bytes=CAP)
    assert ep.workspace.max_write_bytes == CAP
    before = state_json(ep)
    for text in ("x" * (CAP + 1), "é" * (CAP // 2 + 1), "x" * 10 * CAP):  # chars, then UTF-8 bytes, then far over
        result = ep.step(tool, build(text))
        assert result.get("error", {}).get("code") == 400, (tool, len(text), result)
        assert state_json(ep) == before
    assert "error" not in ep.step(tool, build("x" * CAP))
    assert "error" not in ep.step(tool, build("é" * (CAP // 2)))


def test_default_cap():
    ep = Episode(rich_spec())
    assert ep.workspace.max_write_bytes == DEFAULT_MAX_WRITE_BYTES
    assert ep.step("files_write", {"path": "a", "content": "x" * (DEFAULT_MAX_WRITE_BYTES + 1)})["error"]["code"] == 400
    assert "error" not in ep.step("files_write", {"path": "a", "content": "x" * DEFAULT_MAX_WRITE_BYTES})


def test_workspace_cap_is_configurable_directly():
    ws = Workspace(json.loads(rich_spec().initial_state_json), max_write_bytes=10)
    assert ws.call("files_write", {"path": "a", "content": "x" * 11})["error"]["code"] == 400
    assert "error" not in ws.call("files_write", {"path": "a", "content": "x" * 10})


def test_total_file_size_is_bounded():
    ep = Episode(rich_spec(), max_write_bytes=CAP)
    codes = [
        ep.step("files_write", {"path": f"f{i}.txt", "content": "x" * CAP}).get("error", {}).get("code")
        for i in range(40)
    ]
    assert codes[0] is None and 400 in codes
    full = codes.index(400)
    assert all(c == 400 for c in codes[full:])
    total = sum(len(c) for c in ep.workspace.state["files"].values())
    assert total <= CAP * 16


# Regression (fixed): mail `subject` and calendar `location` have no size limit at all, so the configurable write cap
# (and the default 1 MB) can be bypassed by writing through them.
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("mail_send", {"to": "x@acme.test", "subject": "s" * (10 * CAP), "body": "b"}),
        (
            "calendar_create",
            {
                "title": "t",
                "start": "2026-12-09T14:00:00Z",
                "end": "2026-12-09T15:00:00Z",
                "location": "l" * (10 * CAP),
            },
        ),
    ],
    ids=["mail_send.subject", "calendar_create.location"],
)
def test_unbounded_text_fields_respect_the_cap(tool, args):
    ep = Episode(rich_spec(), max_write_bytes=CAP)
    assert ep.step(tool, args).get("error", {}).get("code") == 400


# --- wrong argument types ---------------------------------------------------------------------------------

WRONG_TYPES: list[tuple[str, dict[str, Any]]] = [
    ("sheets_update", {"sheet": "budget", "row": "0", "column": "amount", "value": 1}),  # string for int
    ("sheets_update", {"sheet": "budget", "row": True, "column": "amount", "value": 1}),  # bool for int
    ("sheets_update", {"sheet": "budget", "row": False, "column": "amount", "value": 1}),
    ("sheets_update", {"sheet": "budget", "row": 1.0, "column": "amount", "value": 1}),  # float for int
    ("sheets_update", {"sheet": "budget", "row": 0.5, "column": "amount", "value": 1}),
    ("sheets_update", {"sheet": "budget", "row": [0], "column": "amount", "value": 1}),
    ("sheets_update", {"sheet": "budget", "row": None, "column": "amount", "value": 1}),
    ("sheets_update", {"sheet": "budget", "row": 0, "column": ["amount"], "value": 1}),  # list for string
    ("sheets_update", {"sheet": "budget", "row": 0, "column": "amount", "value": [1]}),  # list for scalar
    ("sheets_update", {"sheet": "budget", "row": 0, "column": "amount", "value": {"n": 1}}),
    ("sheets_update", {"sheet": ["budget"], "row": 0, "column": "amount", "value": 1}),
    ("sheets_append", {"sheet": "budget", "row": "laptops,1"}),
    ("sheets_append", {"sheet": "budget", "row": [["nested"], 1]}),
    ("sheets_append", {"sheet": "budget", "row": {"item": "x", "amount": 1}}),
    ("mail_send", {"to": ["a@acme.test"], "subject": ["s"], "body": "b"}),
    ("mail_send", {"to": 1, "subject": "s", "body": "b"}),
    ("mail_send", {"to": {"a": "a@acme.test"}, "subject": "s", "body": "b"}),
    ("mail_send", {"to": [None], "subject": "s", "body": "b"}),
    ("mail_send", {"to": "a@acme.test", "subject": "s", "body": None}),
    ("mail_move", {"id": ["m1"], "folder": "archive"}),
    ("mail_move", {"id": "m1", "folder": True}),
    ("mail_read", {"id": 1}),
    ("calendar_create", {"title": "x", "start": 1733750000, "end": "2026-12-09T15:00:00Z"}),
    (
        "calendar_create",
        {"title": "x", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z", "attendees": [1]},
    ),
    ("calendar_update", {"id": "e1", "attendees": "ana@acme.test"}),
    ("calendar_list", {"start": ["2026-12-01T00:00:00Z"]}),
    ("docs_create", {"title": 1, "body": "b"}),
    ("docs_update", {"id": "d1", "body": {"text": "b"}}),
    ("tickets_update", {"id": "t1", "status": ["closed"]}),
    ("tickets_update", {"id": "t1", "comment": 42}),
    ("tickets_create", {"title": "x", "body": "b", "assignee": ["bo"]}),
    ("chat_post", {"channel": "general", "text": 3.14}),
    ("chat_read", {"channel": None}),
    ("contacts_get", {"id": {"$ne": None}}),
    ("files_write", {"path": "a.txt", "content": ["line1", "line2"]}),
    ("files_write", {"path": "a.txt", "content": 12}),
    ("files_list", {"dir": 0}),
    ("mail_search", {"query": "x", "folder": 1}),
    ("web_search", {"query": ["kettle"]}),
    ("web_search", {"query": "kettle", "limit": "5"}),
    ("web_fetch", {"url": {"href": "https://vendor.test/pricing"}}),
    ("web_fetch", {"url": "https://vendor.test/pricing", "offset": -1}),
    ("web_fetch", {"url": "https://vendor.test/" + "a" * 2000}),
]


@pytest.mark.parametrize(("tool", "args"), WRONG_TYPES, ids=[f"{t}-{i}" for i, (t, _) in enumerate(WRONG_TYPES)])
def test_wrong_argument_types_are_400(tool, args):
    ep = Episode(rich_spec())
    before = state_json(ep)
    for arguments in (args, json.dumps(args)):
        result = ep.step(tool, arguments)
        assert set(result) == {"error"} and result["error"]["code"] == 400, result
        assert "invalid arguments" in result["error"]["message"]
    assert state_json(ep) == before


def test_json_oddities_do_not_raise():
    ep = Episode(rich_spec())
    before = state_json(ep)
    for arguments in [
        '{"path": NaN}',
        '{"path": Infinity}',
        '{"path": 1e400}',
        '{"path": "a", "path": 3}',
        "\ufeff{}",
        '{"path": "\\u0000"}',
        "{}" * 3,
        " ",
        "\n",
        '{"path": "' + "a" * 100_000 + '"}',
    ]:
        result = ep.step("files_read", arguments)
        assert result["error"]["code"] in (400, 404), (arguments[:40], result)
    assert state_json(ep) == before


# Regression (fixed): sheets accept NaN/Infinity from JSON arguments (Python's json.loads parses them), so the state, the
# tool result and the evidence then hold values that are not JSON and never compare equal to themselves.
def test_non_finite_numbers_are_rejected():
    ep = Episode(rich_spec())
    before = state_json(ep)
    for value in ("NaN", "Infinity", "-Infinity"):
        args = f'{{"sheet": "budget", "row": 0, "column": "amount", "value": {value}}}'
        assert ep.step("sheets_update", args).get("error", {}).get("code") == 400
    assert state_json(ep) == before


@pytest.mark.parametrize(
    "instant",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00", "0001-01-01T00:30:00+00:45"],
)
def test_instants_at_the_edge_of_the_calendar_are_400_not_an_exception(instant):
    # Regression (fixed): parse_instant converts to UTC with astimezone(), which raises OverflowError (not ValueError) for
    # these; the calendar tools only catch ValueError, so the exception escapes Workspace.call.
    ep = Episode(rich_spec())
    before = state_json(ep)
    for tool, args in [
        ("calendar_list", {"start": instant}),
        ("calendar_create", {"title": "x", "start": instant, "end": "2026-12-09T15:00:00Z"}),
        ("calendar_update", {"id": "e1", "end": instant}),
    ]:
        result = ep.step(tool, args)
        assert result.get("error", {}).get("code") == 400, (tool, result)
    assert state_json(ep) == before


def test_deeply_nested_arguments_do_not_crash_grading():
    # Regression (fixed): arguments nested just under the JSON parser's recursion limit parse fine and are rejected (400),
    # but they are kept in the audit log and `Evidence.evidence_hash` (canonical_json) then raises
    # RecursionError, so grading a crafted trajectory crashes instead of scoring it.
    spec = make_spec()
    limit = sys.getrecursionlimit()
    # The window where parsing succeeds but hashing fails is a few levels wide, just under the limit of the
    # parser at the call site; scan every depth up to it.
    for depth in [*range(limit // 2, limit + 1), 2 * limit]:
        arguments = '{"query": ' + "[" * depth + "]" * depth + "}"
        traj = Trajectory.model_validate(
            trajectory(spec.id, assistant_call("mail_search", arguments), assistant_text("done"))
        )
        g = grade_trajectory(spec, traj)
        assert 0.0 <= g.score <= 1.0


def test_a_lone_surrogate_in_arguments_is_400_and_grading_goes_on():
    # Regression (fixed): `"\\ud800"` is a legal JSON escape but not text; parsed into the arguments, it reached the
    # audit log and hashing the evidence raised UnicodeEncodeError, so `coworkenv grade` ended in a traceback.
    spec = make_spec()
    for arguments in [
        '{"query": "inv\\ud800"}',
        '{"query": "inv\ud800"}',
        {"query": "inv\ud800"},
        {"q\udfff": "x"},
        '{"query": "a", "extra": ["\\udc00"]}',
    ]:
        ep = Episode(spec)
        before = state_json(ep)
        result = ep.step("mail_search", arguments)
        assert result["error"] == {"code": 400, "message": "arguments hold a lone surrogate (not valid Unicode)"}, (
            arguments
        )
        assert ep.workspace.audit[-1].args is None and state_json(ep) == before
        traj = Trajectory.model_validate(
            trajectory(spec.id, assistant_call("mail_search", arguments), assistant_text("done"))
        )
        assert 0.0 <= grade_trajectory(spec, traj).score <= 1.0
    # A pair of surrogate escapes is one character, as is any other text outside ASCII.
    for query in ("\\ud83d\\ude00", "\u20ac"):
        ep = Episode(spec)
        assert "error" not in ep.step("mail_search", '{"query": "' + query + '"}')
        assert ep.workspace.audit[-1].args == {"query": json.loads('"' + query + '"')}


# --- spec level -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "../x",
        "/abs",
        "a//b",
        "./a",
        "a/./b",
        "a/",
        "a/../b",
        "a\\b",
        "C:\\x",
        "a\x00b",
        "a\nb",
        "",
        ".",
        "x" * 300,
        "/".join(["abcdefghi"] * 200),
    ],
)
def test_unnormalized_workspace_file_keys_are_rejected(key):
    data = spec_dict()
    data["workspace"]["files"] = {key: "x"}
    with pytest.raises(ValidationError):
        TaskSpec.model_validate(data)


def test_normalized_workspace_file_keys_are_accepted():
    data = spec_dict()
    data["workspace"]["files"] = {"a/b/c.txt": "x", "top.md": "", "ü.txt": "y"}
    TaskSpec.model_validate(data)


@pytest.mark.parametrize("instant", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"])
def test_spec_with_out_of_range_instant_is_a_validation_error(instant):
    # Regression (fixed): the same OverflowError escapes TaskSpec validation as a raw OverflowError instead of a
    # ValidationError (so `load_task` does not turn it into a CoworkEnvError).
    data = spec_dict()
    data["workspace"]["now"] = instant
    with pytest.raises(ValidationError):
        TaskSpec.model_validate(data)
