"""The `hf:` agent's generation engine (`agents/kv.py`) on the real tiny model: greedy replies equal transformers'
own `generate` one prompt at a time, whatever the batch and whatever the cache holds; a later turn computes only its
new tokens; greedy duplicates are decoded once; the cache keeps to its byte budget; sampling is seeded; and through
the agent, the episodes of a run give the same trajectories with the cache as without it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from coworkenv.agents import load_agent
from coworkenv.agents.kv import Entry, PrefixCache, common_prefix, generate
from coworkenv.rollout.engine import run_trials
from coworkenv.spec.io import load_tasks
from tests.support import EXAMPLES
from tests.support.gguf_files import needs_smollm2

GiB = 2**30


@pytest.fixture(scope="module")
def lm(tiny_model_dir: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    return tokenizer, AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()


def reference(model, ids: list[int], budget: int, stop: list[int]) -> list[int]:
    """transformers' greedy `generate` on one prompt, cut after its first stop token."""
    out = model.generate(
        torch.tensor([ids]),
        max_new_tokens=budget,
        do_sample=False,
        eos_token_id=stop,
        pad_token_id=stop[0],
        temperature=None,
        top_p=None,
        top_k=None,
    )[0, len(ids) :].tolist()
    end = next((i for i, t in enumerate(out) if t in stop), None)
    return out if end is None else out[: end + 1]


def prompts(tokenizer, n: int) -> list[list[int]]:
    texts = [
        "Read notes.txt",
        "Forward the invoice to accounting@acme.test and archive it",
        "hi",
        "List the open tickets, newest first",
    ]
    conversations = [[{"role": "user", "content": texts[i % len(texts)] * (1 + i)}] for i in range(n)]
    return [
        list(tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
        for c in conversations
    ]


def stops(tokenizer) -> list[int]:
    return [tokenizer.convert_tokens_to_ids("<|im_end|>")]


def test_greedy_batches_equal_one_prompt_at_a_time_with_transformers(lm) -> None:
    tokenizer, model = lm
    batch = prompts(tokenizer, 5)
    budgets = [12, 3, 12, 7, 1]
    outputs = generate(model, batch, budgets, cache=PrefixCache(GiB), stop_ids=stops(tokenizer))
    for ids, budget, out in zip(batch, budgets, outputs, strict=True):
        assert out.tokens == reference(model, ids, budget, stops(tokenizer))
        assert out.prompt_tokens == len(ids) and 0 < out.prefilled <= len(ids) and out.seconds > 0
        assert out.stopped == (out.tokens[-1] in stops(tokenizer)) and len(out.tokens) <= budget
    assert outputs[0].prefilled == len(batch[0])  # the later prompts share their opening tokens with the first


def test_a_later_turn_prefills_only_its_new_tokens_and_replies_as_if_from_scratch(lm) -> None:
    tokenizer, model = lm
    cache = PrefixCache(GiB)
    first = prompts(tokenizer, 2)
    replies = generate(model, first, [10, 10], cache=cache, stop_ids=stops(tokenizer))
    turn = tokenizer.encode("\n<|im_start|>user\nand now?<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    later = [ids + out.tokens + turn for ids, out in zip(first, replies, strict=True)]
    again = generate(model, later, [10, 10], cache=cache, stop_ids=stops(tokenizer))
    for ids, before, out in zip(later, first, again, strict=True):
        assert out.tokens == reference(model, ids, 10, stops(tokenizer))
        # only what follows the earlier prompt and the reply tokens fed back is computed (the last reply token never is)
        assert out.prefilled <= len(ids) - len(before)
    assert cache.hits >= 2 and cache.reused_tokens >= sum(map(len, first))


def test_greedy_duplicates_are_decoded_once_and_sampling_is_seeded(lm) -> None:
    tokenizer, model = lm
    [ids] = prompts(tokenizer, 1)
    cache = PrefixCache(GiB)
    same = generate(model, [ids, ids, ids], [8, 8, 8], cache=cache, stop_ids=stops(tokenizer))
    assert same[0].tokens == same[1].tokens == same[2].tokens
    assert [o.prefilled for o in same] == [len(ids), 0, 0] and cache.lookups == 1
    a = generate(model, [ids, ids], [8, 8], cache=PrefixCache(GiB), stop_ids=stops(tokenizer), temperature=1.0, seed=3)
    b = generate(model, [ids, ids], [8, 8], cache=PrefixCache(GiB), stop_ids=stops(tokenizer), temperature=1.0, seed=3)
    assert [o.tokens for o in a] == [o.tokens for o in b]
    assert [o.prefilled for o in a] == [
        len(ids),
        1,
    ]  # the second trial reuses the first's prompt: its last token is computed


def test_the_cache_keeps_to_its_budget_and_drops_what_a_longer_entry_extends() -> None:
    def entry(ids: list[int]) -> Entry:
        kv = torch.zeros(1, 1, len(ids), 4)
        return Entry(torch.tensor(ids), [(kv, kv.clone())])

    cache = PrefixCache(budget_bytes=entry([0] * 10).nbytes)
    cache.add(entry([1, 2, 3]))
    cache.add(entry([1, 2, 3, 4, 5]))  # extends the first: it replaces it
    assert [e.ids.tolist() for e in cache.entries.values()] == [[1, 2, 3, 4, 5]]
    cache.add(entry([7, 8, 9, 9, 9, 9]))  # over budget together: the least recently used goes
    assert [e.ids.tolist() for e in cache.entries.values()] == [[7, 8, 9, 9, 9, 9]]
    found, n = cache.match(torch.tensor([7, 8, 9, 1]))
    assert n == 3 and found is not None
    _, n = cache.match(torch.tensor([7, 8, 9, 9, 9, 9]))
    assert n == 5  # the last prompt token is always computed
    assert (
        common_prefix(torch.tensor([1, 2]), torch.tensor([1, 2, 3])) == 2
        and common_prefix(torch.tensor([]), torch.tensor([1])) == 0
    )


def test_episodes_play_the_same_with_the_cache_as_without(tiny_model_dir: Path) -> None:
    specs = load_tasks(EXAMPLES)[:3]

    def play(cache_mb: int) -> list:
        agent = load_agent(f"hf:{tiny_model_dir}", max_new_tokens=16, batch_size=4, device="cpu", cache_mb=cache_mb)
        records = run_trials(specs, agent, trials=2, runtime="none", max_turns=3)
        return (
            [[(t["prompt_tokens"], t["completion_tokens"]) for t in r.trace] for r in records],
            [r.messages for r in records],
            agent,
        )

    traces, messages, agent = play(512)
    no_traces, no_messages, _ = play(0)
    assert messages == no_messages and traces == no_traces
    assert agent.cache.reused_tokens > 0


@needs_smollm2
@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_smollm2_replies_equal_transformers_and_a_second_turn_reuses_the_first(smollm2_model) -> None:
    """The real 135M model: the engine's greedy replies to tool prompts equal `generate`'s, and the agent's second
    turn of an episode computes only what the first did not."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coworkenv.agents import Request
    from coworkenv.episode.runner import initial_messages

    tokenizer = AutoTokenizer.from_pretrained(smollm2_model.path)
    model = AutoModelForCausalLM.from_pretrained(smollm2_model.path, dtype=torch.float32).eval()
    specs = load_tasks(EXAMPLES)[:2]
    batch = [
        list(
            tokenizer.apply_chat_template(
                initial_messages(s), tools=s.tool_schemas, add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"]
        )
        for s in specs
    ]
    stop = stops(tokenizer)
    for ids, out in zip(batch, generate(model, batch, [24, 24], cache=PrefixCache(GiB), stop_ids=stop), strict=True):
        assert out.tokens == reference(model, ids, 24, stop)
    agent = load_agent(f"hf:{smollm2_model.path}", max_new_tokens=24, device="cpu")
    first = Request(messages=initial_messages(specs[0]), tools=specs[0].tool_schemas)
    reply = agent.reply_batch([first])[0]
    second = Request(
        messages=[*first.messages, reply.message, {"role": "user", "content": "Go on."}], tools=first.tools
    )
    again = agent.reply_batch([second])[0]
    assert (
        reply.meta["prefilled"] == reply.prompt_tokens
        and again.meta["prefilled"] <= again.prompt_tokens - reply.prompt_tokens
    )
