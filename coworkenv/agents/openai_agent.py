"""`openai:<model>`: any OpenAI-compatible endpoint (vLLM, SGLang, `transformers serve`, hosted APIs) as an agent
(docs/design/agents-and-rollouts.md, "Agents").

The agent is made once per run with the endpoint's settings (`llm=LLMConfig(...)`, or `base_url=`, `api_key_env=`,
`timeout_s=`, `max_retries=`, `concurrency=`, `temperature=`, `max_tokens=`, `extra_body=`; the model comes from the
spec string). Each turn is one chat completion with native tool calling (`coworkenv.llm.async_chat`): the endpoint's
`tool_calls` become the assistant message; a server that writes its calls as text instead gets them parsed
(`agents.parsing`); malformed calls are a format error of the turn. A turn without a reply after the retries is a
`Reply.error` with a redacted reason: the trial fails, the run goes on.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import ValidationError

from coworkenv.agents.base import AGENTS, Reply, Request, failed_reply
from coworkenv.agents.parsing import native_calls, parse_reply
from coworkenv.errors import CoworkEnvError
from coworkenv.llm.async_chat import AsyncChat, Completion, run_to_end
from coworkenv.llm.client import LLMConfig, LLMError
from coworkenv.spec.task import TaskSpec

ENDPOINT_OPTIONS = (
    "base_url",
    "api_key_env",
    "timeout_s",
    "max_retries",
    "backoff_s",
    "concurrency",
    "temperature",
    "max_tokens",
    "extra_body",
)
"""Options that override the endpoint's settings (`LLMConfig` fields of the same names)."""


class NoReply(CoworkEnvError):
    """A policy's `act` got no reply from its endpoint (the reason is redacted); the trial fails with it."""


def endpoint_config(model: str, llm: LLMConfig | None = None, **options: Any) -> LLMConfig:
    """The endpoint's settings for `model`: `llm` (e.g. the run's endpoint) with the options that are given."""
    overrides = {name: options[name] for name in ENDPOINT_OPTIONS if options.get(name) is not None}
    if llm is None and "base_url" not in overrides:
        raise CoworkEnvError(
            f"agent openai:{model} needs an endpoint: a base URL (base_url=...) or the run's LLM endpoint"
        )
    fields = {**(llm.model_dump() if llm is not None else {}), "model": model, **overrides}
    try:
        return LLMConfig.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise CoworkEnvError(f"agent openai:{model}: {where}: {first['msg']}") from None


def _tool_calls_before(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def reply_from(completion: Completion, *, first_id: int = 1) -> Reply:
    """An endpoint's completion as a turn: native tool calls, else tool calls written in the text, else the text."""
    message = completion.message
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(part.get("text") or "" for part in content if isinstance(part, dict))
    content = content if isinstance(content, str) else ""
    cost: dict[str, Any] = {
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "latency_s": completion.latency_s,
        "meta": {"attempts": completion.attempts, "finish_reason": completion.finish_reason},
    }
    if message.get("tool_calls"):
        try:
            calls = native_calls(message["tool_calls"], first_id=first_id)
        except ValueError as exc:
            raw = json.dumps(message["tool_calls"], ensure_ascii=False, default=str)
            text = "\n".join(part for part in (content, raw) if part)
            return Reply(message={"role": "assistant", "content": text}, format_error=str(exc), raw=raw, **cost)
        return Reply(message={"role": "assistant", "content": content or None, "tool_calls": calls}, **cost)
    if message.get("refusal") and not content:
        content = str(message["refusal"])  # a refusal is the model's answer: a plain message
    parsed = parse_reply(content, first_id=first_id)
    raw = content if parsed.tool_calls or parsed.format_error else None
    return Reply(message=parsed.message(), format_error=parsed.format_error, raw=raw, **cost)


class OpenAIAgent:
    """One endpoint and model for a whole run; `areply` for the rollout engine, `policy(...).act` for `run_episode`."""

    kind = "openai"
    mode = "async"

    def __init__(self, config: LLMConfig):
        self.config = config
        self.model = config.model
        self.label = f"openai:{config.model}"
        self.concurrency = config.concurrency
        """Requests in flight at once; the rollout engine opens no more episodes than this by default, so that an
        episode does not wait for a free request slot with its wall clock running."""
        self.chat = AsyncChat(config)
        config.key()  # registered for redaction before any reply or error can carry it

    def __repr__(self) -> str:
        return f"OpenAIAgent({self.label!r})"

    async def areply(self, request: Request) -> Reply:
        """The next assistant turn; never raises for what the endpoint does (no reply: `Reply.error`)."""
        start = time.perf_counter()
        try:
            completion = await self.chat.complete(request.messages, tools=request.tools or None, seed=request.seed)
        except LLMError as exc:
            return failed_reply(f"{exc.code}: {exc.reason}", time.perf_counter() - start)
        return reply_from(completion, first_id=_tool_calls_before(request.messages) + 1)

    async def aclose(self) -> None:
        """Close the connections of the running event loop (call it before the loop ends)."""
        await self.chat.aclose()

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> OpenAIPolicy:
        return OpenAIPolicy(self, seed)


class OpenAIPolicy:
    """The agent for one episode, synchronously: each `act` runs one `areply` on a short-lived event loop of its own
    (closing its connections after), so it works wherever `run_episode` runs. `replies` keeps every turn's `Reply`."""

    def __init__(self, agent: OpenAIAgent, seed: int = 0):
        self.agent = agent
        self.seed = seed
        self.replies: list[Reply] = []

    async def _once(self, request: Request) -> Reply:
        try:
            return await self.agent.areply(request)
        finally:
            await self.agent.aclose()

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        request = Request(messages=list(messages), tools=tools, seed=self.seed)
        reply = run_to_end(self._once(request))
        self.replies.append(reply)
        if reply.error is not None:
            raise NoReply(f"{self.agent.label} gave no reply: {reply.error}")
        return reply.message


def make_openai_agent(target: str | None = None, *, llm: LLMConfig | None = None, **options: Any) -> OpenAIAgent:
    """`openai:<model>`; options the endpoint does not use (another agent kind's) are ignored."""
    if not target or not target.strip():
        raise CoworkEnvError("agent openai needs a model: openai:<model>, e.g. openai:gpt-4o-mini")
    return OpenAIAgent(endpoint_config(target.strip(), llm, **options))


AGENTS.add("openai", make_openai_agent)
