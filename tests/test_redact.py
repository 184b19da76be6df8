"""Redaction (`coworkenv.redact`): configured secrets, credential headers, bearer tokens and key-shaped tokens go;
content hashes, ids, names and paths inside the workspace stay."""

from __future__ import annotations

import hashlib
import json

import pytest

from coworkenv.redact import (
    REDACTED,
    redact,
    register_secret,
    safe_message,
    scrub_configured,
    short_error,
    without_host_paths,
)

KEY = "cfg-secret-value-77-not-key-shaped"


@pytest.fixture(autouse=True)
def _registered():
    register_secret(KEY)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"invalid key {KEY}.", f"invalid key {REDACTED}."),
        (f"Authorization: Bearer {KEY}\r\nHost: x", f"Authorization: {REDACTED}\r\nHost: x"),
        ("authorization: Basic dXNlcjpwYXNzd29yZA==", f"authorization: {REDACTED}"),
        ("{'Authorization': 'Bearer abc123def456', 'Host': 'h'}", f"{{'Authorization': '{REDACTED}', 'Host': 'h'}}"),
        ('{"x-api-key": "k-1234567890", "n": 1}', f'{{"x-api-key": "{REDACTED}", "n": 1}}'),
        ('\\"api-key\\": \\"k-1234567890\\"', f'\\"api-key\\": \\"{REDACTED}\\"'),
        (
            '{"body": "H: h\\nauthorization: Bearer abc123def456\\naccept: x"}',
            f'{{"body": "H: h\\nauthorization: {REDACTED}\\naccept: x"}}',
        ),
        ("https://h/v1?api_key=abc12345&x=1", f"https://h/v1?api_key={REDACTED}&x=1"),
        ("OPENAI_API_KEY=whatever-it-is", f"OPENAI_API_KEY={REDACTED}"),
        (
            "sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo now",
            f"sent Bearer {REDACTED} now",
        ),
        ("key sk-proj-AbCdEfGh12345678ijklMNOP in use", f"key {REDACTED} in use"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwx", REDACTED),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and AKIAABCDEFGHIJKLMNOP", f"token {REDACTED} and {REDACTED}"),
        ("random Zq9XkR2mVw7LpT3nB8cYa1b2C3d4Ef5 token", f"random {REDACTED} token"),
    ],
)
def test_secrets_are_scrubbed(text, expected):
    assert redact(text) == expected
    assert redact(redact(text)) == expected  # idempotent: redacting twice changes nothing more


def test_the_environment_s_secrets_are_scrubbed(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", "env-held-value-31")
    monkeypatch.setenv("MY_SERVICE_URL", "http://plain.example/v1")
    assert redact("echo env-held-value-31 at http://plain.example/v1") == f"echo {REDACTED} at http://plain.example/v1"


def test_the_configured_secrets_follow_the_environment_and_new_registrations(monkeypatch):
    # configured_secrets is cached between calls: every change must still show at the next call
    monkeypatch.setenv("CACHE_PROBE_TOKEN", "first-value-of-probe-1")
    assert scrub_configured("first-value-of-probe-1") == REDACTED
    monkeypatch.setenv("CACHE_PROBE_TOKEN", "second-value-of-probe-2")
    assert scrub_configured("first-value-of-probe-1 second-value-of-probe-2") == f"first-value-of-probe-1 {REDACTED}"
    monkeypatch.delenv("CACHE_PROBE_TOKEN")
    assert scrub_configured("second-value-of-probe-2") == "second-value-of-probe-2"
    register_secret("registered-after-a-call-3")
    assert scrub_configured("registered-after-a-call-3") == REDACTED


def test_hashes_ids_and_ordinary_text_are_left_alone():
    digest = hashlib.sha256(b"release").hexdigest()
    keep = [
        digest,
        f"sha256:{digest}",
        digest.upper(),
        "llm-retrieval-d2-0000042-r1",
        "mail_triage-00042",
        "123e4567-e89b-12d3-a456-426614174000",
        "TaskSpecValidationErrorInField2",
        "QuarterlyRevenueReport2026Final",
        "HTTPConnectionPoolMaxRetries2Exceeded",
        "http://127.0.0.1:8000/v1/chat/completions",
        "reports/q3.csv",
        '"max_tokens": 6000',
        "api_key_env: OPENAI_API_KEY",
        "task-0123456789abcdefghij",
        "Bearer of bad news",
        "/tmp/pytest-of-root/pytest-3/test_refused_with_one_line_an0/r/releases/LATEST: not UTF-8 text",
        json.dumps({"content_hashes": {"tasks": digest}, "run_id": "manual__2026-12-02T19:00:00+00:00"}),
    ]
    for text in keep:
        assert redact(text) == text, text


def test_a_short_or_empty_secret_is_not_registered():
    register_secret("abc")
    register_secret(None)
    assert scrub_configured("abc abc") == "abc abc"


def test_short_error_has_no_traceback_no_host_path_no_secret():
    try:
        raise OSError(f"cannot open /home/someone/project/data/run.json with {KEY}")
    except OSError as exc:
        text = short_error(exc)
    assert text == f"OSError: cannot open …/run.json with {REDACTED}"
    assert short_error(ValueError()) == "ValueError"
    assert short_error(ValueError("x" * 900), 100) == "ValueError: " + "x" * 100  # the message is cut, not the type
    described = f'RuntimeError: boom {KEY}\nTraceback (most recent call last):\n  File "/opt/venv/lib/x.py", line 1'
    assert safe_message(described) == f"RuntimeError: boom {REDACTED}"
    assert without_host_paths("see /var/lib/x/y.txt and files/a.txt") == "see …/y.txt and files/a.txt"
