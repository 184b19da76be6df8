"""Small real agents for the engine's tests. The `local` ones are registered in `AGENTS` (`test-…` kinds): a
sandboxed worker imports this module to make them (the rlimit runtime sees the repository; bubblewrap mounts only
the package, so tests run them under rlimit or in-process). The batch and async ones wrap the oracle and count how
the engine drives them."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterable
from typing import Any

from coworkenv.agents.base import AGENTS, Reply, Request, failed_reply, full_reply
from coworkenv.agents.scripted import ScriptedPolicy
from coworkenv.grading.consistency import with_violation
from coworkenv.rollout.trial_record import trial_seed
from coworkenv.spec.task import TaskSpec

SABOTAGE, RAISES, SLOW, HOG = "test-sabotage", "test-raises", "test-slow", "test-hog"


class LocalAgent:
    mode = "local"
    model = ""

    def __init__(self, kind: str, target: str | None):
        self.kind = self.label = kind
        self.target = target

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> Any:
        if self.kind == SABOTAGE:  # the oracle, plus one call that breaks the first prohibited rule before its answer
            return ScriptedPolicy(spec, steps=with_violation(spec, spec.prohibited[0]) if spec.prohibited else None)
        return _Misbehaving(self.kind, self.target, spec)


class _Misbehaving(ScriptedPolicy):
    def __init__(self, kind: str, target: str | None, spec: TaskSpec):
        super().__init__(spec)
        self.kind, self.target, self.turns = kind, target, 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        self.turns += 1
        if self.kind == RAISES and self.turns == 2:
            raise RuntimeError("the policy fell over")
        if self.kind == SLOW:
            time.sleep(float(self.target or 0.05))
        if self.kind == HOG:
            return {"role": "assistant", "content": str(len(bytearray(8 * 1024**3)))}
        return super().act(messages, tools)


for _kind in (SABOTAGE, RAISES, SLOW, HOG):
    AGENTS.add(_kind, lambda target=None, _kind=_kind, **_: LocalAgent(_kind, target))


class _OracleBySeed:
    """The oracle of each episode, found by the request's seed (each trial's seed is its own)."""

    model = ""

    def __init__(self, specs: Iterable[TaskSpec], trials: int, seed: int = 0):
        self.specs = {trial_seed(seed, s.id, t): s for s in specs for t in range(trials)}
        self.policies: dict[int, ScriptedPolicy] = {}
        self.fail: dict[int, str] = {}
        """seed → how to fail that episode's first turn: `error` (Reply.error), `raise`, `garbage` (not a message); or
        `full`: its third turn finds the context full (Reply.full)."""

    def fail_task(self, task_id: str, trials: int, how: str, seed: int = 0) -> None:
        for t in range(trials):
            self.fail[trial_seed(seed, task_id, t)] = how

    def answer(self, request: Request) -> Reply:
        how = self.fail.get(request.seed)
        if how == "raise":
            raise RuntimeError("the model server went away")
        if how == "error":
            return failed_reply("endpoint down after 3 retries")
        if how == "garbage":
            return Reply(message={"role": "assistant", "tool_calls": [{"function": {}}]})
        if how == "full" and sum(m["role"] == "assistant" for m in request.messages) == 2:
            return full_reply("the prompt is 9000 tokens, the model's context 8192")
        policy = self.policies.setdefault(request.seed, ScriptedPolicy(self.specs[request.seed]))
        return Reply(
            message=policy.act(request.messages, request.tools),
            prompt_tokens=len(request.messages),
            completion_tokens=1,
            format_error="bad json" if len(request.messages) == 2 else None,
        )


class BatchOracle(_OracleBySeed):
    """A `batch` agent: the oracle of every episode, one list of replies per call; records each batch's size."""

    kind = label = "test-batch"
    mode = "batch"

    def __init__(self, specs: Iterable[TaskSpec], trials: int, seed: int = 0):
        super().__init__(specs, trials, seed)
        self.sizes: list[int] = []
        self.seeds_per_call: list[list[int]] = []

    def reply_batch(self, requests: list[Request]) -> list[Reply]:
        self.sizes.append(len(requests))
        self.seeds_per_call.append([r.seed for r in requests])
        if any(self.fail.get(r.seed) == "raise" for r in requests):
            raise RuntimeError("the model server went away")
        return [self.answer(r) for r in requests]


class AsyncOracle(_OracleBySeed):
    """An `async` agent: the oracle, awaited; counts how many replies are in flight at once."""

    kind = label = "test-async"
    mode = "async"

    def __init__(self, specs: Iterable[TaskSpec], trials: int, seed: int = 0, hang: set[int] | None = None):
        super().__init__(specs, trials, seed)
        self.in_flight = self.max_in_flight = self.calls = 0
        self.hang = hang or set()

    async def areply(self, request: Request) -> Reply:
        self.in_flight += 1
        self.calls += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            for _ in range(3):  # yield to the loop, as a network wait would, so that other episodes get going
                await asyncio.sleep(0)
            if request.seed in self.hang:
                await asyncio.sleep(3600)
            return self.answer(request)
        finally:
            self.in_flight -= 1


class SlowBatchOracle(BatchOracle):
    """A `batch` agent whose every call takes `tick_s` of wall time (a whole batch generated together) and whose
    replies report `latency_s` (by seed: `slow`, else `default`) as what each cost its own episode."""

    def __init__(
        self, specs: Iterable[TaskSpec], trials: int, *, tick_s: float, latency_s: float = 0.001, seed: int = 0
    ):
        super().__init__(specs, trials, seed)
        self.tick_s, self.latency_s = tick_s, latency_s
        self.slow: dict[int, float] = {}

    def reply_batch(self, requests: list[Request]) -> list[Reply]:
        time.sleep(self.tick_s)
        replies = super().reply_batch(requests)
        return [
            dataclasses.replace(reply, latency_s=self.slow.get(r.seed, self.latency_s))
            for r, reply in zip(requests, replies, strict=True)
        ]
