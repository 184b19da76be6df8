"""The LLM generator against a real OpenAI-compatible HTTP server on localhost (recorded replies per seed)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from coworkenv.llm import LLMConfig
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.family import load_families
from coworkenv.synth.generate import GenerateRequest, build_task, generate
from coworkenv.synth.llm import LLMGenerator, in_order
from coworkenv.synth.planner import Plan, PlanRow
from tests.support.openai_wire import OpenAIWireHandler, serving

VALID = build_task(load_families().get("mail_triage"), seed=3, difficulty=2).model_dump(mode="json", by_alias=True)
INVALID = {**VALID, "tools": ["mail_teleport"]}

# seed → what the server answers; "flaky" fails once with a 500, then answers validly.
BEHAVIOUR = {
    0: ("content", json.dumps(VALID)),
    1: ("content", "Here you go:\n```json\n" + json.dumps(VALID) + "\n```"),
    2: ("content", '{"id": "broken", "instruction": '),
    3: ("content", json.dumps(INVALID)),
    4: ("content", "I'm sorry, but I can't help with writing that task."),
    5: ("refusal", "policy"),
    6: ("slow", json.dumps(VALID)),
    7: ("flaky", json.dumps(VALID)),
    8: ("status", 429),
    9: ("content", "[1, 2, 3]"),
}


class Handler(OpenAIWireHandler):
    def do_POST(self):  # noqa: N802 (http.server API)
        body = self.read_body()
        server = self.server
        server.requests.append(body)
        kind, value = BEHAVIOUR[body["seed"] % 10]
        if kind == "status" or (kind == "flaky" and server.seen.setdefault(body["seed"], 0) == 0):
            server.seen[body["seed"]] = 1
            return self.send_json(
                value if kind == "status" else 500, {"error": {"message": "try later", "type": "server_error"}}
            )
        if kind == "slow":
            time.sleep(1.5)
        self.send_completion(body, {"content": None, "refusal": value} if kind == "refusal" else {"content": value})


@pytest.fixture(scope="module")
def server():
    with serving(Handler, requests=[], seen={}) as httpd:
        yield httpd


def generator(server, **overrides) -> LLMGenerator:
    config = LLMConfig(
        base_url=f"http://127.0.0.1:{server.server_port}/v1",
        model="tiny",
        timeout_s=0.5,
        max_retries=1,
        backoff_s=0.0,
        concurrency=4,
        **overrides,
    )
    return LLMGenerator(config)


def row(count: int = 10, start: int = 0) -> PlanRow:
    return PlanRow(family="llm", capability="communication", difficulty=2, count=count, seed_start=start)


def test_every_reply_becomes_a_task_or_a_recorded_rejection(server):
    results = list(generator(server).generate_rows([row()]))
    assert len(results) == 10
    by_seed = {r.meta.seed if isinstance(r, TaskSpec) else r.seed: r for r in results}
    for seed in (0, 1, 7):
        task = by_seed[seed]
        assert isinstance(task, TaskSpec), task
        assert task.id == f"llm-communication-d2-{seed:07d}" and task.family == "llm"
        assert task.meta.generator == "llm:tiny" and "communication" in task.capabilities
    codes = {seed: by_seed[seed].code for seed in (2, 3, 4, 5, 6, 8, 9)}
    assert codes == {
        2: "unparseable",
        3: "schema",
        4: "refusal",
        5: "refusal",
        6: "timeout",
        8: "http_error",
        9: "unparseable",
    }
    assert "mail_teleport" in by_seed[3].reason
    assert "429" in by_seed[8].reason


def test_prompt_carries_target_schema_catalog_and_examples(server):
    server.requests.clear()
    list(generator(server).generate_rows([row(count=1)]))
    sent = server.requests[0]
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert sent["model"] == "tiny" and sent["seed"] == 0
    assert '"$defs"' in system and "mail_send(" in system and "answer_number" in system
    assert "`communication`" in user and "difficulty 2" in user and '"solution"' in user


def test_retry_recovers_from_a_server_error(server):
    server.seen.clear()
    result = generator(server).generate_one(row(), 17)  # 17 % 10 == 7: a 500 first, then a valid reply
    assert isinstance(result, TaskSpec)
    assert server.seen[17] == 1


def test_mixed_generation_splits_the_plan(server):
    plan = Plan(
        n=8,
        seed=0,
        rows=[PlanRow(family="mail_triage", capability="communication", difficulty=2, count=8, seed_start=10)],
    )
    request = GenerateRequest(n=8, generator="mixed", llm_share=0.25)
    tasks, rejections = generate(request, plan, llm=generator(server))
    procedural = [t for t in tasks if t.family == "mail_triage"]
    llm_made = [t for t in tasks if t.family == "llm"] + [r for r in rejections if r.family == "llm"]
    assert len(procedural) == 6 and len(llm_made) == 2
    assert {t.meta.seed for t in procedural} == set(range(12, 18))


def test_rows_of_different_families_sharing_seeds_make_distinct_tasks(server):
    """Each family has its own seed space, so the plan may give two families of one capability the same seeds: their
    LLM tasks must not share an id (the release would hold two tasks under one id), and their prompts differ."""
    server.requests.clear()
    rows = [
        PlanRow(family=name, capability="communication", difficulty=2, count=1, seed_start=0)
        for name in ("mail_triage", "chat_digest")
    ]
    tasks = list(generator(server).generate_rows(rows))
    assert [t.id for t in tasks] == [
        "llm-mail_triage-communication-d2-0000000",
        "llm-chat_digest-communication-d2-0000000",
    ]
    assert all(t.family == "llm" for t in tasks)
    prompts = sorted(
        (r["messages"][1]["content"] for r in server.requests), key=lambda p: "`mail_triage` tasks" not in p
    )
    for prompt, name in zip(prompts, ("mail_triage", "chat_digest"), strict=True):
        assert f"in the spirit of the `{name}` tasks" in prompt
        assert prompt.split('"family":"', 1)[1].startswith(f'{name}"')  # its own family's example comes first


def test_replies_come_in_plan_order_with_a_bounded_window_of_requests_ahead():
    started: list[int] = []
    gate = threading.Lock()
    yielded = 0

    def slow_for_early(i: int) -> int:
        with gate:
            # never more submitted than `ahead` beyond what the consumer has taken
            assert i < yielded + 6, (i, yielded)
            started.append(i)
        time.sleep(0.002 * (i % 3))
        return i * i

    with ThreadPoolExecutor(max_workers=3) as pool:
        out = []
        for value in in_order(pool, slow_for_early, iter(range(200)), ahead=6):
            out.append(value)
            yielded += 1
    assert out == [i * i for i in range(200)]


def test_closing_the_ordered_map_early_cancels_what_has_not_started():
    ran: list[int] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        results = in_order(pool, lambda i: (time.sleep(0.01), ran.append(i), i)[2], iter(range(1000)), ahead=20)
        assert [next(results) for _ in range(3)] == [0, 1, 2]
        results.close()
    assert len(ran) < 30
