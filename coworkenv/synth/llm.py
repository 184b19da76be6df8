"""LLM task generation through any OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs).

The reply is data, never code: it is parsed as JSON and validated as a TaskSpec. Every failure — transport
error, timeout, refusal, unparseable reply, schema violation — becomes a recorded `Rejection` with its reason,
redacted (`coworkenv.redact`): it may quote what the endpoint sent.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from coworkenv.checks import CHECK_KINDS
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.llm import ChatClient, LLMConfig, LLMError, extract_json, looks_like_refusal
from coworkenv.redact import redact
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.family import LLM_FAMILY, load_families
from coworkenv.synth.generate import Rejection, build_task
from coworkenv.synth.knobs import DIFFICULTY_KNOBS
from coworkenv.synth.planner import PlanRow
from coworkenv.workspace.tools import catalog_text

EXAMPLES_PER_PROMPT = 2
"""Valid procedural tasks shown as examples in each prompt."""


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


class LLMGenerator(ChatClient):
    """Tasks from the model: prompts carry the schema, the tool catalog and valid procedural examples."""

    def __init__(self, config: LLMConfig, *, examples_per_prompt: int = EXAMPLES_PER_PROMPT, **kwargs: Any):
        super().__init__(config, **kwargs)
        self.examples_per_prompt = examples_per_prompt

    @cached_property
    def system_prompt(self) -> str:
        schema = json.dumps(TaskSpec.model_json_schema(by_alias=True), separators=(",", ":"))
        return SYSTEM_PROMPT.format(kinds=", ".join(CHECK_KINDS), tools=catalog_text(), schema=schema)

    def examples(self, capability: str, difficulty: int, family: str = LLM_FAMILY) -> list[TaskSpec]:
        """Valid tasks of families with the capability, the plan row's own family first."""
        families = [f for _, f in load_families().items() if capability in f.capabilities]
        families.sort(key=lambda f: f.name != family)
        return [build_task(f, seed=0, difficulty=difficulty) for f in families[: self.examples_per_prompt]]

    def messages(self, capability: str, difficulty: int, seed: int, family: str = LLM_FAMILY) -> list[dict[str, str]]:
        knobs = DIFFICULTY_KNOBS[difficulty].model_dump()
        shots = "\n\n".join(e.to_json() for e in self.examples(capability, difficulty, family))
        like = f" in the spirit of the `{family}` tasks" if family != LLM_FAMILY else ""
        ask = (
            f"Write a new task that exercises the capability `{capability}` ({CAPABILITIES.get(capability).description}) "
            f"at difficulty {difficulty} of 5 (knobs: {json.dumps(knobs)}). Invent a fresh scenario, company and people{like} "
            f"(variation seed {seed}). Valid examples of other tasks:\n\n{shots}"
        )
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": ask}]

    def generate_one(self, row: PlanRow, seed: int) -> TaskSpec | Rejection:
        def reject(code: str, reason: str) -> Rejection:
            return Rejection(
                generator=f"llm:{self.config.model}",
                family=LLM_FAMILY,
                capability=row.capability,
                difficulty=row.difficulty,
                seed=seed,
                code=code,
                reason=redact(reason)[:500],
            )

        try:
            text = self.ask(self.messages(row.capability, row.difficulty, seed, row.family), seed)
        except LLMError as exc:
            return reject(exc.code, exc.reason)
        return parse_reply(text, row, seed, self.config.model, reject)

    def generate_rows(
        self, rows: Sequence[PlanRow], progress: Callable[[int], None] | None = None
    ) -> Iterator[TaskSpec | Rejection]:
        """Every task of the rows, in plan order. At most `AHEAD_PER_REQUEST` × concurrency requests are submitted
        and not yet handed on, so that a million-task plan holds a window of replies, not a future per task."""
        jobs = ((row, seed) for row in rows for seed in row.seeds)
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            for item in in_order(
                pool, lambda job: self.generate_one(*job), jobs, AHEAD_PER_REQUEST * self.config.concurrency
            ):
                if progress:
                    progress(1)
                yield item


AHEAD_PER_REQUEST = 4
"""Replies asked for ahead of the consumer, per request the endpoint may have in flight."""


def in_order(pool: Executor, fn: Callable[[Any], Any], items: Iterable[Any], ahead: int) -> Iterator[Any]:
    """`pool.map(fn, items)` with at most `ahead` items submitted and not yet yielded (`Executor.map` submits every
    item at once). Closing the iterator early cancels what has not started."""
    pending: deque[Future[Any]] = deque()
    try:
        for item in items:
            if len(pending) >= ahead:
                yield pending.popleft().result()
            pending.append(pool.submit(fn, item))
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def parse_reply(
    text: str, row: PlanRow, seed: int, model: str, reject: Callable[[str, str], Rejection]
) -> TaskSpec | Rejection:
    if not text.strip():
        return reject("unparseable", "empty reply")
    try:
        data = extract_json(text)
    except ValueError:
        if looks_like_refusal(text):
            return reject("refusal", f"the model refused: {text.strip()[:200]}")
        return reject("unparseable", f"not JSON: {text.strip()[:200]}")
    if not isinstance(data, dict):
        return reject("unparseable", f"expected a JSON object, got {type(data).__name__}")
    # Identity and provenance are ours to assign, whatever the model wrote.
    data.update(
        id=llm_task_id(row, seed),
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


def llm_task_id(row: PlanRow, seed: int) -> str:
    """Unique in a plan: rows of different families may share a capability, a difficulty and seeds (each family has
    its own seed space), so a row planned for a family names it."""
    family = "" if row.family == LLM_FAMILY else f"{row.family}-"
    return f"{LLM_FAMILY}-{family}{row.capability}-d{row.difficulty}-{seed:07d}"


def require_llm(config: LLMConfig | None) -> LLMConfig:
    if config is None:
        raise CoworkEnvError("llm generation needs --llm-base-url and --llm-model (or --llm-conn in Airflow)")
    return config
