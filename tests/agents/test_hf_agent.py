"""The `hf:<dir>` agent on the real tiny model: batched replies with tokens and latency, garbage output as plain
text or format errors, batch = one-by-one under greedy decoding, seeded sampling, over-long prompts and refused
conversations as trial errors, and whole episodes through the synchronous runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.agents import AGENTS, Agent, Reply, Request, load_agent
from coworkenv.agents.hf import HFAgent
from coworkenv.episode.runner import initial_messages, run_episode
from coworkenv.errors import CoworkEnvError
from coworkenv.grading.score import grade
from coworkenv.spec.io import load_task, load_tasks
from coworkenv.spec.task import TaskSpec
from coworkenv.workspace.tools import tool_schemas
from tests.support import EXAMPLES

MAX_NEW = 8
TASKS = load_tasks(EXAMPLES)[:5]


@pytest.fixture(scope="module")
def agent(tiny_model_dir: Path) -> HFAgent:
    loaded = load_agent(f"hf:{tiny_model_dir}", max_new_tokens=MAX_NEW, batch_size=3, device="cpu")
    assert isinstance(loaded, HFAgent)
    return loaded


def first_turn(spec: TaskSpec, seed: int = 0) -> Request:
    return Request(messages=initial_messages(spec), tools=tool_schemas(spec.tools), seed=seed)


def later_turn(spec: TaskSpec) -> Request:
    """A conversation with a tool call and its result already in it."""
    tool = spec.tools[0]
    call = {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
    result = json.dumps({"error": {"code": 400, "message": "missing argument"}})
    messages = [
        *initial_messages(spec),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]
    return Request(messages=messages, tools=tool_schemas(spec.tools), seed=1)


def requests() -> list[Request]:
    return [*(first_turn(spec, seed=i) for i, spec in enumerate(TASKS)), later_turn(TASKS[0])]


def assert_well_formed(reply: Reply) -> None:
    message = reply.message
    assert message["role"] == "assistant" and reply.error is None and isinstance(reply.raw, str)
    if reply.format_error is not None:  # unreadable calls: the text is kept as a plain message
        assert "tool_calls" not in message and message["content"] == reply.raw.strip()
    for call in message.get("tool_calls") or ():
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    if not message.get("tool_calls"):
        assert isinstance(message["content"], str)


def test_it_is_a_batch_agent_named_after_its_directory(agent: HFAgent, tiny_model_dir: Path) -> None:
    assert isinstance(agent, Agent)
    assert (agent.kind, agent.mode, agent.model, agent.label) == (
        "hf",
        "batch",
        tiny_model_dir.name,
        f"hf:{tiny_model_dir.name}",
    )
    assert "hf" in AGENTS.names()


def test_reply_batch_gives_one_reply_per_conversation_with_tokens_and_latency(agent: HFAgent) -> None:
    batch = requests()
    replies = agent.reply_batch(batch)
    assert len(replies) == len(batch)
    for request, reply in zip(batch, replies, strict=True):
        assert_well_formed(reply)
        prompt = agent.tokenizer.apply_chat_template(request.messages, tools=request.tools, add_generation_prompt=True)[
            "input_ids"
        ]
        assert reply.prompt_tokens == len(prompt)
        assert 1 <= reply.completion_tokens <= MAX_NEW and reply.latency_s > 0
        assert reply.meta["batch"] in (1, 2, 3) and reply.meta["finish"] in ("stop", "length")
    assert sorted(r.meta["batch"] for r in replies) == [3, 3, 3, 3, 3, 3]  # six conversations, chunks of three


@pytest.mark.slow
def test_greedy_batches_give_what_one_by_one_gives(agent: HFAgent) -> None:
    batch = requests()
    together = agent.reply_batch(batch)
    alone = [agent.reply_batch([request])[0] for request in batch]
    assert [(r.raw, r.completion_tokens, r.prompt_tokens) for r in together] == [
        (r.raw, r.completion_tokens, r.prompt_tokens) for r in alone
    ]
    assert [r.message for r in together] == [r.message for r in agent.reply_batch(batch)]  # and again: deterministic
    assert all(r.meta["batch"] == 1 for r in alone)


@pytest.mark.slow
def test_sampling_is_seeded_by_the_requests(tiny_model_dir: Path, agent: HFAgent) -> None:
    sampler = load_agent(f"hf:{tiny_model_dir}", max_new_tokens=16, temperature=1.0, device="cpu")
    batch = [first_turn(spec, seed=7) for spec in TASKS[:3]]
    first, again = sampler.reply_batch(batch), sampler.reply_batch(batch)
    assert [r.raw for r in first] == [r.raw for r in again]
    reseeded = sampler.reply_batch([first_turn(spec, seed=8) for spec in TASKS[:3]])
    assert [r.raw for r in reseeded] != [r.raw for r in first]
    greedy = load_agent(f"hf:{tiny_model_dir}", max_new_tokens=16, device="cpu").reply_batch(batch)
    assert [r.raw for r in greedy] != [r.raw for r in first]
    for reply in first:
        assert_well_formed(reply)


def test_a_prompt_longer_than_the_context_ends_that_episode_only(agent: HFAgent) -> None:
    spec = TASKS[0]
    huge = Request(
        messages=[
            *initial_messages(spec)[:1],
            {"role": "user", "content": " ".join(f"w{i}" for i in range(agent.context))},
        ],
        tools=tool_schemas(spec.tools),
    )
    refused = Request(messages=[{"role": "narrator", "content": "once upon a time"}], tools=[])
    fine = first_turn(spec)
    replies = agent.reply_batch([huge, fine, refused])
    assert (
        replies[0].error is None
        and "context" in replies[0].full
        and replies[0].message == {"role": "assistant", "content": ""}
    )
    assert replies[2].error is not None and "chat template" in replies[2].error and "narrator" in replies[2].error
    assert_well_formed(replies[1])
    assert replies[1].raw == agent.reply_batch([fine])[0].raw


def test_an_empty_batch_is_no_work(agent: HFAgent) -> None:
    assert agent.reply_batch([]) == []


@pytest.mark.parametrize("name", ["01_mail_forward_invoices.json", "08_multi_turn_vendor_demo.json"])
def test_a_whole_episode_runs_and_grades(agent: HFAgent, name: str) -> None:
    spec = load_task(EXAMPLES / name)
    policy = agent.policy(spec, seed=3)
    trajectory, evidence = run_episode(spec, policy, max_turns=4)
    assert trajectory.messages[0].role == "system" and trajectory.messages[1].content == spec.instruction
    assert 1 <= len(policy.replies) <= 4
    for reply in policy.replies:
        assert_well_formed(reply)
    result = grade(spec, evidence)
    assert 0.0 <= result.score <= 1.0 and not result.passed  # a random model does not do the task


def test_bad_model_directories_are_one_line_errors(tmp_path: Path, tiny_model_dir: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "weights").mkdir()
    cases = {
        "hf": "needs a local model directory",
        f"hf:{tmp_path / 'absent'}": "no such model directory",
        f"hf:{tmp_path}": "cannot load a causal LM",
        f"hf:{tmp_path / 'weights'}": "cannot load a causal LM",
    }
    for spec, message in cases.items():
        with pytest.raises(CoworkEnvError, match=message) as caught:
            load_agent(spec)
        assert "\n" not in str(caught.value)
    with pytest.raises(CoworkEnvError, match="batch_size"):
        load_agent(f"hf:{tiny_model_dir}", batch_size=0)
