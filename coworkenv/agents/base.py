"""The agent interface (docs/design/agents-and-rollouts.md, "Agents"): an agent is named by a spec string, `kind[:target]` —
`oracle`, `null`, `random`, `hf:<model dir>`, `openai:<model>` — and made once per run by `load_agent`. It hands
out one `Policy` per episode (`agent.policy(spec, seed=...)`), whose `act(messages, tools)` returns the next
assistant message; that is all `run_episode` needs.

The rollout engine asks for more than a message: a `Reply` also says how long the turn took, how many tokens it
used, and whether the model's output was malformed (a *format error*: recorded on the turn, the text kept as a
plain message, never a crash) or no reply came at all (an *error*: the trial fails with that reason). How the
engine drives an agent is its `mode`:

- `local`: policies are plain objects, cheap to run anywhere (scripted policies); run in a process pool.
- `batch`: one model serves many episodes; the engine steps episodes in lock-step and calls
  `agent.reply_batch(requests)` with one request per waiting episode (a local transformers model).
- `async`: replies come from an endpoint; the engine runs episodes as asyncio tasks and awaits
  `agent.areply(request)` (an OpenAI-compatible endpoint).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from coworkenv.episode.runner import Policy
from coworkenv.errors import CoworkEnvError
from coworkenv.registry import Registry
from coworkenv.spec.task import TaskSpec

Mode = Literal["local", "batch", "async"]
Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]


@dataclass(frozen=True)
class Request:
    """What an agent answers: the conversation so far, the tools it may call, and the episode's seed (sampling
    agents derive their randomness from it, so a trial is reproducible where the agent is)."""

    messages: Messages
    tools: Tools
    seed: int = 0


@dataclass(frozen=True)
class Reply:
    """One assistant turn and what it cost."""

    message: dict[str, Any]
    """An OpenAI assistant message (`content`, optional `tool_calls`): always well-formed."""
    format_error: str | None = None
    """Why the model's raw output could not be read as tool calls; the turn then carries the text as a plain message."""
    error: str | None = None
    """No reply at all (endpoint down after retries, generation crashed): the trial fails with this reason."""
    full: str | None = None
    """The conversation no longer fits the model's context, so no further turn can be written: the episode ends where
    it is and is graded as it stands (the model's own doing, like a spent turn budget, not a failure of the run)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    raw: str | None = None
    """The model's raw text, when it was parsed into `message`."""
    meta: dict[str, Any] = field(default_factory=dict)


def failed_reply(reason: str, latency_s: float = 0.0) -> Reply:
    """The reply of a turn that produced nothing: an empty assistant message and the reason."""
    return Reply(message={"role": "assistant", "content": ""}, error=reason, latency_s=latency_s)


def full_reply(reason: str, latency_s: float = 0.0) -> Reply:
    """The reply of a turn that cannot be written, the context being full: the episode ends (`Reply.full`)."""
    return Reply(message={"role": "assistant", "content": ""}, full=reason, latency_s=latency_s)


@runtime_checkable
class Agent(Protocol):
    label: str
    """How rows name it: `oracle`, `random`, `hf:<dir name>`, `openai:<model>`."""
    kind: str
    """The registry name: `oracle`, `null`, `random`, `hf`, `openai`."""
    model: str
    """The model behind it ('' for scripted agents)."""
    mode: Mode

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> Policy: ...


AgentFactory = Callable[..., Agent]

AGENTS: Registry[AgentFactory] = Registry("agent")
"""kind → factory(target: str | None, **options) → Agent."""


def parse_agent(text: str) -> tuple[str, str | None]:
    """`kind[:target]` → (kind, target); a clear error for an unknown kind or a missing/unexpected target."""
    if not isinstance(text, str) or not text.strip():
        raise CoworkEnvError("an agent is named kind[:target], e.g. oracle, random, hf:models/tiny, openai:gpt-4o-mini")
    kind, sep, target = text.strip().partition(":")
    AGENTS.get(kind)  # unknown kind: one line with the known ones
    return kind, (target if sep else None)


def load_agent(text: str, **options: Any) -> Agent:
    """The agent a spec string names, made once for a whole run (a model is loaded here, not per episode)."""
    kind, target = parse_agent(text)
    return AGENTS.get(kind)(target, **options)


def make_policy(text: str, spec: TaskSpec, *, seed: int = 0, **options: Any) -> Policy:
    """One episode's policy from an agent spec string (`make_policy("random", spec, seed=3)`). A run of many
    episodes loads its agent once with `load_agent` instead: a model agent loads its weights there."""
    return load_agent(text, **options).policy(spec, seed=seed)


def reply_of(policy: Policy, request: Request) -> Reply:
    """A policy's `act` as a timed `Reply` (policies without token counts or format errors of their own)."""
    start = time.perf_counter()
    message = policy.act(request.messages, request.tools)
    return Reply(message=message, latency_s=time.perf_counter() - start)
