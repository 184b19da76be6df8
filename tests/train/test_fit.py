"""Training rows fitted to max_length (`train/fit.py`) on the real tiny model's tokenizer: a long conversation is cut
after its last whole assistant turn, one whose first turn does not fit is left out, and both are counted; and the
tokens SFT trains on are the ones the `hf:` agent sees when it plays the same conversation (one chat template)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coworkenv.agents import Request, load_agent, make_policy
from coworkenv.agents.hf import HFAgent
from coworkenv.episode.runner import run_episode
from coworkenv.spec.io import load_tasks
from coworkenv.train.fit import encode, fit_rows
from tests.support import EXAMPLES


@pytest.fixture(scope="module")
def agent(tiny_model_dir: Path) -> HFAgent:
    loaded = load_agent(f"hf:{tiny_model_dir}", device="cpu")
    assert isinstance(loaded, HFAgent)
    return loaded


def oracle_rows(n: int) -> list[dict]:
    rows = []
    for spec in load_tasks(EXAMPLES)[:n]:
        trajectory, _ = run_episode(spec, make_policy("oracle", spec))
        rows.append(
            {"messages": trajectory.model_dump(mode="json", exclude_none=True)["messages"], "tools": spec.tool_schemas}
        )
    return rows


def test_training_tokens_are_what_the_agent_sees_and_the_loss_covers_its_turns_only(agent: HFAgent) -> None:
    for row in oracle_rows(4):
        messages, tools = row["messages"], row["tools"]
        tokens = encode(agent.tokenizer, messages, tools)
        ids, mask = tokens["input_ids"], tokens["assistant_masks"]
        assistant = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        covered = 0
        for i in assistant:
            prompt = agent._prompt_ids(Request(messages=messages[:i], tools=tools))
            assert isinstance(prompt, list) and ids[: len(prompt)] == prompt  # the agent's prompt, token for token
            assert (
                mask[len(prompt) - 1] == 0 and mask[len(prompt)] == 1
            )  # the loss starts with the assistant's first token
            turn = encode(agent.tokenizer, messages[: i + 1], tools)["input_ids"][len(prompt) :]
            assert all(mask[len(prompt) + k] == 1 for k in range(len(turn) - 1))  # its text and its end-of-turn token
            covered += sum(mask[len(prompt) : len(prompt) + len(turn)])
        assert covered == sum(mask) > 0  # nothing but the assistant's turns


def test_long_conversations_are_cut_after_their_last_whole_assistant_turn_and_counted(agent: HFAgent) -> None:
    rows = oracle_rows(3)
    lengths = [len(encode(agent.tokenizer, r["messages"], r["tools"])["input_ids"]) for r in rows]
    longest = max(range(3), key=lambda i: lengths[i])
    cap = lengths[longest] - 1
    kept, report = fit_rows(agent.tokenizer, rows, cap)
    assert report.rows == 3 and report.whole + report.shortened + report.dropped == 3 and report.shortened >= 1
    assert all(len(k["input_ids"]) <= cap for k in kept) and len(kept) == report.whole + report.shortened
    assert report.tokens == sum(len(k["input_ids"]) for k in kept) and report.supervised_tokens == sum(
        sum(k["assistant_masks"]) for k in kept
    )
    cut = next(k for k in kept if len(k["input_ids"]) not in lengths)
    messages = rows[longest]["messages"]
    prefixes = [
        encode(agent.tokenizer, messages[: i + 1], rows[longest]["tools"])["input_ids"]
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
    ]
    assert cut["input_ids"] == max((p for p in prefixes if len(p) <= cap), key=len)  # ends where an assistant turn ends
    assert report.assistant_turns_dropped >= 1 and "cut after their last whole assistant turn" in report.line()


def test_a_conversation_whose_first_turn_does_not_fit_is_left_out(agent: HFAgent) -> None:
    rows = oracle_rows(2)
    kept, report = fit_rows(agent.tokenizer, rows, 64)
    assert kept == [] and report.dropped == 2 and report.assistant_turns_dropped == report.assistant_turns > 0
