"""The LLM repairer against a real OpenAI-compatible HTTP server on localhost: a JSON Patch for one task, a full
spec (in prose and a fence, with a hijacked id) for another, garbage for a third, a patch that does not apply for
a fourth. Rules that cannot fix a task hand it to the LLM; every reply is validated again."""

from __future__ import annotations

import json

import pytest

from coworkenv.llm import LLMConfig
from coworkenv.repair.llm import LLMRepairer, apply_reply, parse_repair
from coworkenv.repair.loop import metrics, repair_task
from coworkenv.validate.battery import validate_spec
from tests.support.repair_corpus import corpus_spec, task_ids_in


def repairer(server) -> LLMRepairer:
    config = LLMConfig(
        base_url=f"http://127.0.0.1:{server.server_port}/v1",
        model="tiny-repairer",
        timeout_s=5,
        max_retries=0,
        backoff_s=0.0,
    )
    return LLMRepairer(config)


def test_a_json_patch_reply_repairs_what_no_rule_can(llm_server):
    spec = corpus_spec("18_")  # no final answer: the schema rule declines
    outcome = repair_task(spec, rounds=3, llm=repairer(llm_server))
    assert outcome.valid, outcome.rejection
    assert [(a.strategy, a.kept) for a in outcome.attempts] == [("llm", True)]
    attempt = outcome.attempts[0]
    assert attempt.codes_addressed == ["schema"] and attempt.valid_after and "reply parsed as a patch" in attempt.notes
    (op,) = attempt.patch
    assert op["op"] == "add" and op["path"] == f"/solution/{len(spec['solution'])}" and "answer" in op["value"]
    repaired = outcome.spec
    assert repaired["id"] == f"{spec['id']}-r1" and repaired["meta"]["parent"] == spec["id"]
    assert repaired["meta"]["repair"]["strategy"] == "llm" and validate_spec(repaired).valid


def test_a_full_spec_reply_keeps_our_identity_and_lineage(llm_server):
    spec = corpus_spec("19_")  # an unknown check kind
    outcome = repair_task(spec, rounds=3, llm=repairer(llm_server))
    assert outcome.valid, outcome.rejection
    assert outcome.attempts[-1].strategy == "llm" and "reply parsed as a spec" in outcome.attempts[-1].notes
    assert outcome.spec["id"] == f"{spec['id']}-r1"  # not the model's "hijacked"
    assert outcome.spec["meta"]["defect"] == spec["meta"]["defect"]
    assert all(c["kind"] != "calendar_free" for c in outcome.spec["checks"])


def test_garbage_and_bad_patches_are_recorded_failures_and_the_task_is_rejected(llm_server):
    for prefix, code in (("09_", "unparseable"), ("22_", "bad_patch")):
        spec = corpus_spec(prefix)
        outcome = repair_task(spec, rounds=3, llm=repairer(llm_server))
        assert not outcome.valid and outcome.spec is None
        llm_attempts = [a for a in outcome.attempts if a.strategy == "llm"]
        assert llm_attempts and all(a.error and a.error.startswith(code) and not a.kept for a in llm_attempts)
        assert f"llm: {code}" in outcome.rejection
        # a round without progress ends the loop early
        assert outcome.rounds_used < 3 and not any(a.kept for a in outcome.attempts if a.round == outcome.rounds_used)


def test_the_prompt_carries_spec_failures_and_schema(llm_server):
    llm_server.requests.clear()
    spec = corpus_spec("18_")
    repair_task(spec, rounds=1, llm=repairer(llm_server))
    (request,) = llm_server.requests
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert request["model"] == "tiny-repairer" and request["seed"] == 1
    assert '"$defs"' in system and "RFC 6902" in system and "mail_send(" in system and "prohibited_zeroes" in system
    assert task_ids_in([request]) == [spec["id"]]
    assert "- schema (mandatory)" in user and "must end with exactly one `answer` step" in user


def test_rules_run_before_the_llm(llm_server):
    llm_server.requests.clear()
    outcome = repair_task(corpus_spec("01_"), rounds=3, llm=repairer(llm_server))
    assert outcome.valid and [a.strategy for a in outcome.attempts] == ["rule:oracle_scores_1"]
    assert llm_server.requests == []


def test_metrics_count_llm_attempts(llm_server):
    outcomes = [repair_task(corpus_spec(p), rounds=2, llm=repairer(llm_server)) for p in ("18_", "19_", "09_")]
    m = metrics(outcomes)
    assert m.repaired == 2 and m.rejected == 1 and m.rescue_rate == round(2 / 3, 4)
    assert m.attempts_by_strategy["llm"] == 3 and m.by_code["schema"].rescue_rate == 1.0


def test_an_unreachable_endpoint_is_a_recorded_failure():
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="nobody", timeout_s=1, max_retries=0, backoff_s=0.0)
    result = LLMRepairer(config).repair(corpus_spec("18_"), [])
    assert result.spec is None and result.code == "http_error"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ('[{"op": "replace", "path": "/difficulty", "value": 4}]', "patch"),
        ('Sure! ```json\n[{"op": "replace", "path": "/difficulty", "value": 4}]\n```', "patch"),
        ('{"op": "replace", "path": "/difficulty", "value": 4}', "patch"),
        ('{"patch": [{"op": "replace", "path": "/difficulty", "value": 4}]}', "patch"),
    ],
)
def test_patch_reply_forms(reply, kind):
    spec = corpus_spec("01_")
    result = parse_repair(reply, spec)
    assert result.kind == kind and result.spec["difficulty"] == 4 and result.spec["id"] == spec["id"]


def test_unusable_replies():
    spec = corpus_spec("01_")
    assert parse_repair("", spec).code == "unparseable"
    assert parse_repair("I'm sorry, but I can't help with that.", spec).code == "refusal"
    assert parse_repair("[1, 2]", spec).code == "not_a_spec"
    assert parse_repair('[{"op": "replace", "path": "/nope/0", "value": 1}]', spec).code == "bad_patch"
    kind, patched = apply_reply(spec, {**spec, "id": "other", "meta": {}, "difficulty": 5})
    assert kind == "spec" and patched["id"] == spec["id"] and patched["meta"] == spec["meta"]
    assert json.dumps(patched)  # plain JSON data
