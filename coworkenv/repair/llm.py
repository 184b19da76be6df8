"""The LLM repairer: the spec, its failing battery checks and the TaskSpec JSON Schema go to any
OpenAI-compatible chat endpoint (the generator's client, retry and backoff); the reply — a full spec or an
RFC 6902 JSON Patch — becomes a patched spec dict, which the loop validates again.

The reply is data, never code. Identity and lineage (`id`, `family`, `meta`) are ours: whatever the model
writes there is put back. Every failure — transport, timeout, refusal, unparseable reply, a patch that does
not apply — is returned as a code and a reason (redacted: it may quote the endpoint), never raised.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Literal

import jsonpatch
from pydantic import BaseModel, ConfigDict

from coworkenv.checks import CHECK_KINDS
from coworkenv.llm import ChatClient, LLMError, extract_json, looks_like_refusal
from coworkenv.redact import redact
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.validate.codes import BATTERY_CODES
from coworkenv.workspace.tools import catalog_text

KEPT_FIELDS = ("id", "family", "meta")

SYSTEM_PROMPT = """You repair tasks for training tool-using workplace agents. A task is ONE JSON object (a TaskSpec) \
matching the JSON Schema below. A validation battery ran the task and some of its checks failed; you get the task, \
the failures and what each battery check means. Fix the task with the smallest change that makes every battery \
check pass.

Reply with JSON only, no prose, in ONE of two forms:
1. an RFC 6902 JSON Patch: an array of operations such as \
[{{"op": "replace", "path": "/checks/0/value", "value": 42}}, {{"op": "remove", "path": "/prohibited/1"}}]
2. the complete corrected TaskSpec object.

Rules:
- Keep `id`, `family` and `meta` as they are.
- `solution` is the oracle: running it must make every check pass (score exactly 1.0); an empty attempt, or one that \
only answers "Done.", must not pass. Check kinds: {kinds}.
- The expected answer and the user's hidden facts must not appear in the instruction.
- Each prohibited rule must be one that the solution never breaks.

Battery checks:
{battery}

Tools:
{tools}

TaskSpec JSON Schema:
{schema}"""


class LLMRepair(BaseModel):
    """What the LLM repairer produced: a patched spec, or a failure code and reason."""

    model_config = ConfigDict(frozen=True)

    spec: dict[str, Any] | None = None
    kind: Literal["patch", "spec"] | None = None
    code: str | None = None
    """`refusal`, `timeout`, `http_error`, `unparseable`, `bad_patch` or `not_a_spec` when `spec` is None."""
    reason: str = ""


def _failure_lines(failures: Sequence[CheckOutcome]) -> str:
    lines = []
    for f in failures:
        details = json.dumps(f.details, ensure_ascii=False, default=str)[:1500] if f.details else "{}"
        lines.append(f"- {f.code} ({f.severity}): {f.message or 'failed'}\n  details: {details}")
    return "\n".join(lines)


def reply_json(text: str) -> Any:
    """The JSON in a reply: a patch array or a spec object, bare, fenced or inside prose."""
    stripped = text.strip()
    i, j = stripped.find("["), stripped.find("{")
    if i != -1 and (j == -1 or i < j) and "]" in stripped:
        try:
            return json.loads(stripped[i : stripped.rindex("]") + 1])
        except ValueError:
            pass
    return extract_json(text)


def apply_reply(current: dict[str, Any], data: Any) -> tuple[str, dict[str, Any]]:
    """(kind, patched spec) from a parsed reply; ValueError/jsonpatch errors when it is neither form."""
    if isinstance(data, dict) and isinstance(data.get("patch"), list):
        data = data["patch"]
    if isinstance(data, dict) and "op" in data and "path" in data:
        data = [data]
    if isinstance(data, list):
        if not all(isinstance(op, dict) and "op" in op for op in data):
            raise ValueError("a JSON Patch is an array of operation objects with `op` and `path`")
        patched = jsonpatch.JsonPatch(data).apply(copy.deepcopy(current))
        kind = "patch"
    elif isinstance(data, dict):
        patched, kind = data, "spec"
    else:
        raise ValueError(f"expected a JSON Patch array or a TaskSpec object, got {type(data).__name__}")
    if not isinstance(patched, dict):
        raise ValueError("the patch does not leave a JSON object")
    for key in KEPT_FIELDS:
        if key in current:
            patched[key] = copy.deepcopy(current[key])
    return kind, patched


class LLMRepairer(ChatClient):
    """Feedback-based repair through an OpenAI-compatible endpoint (the same client as the generator)."""

    @cached_property
    def system_prompt(self) -> str:
        schema = json.dumps(TaskSpec.model_json_schema(by_alias=True), separators=(",", ":"))
        battery = "\n".join(f"- {code} ({sev}): {text}" for code, (sev, _, text) in BATTERY_CODES.items())
        return SYSTEM_PROMPT.format(kinds=", ".join(CHECK_KINDS), battery=battery, tools=catalog_text(), schema=schema)

    def messages(self, spec: dict[str, Any], failures: Sequence[CheckOutcome]) -> list[dict[str, str]]:
        ask = (
            f"Task:\n{json.dumps(spec, ensure_ascii=False)}\n\n"
            f"Failing battery checks:\n{_failure_lines(failures)}\n\n"
            "Reply with a JSON Patch array or the complete corrected task."
        )
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": ask}]

    def repair(self, spec: dict[str, Any], failures: Sequence[CheckOutcome], *, seed: int = 0) -> LLMRepair:
        try:
            text = self.ask(self.messages(spec, failures), seed)
        except LLMError as exc:
            return _failed(exc.code, exc.reason)
        return parse_repair(text, spec)


def _failed(code: str, reason: str) -> LLMRepair:
    return LLMRepair(code=code, reason=redact(reason)[:500])


def parse_repair(text: str, spec: dict[str, Any]) -> LLMRepair:
    if not text.strip():
        return _failed("unparseable", "empty reply")
    try:
        data = reply_json(text)
    except ValueError:
        if looks_like_refusal(text):
            return _failed("refusal", f"the model refused: {text.strip()[:200]}")
        return _failed("unparseable", f"not JSON: {text.strip()[:200]}")
    try:
        kind, patched = apply_reply(spec, data)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        return _failed("bad_patch", f"the patch does not apply: {exc}")
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        return _failed("not_a_spec", str(exc))
    return LLMRepair(spec=patched, kind=kind)  # type: ignore[arg-type]
