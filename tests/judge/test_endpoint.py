"""The rubric judge against a live endpoint (the rule judge of `tests/support/judge_endpoint.py`): verdicts, the
verdict cache (hits make no request; the key changes with model and prompt version; files hold no key), not graded
without a judge, a reply or a verdict, the key only in the Authorization header, and the configuration."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.judge import endpoint as judge_module
from coworkenv.judge.cache import VerdictCache, default_cache_dir
from coworkenv.judge.endpoint import (
    PROMPT_VERSION,
    PROMPTS,
    Judge,
    JudgeConfig,
    Verdict,
    active_judge,
    cache_key,
    messages,
    parse_verdict,
    using_judge,
)
from tests.support.judge_endpoint import JUDGE_MODEL, judge_endpoint, judging

CRITERIA = 'Names "Ana Ruiz" as the owner.'
KEY = "judge-key-0042-never-to-be-written"


def config(url: str, cache: Path, **fields) -> JudgeConfig:
    return JudgeConfig(
        base_url=url,
        model=fields.pop("model", JUDGE_MODEL),
        cache_dir=str(cache),
        max_retries=0,
        backoff_s=0.0,
        **fields,
    )


def test_verdicts_pass_and_fail(tmp_path):
    with judging(tmp_path) as (server, judge):
        assert judge.verdict(CRITERIA, "Ana Ruiz owns it.") == Verdict(
            passed=True, reason="the response mentions everything the criteria ask for"
        )
        assert judge.verdict(CRITERIA, "It is not Ana Ruiz.").passed is False
        assert judge.verdict(CRITERIA, "Bob.").passed is False
        assert server.requests == 3
        body = server.bodies[0]
        assert (
            body["model"] == JUDGE_MODEL
            and body["temperature"] == 0.0
            and body["messages"] == messages(PROMPT_VERSION, CRITERIA, "Ana Ruiz owns it.")
        )


def test_a_cached_verdict_makes_no_second_request_even_for_a_new_judge(tmp_path):
    with judge_endpoint() as server:
        first = Judge(config(server.url, tmp_path))
        assert first.verdict(CRITERIA, "Ana Ruiz").cached is False
        again, other = (
            first.verdict(CRITERIA, "Ana Ruiz"),
            Judge(config(server.url, tmp_path)).verdict(CRITERIA, "Ana Ruiz"),
        )
        assert (
            again
            == other
            == Verdict(passed=True, reason="the response mentions everything the criteria ask for", cached=True)
        )
        assert server.requests == 1 and len(first.cache) == 1


def test_the_cache_key_changes_with_model_prompt_version_criteria_and_text(tmp_path):
    base = cache_key(PROMPT_VERSION, "m", "c", "t")
    variants = [
        cache_key("rubric-v0", "m", "c", "t"),
        cache_key(PROMPT_VERSION, "m2", "c", "t"),
        cache_key(PROMPT_VERSION, "m", "c2", "t"),
        cache_key(PROMPT_VERSION, "m", "c", "t2"),
        cache_key(PROMPT_VERSION, "m", "ct", ""),
    ]
    assert len({base, *variants}) == 6 and base == cache_key(PROMPT_VERSION, "m", "c", "t")
    with judge_endpoint() as server:
        Judge(config(server.url, tmp_path)).verdict(CRITERIA, "Ana Ruiz")
        Judge(config(server.url, tmp_path, model="rule-judge-2")).verdict(
            CRITERIA, "Ana Ruiz"
        )  # another model: asked again
        assert server.requests == 2 and [b["model"] for b in server.bodies] == [JUDGE_MODEL, "rule-judge-2"]


def test_an_unknown_prompt_version_is_refused_and_each_known_one_is_pinned():
    with pytest.raises(ValueError, match="unknown judge prompt version 'v9'; this build has rubric-v1"):
        JudgeConfig(base_url="http://x/v1", model="m", prompt_version="v9")
    assert (
        PROMPT_VERSION in PROMPTS
        and "{criteria}" in PROMPTS[PROMPT_VERSION][1]
        and "{text}" in PROMPTS[PROMPT_VERSION][1]
    )
    with pytest.raises(ValueError, match="less than or equal to 0"):
        JudgeConfig(base_url="http://x/v1", model="m", temperature=0.7)


def test_a_malformed_reply_is_asked_again_once_and_only_verdicts_are_cached(tmp_path):
    with judging(tmp_path) as (server, judge):
        bad = judge.verdict("MALFORMED " + CRITERIA, "Ana Ruiz")
        assert bad.passed is None and bad.reason == (
            "not graded: the judge's reply is malformed after 2 attempts (no JSON object in the reply)"
        )
        assert judge.verdict("MALFORMED " + CRITERIA, "Ana Ruiz").passed is None  # not cached: asked again
        assert judge.verdict("MALFORMED-ONCE " + CRITERIA, "Ana Ruiz").passed is True
        assert server.requests == 6 and len(judge.cache) == 1


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ('{"pass": "yes", "reason": "x"}', "not a verdict"),
        ('{"reason": "x"}', "not a verdict"),
        ("[true]", "not a verdict"),
        ('{"pass": true, "reason": 3}', "not a verdict"),
        ("maybe", "no JSON object"),
    ],
)
def test_parse_verdict_is_strict(content, error):
    with pytest.raises(ValueError, match=error):
        parse_verdict(content)
    assert parse_verdict('Sure: ```json\n{"pass": false, "reason": "no"}\n```') == (False, "no")


def test_no_reply_is_not_graded_and_not_cached(tmp_path):
    with judge_endpoint() as server:
        url = server.url
    judge = Judge(config(url, tmp_path))  # the endpoint is gone
    verdict = judge.verdict(CRITERIA, "Ana Ruiz")
    assert verdict.passed is None and verdict.reason.startswith("not graded: the judge gave no reply (transport: ")
    assert len(judge.cache) == 0


def test_the_key_goes_only_into_the_authorization_header(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with judge_endpoint() as server:
        judge = Judge(config(server.url, tmp_path / "cache", api_key_env="JUDGE_TEST_KEY"))
        judge.verdict(CRITERIA, "Ana Ruiz")
        judge.verdict("MALFORMED", "Ana Ruiz")
        assert [h["Authorization"] for h in server.headers_seen] == [f"Bearer {KEY}"] * 3
        assert all(KEY not in json.dumps(b) for b in server.bodies)
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files and all(KEY.encode() not in p.read_bytes() for p in files)
    assert json.loads(files[0].read_text()) == {
        "model": JUDGE_MODEL,
        "pass": True,
        "prompt_version": PROMPT_VERSION,
        "reason": "the response mentions everything the criteria ask for",
    }
    assert KEY not in caplog.text and KEY not in repr(judge) and KEY not in repr(judge.config)


def test_concurrent_writers_of_one_key_leave_one_whole_file(tmp_path):
    cache, key = VerdictCache(tmp_path), cache_key(PROMPT_VERSION, "m", "c", "t")
    verdict = {"pass": True, "reason": "r" * 5000, "model": "m", "prompt_version": PROMPT_VERSION}
    threads = [threading.Thread(target=lambda: [cache.put(key, verdict) for _ in range(20)]) for _ in range(4)]
    reads = []
    reader = threading.Thread(target=lambda: [reads.append(cache.get(key)) for _ in range(200)])
    for t in [*threads, reader]:
        t.start()
    for t in [*threads, reader]:
        t.join()
    assert cache.get(key) == verdict and all(r in (None, verdict) for r in reads)
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{key}.json"]


def test_a_broken_cache_file_is_a_miss(tmp_path):
    with judging(tmp_path) as (server, judge):
        path = judge.cache.path(judge.key(CRITERIA, "Ana Ruiz"))
        path.parent.mkdir(parents=True)
        path.write_text('{"pass": "tru')
        assert judge.verdict(CRITERIA, "Ana Ruiz").cached is False and server.requests == 1
        assert judge.cache.get(judge.key(CRITERIA, "Ana Ruiz"))["pass"] is True
    with pytest.raises(ValueError, match="not a verdict cache key"):
        judge.cache.path("../../etc/passwd")


def test_config_from_the_environment(tmp_path):
    assert JudgeConfig.from_env({}) is None
    env = {
        "COWORKENV_JUDGE_BASE_URL": "http://judge:8000/v1",
        "COWORKENV_JUDGE_MODEL": "qwen-judge",
        "COWORKENV_JUDGE_API_KEY_ENV": "JK",
        "COWORKENV_JUDGE_CACHE": str(tmp_path),
    }
    assert JudgeConfig.from_env(env) == JudgeConfig(
        base_url="http://judge:8000/v1", model="qwen-judge", api_key_env="JK", cache_dir=str(tmp_path)
    )
    with pytest.raises(CoworkEnvError, match="judge: set both COWORKENV_JUDGE_BASE_URL and COWORKENV_JUDGE_MODEL"):
        JudgeConfig.from_env({"COWORKENV_JUDGE_MODEL": "m"})
    assert all(field.description for field in JudgeConfig.model_fields.values())


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"COWORKENV_JUDGE_CACHE": "/srv/verdicts"}, "/srv/verdicts"),
        ({"COWORKENV_DATA_ROOT": "/srv/data"}, "/srv/data/judge-cache"),
        ({"COWORKENV_DATA_ROOT": "file:///srv/data"}, "/srv/data/judge-cache"),
        ({}, "data/judge-cache"),
    ],
)
def test_the_default_cache_folder(monkeypatch, env, expected):
    for name in ("COWORKENV_JUDGE_CACHE", "COWORKENV_DATA_ROOT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert str(default_cache_dir()) == expected


def test_an_object_store_data_root_caches_in_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("COWORKENV_JUDGE_CACHE", raising=False)
    monkeypatch.setenv("COWORKENV_DATA_ROOT", "s3://bucket/data")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "coworkenv" / "judge-cache"


def test_the_active_judge_comes_from_using_judge_else_the_environment(monkeypatch, tmp_path):
    monkeypatch.setattr(judge_module, "_from_env", judge_module._UNSET)
    monkeypatch.setenv("COWORKENV_JUDGE_BASE_URL", "http://judge.test/v1")
    monkeypatch.setenv("COWORKENV_JUDGE_MODEL", "env-judge")
    monkeypatch.setenv("COWORKENV_JUDGE_CACHE", str(tmp_path))
    from_env = active_judge()
    assert (
        isinstance(from_env, Judge) and from_env.config.model == "env-judge" and active_judge() is from_env
    )  # resolved once
    other = Judge(config("http://elsewhere/v1", tmp_path))
    with using_judge(other):
        assert active_judge() is other
        with using_judge(None):
            assert active_judge() is None
        assert active_judge() is other
    assert active_judge() is from_env
    monkeypatch.setattr(judge_module, "_from_env", judge_module._UNSET)
    monkeypatch.delenv("COWORKENV_JUDGE_BASE_URL")
    monkeypatch.delenv("COWORKENV_JUDGE_MODEL")
    assert active_judge() is None
