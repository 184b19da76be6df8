"""Reading tool calls out of model text: Hermes/Qwen blocks, JSON in the content, and malformed output as a
format error (the text kept as a plain message), never an exception."""

from __future__ import annotations

import json

import pytest

from coworkenv.agents.parsing import parse_reply


def calls(text: str, first_id: int = 1) -> list[tuple[str, str, dict]]:
    parsed = parse_reply(text, first_id=first_id)
    assert parsed.format_error is None, parsed.format_error
    for call in parsed.tool_calls:
        assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
    return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in parsed.tool_calls]


def test_a_hermes_block_is_a_tool_call() -> None:
    parsed = parse_reply('<tool_call>\n{"name": "files_read", "arguments": {"path": "notes.txt"}}\n</tool_call>')
    assert parsed.content == "" and parsed.format_error is None
    assert parsed.message() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "files_read", "arguments": '{"path": "notes.txt"}'},
            }
        ],
    }


def test_several_blocks_keep_their_order_and_number_from_first_id() -> None:
    text = (
        'Let me look.\n<tool_call>{"name": "mail_search", "arguments": {"query": "invoice"}}</tool_call>\n'
        '<tool_call>{"name": "mail_read", "arguments": {"id": "m1"}}</tool_call>'
    )
    assert calls(text, first_id=4) == [
        ("call_4", "mail_search", {"query": "invoice"}),
        ("call_5", "mail_read", {"id": "m1"}),
    ]
    assert parse_reply(text).content == "Let me look."
    assert parse_reply(text).message()["content"] == "Let me look."


def test_an_unclosed_final_block_is_still_read() -> None:
    assert calls('<tool_call>{"name": "chat_read", "arguments": {"channel": "general"}}') == [
        ("call_1", "chat_read", {"channel": "general"})
    ]


def test_argument_variants_are_normalised() -> None:
    assert calls('<tool_call>{"name": "files_list", "arguments": "{\\"dir\\": \\".\\"}"}</tool_call>') == [
        ("call_1", "files_list", {"dir": "."})
    ]
    assert calls('<tool_call>{"name": "sheets_list"}</tool_call>') == [("call_1", "sheets_list", {})]
    assert calls('<tool_call>{"name": "docs_read", "parameters": {"id": "d1"}}</tool_call>') == [
        ("call_1", "docs_read", {"id": "d1"})
    ]
    assert calls('<tool_call>{"function": {"name": " docs_read ", "arguments": {"id": "d1"}}}</tool_call>') == [
        ("call_1", "docs_read", {"id": "d1"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "files_read", "arguments": {"path": "a.txt"}}',
        '```json\n{"name": "files_read", "arguments": {"path": "a.txt"}}\n```',
        '```\n{"name": "files_read", "arguments": {"path": "a.txt"}}\n```',
        '[{"name": "files_read", "arguments": {"path": "a.txt"}}]',
        '{"tool_calls": [{"type": "function", "function": {"name": "files_read", "arguments": "{\\"path\\": \\"a.txt\\"}"}}]}',
        '  {"name": "files_read", "arguments": {"path": "a.txt"}}\n',
    ],
)
def test_json_in_the_content_is_a_tool_call(text: str) -> None:
    assert calls(text) == [("call_1", "files_read", {"path": "a.txt"})]
    assert parse_reply(text).content == ""


def test_a_json_list_of_calls() -> None:
    text = '[{"name": "mail_read", "arguments": {"id": "m1"}}, {"name": "mail_read", "arguments": {"id": "m2"}}]'
    assert calls(text) == [("call_1", "mail_read", {"id": "m1"}), ("call_2", "mail_read", {"id": "m2"})]


def test_reasoning_is_removed() -> None:
    text = '<think>the user wants the file; <tool_call> is how</think>\n<tool_call>{"name": "files_read", "arguments": {"path": "a"}}</tool_call>'
    parsed = parse_reply(text)
    assert parsed.content == "" and [c["function"]["name"] for c in parsed.tool_calls] == ["files_read"]
    assert parse_reply("<think>still thinking about it").content == ""
    assert parse_reply("<think>hm</think>Done: 3 invoices forwarded.").message() == {
        "role": "assistant",
        "content": "Done: 3 invoices forwarded.",
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('<tool_call>{"name": "files_read", "arguments": {"path": </tool_call>', "not valid JSON"),
        ("<tool_call>files_read(path='a')</tool_call>", "not valid JSON"),
        (
            '<tool_call>{"name": "files_read", "arguments": "path=a"}</tool_call>',
            "arguments of 'files_read' are not JSON",
        ),
        ('<tool_call>{"name": "files_read", "arguments": ["a"]}</tool_call>', "must be a JSON object"),
        ('<tool_call>{"name": "", "arguments": {}}</tool_call>', "non-empty string `name`"),
        ('<tool_call>{"arguments": {"path": "a"}}</tool_call>', "non-empty string `name`"),
        ('<tool_call>["files_read"]</tool_call>', "must be a JSON object"),
        ('{"name": 7, "arguments": {}}', "non-empty string `name`"),
        ('{"tool_calls": [{"function": {"name": "x", "arguments": "{"}}]}', "arguments of 'x' are not JSON"),
        ("I will call it now </tool_call>", "unbalanced"),
        ('<tool_call {"name": "x"}', "unbalanced"),
    ],
)
def test_malformed_calls_are_format_errors_with_the_text_kept(text: str, reason: str) -> None:
    parsed = parse_reply(text)
    assert parsed.format_error is not None and reason in parsed.format_error
    assert parsed.tool_calls == []
    assert parsed.message() == {"role": "assistant", "content": text.strip()}


def test_one_bad_block_among_good_ones_fails_the_turn() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{oops}</tool_call>'
    parsed = parse_reply(text)
    assert parsed.format_error and parsed.tool_calls == [] and parsed.content == text


@pytest.mark.parametrize(
    "text",
    [
        "Done: I forwarded 2 invoices to accounting@acme.test.",
        'The file says {"total": 12} and nothing else.',
        '{"total": 12, "currency": "EUR"}',
        "[1, 2, 3]",
        "```python\nprint('hi')\n```",
        "{not json at all",
        "Which date do you mean: Monday or Tuesday?",
        "",
    ],
)
def test_ordinary_prose_is_left_alone(text: str) -> None:
    parsed = parse_reply(text)
    assert parsed.format_error is None and parsed.tool_calls == []
    assert parsed.message() == {"role": "assistant", "content": text}


def test_no_text_at_all_is_an_empty_answer() -> None:
    assert parse_reply(None).message() == {"role": "assistant", "content": ""}
