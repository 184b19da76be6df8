"""Hostile specs: what an LLM (or an attacker) could write into a task to hang, exhaust or crash whatever reads it.

Each `Hostile` is raw JSON text (some are not even JSON) built from a valid example task, with what a clean verdict
must say: the schema error type that refuses it, or None when the spec parses and the battery must simply finish.
`slow_oracle` is the one that is hostile after RE2 and the caps: a spec within every cap whose oracle makes hundreds of
full scans of a large mailbox, so that the battery burns its whole budget (`sandbox_timeout` in the sandbox).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coworkenv.caps import CAPS
from tests.support import EXAMPLES

BASE = json.loads((EXAMPLES / "07_chat_standup_blockers.json").read_text(encoding="utf-8"))
"""The spec every hostile one starts from (a chat digest that writes a notes file)."""
NOTES = "notes/standup-2026-12-08.md"


@dataclass(frozen=True)
class Hostile:
    name: str
    text: str
    refused_as: str | None
    """The error type in the `schema` row's details that refuses it; None: it parses and the battery runs."""


def _spec(name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    spec = copy.deepcopy(BASE)
    spec["id"] = f"hostile-{name}"
    change(spec)
    return spec


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"k": value}
    return value


def _regex_check(regex: str, content: str | None = None) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        if content is not None:
            spec["workspace"]["files"]["notes/bomb.txt"] = content
        spec["checks"].append(
            {
                "id": "bomb",
                "kind": "file_contains",
                "weight": 1,
                "path": "notes/bomb.txt" if content else NOTES,
                "regex": regex,
            }
        )

    return change


def mailbox_spec(name: str, messages: int, searches: int) -> dict[str, Any]:
    """The base task plus a mailbox of `messages` and `searches` oracle steps that each scan all of it."""

    def change(spec: dict[str, Any]) -> None:
        spec["tools"].append("mail_search")
        body = "lorem ipsum dolor " * 12
        spec["workspace"]["mail"] = {
            "messages": [
                {
                    "id": f"m{i}",
                    "folder": "inbox",
                    "from": "a@vendor.test",
                    "to": ["me@acme.test"],
                    "cc": [],
                    "subject": f"note {i}",
                    "body": body,
                    "date": "2026-11-30T09:00:00Z",
                }
                for i in range(messages)
            ]
        }
        spec["solution"][:0] = [{"tool": "mail_search", "args": {"query": "no-such-words"}}] * searches

    return _spec(name, change)


def slow_oracle() -> Hostile:
    """Within every cap, yet the battery needs about half a minute in-process (a 2-core machine): any budget of a few seconds
    stops it."""
    return Hostile("slow-oracle", json.dumps(mailbox_spec("slow-oracle", 5_000, CAPS.solution_steps - 5)), None)


def _set(value: Any, *keys: str | int) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        node = spec
        *parents, last = keys
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _text(name: str, change: Callable[[dict[str, Any]], None]) -> str:
    return json.dumps(_spec(name, change))  # escaped: lone surrogates stay legal JSON text


def hostile_specs() -> list[Hostile]:
    """Every hostile spec but `slow_oracle` (which only a budget stops): each finishes quickly with a clean verdict."""
    over = CAPS.string_chars + 1
    cases: list[tuple[str, Callable[[dict[str, Any]], None] | str, str | None]] = [
        ("regex-bomb", _regex_check("^(a+)+$", "a" * 40 + "!"), None),
        ("regex-bomb-on-a-large-file", _regex_check("(x+x+)+y", "x" * CAPS.string_chars), None),
        ("regex-backreference", _regex_check(r"(\w+) \1"), "regex_unsupported"),
        ("regex-lookahead", _regex_check(r"\A(?![\s\S]*INC-4390)"), "regex_unsupported"),
        ("regex-lookbehind", _regex_check(r"(?<!Li )Wei"), "regex_unsupported"),
        ("regex-too-long", _regex_check("a" * (CAPS.regex_chars + 1)), "regex_unsupported"),
        ("regex-huge-program", _regex_check("((((a{100}){100}){100}){100})"), "regex_unsupported"),
        ("regex-lone-surrogate", _regex_check("\ud800"), "regex_unsupported"),
        ("huge-instruction", _set("x" * (CAPS.instruction_chars + 1), "instruction"), "string_too_long"),
        ("huge-file", _set("x" * over, "workspace", "files", NOTES), "too_large"),
        ("huge-answer", _set("y" * (CAPS.answer_chars + 1), "solution", 4, "answer"), "string_too_long"),
        ("deep-meta", _set(_nested(CAPS.json_depth + 1), "meta", "deep"), "too_deep"),
        ("deep-tool-args", _set({"channel": "eng-standup", "x": _nested(20)}, "solution", 0, "args"), None),
        (
            "many-checks",
            _set([{"id": f"c{i}", "kind": "answer_contains", "text": "x"} for i in range(CAPS.checks + 1)], "checks"),
            "too_long",
        ),
        ("many-steps", _set([{"say": "hi"}] * CAPS.solution_steps + [{"answer": "x"}], "solution"), "too_long"),
        (
            "many-rules",
            _set([{"tool": "chat_post", "args": {"text": "*x*"}}] * (CAPS.prohibited_rules + 1), "prohibited"),
            "too_long",
        ),
        (
            "many-files",
            _set({f"f/{i}.txt": "" for i in range(CAPS.collection_items + 1)}, "workspace", "files"),
            "too_large",
        ),
        ("many-values", _set([[0] * 5_000 for _ in range(101)], "meta", "wide"), "too_large"),
        (
            "huge-counts",
            _set(
                {"id": "posted-once", "kind": "tool_called", "tool": "chat_post", "min": 10**30, "max": 10**40},
                "checks",
                3,
            ),
            None,
        ),
        ("huge-difficulty", _set(10**100, "difficulty"), "less_than_equal"),
        ("lone-surrogates", _set(BASE["instruction"] + " \ud800\udfff\ud800", "instruction"), "string_unicode"),
        ("control-bytes", _set("\x00\x1b[2J\x07", "workspace", "files", NOTES), None),
        ("path-traversal", _set("x", "workspace", "files", "../../etc/passwd"), "value_error"),
        ("deep-json-text", "[" * 100_000 + "]" * 100_000, "json_invalid"),
        ("deep-json-unclosed", '{"id": "hostile-deep-json-unclosed", "meta": ' + "[" * 100_000, "json_invalid"),
        ("over-spec-chars", '{"id": "hostile-over-spec-chars", "pad": "' + "z" * CAPS.spec_chars + '"}', "too_large"),
        ("nan", '{"id": "hostile-nan", "difficulty": NaN}', "value_error"),
    ]
    out = []
    for name, change, refused_as in cases:
        text = change if isinstance(change, str) else _text(name, change)
        out.append(Hostile(name, text, refused_as))
    return out
