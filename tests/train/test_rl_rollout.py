"""The RL rollout's multi-turn bookkeeping with the tiny model's real tokenizer and chat template: the oracle, writing
its turns as tokens, plays each task to a full score through `play`; the sequence TRL trains on is exactly the
template's rendering of the whole conversation, the model's tokens marked 1 and the environment's 0; the token
budget ends an episode where it runs out."""

from __future__ import annotations

import pytest

from coworkenv.data.build import rl_row
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.io import load_task
from coworkenv.train.rl_rollout import play, prompt_ids, render, tag_prompt
from coworkenv.workspace.tools import tool_schemas
from tests.support import EXAMPLES

TASKS = ["01_mail_forward_invoices.json", "08_multi_turn_vendor_demo.json", "11_robustness_incident_sync.json"]
"""Tool calls, questions the scripted user answers, injected faults the oracle retries."""


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)


@pytest.fixture(scope="module")
def specs():
    return {spec.id: spec for spec in (load_task(EXAMPLES / name) for name in TASKS)}


def ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def oracle_writer(tokenizer, specs, oracle_turns):
    """A `Generate` that writes the oracle's next turn for each context: its task is the prompt the context starts
    with, its turn the number of assistant headers after that prompt."""
    header = ids(tokenizer, "<|im_start|>assistant\n")
    turns = {}
    for spec in specs.values():
        start = tuple(prompt_ids(tokenizer, rl_row(spec)["prompt"], tool_schemas(spec.tools)))
        turns[start] = [ids(tokenizer, text) + [tokenizer.eos_token_id] for text in oracle_turns(spec)]

    def generate(contexts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
        out = []
        for context in contexts:
            start = next(s for s in turns if tuple(context[: len(s)]) == s)
            rest = context[len(start) :]
            turn = sum(rest[i : i + len(header)] == header for i in range(len(rest)))
            out.append(turns[start][turn][:max_new_tokens])
        return out

    return generate


def prompts(specs, copies: int) -> list:
    return [tag_prompt(rl_row(spec)["prompt"], spec.id) for spec in specs.values() for _ in range(copies)]


def test_the_oracle_plays_every_task_to_a_full_score(tokenizer, specs, oracle_turns):
    from coworkenv.agents import make_policy
    from coworkenv.episode.runner import run_episode

    batch = prompts(specs, copies=2)  # as TRL hands them over: each prompt num_generations times
    out = play(
        batch,
        specs,
        tokenizer=tokenizer,
        generate=oracle_writer(tokenizer, specs, oracle_turns),
        budget=6000,
        eos_ids=[tokenizer.eos_token_id],
        max_turns=64,
    )
    assert (
        len(out["prompt_ids"])
        == len(out["completion_ids"])
        == len(out["env_mask"])
        == len(out["episode"])
        == len(batch)
    )
    assert out["logprobs"] is None
    for start, completion, mask, episode in zip(
        out["prompt_ids"], out["completion_ids"], out["env_mask"], out["episode"], strict=True
    ):
        spec = specs[episode.task_id]
        assert episode.ending == "answer" and episode.grade.score == 1.0 and len(episode.turns) > 1
        assert all(turn.stopped for turn in episode.turns)
        assert len(mask) == len(completion) and 0 in mask and mask[-1] == 1
        model_tokens = [token for token, m in zip(completion, mask, strict=True) if m]
        assert model_tokens == [
            t for text in oracle_turns(spec) for t in ids(tokenizer, text) + [tokenizer.eos_token_id]
        ]
        # What TRL trains on is the conversation exactly as the template renders it, through the final answer.
        trajectory, _ = run_episode(spec, make_policy("oracle", spec))
        messages = trajectory.model_dump(mode="json", exclude_none=True)["messages"]
        whole = ids(tokenizer, render(tokenizer, messages, tool_schemas(spec.tools), add_generation_prompt=False))
        assert start + completion == whole[: len(whole) - whole[::-1].index(tokenizer.eos_token_id)]


def test_the_token_budget_ends_an_episode(tokenizer, specs, oracle_turns):
    out = play(
        prompts(specs, copies=1),
        specs,
        tokenizer=tokenizer,
        generate=oracle_writer(tokenizer, specs, oracle_turns),
        budget=80,
        eos_ids=[tokenizer.eos_token_id],
        max_turns=64,
    )
    for completion, episode in zip(out["completion_ids"], out["episode"], strict=True):
        assert len(completion) <= 80
        assert episode.ending == "turns" and episode.grade.completion < 1.0


def test_the_turn_budget_ends_an_episode(tokenizer, specs, oracle_turns):
    out = play(
        prompts(specs, copies=1),
        specs,
        tokenizer=tokenizer,
        generate=oracle_writer(tokenizer, specs, oracle_turns),
        budget=6000,
        eos_ids=[tokenizer.eos_token_id],
        max_turns=1,
    )
    assert [len(e.turns) for e in out["episode"]] == [1, 1, 1]
    assert all(e.ending == "turns" and e.grade.completion < 1.0 for e in out["episode"])
    assert all(mask[-1] == 1 for mask in out["env_mask"])  # nothing is appended after the last turn


def test_a_prompt_must_name_its_task(tokenizer, specs, oracle_turns):
    spec = next(iter(specs.values()))
    untagged = [{k: v for k, v in m.items() if v is not None} for m in rl_row(spec)["prompt"]]
    for prompt, needle in ((untagged, "name its task"), (tag_prompt(untagged, "no-such-task"), "no-such-task")):
        with pytest.raises(CoworkEnvError, match=needle):
            play(
                [prompt],
                specs,
                tokenizer=tokenizer,
                generate=oracle_writer(tokenizer, specs, oracle_turns),
                budget=100,
                eos_ids=[tokenizer.eos_token_id],
                max_turns=4,
            )
