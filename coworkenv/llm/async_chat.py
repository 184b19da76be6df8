"""The async side of the chat client: one chat completion with tools, for the agents and the LLM user.

`AsyncChat(config).complete(messages, tools=..., seed=...)` sends one `/chat/completions` request (the `seed` goes to
the endpoint) and returns a `Completion`: the assistant message, token usage, latency and attempts. At most
`config.concurrency` requests are in flight at once (per event loop); transport errors, timeouts, 429 and 5xx are
retried with exponential backoff and jitter (`client.retry_delay`); what is left after the retries, and any other
failure, is an `LLMError` with a redacted reason. The key (`config.key()`) goes only into the Authorization header;
the message text and tool-call arguments are scrubbed of configured secrets, error reasons are fully redacted.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from coworkenv.llm.client import LLMConfig, LLMError, retry_delay, valid_text
from coworkenv.llm.wire import Transport, make_transport
from coworkenv.redact import REDACTED, configured_secrets, redact

ERROR_CHARS = 300
"""How much of an error body a reason keeps (after redaction)."""
RETRY_STATUS = frozenset({408, 409, 425, 429})
"""Besides every 5xx: statuses that say "try again later"."""


@dataclass(frozen=True)
class Completion:
    message: dict[str, Any]
    """The assistant message as the endpoint sent it (`content`, maybe `tool_calls`, `refusal`), secrets scrubbed."""
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    """From the first attempt to the reply, retries and their waits included."""
    attempts: int
    finish_reason: str | None


@dataclass
class _Session:
    transport: Transport
    slots: asyncio.Semaphore
    headers: dict[str, str] = field(repr=False)
    """The Authorization header: never printed."""


def _scrub(value: Any, secrets: list[str]) -> Any:
    """The configured secrets out of every string in a decoded JSON value (only them: the rest is the model's own
    text, which the full `redact` could alter), and no lone surrogate in it (`valid_text`)."""
    if isinstance(value, str):
        value = valid_text(value)
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


def error_text(data: bytes) -> str:
    """What an error body says: the OpenAI-style `error.message` (or `detail`), else the body itself."""
    text = data.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    message = message or (payload.get("detail") if isinstance(payload, dict) else None)
    return str(message) if message else text


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_completion(data: bytes) -> tuple[dict[str, Any], int, int, str | None]:
    """(message, prompt tokens, completion tokens, finish reason) of a chat completion body; ValueError if it is none."""
    payload = json.loads(data)
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("a chat completion without choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("a chat completion choice without a message")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    tokens = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    return _scrub(message, configured_secrets()), *tokens, choices[0].get("finish_reason")


class AsyncChat:
    """One OpenAI-compatible endpoint, asynchronously. Connections and the concurrency limit belong to the event loop
    that uses them: the rollout engine's one loop, or a policy's short-lived one."""

    def __init__(self, config: LLMConfig):
        self.config = config
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Session] = weakref.WeakKeyDictionary()

    def _session(self) -> _Session:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None:
            transport = make_transport(self.config.base_url, self.config.concurrency)
            session = _Session(
                transport, asyncio.Semaphore(self.config.concurrency), {"Authorization": f"Bearer {self.config.key()}"}
            )
            self._sessions[loop] = session
        return session

    def payload(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": seed,
        }
        if tools:
            body["tools"] = tools
        if self.config.json_mode:
            body["response_format"] = {"type": "json_object"}
        return {**body, **self.config.extra_body}

    async def complete(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, seed: int = 0
    ) -> Completion:
        """One chat completion, retried on transport errors, timeouts, 429 and 5xx; `LLMError` when none came."""
        session = self._session()
        body = json.dumps(self.payload(messages, tools, seed), ensure_ascii=False).encode()
        attempts = self.config.max_retries + 1
        start = time.perf_counter()
        for attempt in range(attempts):
            try:
                async with session.slots:
                    status, data = await session.transport.post(
                        "/chat/completions", body, session.headers, self.config.timeout_s
                    )
            except TimeoutError:
                code, reason = "timeout", f"no reply within {self.config.timeout_s} s"
            except (OSError, EOFError, ValueError, asyncio.LimitOverrunError) as exc:  # EOFError: a reply cut short
                code, reason = "transport", f"{type(exc).__name__}: {redact(str(exc))[:200]}".rstrip(": ")
            else:
                if status == 200:
                    try:
                        message, prompt, completion, finish = parse_completion(data)
                    except ValueError as exc:
                        raise LLMError("bad_reply", f"the endpoint's reply is not a chat completion ({exc})") from None
                    return Completion(message, prompt, completion, time.perf_counter() - start, attempt + 1, finish)
                code, reason = "http_error", f"HTTP {status}: {redact(error_text(data))[:ERROR_CHARS]}"
                if status < 500 and status not in RETRY_STATUS:
                    raise LLMError(code, reason)
            if attempt + 1 < attempts:
                await asyncio.sleep(retry_delay(self.config.backoff_s, attempt))
        raise LLMError(code, f"{reason} (after {attempts} attempts)")

    async def aclose(self) -> None:
        """Close this event loop's connections (a short-lived loop calls it before it ends)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.transport.aclose()


def run_to_end(coroutine: Any) -> Any:
    """Run a coroutine to its end from synchronous code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
