"""The RL job's multi-turn rollout (docs/design/training.md, "Training"): the `rollout_func` TRL's `GRPOTrainer` calls for
each generation batch. Every prompt (an `rl` row's opening messages, tagged with its task id) gets a
`TaskEnvironment` built from its spec; the trainer's own model writes the assistant turns of all open episodes in
lock-step, each turn is played in its workspace, and what the environment answers (tool results, the user's reply)
is appended as tokens the loss ignores (`env_mask` 0), until every episode has given its final answer or spent its
turn or token budget (`max_completion_length`, all turns and environment tokens together).

The sequence TRL trains on is exactly what the model saw while generating: the prompt, each turn's sampled tokens
as generated (never re-tokenized), and the chat template's rendering of the environment's messages between them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec
from coworkenv.train.environment import PlayedEpisode, TaskEnvironment

TASK_KEY = "task_id"
"""The key on a prompt's first message that names its task: TRL hands `rollout_func` the prompts alone, and two tasks
may open with the same words over different workspaces."""

RolloutFunction = Callable[[list[list[dict[str, Any]]], Any], dict[str, Any]]
Generate = Callable[[list[list[int]], int], list[list[int]]]
"""(contexts as token ids, most new tokens) → one turn per context, ending at its end-of-turn token if it has one."""


def tag_prompt(messages: list[dict[str, Any]], task_id: str) -> list[dict[str, Any]]:
    """The opening messages, null fields dropped, the first one carrying the task id (the chat template ignores it)."""
    clean = [{k: v for k, v in m.items() if v is not None} for m in messages]
    return [{**clean[0], TASK_KEY: task_id}, *clean[1:]]


def untag_prompt(prompt: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(task id, the messages as the model sees them) of a tagged prompt; TRL's dataset gives every message every key."""
    task_id = prompt[0].get(TASK_KEY) if prompt and isinstance(prompt[0], dict) else None
    if not isinstance(task_id, str):
        raise CoworkEnvError(
            f"an RL prompt must name its task on its first message ({TASK_KEY!r}); build the dataset with rl_dataset"
        )
    return task_id, [{k: v for k, v in m.items() if v is not None and k != TASK_KEY} for m in prompt]


def render(
    tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, add_generation_prompt: bool
) -> str:
    return tokenizer.apply_chat_template(
        messages, tools=tools or None, add_generation_prompt=add_generation_prompt, tokenize=False
    )


def prompt_ids(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[int]:
    """The opening messages and the first assistant header, as token ids."""
    return tokenizer(render(tokenizer, messages, tools, add_generation_prompt=True), add_special_tokens=False)[
        "input_ids"
    ]


def answer_ids(tokenizer: Any, messages: list[dict[str, Any]], start: int, tools: list[dict[str, Any]]) -> list[int]:
    """The tokens that follow the model's end-of-turn token: `messages[start:]` (the environment's answer) and the next
    assistant header. Taken from the template's rendering after the end-of-turn token of the turn before `start`, so
    a template that writes a newline after it keeps that newline here."""
    before = render(tokenizer, messages[:start], tools, add_generation_prompt=False)
    after = render(tokenizer, messages, tools, add_generation_prompt=True)
    end = before.rfind(tokenizer.eos_token) if tokenizer.eos_token else -1
    cut = end + len(tokenizer.eos_token) if end >= 0 else len(before)
    if not after.startswith(before[:cut]):
        raise CoworkEnvError(
            "the model's chat template re-renders earlier turns when messages are added; multi-turn RL needs one that does not"
        )
    return tokenizer(after[cut:], add_special_tokens=False)["input_ids"]


def generate_turns(trainer: Any, cache: Any, contexts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
    """One turn for each context, sampled with the trainer's model at its temperature; each ends at its first
    end-of-turn token (kept) or after `max_new_tokens`. `cache` (`agents.kv.PrefixCache`, one per rollout batch, while
    the weights stand still) keeps each episode's keys and values, so a turn computes only its new tokens. Sampling
    settings beyond a temperature (top-p, top-k, min-p, a repetition penalty) go through `generate` instead."""
    import torch
    from trl.models.utils import unwrap_model_for_generation

    from coworkenv.agents.kv import generate

    plain = trainer.top_p == 1.0 and not trainer.top_k and trainer.min_p is None and trainer.repetition_penalty == 1.0
    with (
        unwrap_model_for_generation(
            trainer.model_wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
            generation_kwargs=trainer.generation_kwargs,
            gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
        ) as model,
        torch.no_grad(),
    ):
        if not plain:
            return _hf_generate(trainer, model, contexts, max_new_tokens)
        seed = hash((trainer.args.seed, trainer.state.global_step, cache.lookups)) % 2**63
        outputs = generate(
            model,
            contexts,
            [max_new_tokens] * len(contexts),
            cache=cache,
            stop_ids=trainer.eos_token_ids,
            temperature=trainer.temperature,
            seed=seed,
            device=str(trainer.accelerator.device),
        )
    return [out.tokens for out in outputs]


def _hf_generate(trainer: Any, model: Any, contexts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
    import copy

    import torch

    settings = copy.deepcopy(trainer.generation_config)
    settings.max_new_tokens = max_new_tokens
    device = trainer.accelerator.device
    pad = trainer.processing_class.pad_token_id
    width = max(len(ids) for ids in contexts)
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in contexts], device=device)
    attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in contexts], device=device)
    output = model.generate(input_ids=input_ids, attention_mask=attention, generation_config=settings)
    eos = set(trainer.eos_token_ids)
    turns = []
    for row in output[:, width:].tolist():
        stop = next((i for i, token in enumerate(row) if token in eos), None)
        turns.append(row if stop is None else row[: stop + 1])
    return turns


def play(
    prompts: list[list[dict[str, Any]]],
    specs: Mapping[str, TaskSpec],
    *,
    tokenizer: Any,
    generate: Generate,
    budget: int,
    eos_ids: Sequence[int],
    max_turns: int,
) -> dict[str, Any]:
    """Play one episode per prompt, its turns written by `generate`, at most `budget` tokens after each prompt; TRL's
    rollout output plus each completion's `episode` (a `PlayedEpisode`, which the reward functions read) and
    `env_mask` (1 on the model's tokens, 0 on the environment's)."""
    eos = set(eos_ids)
    environments = []
    for prompt in prompts:
        task_id, messages = untag_prompt(prompt)
        if task_id not in specs:
            raise CoworkEnvError(f"RL prompt for task {task_id!r}, which is not among the job's tasks")
        environments.append(TaskEnvironment(specs[task_id], max_turns=max_turns, prompt=messages))
    starts = [prompt_ids(tokenizer, env.messages, env.tools) for env in environments]
    completions: list[list[int]] = [[] for _ in environments]
    masks: list[list[int]] = [[] for _ in environments]
    running = [i for i, env in enumerate(environments) if not env.done]
    while running:
        rooms = [budget - len(completions[i]) for i in running]
        turns = generate([starts[i] + completions[i] for i in running], max(rooms))
        still = []
        for i, turn, room in zip(running, turns, rooms, strict=True):
            turn = turn[:room]
            stopped = bool(turn) and turn[-1] in eos
            completions[i] += turn
            masks[i] += [1] * len(turn)
            env = environments[i]
            start = len(env.messages)
            env.step(tokenizer.decode(turn[:-1] if stopped else turn, skip_special_tokens=True), stopped=stopped)
            if env.done or not stopped:
                continue  # it gave its answer or spent its turns, or ran out of tokens mid-turn (`outcome` ends it)
            answer = answer_ids(tokenizer, env.messages, start + 1, env.tools)
            if len(completions[i]) + len(answer) >= budget:
                env.stop()
                continue
            completions[i] += answer
            masks[i] += [0] * len(answer)
            still.append(i)
        running = still
    episodes: list[PlayedEpisode] = [env.outcome() for env in environments]
    return {
        "prompt_ids": starts,
        "completion_ids": completions,
        "logprobs": None,
        "env_mask": masks,
        "episode": episodes,
    }


def rollout_function(specs: Mapping[str, TaskSpec], *, max_turns: int) -> RolloutFunction:
    """`GRPOTrainer(rollout_func=...)`: `play` over the given tasks (task id → spec)."""

    def rollout(prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, Any]:
        from coworkenv.agents.kv import DEFAULT_CACHE_MB, PrefixCache

        cache = PrefixCache(DEFAULT_CACHE_MB * 2**20)
        return play(
            prompts,
            specs,
            tokenizer=trainer.processing_class,
            generate=functools.partial(generate_turns, trainer, cache),
            budget=trainer.max_completion_length,
            eos_ids=trainer.eos_token_ids,
            max_turns=max_turns,
        )

    return rollout
