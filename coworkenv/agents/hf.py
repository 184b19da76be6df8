"""`hf:<dir>`: a local transformers causal LM as an agent (docs/design/agents-and-rollouts.md, "Agents").

The model is loaded once per run from a local directory (never a hub). Each conversation is rendered with the
model's own chat template and `tools=`; replies for many episodes are generated together (`reply_batch`, chunks of
`batch_size`, `agents/kv.py`: each prompt prefilled only past its longest cached prefix, then decoded in one batch),
and each output is read with `parse_reply`, so malformed output is a format error of that turn, never a crash.
Greedy decoding by default (deterministic); with a temperature the sampling is seeded from the requests' seeds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coworkenv.agents.base import AGENTS, Reply, Request, failed_reply, full_reply
from coworkenv.agents.kv import DEFAULT_CACHE_MB, PrefixCache
from coworkenv.agents.parsing import parse_reply
from coworkenv.errors import CoworkEnvError, first_line
from coworkenv.spec.task import TaskSpec


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars from transformers (loading, saving) or datasets (TRL's tokenizing passes) meanwhile: commands
    print their own progress."""
    from datasets.utils import logging as datasets_logging
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled(), datasets_logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    datasets_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled[0]:
            logging.enable_progress_bar()
        if enabled[1]:
            datasets_logging.enable_progress_bar()


DTYPES = ("auto", "float32", "bfloat16", "float16")
"""`auto`: the checkpoint's own (float32 for the tiny model and imported GGUF bases)."""


def _calls_so_far(messages: Sequence[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages if isinstance(m, dict))


def _sampling_seed(chunk: Sequence[Request]) -> int:
    """One seed for a chunk, from its requests' seeds and turns: the same episodes at the same turns sample alike."""
    key = ",".join(f"{r.seed}:{len(r.messages)}" for r in chunk)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % (2**63)


class HFPolicy:
    """One episode's view of a shared `HFAgent`: `act` generates for this conversation alone. Replies are kept
    (`replies`) so a synchronous run can still see tokens, latency and format errors."""

    def __init__(self, agent: HFAgent, seed: int):
        self.agent = agent
        self.seed = seed
        self.replies: list[Reply] = []

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        reply = self.agent.reply_batch([Request(messages=messages, tools=tools, seed=self.seed)])[0]
        self.replies.append(reply)
        return reply.message


class HFAgent:
    """A causal LM with a chat template, from a local directory; one per run, shared by all its episodes."""

    kind = "hf"
    mode = "batch"

    def __init__(
        self,
        target: str | None,
        *,
        max_new_tokens: int | None = None,
        temperature: float = 0.0,
        batch_size: int = 48,
        device: str | None = None,
        dtype: str = "auto",
        cache_mb: int = DEFAULT_CACHE_MB,
        **_: Any,
    ):
        if not target:
            raise CoworkEnvError("agent 'hf' needs a local model directory: hf:<dir>, e.g. hf:models/tiny")
        path = Path(target)
        if not path.is_dir():
            raise CoworkEnvError(f"hf:{target}: no such model directory")
        if batch_size < 1 or temperature < 0 or (max_new_tokens is not None and max_new_tokens < 1) or cache_mb < 0:
            raise CoworkEnvError(
                f"hf:{target}: batch_size and max_new_tokens must be >= 1, temperature and cache_mb >= 0"
            )
        if dtype not in DTYPES:
            raise CoworkEnvError(f"hf:{target}: unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
        self.path = path
        self.model = path.resolve().name
        self.label = f"hf:{self.model}"
        self.temperature = float(temperature)
        self.batch_size = batch_size
        self.tokenizer, self.lm, self.device = _load(path, target, device, dtype)
        self.cache = PrefixCache(cache_mb * 2**20)
        """Keys and values of earlier turns and trials (`agents/kv.py`): a turn prefills only its new tokens."""
        generation = self.lm.generation_config
        self.max_new_tokens = max_new_tokens or generation.max_new_tokens or 256
        eos = generation.eos_token_id if generation.eos_token_id is not None else self.tokenizer.eos_token_id
        self.eos_ids = sorted({*(eos if isinstance(eos, list) else [eos]), self.tokenizer.eos_token_id} - {None})
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_ids[0]
        positions = getattr(self.lm.config, "max_position_embeddings", None) or 10**9
        self.context = min(positions, self.tokenizer.model_max_length or 10**9)
        """Prompt plus reply, in tokens: a prompt that fills it ends its episode (`Reply.full`)."""

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> HFPolicy:
        return HFPolicy(self, seed)

    def reply_batch(self, requests: Sequence[Request]) -> list[Reply]:
        """One reply per request, in order. Requests are generated together in chunks of `batch_size`, prompts of
        similar length together (less padding to compute); a request whose prompt cannot be rendered gets
        `Reply.error`, one that fills the model's context `Reply.full`, and the others go on."""
        replies: list[Reply | None] = [None] * len(requests)
        ready: list[tuple[int, list[int]]] = []
        for index, request in enumerate(requests):
            ids = self._prompt_ids(request)
            if isinstance(ids, Reply):
                replies[index] = ids
            else:
                ready.append((index, ids))
        ready.sort(key=lambda item: (len(item[1]), item[0]))
        for start in range(0, len(ready), self.batch_size):
            chunk = ready[start : start + self.batch_size]
            for (index, _), reply in zip(chunk, self._generate(chunk, [requests[i] for i, _ in chunk]), strict=True):
                replies[index] = reply
        return [r for r in replies if r is not None]

    def _prompt_ids(self, request: Request) -> list[int] | Reply:
        start = time.perf_counter()
        try:
            rendered = self.tokenizer.apply_chat_template(
                request.messages,
                tools=request.tools or None,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
            )
        except Exception as exc:  # noqa: BLE001 — a conversation the template refuses fails this trial, not the run
            return failed_reply(
                f"the chat template cannot render this conversation: {first_line(exc)}", time.perf_counter() - start
            )
        ids = list(rendered["input_ids"])
        if len(ids) >= self.context:
            return full_reply(
                f"the prompt is {len(ids)} tokens, the model's context {self.context}", time.perf_counter() - start
            )
        return ids

    def _generate(self, chunk: list[tuple[int, list[int]]], requests: list[Request]) -> list[Reply]:
        from coworkenv.agents.kv import generate

        start = time.perf_counter()
        budgets = [min(self.max_new_tokens, self.context - len(ids)) for _, ids in chunk]
        try:
            outputs = generate(
                self.lm,
                [ids for _, ids in chunk],
                budgets,
                cache=self.cache,
                stop_ids=self.eos_ids,
                temperature=self.temperature,
                seed=_sampling_seed(requests),
                device=self.device,
            )
        except Exception as exc:  # noqa: BLE001 — generation that crashes fails these trials with the reason
            latency = time.perf_counter() - start
            return [failed_reply(f"generation failed: {type(exc).__name__}: {first_line(exc)}", latency) for _ in chunk]
        replies = []
        for request, out in zip(requests, outputs, strict=True):
            raw = self.tokenizer.decode(out.tokens[:-1] if out.stopped else out.tokens, skip_special_tokens=True)
            parsed = parse_reply(raw, first_id=_calls_so_far(request.messages) + 1)
            meta = {"batch": len(chunk), "finish": "stop" if out.stopped else "length", "prefilled": out.prefilled}
            replies.append(
                Reply(
                    message=parsed.message(),
                    format_error=parsed.format_error,
                    prompt_tokens=out.prompt_tokens,
                    completion_tokens=len(out.tokens),
                    latency_s=out.seconds,
                    raw=raw,
                    meta=meta,
                )
            )
        return replies


def load_causal_lm(path: Path, label: str, *, device: str | None = None, **options: Any) -> tuple[Any, Any]:
    """(tokenizer, model) from local files only, moved to `device` when one is given (`options`: `from_pretrained`'s);
    whatever goes wrong is one line naming `label`. The agent and the training jobs load through it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **options)
        if device is not None:
            model.to(device)
    except Exception as exc:  # noqa: BLE001 — missing files, a bad config, an unknown architecture, bad weights, a bad device
        raise CoworkEnvError(f"{label}: cannot load a causal LM from it: {first_line(exc)}") from None
    return tokenizer, model


def _load(path: Path, target: str, device: str | None, dtype: str = "auto") -> tuple[Any, Any, str]:
    """(tokenizer, model, device) from local files only; anything wrong is one line naming the directory."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer, model = load_causal_lm(path, f"hf:{target}", device=device, dtype=dtype)
    if not tokenizer.chat_template:
        raise CoworkEnvError(f"hf:{target}: the tokenizer has no chat template")
    model.eval()
    return tokenizer, model, device


AGENTS.add("hf", lambda target=None, **options: HFAgent(target, **options))
