"""The `openai:` agent against a real `transformers serve` process on 127.0.0.1 serving the tiny model, started and
stopped by process id (tests/support/serve.py). The tiny model knows nothing: whatever it writes is a plain message
or a format error — never a crash. Its tokenizer tells the server to return replies as text (`RESPONSE_TEMPLATE` in
coworkenv/train/tiny.py), so the agent reads the tool calls itself."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from coworkenv.agents import Request, load_agent
from coworkenv.episode.runner import initial_messages, run_episode
from coworkenv.episode.trajectory import Trajectory
from coworkenv.grading.score import grade
from coworkenv.spec.io import load_task
from coworkenv.workspace.tools import tool_schemas
from tests.support import EXAMPLES
from tests.support.serve import transformers_serve

pytestmark = pytest.mark.slow

SPEC = load_task(EXAMPLES / "08_multi_turn_vendor_demo.json")


@pytest.fixture(scope="module")
def served(tiny_model_dir):
    with transformers_serve(tiny_model_dir) as server:
        yield server
    assert server.process.poll() is not None  # stopped, by its pid
    with pytest.raises(ProcessLookupError):
        os.kill(server.pid, 0)


def agent_for(served, **options):
    settings = {
        "base_url": served.base_url,
        "max_tokens": 48,
        "timeout_s": 120,
        "max_retries": 1,
        "backoff_s": 0.1,
        "temperature": 0.0,
    }
    return load_agent(f"openai:{served.model}", **{**settings, **options})


def turn(agent, request: Request):
    async def once():
        try:
            return await agent.areply(request)
        finally:
            await agent.aclose()

    return asyncio.run(once())


def well_formed(reply) -> None:
    """A turn that the episode and the trajectory contract accept, whatever the model wrote."""
    assert reply.message["role"] == "assistant"
    Trajectory.model_validate({"task_id": SPEC.id, "messages": [reply.message]})
    for call in reply.message.get("tool_calls") or ():
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    assert reply.format_error is None or "tool_calls" not in reply.message


def test_a_few_turns_of_a_real_task(served):
    agent = agent_for(served)
    assert agent.label == "openai:tiny" and "/" not in agent.label
    messages, tools = initial_messages(SPEC), tool_schemas(SPEC.tools)
    for number in range(3):
        reply = turn(agent, Request(messages, tools, seed=number))
        assert reply.error is None, reply.error
        well_formed(reply)
        assert reply.prompt_tokens > 0 and reply.completion_tokens > 0 and reply.latency_s > 0
        messages += [reply.message, {"role": "user", "content": "Please go on."}]
    trajectory, evidence = run_episode(SPEC, agent.policy(SPEC, seed=1), max_turns=3)
    assert trajectory.messages[-1].role in ("assistant", "tool", "user")
    assert not grade(SPEC, evidence).passed  # graded like any trajectory; a model that knows nothing does not pass


def test_sampled_garbage_is_plain_text_or_a_format_error(served):
    sample = {"generation_config": json.dumps({"do_sample": True, "max_new_tokens": 48})}
    agent = agent_for(served, extra_body=sample, temperature=1.0)  # temperature 0 would turn sampling off again
    replies = [turn(agent, Request(initial_messages(SPEC), tool_schemas(SPEC.tools), seed=seed)) for seed in range(3)]
    for reply in replies:
        assert reply.error is None, reply.error
        well_formed(reply)
    assert any(r.message.get("content") or r.message.get("tool_calls") for r in replies), replies


def test_a_malformed_tool_call_is_a_format_error(served, tiny_model_dir):
    from transformers import AutoTokenizer

    tool_call = AutoTokenizer.from_pretrained(tiny_model_dir).convert_tokens_to_ids("<tool_call>")
    agent = agent_for(served, extra_body={"logit_bias": {str(tool_call): 100.0}})  # the garbage opens a <tool_call>
    reply = turn(agent, Request(initial_messages(SPEC), tool_schemas(SPEC.tools)))
    assert reply.error is None, reply.error
    assert reply.format_error and "<tool_call>" in reply.message["content"] and "tool_calls" not in reply.message
