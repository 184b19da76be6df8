"""An OpenAI-compatible chat endpoint: its configuration, a completion with retry, backoff and jitter, and reading
JSON out of a reply. Replies are data, never code.

The API key is never copied into the environment, logs or data: it comes from `LLMConfig.api_key` (a secret, e.g.
read from an Airflow connection by `coworkenv.pipeline.airflow`) or from the environment variable `api_key_env`.
Everything the endpoint sends back — replies and error bodies, which a misbehaving proxy fills with the request's
headers — is redacted (`coworkenv.redact`) before anyone else sees it.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from coworkenv.llm.wire import http_url
from coworkenv.redact import redact, register_secret

_REFUSAL = re.compile(
    r"\b(I can(?:no|')t|I am unable|I'm unable|I won't|I'm sorry|cannot help|can't assist)\b", re.IGNORECASE
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class LLMConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
    model: str = Field(description="Model name as the endpoint knows it.")
    api_key: SecretStr | None = Field(
        None, description="API key (never logged or stored); default: the `api_key_env` variable."
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY", description="Environment variable holding the API key when `api_key` is not given."
    )
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries after a transport error, timeout or 429/5xx.")
    backoff_s: float = Field(
        1.0, ge=0, description="First retry delay; doubles on every retry (plus up to 10 % jitter)."
    )
    concurrency: int = Field(4, ge=1, description="Requests in flight at once.")
    temperature: float = Field(0.7, ge=0, description="Sampling temperature.")
    max_tokens: int = Field(6000, ge=1, description="Reply length limit in tokens.")
    json_mode: bool = Field(False, description="Ask for response_format=json_object (if the server supports it).")
    extra_body: dict[str, Any] = Field(
        {},
        description="Further request fields the server understands, e.g. vLLM's top_k or transformers serve's generation_config.",
    )

    @field_validator("base_url")
    @classmethod
    def _http(cls, url: str) -> str:
        return http_url(url)  # a mistyped address is bad input, said now: not an error in every request of a run

    def key(self) -> str:
        """The key to send; registered for redaction, so no text this process redacts can carry it."""
        key = self.api_key.get_secret_value() if self.api_key is not None else os.environ.get(self.api_key_env)
        register_secret(key)
        return key or "not-needed"


def valid_text(text: str) -> str:
    """`text` with each lone surrogate (what a `\\ud800` escape in a reply decodes to) as U+FFFD: no trajectory, row
    or log can hold one as UTF-8."""
    return text if text.isascii() else text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Refused(Exception):
    """The model declined to answer."""


class LLMError(Exception):
    """A request that produced no reply: `code` is `refusal`, `timeout`, `http_error`, `transport` (connection
    refused, reset or cut short) or `bad_reply` (a 200 that is no chat completion)."""

    def __init__(self, code: str, reason: str):
        reason = redact(reason)
        super().__init__(reason)
        self.code = code
        self.reason = reason


class ChatClient:
    """One OpenAI-compatible chat endpoint."""

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.sleep = sleep

    @cached_property
    def client(self) -> Any:
        import openai

        return openai.OpenAI(
            base_url=self.config.base_url, api_key=self.config.key(), timeout=self.config.timeout_s, max_retries=0
        )

    def complete(self, messages: list[dict[str, str]], seed: int) -> str:
        """One chat completion with retry and exponential backoff on transport errors, timeouts and 429/5xx."""
        import openai

        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": seed,
        }
        if self.config.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if self.config.extra_body:
            kwargs["extra_body"] = dict(self.config.extra_body)
        for attempt in range(self.config.max_retries + 1):
            try:
                reply = self.client.chat.completions.create(**kwargs)
                message = reply.choices[0].message
                if getattr(message, "refusal", None):
                    raise Refused(message.refusal)
                return valid_text(message.content or "")
            except (
                openai.APITimeoutError,
                openai.APIConnectionError,
                openai.RateLimitError,
                openai.InternalServerError,
            ):
                if attempt == self.config.max_retries:
                    raise
                self.sleep(retry_delay(self.config.backoff_s, attempt))
        raise AssertionError("unreachable")

    def ask(self, messages: list[dict[str, str]], seed: int) -> str:
        """`complete`, redacted, with every way of getting no reply turned into an `LLMError` (code and redacted
        reason). Redaction comes before truncation, so that no cut-off secret escapes it."""
        import openai

        self.config.key()  # registers the key before any reply or error can carry it
        try:
            return redact(self.complete(messages, seed))
        except Refused as exc:
            raise LLMError("refusal", redact(f"the model refused: {exc}")[:500]) from None
        except openai.APITimeoutError:
            raise LLMError(
                "timeout", f"no reply within {self.config.timeout_s} s after {self.config.max_retries + 1} attempts"
            ) from None
        except openai.APIStatusError as exc:
            raise LLMError("http_error", f"HTTP {exc.status_code}: {redact(str(exc))[:200]}") from None
        except openai.APIError as exc:
            raise LLMError("http_error", f"{type(exc).__name__}: {redact(str(exc))[:200]}") from None


def retry_delay(backoff_s: float, attempt: int) -> float:
    """The wait before retry `attempt + 1`: `backoff_s` doubled per retry, plus up to 10 % jitter, so that concurrent
    requests that failed together do not retry in lockstep."""
    return backoff_s * 2**attempt * (1.0 + 0.1 * random.random())


def looks_like_refusal(text: str) -> bool:
    return _REFUSAL.search(text) is not None


def extract_json(text: str) -> Any:
    """The JSON object in a reply: bare, inside a code fence, or the outermost {...} span."""
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ValueError("no JSON object in the reply")
