"""LLM task generation through any OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs).

The reply is data, never code: it is parsed as JSON and validated as a TaskSpec. Every failure — transport
error, timeout, refusal, unparseable reply, schema violation — becomes a recorded `Rejection` with its reason.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.checks import CHECK_KINDS
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.family import load_families
from coworkenv.synth.generate import Rejection, build_task
from coworkenv.synth.knobs import DIFFICULTY_KNOBS
from coworkenv.synth.planner import PlanRow
from coworkenv.workspace.tools import TOOLS

LLM_FAMILY = "llm"
_REFUSAL = re.compile(r"\b(I can(?:no|')t|I am unable|I'm unable|I won't|I'm sorry|cannot help|can't assist)\b", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class LLMConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
    model: str = Field(description="Model name as the endpoint knows it.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the API key (never logged).")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries after a transport error, timeout or 429/5xx.")
    backoff_s: float = Field(1.0, ge=0, description="First retry delay; doubles on every retry.")
    concurrency: int = Field(4, ge=1, description="Requests in flight at once.")
    temperature: float = Field(0.7, ge=0, description="Sampling temperature.")
    max_tokens: int = Field(6000, ge=256, description="Reply length limit.")
    json_mode: bool = Field(False, description="Ask for response_format=json_object (if the server supports it).")
    examples_per_prompt: int = Field(2, ge=0, le=5, description="Valid procedural tasks shown as examples.")

    @classmethod
    def from_airflow_connection(cls, conn_id: str, **overrides: Any) -> LLMConfig:
        """Host = base URL, password = API key (exported to `api_key_env`), extra = other fields (e.g. model)."""
        from airflow.sdk import Connection  # only inside Airflow tasks

        conn = Connection.get(conn_id)
        extra = dict(conn.extra_dejson or {})
        base_url = extra.pop("base_url", None) or conn.host
        if conn.port and base_url and "://" in base_url and base_url.count(":") < 2:
            base_url = f"{base_url.rstrip('/')}:{conn.port}"
        config = cls(base_url=base_url, **{**extra, **overrides})
        if conn.password:
            os.environ[config.api_key_env] = conn.password
        return config


def _tool_catalog() -> str:
    lines = []
    for name, tool in TOOLS.items():
        params = tool.openai_schema()["function"]["parameters"]
        required = set(params.get("required", []))
        args = ", ".join(f"{p}{'' if p in required else '?'}" for p in params.get("properties", {}))
        lines.append(f"- {name}({args}) [{tool.kind}]: {tool.description}")
    return "\n".join(lines)


SYSTEM_PROMPT = """You write tasks for training tool-using workplace agents. A task is ONE JSON object (a TaskSpec) that \
matches the JSON Schema below. Reply with that JSON object only: no prose, no comments.

Rules:
- The workspace holds everything the task needs; `tools` lists the tools the agent may use.
- `solution` is the oracle: tool steps {{"tool", "args"}}, optional {{"say"}} steps to the user, and a final {{"answer"}}.
  Running it must make every check pass. An empty attempt must pass none of the non-`unchanged` checks.
- Checks are declarative (kinds: {kinds}); give them weights that reflect importance.
- Add `prohibited` rules for tempting harmful actions, and `unchanged` checks against collateral damage.
- Never put the expected answer or the user's hidden facts in the instruction.

Tools:
{tools}

TaskSpec JSON Schema:
{schema}"""


class ChatClient:
    """One OpenAI-compatible chat endpoint: the client, and a completion with retry and backoff (shared by the
    generator and the repairer)."""

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.sleep = sleep

    @cached_property
    def client(self) -> Any:
        import openai

        key = os.environ.get(self.config.api_key_env) or "not-needed"
        return openai.OpenAI(base_url=self.config.base_url, api_key=key, timeout=self.config.timeout_s, max_retries=0)

    def complete(self, messages: list[dict[str, str]], seed: int) -> str:
        """One chat completion with retry and exponential backoff on transport errors, timeouts and 429/5xx."""
        import openai

        kwargs: dict[str, Any] = {
            "model": self.config.model, "messages": messages, "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens, "seed": seed,
        }  # fmt: skip
        if self.config.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        delay = self.config.backoff_s
        for attempt in range(self.config.max_retries + 1):
            try:
                reply = self.client.chat.completions.create(**kwargs)
                message = reply.choices[0].message
                if getattr(message, "refusal", None):
                    raise Refused(message.refusal)
                return message.content or ""
            except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError):
                if attempt == self.config.max_retries:
                    raise
                self.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")


class LLMGenerator(ChatClient):
    """Tasks from the model: prompts carry the schema, the tool catalog and valid procedural examples."""

    @cached_property
    def system_prompt(self) -> str:
        schema = json.dumps(TaskSpec.model_json_schema(by_alias=True), separators=(",", ":"))
        return SYSTEM_PROMPT.format(kinds=", ".join(CHECK_KINDS), tools=_tool_catalog(), schema=schema)

    def examples(self, capability: str, difficulty: int) -> list[TaskSpec]:
        families = [f for _, f in load_families().items() if capability in f.capabilities]
        return [build_task(f, seed=0, difficulty=difficulty) for f in families[: self.config.examples_per_prompt]]

    def messages(self, capability: str, difficulty: int, seed: int) -> list[dict[str, str]]:
        knobs = DIFFICULTY_KNOBS[difficulty].model_dump()
        shots = "\n\n".join(e.to_json() for e in self.examples(capability, difficulty))
        ask = (
            f"Write a new task that exercises the capability `{capability}` ({CAPABILITIES.get(capability).description}) "
            f"at difficulty {difficulty} of 5 (knobs: {json.dumps(knobs)}). Invent a fresh scenario, company and people "
            f"(variation seed {seed}). Valid examples of other tasks:\n\n{shots}"
        )
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": ask}]

    def generate_one(self, row: PlanRow, seed: int) -> TaskSpec | Rejection:
        import openai

        def reject(code: str, reason: str) -> Rejection:
            return Rejection(generator=f"llm:{self.config.model}", family=LLM_FAMILY, capability=row.capability,
                             difficulty=row.difficulty, seed=seed, code=code, reason=reason[:500])  # fmt: skip

        try:
            text = self.complete(self.messages(row.capability, row.difficulty, seed), seed)
        except Refused as exc:
            return reject("refusal", f"the model refused: {exc}")
        except openai.APITimeoutError:
            return reject("timeout", f"no reply within {self.config.timeout_s} s after {self.config.max_retries + 1} attempts")
        except openai.APIStatusError as exc:
            return reject("http_error", f"HTTP {exc.status_code}: {str(exc)[:200]}")
        except openai.APIError as exc:
            return reject("http_error", f"{type(exc).__name__}: {str(exc)[:200]}")
        return parse_reply(text, row, seed, self.config.model, reject)

    def generate_rows(self, rows: Sequence[PlanRow], progress: Callable[[int], None] | None = None) -> Iterator[TaskSpec | Rejection]:
        jobs = [(row, seed) for row in rows for seed in row.seeds]
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            for item in pool.map(lambda job: self.generate_one(*job), jobs):
                if progress:
                    progress(1)
                yield item


class Refused(Exception):
    """The model declined to answer."""


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


def parse_reply(text: str, row: PlanRow, seed: int, model: str, reject: Callable[[str, str], Rejection]) -> TaskSpec | Rejection:
    if not text.strip():
        return reject("unparseable", "empty reply")
    try:
        data = extract_json(text)
    except ValueError:
        if _REFUSAL.search(text):
            return reject("refusal", f"the model refused: {text.strip()[:200]}")
        return reject("unparseable", f"not JSON: {text.strip()[:200]}")
    if not isinstance(data, dict):
        return reject("unparseable", f"expected a JSON object, got {type(data).__name__}")
    # Identity and provenance are ours to assign, whatever the model wrote.
    data.update(
        id=f"{LLM_FAMILY}-{row.capability}-d{row.difficulty}-{seed:07d}",
        family=LLM_FAMILY,
        difficulty=row.difficulty,
        meta={"seed": seed, "generator": f"llm:{model}", "parent": None, "capability_target": row.capability},
    )
    if isinstance(data.get("capabilities"), list) and row.capability not in data["capabilities"]:
        data["capabilities"] = [row.capability, *data["capabilities"]]
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        return reject("schema", format_validation_error(exc))
    except (TypeError, ValueError) as exc:
        return reject("schema", str(exc))


def require_llm(config: LLMConfig | None) -> LLMConfig:
    if config is None:
        raise CoworkEnvError("llm generation needs --llm-base-url and --llm-model (or --llm-conn in Airflow)")
    return config
