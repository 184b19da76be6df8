"""The `openai:<model>` agent against a real endpoint process (tests/support/instant_endpoint.py): native tool calls,
usage, seeds, the concurrency limit (counted by the server), retries, timeouts, an endpoint killed mid-run, format
errors, and the API key kept out of everything it returns."""

from __future__ import annotations

import asyncio
import json
import secrets

import pytest

from coworkenv.agents import Request, load_agent
from coworkenv.agents.openai_agent import NoReply, OpenAIAgent
from coworkenv.episode.runner import initial_messages, run_episode
from coworkenv.errors import CoworkEnvError
from coworkenv.llm import LLMConfig
from coworkenv.spec.io import load_task
from coworkenv.workspace.tools import tool_schemas
from tests.support import EXAMPLES
from tests.support.instant_endpoint import arguments_for, instant_endpoint

TOOLS = tool_schemas(["mail_read", "mail_search"])
MESSAGES = [
    {"role": "system", "content": "You are a coworker agent."},
    {"role": "user", "content": "Read the mail from Bob."},
]
FAST = {"backoff_s": 0.01, "max_tokens": 256}


def agent_at(endpoint, **options) -> OpenAIAgent:
    return load_agent(
        "openai:instant",
        base_url=endpoint.base_url,
        api_key_env="COWORKENV_TEST_NO_SUCH_VARIABLE",
        **{**FAST, **options},
    )


def ask(agent: OpenAIAgent, messages=MESSAGES, tools=TOOLS, seed: int = 0):
    async def once():
        try:
            return await agent.areply(Request(messages=messages, tools=tools, seed=seed))
        finally:
            await agent.aclose()

    return asyncio.run(once())


def test_native_tool_calls_usage_seed_then_a_final_answer():
    with instant_endpoint() as endpoint:
        agent = agent_at(endpoint)
        first = ask(agent, seed=41)
        assert (first.error, first.format_error) == (None, None)
        [call] = first.message["tool_calls"]
        assert call["id"] == "call_1" and call["function"]["name"] == "mail_read"
        assert json.loads(call["function"]["arguments"]) == arguments_for(TOOLS[0]["function"]["parameters"]) != {}
        assert first.prompt_tokens > 0 and first.completion_tokens > 0 and first.latency_s > 0
        assert first.meta == {"attempts": 1, "finish_reason": "tool_calls"}
        tool = {"role": "tool", "tool_call_id": "call_1", "content": "{}"}
        second = ask(agent, [*MESSAGES, first.message, tool], seed=42)
        assert second.message == {"role": "assistant", "content": "Done after 1 tool turns."}
        assert endpoint.stats()["seeds"] == [41, 42]
    assert (
        agent.label == "openai:instant"
        and agent.kind == "openai"
        and agent.mode == "async"
        and agent.model == "instant"
    )


def test_ids_continue_after_the_calls_already_in_the_conversation():
    with instant_endpoint(calls=3) as endpoint:
        agent = agent_at(endpoint)
        earlier = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": "mail_search", "arguments": "{}"}}
                for i in (1, 2)
            ],
        }
        reply = ask(agent, [*MESSAGES, earlier])
        assert [c["id"] for c in reply.message["tool_calls"]] == ["call_3"]


def test_a_real_task_through_run_episode():
    spec = load_task(EXAMPLES / "08_multi_turn_vendor_demo.json")
    with instant_endpoint() as endpoint:
        policy = agent_at(endpoint).policy(spec, seed=7)
        trajectory, evidence = run_episode(spec, policy)
        assert endpoint.stats()["seeds"] == [7, 7]
    roles = [m.role for m in trajectory.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert (
        trajectory.messages[:2]
        == type(trajectory).model_validate({"task_id": spec.id, "messages": initial_messages(spec)}).messages
    )
    assert [c.tool for c in evidence.calls] == [spec.tools[0]]
    assert evidence.answer == "Done after 1 tool turns."
    assert len(policy.replies) == 2 and all(r.error is None for r in policy.replies)


def test_the_concurrency_limit_holds_at_the_server():
    with instant_endpoint(delay=0.2) as endpoint:
        agent = agent_at(endpoint, concurrency=3)

        async def many():
            replies = await asyncio.gather(*(agent.areply(Request(MESSAGES, TOOLS, seed=i)) for i in range(12)))
            await agent.aclose()
            return replies

        replies = asyncio.run(many())
        stats = endpoint.stats()
    assert all(r.error is None for r in replies)
    assert stats["requests"] == 12 and stats["max_in_flight"] == 3


@pytest.mark.parametrize("status", [500, 429, 503])
def test_retries_after_a_failing_status_then_success(status: int):
    with instant_endpoint(fail_first=2, fail_status=status) as endpoint:
        reply = ask(agent_at(endpoint, max_retries=3))
        stats = endpoint.stats()
    assert reply.error is None and reply.message["tool_calls"]
    assert reply.meta["attempts"] == 3
    assert stats["requests"] == 3 and stats["statuses"][str(status)] == 2


def test_a_client_error_is_not_retried():
    with instant_endpoint(fail_first=5, fail_status=400) as endpoint:
        reply = ask(agent_at(endpoint, max_retries=3))
        assert endpoint.stats()["requests"] == 1
    assert reply.error.startswith("http_error: HTTP 400") and reply.message == {"role": "assistant", "content": ""}


def test_failures_beyond_the_retries_are_an_error_not_an_exception():
    with instant_endpoint(fail_first=10) as endpoint:
        reply = ask(agent_at(endpoint, max_retries=2))
        assert endpoint.stats()["requests"] == 3
    assert reply.error.startswith("http_error: HTTP 500") and reply.error.endswith("(after 3 attempts)")


def test_timeouts_are_retried_then_an_error():
    with instant_endpoint(hang=True) as endpoint:
        reply = ask(agent_at(endpoint, timeout_s=0.3, max_retries=2))
        assert endpoint.stats()["requests"] == 3
    assert reply.error == "timeout: no reply within 0.3 s (after 3 attempts)"
    assert reply.format_error is None and reply.message["content"] == ""


def test_an_endpoint_killed_mid_run_fails_the_turn_and_the_run_goes_on():
    spec = load_task(EXAMPLES / "08_multi_turn_vendor_demo.json")
    with instant_endpoint(calls=5) as endpoint:
        agent = agent_at(endpoint, max_retries=1)

        async def run():
            first = await agent.areply(Request(MESSAGES, TOOLS))
            endpoint.kill()
            rest = await asyncio.gather(
                *(agent.areply(Request([*MESSAGES, first.message], TOOLS, seed=i)) for i in range(4))
            )
            await agent.aclose()
            return first, rest

        first, rest = asyncio.run(run())
        assert first.error is None
        assert all(r.error and r.error.startswith("transport: ") and "(after 2 attempts)" in r.error for r in rest), [
            r.error for r in rest
        ]
        with pytest.raises(NoReply, match="openai:instant gave no reply: transport"):
            run_episode(spec, agent.policy(spec))


def test_malformed_tool_call_text_is_a_format_error():
    spec = load_task(EXAMPLES / "08_multi_turn_vendor_demo.json")
    with instant_endpoint(malformed=True) as endpoint:
        agent = agent_at(endpoint)
        reply = ask(agent)
        assert reply.error is None and reply.format_error
        assert (
            "tool_calls" not in reply.message and reply.message["content"] == reply.raw and "<tool_call>" in reply.raw
        )
        trajectory, evidence = run_episode(spec, agent.policy(spec))  # the text is the final answer, nothing raises
    assert evidence.calls == () and "<tool_call>" in evidence.answer


def test_tool_calls_written_as_text_are_parsed():
    with instant_endpoint(text_calls=True) as endpoint:
        reply = ask(agent_at(endpoint))
    assert reply.format_error is None and reply.raw.startswith("<tool_call>")
    [call] = reply.message["tool_calls"]
    assert call["function"]["name"] == "mail_read" and json.loads(call["function"]["arguments"]) == {"id": "id"}


def test_native_arguments_that_are_not_json_are_a_format_error():
    with instant_endpoint(bad_arguments=True) as endpoint:
        reply = ask(agent_at(endpoint))
    assert reply.error is None and "not JSON" in reply.format_error
    assert "tool_calls" not in reply.message and "oops" in reply.message["content"] == reply.raw


def test_the_api_key_never_leaves_the_agent(caplog: pytest.LogCaptureFixture):
    key = "sk-test-" + secrets.token_hex(16)
    with instant_endpoint(fail_first=1, echo_headers=True) as endpoint:
        config = LLMConfig(
            base_url=endpoint.base_url, model="instant", api_key=key, max_retries=1, backoff_s=0.01, max_tokens=256
        )
        agent = load_agent("openai:instant", llm=config)
        answered = ask(agent, MESSAGES, [])  # one 500 echoing the headers, then an answer echoing them
        assert endpoint.stats()["authorization"] == f"Bearer {key}"  # the key was sent, and came back
    with instant_endpoint(fail_first=10, echo_headers=True) as endpoint:
        failed = ask(load_agent("openai:instant", llm=config.model_copy(update={"base_url": endpoint.base_url})))
    assert "[REDACTED]" in answered.message["content"] and "[REDACTED]" in failed.error
    for text in (repr(answered), repr(failed), repr(agent), repr(agent.chat.__dict__), caplog.text):
        assert key not in text and key[8:24] not in text


def test_load_agent_options_and_errors():
    base = LLMConfig(base_url="http://127.0.0.1:9/v1", model="ignored", concurrency=2)
    agent = load_agent("openai:my-model", llm=base, concurrency=7, temperature=0.0, timeout_s=5, batch_size=16)
    assert (agent.config.model, agent.config.concurrency, agent.config.temperature, agent.config.timeout_s) == (
        "my-model",
        7,
        0.0,
        5,
    )
    assert agent.config.base_url == base.base_url and agent.label == "openai:my-model"
    assert (
        agent.concurrency == 7
    )  # the rollout engine opens no more episodes at once: none waits for a slot on its clock
    with pytest.raises(CoworkEnvError, match="needs a model"):
        load_agent("openai", llm=base)
    with pytest.raises(CoworkEnvError, match="needs an endpoint"):
        load_agent("openai:m")
    with pytest.raises(CoworkEnvError, match="timeout_s"):
        load_agent("openai:m", llm=base, timeout_s=-1)


def test_a_policy_acts_from_inside_a_running_event_loop():
    with instant_endpoint() as endpoint:
        policy = agent_at(endpoint).policy(None, seed=3)

        async def inside():
            return policy.act(MESSAGES, TOOLS)

        message = asyncio.run(inside())
    assert message["tool_calls"][0]["function"]["name"] == "mail_read"


def test_a_lone_surrogate_in_a_reply_becomes_a_replacement_character():
    """JSON allows a `\\ud800` escape; decoded, no trajectory could be written as UTF-8. A pair of escapes is one
    character and stays one."""
    from coworkenv.agents.openai_agent import reply_from
    from coworkenv.llm.async_chat import Completion, parse_completion

    body = b'{"choices": [{"message": {"role": "assistant", "content": "ok \\ud800 and \\ud83d\\ude00"}}]}'
    message, *_ = parse_completion(body)
    reply = reply_from(Completion(message, 1, 1, 0.1, 1, "stop"))
    assert reply.message["content"] == "ok \ufffd and \U0001f600"
    json.dumps(reply.message, ensure_ascii=False).encode("utf-8")
