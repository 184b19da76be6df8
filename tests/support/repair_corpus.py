"""Helpers for the repair tests: the broken-spec corpus, and the handler of a real OpenAI-wire server on localhost
that plays the repair model (a JSON Patch for one task, a full spec for another, garbage for a third, …)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import EXAMPLES, ROOT
from tests.support.openai_wire import OpenAIWireHandler

CORPUS_DIR = ROOT / "tests" / "repair" / "corpus"


def corpus_files() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def corpus_spec(stem_prefix: str) -> dict:
    return load(next(p for p in corpus_files() if p.stem.startswith(stem_prefix)))


STANDUP_ANSWER = json.loads((EXAMPLES / "07_chat_standup_blockers.json").read_text())["solution"][-1]


def _task_in(prompt: str) -> dict:
    return json.loads(prompt.split("Task:\n", 1)[1].split("\n\nFailing battery checks:", 1)[0])


def model_reply(task: dict) -> str:
    """What the fake repair model answers, by task id."""
    task_id = task["id"]
    if task_id.endswith("no-final-answer"):  # an RFC 6902 patch, bare
        return json.dumps([{"op": "add", "path": "/solution/-", "value": STANDUP_ANSWER}])
    if task_id.endswith("unknown-check-kind"):  # the full corrected spec, in prose and a fence, with a hijacked id
        fixed = {**task, "id": "hijacked", "checks": [c for c in task["checks"] if c["kind"] != "calendar_free"]}
        return (
            "Here is the corrected task:\n```json\n" + json.dumps(fixed) + "\n```\nIt now only uses known check kinds."
        )
    if task_id.endswith("nothing-discriminates"):  # a patch that does not apply
        return 'Apply this: [{"op": "remove", "path": "/checks/99"}]'
    return "The task looks fine to me, nothing to change."  # garbage


class Handler(OpenAIWireHandler):
    def do_POST(self):  # noqa: N802 (http.server API)
        body = self.read_body()
        self.server.requests.append(body)
        self.send_completion(body, {"content": model_reply(_task_in(body["messages"][-1]["content"]))})


def task_ids_in(requests: list[dict]) -> list[str]:
    return [re.search(r'"id": "([^"]+)"', r["messages"][-1]["content"]).group(1) for r in requests]
