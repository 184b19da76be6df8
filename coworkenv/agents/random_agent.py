"""The `random` agent: well-formed random calls to the task's allowed tools, then a short answer. A baseline that
knows the tools' schemas and the workspace's ids but not the task, so it must score near 0 (docs/design/agents-and-rollouts.md,
"Rollouts"); deterministic for a given seed."""

from __future__ import annotations

import json
import random
from typing import Any

from coworkenv.agents.base import AGENTS
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec
from coworkenv.timeutil import add_seconds

MAX_CALLS = 16
"""A policy makes 1 to MAX_CALLS calls (drawn from its seed) before it answers."""
ANSWERS = ("Done.", "All set.", "I have finished the task.", "Completed.")
NOW_OFFSETS_H = (-48, -24, -2, 1, 3, 24, 72)
SERVICE_OF_LIST = {"messages": "mail", "events": "calendar", "people": "contacts", "docs": "docs", "tickets": "tickets"}
POOL_ITEMS = 200
"""At most this many values per pool: drawing stays cheap on a huge workspace."""


def _add(pool: dict[str, list[Any]], key: str, value: Any) -> None:
    items = pool.setdefault(key, [])
    if len(items) < POOL_ITEMS and value not in items:
        items.append(value)


def workspace_pools(spec: TaskSpec) -> dict[str, list[Any]]:
    """Plausible argument values from the initial workspace: ids per service, file paths, sheet and column names,
    channels, page URLs, mail folders, email addresses, and words of the instruction."""
    state = spec.initial_state
    pools: dict[str, list[Any]] = {}
    for path in list(state.get("files") or {})[:POOL_ITEMS]:
        _add(pools, "path", path)
        _add(pools, "dir", path.rpartition("/")[0])
    for service, section in state.items():
        if not isinstance(section, dict):
            continue
        for key, records in section.items():
            if key not in SERVICE_OF_LIST or not isinstance(records, list):
                continue
            for record in records[:POOL_ITEMS]:
                if not isinstance(record, dict):
                    continue
                if isinstance(record.get("id"), str):
                    _add(pools, f"id:{service}", record["id"])
                for field in ("email", "from"):
                    if isinstance(record.get(field), str):
                        _add(pools, "email", record[field])
                if isinstance(record.get("folder"), str):
                    _add(pools, "folder", record["folder"])
    for name, sheet in (state.get("sheets") or {}).items():
        _add(pools, "sheet", name)
        for column in (sheet.get("columns") or [])[:POOL_ITEMS] if isinstance(sheet, dict) else ():
            _add(pools, "column", column)
    for channel in list((state.get("chat") or {}).get("channels") or {})[:POOL_ITEMS]:
        _add(pools, "channel", channel)
    for page in ((state.get("web") or {}).get("pages") or [])[:POOL_ITEMS]:
        _add(pools, "url", page["url"])
    for word in spec.instruction.split()[:POOL_ITEMS]:
        word = word.strip(".,;:!?\"'()")
        if len(word) > 2:
            _add(pools, "word", word)
    return pools


class RandomPolicy:
    """Random calls drawn from the allowed tools' JSON schemas, values taken from the workspace where a name says
    what it is (`id`, `path`, `sheet`, `to`, …), then one short answer."""

    def __init__(self, spec: TaskSpec, *, seed: int = 0, max_calls: int = MAX_CALLS):
        self.rng = random.Random(seed)
        self.n_calls = self.rng.randint(1, max(1, max_calls))
        self.pools = workspace_pools(spec)
        self.now = spec.workspace.now
        self.calls = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if self.calls >= self.n_calls or not tools:
            return {"role": "assistant", "content": self.rng.choice(ANSWERS)}
        self.calls += 1
        function = self.rng.choice(tools)["function"]
        service = function["name"].partition("_")[0]
        args = self._object(function.get("parameters") or {}, service)
        call = {
            "id": f"call_{self.calls}",
            "type": "function",
            "function": {"name": function["name"], "arguments": json.dumps(args)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    # --- values from schemas ------------------------------------------------------------------------

    def _object(self, schema: dict[str, Any], service: str) -> dict[str, Any]:
        required = set(schema.get("required") or ())
        out = {}
        for name, prop in (schema.get("properties") or {}).items():
            if name in required or self.rng.random() < 0.4:
                out[name] = self._value(prop, name, service)
        return out

    def _value(self, schema: dict[str, Any], name: str, service: str) -> Any:
        rng = self.rng
        if "enum" in schema:
            return rng.choice(schema["enum"])
        if "anyOf" in schema:
            options = [o for o in schema["anyOf"] if o.get("type") != "null"] or schema["anyOf"]
            return self._value(rng.choice(options), name, service)
        kind = schema.get("type")
        if kind == "string":
            return self._string(schema, name, service)
        if kind == "integer":
            low = int(schema.get("minimum", 0))
            return rng.randint(low, int(schema.get("maximum", low + 5)))
        if kind == "number":
            return round(rng.uniform(0, 1000), 2)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            return [
                self._value(schema.get("items") or {"type": "string"}, name, service) for _ in range(rng.randint(1, 3))
            ]
        if kind == "object":
            return self._object(schema, service)
        if kind == "null":
            return None
        return self._string(schema, name, service)

    def _string(self, schema: dict[str, Any], name: str, service: str) -> str:
        rng = self.rng
        pool = self.pools.get(f"id:{service}") if name == "id" else None
        pool = pool or self.pools.get(
            {"src": "path", "dst": "path", "to": "email", "cc": "email", "attendees": "email", "assignee": "email"}.get(
                name, name
            )
        )
        if name in ("start", "end"):
            text = add_seconds(self.now, 3600 * rng.choice(NOW_OFFSETS_H))
        elif pool and rng.random() < 0.9:
            text = str(rng.choice(pool))
        else:
            words = self.pools.get("word") or ["note"]
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        text = text[: int(schema.get("maxLength", len(text)))]
        return text if len(text) >= int(schema.get("minLength", 0)) else "x" * max(1, int(schema.get("minLength", 1)))


class RandomAgent:
    """`random` as an agent: one seeded RandomPolicy per episode, run anywhere (mode `local`)."""

    kind = label = "random"
    mode = "local"
    model = ""

    def __init__(self, target: str | None = None, *, max_calls: int = MAX_CALLS):
        if target:
            raise CoworkEnvError(f"agent 'random' takes no target (got random:{target})")
        self.max_calls = max_calls

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> RandomPolicy:
        return RandomPolicy(spec, seed=seed, max_calls=self.max_calls)


AGENTS.add("random", lambda target=None, **options: RandomAgent(target, **options))
