"""Generation for the `hf:` agent that never computes a prompt token twice (docs/design/agents-and-rollouts.md, "Agents").

An episode's prompt at turn t+1 is its prompt at turn t plus the reply and the tool results (the chat template renders
earlier messages the same however many follow), and the k trials of a task start from the same prompt. So the
attention keys and values of every prompt are kept (`PrefixCache`, keyed by token ids, least recently used first out
under a byte budget), and a new prompt is prefilled only from the end of its longest cached prefix: a turn costs its
new tokens, a task's second trial one token. Greedy requests with the same prompt are decoded once. Decoding is
batched over the requests, their caches left-padded to one length into preallocated buffers (`Buffers`), with rows
dropped as they finish.

On CPU a 135M model prefills about 25 times faster per token than it decodes one sequence, and an episode's prompt is
~20 times longer than its replies: without the cache every turn re-prefills the whole conversation, and that is most of
an evaluation's time (docs/benchmarks.md, "Local model inference").
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_CACHE_MB = 3072
"""Keys and values kept between turns: a 135M model (30 layers, 3 key-value heads of 64) holds 46 KB a token in
float32, so about 68k tokens — 16 open episodes of 2k tokens with room to spare."""


@dataclass
class Entry:
    ids: Any
    """The token ids (a 1-D LongTensor) whose keys and values `layers` hold."""
    layers: list[tuple[Any, Any]]
    """Per layer (keys, values), each [1, heads, len(ids), head_dim]."""

    @property
    def nbytes(self) -> int:
        return sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in self.layers)


def common_prefix(a: Any, b: Any) -> int:
    """The length of the longest common prefix of two 1-D tensors."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = (a[:n] != b[:n]).nonzero()
    return int(differ[0, 0]) if len(differ) else n


class PrefixCache:
    """Keys and values of earlier prompts and replies, looked up by longest common prefix of token ids."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.entries: OrderedDict[int, Entry] = OrderedDict()
        self._next = 0
        self.hits = self.lookups = self.reused_tokens = 0

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in self.entries.values())

    def match(self, ids: Any) -> tuple[Entry | None, int]:
        """The entry sharing the longest prefix with `ids` and that length, at most len(ids) - 1: the last prompt token
        is always computed, its logits give the first new token."""
        self.lookups += 1
        best, length = None, 0
        for key, entry in self.entries.items():
            n = min(common_prefix(entry.ids, ids), len(ids) - 1)
            if n > length:
                best, length, best_key = entry, n, key
        if best is not None:
            self.entries.move_to_end(best_key)
            self.hits += 1
            self.reused_tokens += length
        return best, length

    def add(self, entry: Entry) -> None:
        """Keep `entry`; entries it extends are dropped (whatever matched them matches it as far), then the least
        recently used ones until the budget holds."""
        for key in [
            k
            for k, e in self.entries.items()
            if len(e.ids) <= len(entry.ids) and common_prefix(e.ids, entry.ids) == len(e.ids)
        ]:
            del self.entries[key]
        if entry.nbytes > self.budget:
            return
        self.entries[self._next] = entry
        self._next += 1
        while self.nbytes > self.budget:
            self.entries.popitem(last=False)


@dataclass
class Output:
    tokens: list[int]
    stopped: bool
    """Ended on an end-of-turn token (the last of `tokens`); else the budget ran out."""
    prompt_tokens: int
    prefilled: int
    """Prompt tokens actually computed (the rest came from the cache)."""
    seconds: float
    """Time charged to this request: its own prefill and the decoding steps it took part in."""


@dataclass
class _Row:
    index: int
    ids: Any
    budget: int
    tokens: list[int] = field(default_factory=list)
    seconds: float = 0.0
    prefilled: int = 0


def _prefill(lm: Any, cache: PrefixCache, row: _Row, device: str) -> tuple[Any, list[tuple[Any, Any]]]:
    """The logits after the whole prompt, and its keys and values, computing only what the cache lacks."""
    import torch
    from transformers import DynamicCache

    entry, n = cache.match(row.ids)
    past = (
        DynamicCache(ddp_cache_data=[(k[..., :n, :], v[..., :n, :]) for k, v in entry.layers])
        if entry is not None
        else DynamicCache()
    )
    todo = row.ids[n:].to(device)[None]
    positions = torch.arange(n, len(row.ids), device=device)[None]
    out = lm(input_ids=todo, position_ids=positions, cache=past, use_cache=True, logits_to_keep=1)
    row.prefilled = len(row.ids) - n
    layers = [(layer.keys, layer.values) for layer in out.cache.layers]
    cache.add(Entry(row.ids, layers))
    return out.logits[0, -1], layers


class Buffers:
    """The batch's keys and values, each row's right-aligned in a buffer with room for the tokens still to come, so a
    decoding step writes in place instead of copying the whole cache (as `DynamicCache`'s concatenation does)."""

    def __init__(self, rows: list[list[tuple[Any, Any]]], room: int):
        import torch

        lengths = [k.shape[2] for k, _ in (layers[0] for layers in rows)]
        self.width = max(lengths)
        self.pads = [self.width - n for n in lengths]
        k0, _ = rows[0][0]
        shape = (len(rows), k0.shape[1], self.width + room, k0.shape[3])
        self.keys, self.values = [], []
        for layer in range(len(rows[0])):
            keys, values = (
                torch.zeros(shape, dtype=k0.dtype, device=k0.device),
                torch.zeros(shape, dtype=k0.dtype, device=k0.device),
            )
            for b, (layers, pad) in enumerate(zip(rows, self.pads, strict=True)):
                keys[b, :, pad : self.width] = layers[layer][0][0]
                values[b, :, pad : self.width] = layers[layer][1][0]
            self.keys.append(keys)
            self.values.append(values)
        self.length = self.width

    def cache(self) -> Any:
        """A transformers cache over the buffers: each layer's update writes the step's keys and values in place."""
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        buffers = self

        class Layer(DynamicLayer):
            def __init__(self, index: int):
                super().__init__()
                self.index, self.is_initialized = index, True

            def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
                end = buffers.length + key_states.shape[2]
                buffers.keys[self.index][:, :, buffers.length : end] = key_states
                buffers.values[self.index][:, :, buffers.length : end] = value_states
                self.keys, self.values = buffers.keys[self.index][:, :, :end], buffers.values[self.index][:, :, :end]
                return self.keys, self.values

            def get_seq_length(self) -> int:
                return buffers.length

        cache = DynamicCache()
        cache.layers = [Layer(i) for i in range(len(self.keys))]
        return cache

    def keep(self, rows: Any) -> None:
        """Only these batch rows from now on (the others finished)."""
        self.keys = [k[rows] for k in self.keys]
        self.values = [v[rows] for v in self.values]
        self.pads = [self.pads[i] for i in rows.tolist()]

    def row(self, b: int) -> list[tuple[Any, Any]]:
        """Row b's keys and values without its padding, as [1, heads, n, head_dim] per layer."""
        pad = self.pads[b]
        end = self.length
        return [
            (k[b : b + 1, :, pad:end].clone(), v[b : b + 1, :, pad:end].clone())
            for k, v in zip(self.keys, self.values, strict=True)
        ]


def generate(
    lm: Any,
    prompts: Sequence[list[int]],
    budgets: Sequence[int],
    *,
    cache: PrefixCache,
    stop_ids: Sequence[int],
    temperature: float = 0.0,
    seed: int = 0,
    device: str = "cpu",
) -> list[Output]:
    """One reply per prompt (`budgets`: new tokens each may take). Greedy when `temperature` is 0, else sampled with a
    generator seeded by `seed`. Every row's final keys and values go into `cache` for the next turn."""
    import torch

    if not prompts:
        return []
    greedy = temperature <= 0
    unique: dict[tuple[int, ...], int] = {}
    rows: list[_Row] = []
    alias: list[int] = []
    for i, (ids, budget) in enumerate(zip(prompts, budgets, strict=True)):
        key = tuple(ids)
        if greedy and key in unique and rows[unique[key]].budget == budget:
            alias.append(unique[key])
            continue
        unique.setdefault(key, len(rows))
        alias.append(len(rows))
        rows.append(_Row(i, torch.tensor(ids, dtype=torch.long), budget))
    generator = None if greedy else torch.Generator(device=device).manual_seed(seed)
    stops = set(stop_ids)

    def pick(logits: Any) -> Any:
        if greedy:
            return logits.argmax(-1)
        probs = torch.softmax(logits.float() / temperature, dim=-1)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1)

    with torch.inference_mode():
        states, first = [], []
        for row in rows:
            start = time.perf_counter()
            logits, layers = _prefill(lm, cache, row, device)
            first.append(pick(logits[None])[0])
            states.append(layers)
            row.seconds += time.perf_counter() - start
        _decode(lm, rows, states, torch.stack(first), stops, pick, cache, device)
    outputs = []
    for i, r in enumerate(alias):
        row = rows[r]
        stopped = bool(row.tokens) and row.tokens[-1] in stops
        mine = row.index == i
        outputs.append(Output(list(row.tokens), stopped, len(row.ids), row.prefilled if mine else 0, row.seconds))
    return outputs


def _decode(
    lm: Any,
    rows: list[_Row],
    states: list[list[tuple[Any, Any]]],
    first: Any,
    stops: set[int],
    pick: Any,
    cache: PrefixCache,
    device: str,
) -> None:
    """Decode all rows together from their first tokens until each stops or spends its budget."""
    import torch

    live = list(range(len(rows)))
    buffers = Buffers(states, room=max(r.budget for r in rows))
    lengths = torch.tensor([len(r.ids) for r in rows], device=device)
    step = first
    while True:
        for j, token in enumerate(step.tolist()):
            rows[live[j]].tokens.append(token)
        done = [j for j, b in enumerate(live) if rows[b].tokens[-1] in stops or len(rows[b].tokens) >= rows[b].budget]
        if done:
            for j in done:  # its cache holds the prompt and every reply token but the last (never fed back)
                b = live[j]
                fed = torch.cat([rows[b].ids, torch.tensor(rows[b].tokens[:-1], dtype=torch.long)])
                cache.add(Entry(fed, buffers.row(j)))
            keep = torch.tensor([j for j in range(len(live)) if j not in done], dtype=torch.long, device=device)
            live = [live[j] for j in keep.tolist()]
            if not live:
                return
            buffers.keep(keep)
            lengths, step = lengths[keep], step[keep]
        start = time.perf_counter()
        mask = torch.ones(len(live), buffers.length + 1, dtype=torch.long, device=device)
        for j, pad in enumerate(buffers.pads):
            mask[j, :pad] = 0
        out = lm(
            input_ids=step[:, None],
            position_ids=lengths[:, None],
            attention_mask=mask,
            cache=buffers.cache(),
            use_cache=True,
            logits_to_keep=1,
        )
        buffers.length += 1
        lengths = lengths + 1
        step = pick(out.logits[:, -1])
        spent = time.perf_counter() - start
        for b in live:
            rows[b].seconds += spent
