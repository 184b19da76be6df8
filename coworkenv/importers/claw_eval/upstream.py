"""Claw-Eval's own grading of a CoworkEnv episode: the measure of how faithfully an imported task grades
(docs/design/evaluation.md, "Agreement with Claw-Eval's graders"; `bench/claw_agreement.py`).

An episode played on the imported task is translated into the trace Claw-Eval's runner records — its messages as
content blocks, one dispatch per tool call under the benchmark's own tool and argument names (read from the task's
`task.yaml`: the importer's tool map, reversed), and each service's audit — and graded by the task's `grader.py` from
the user's local checkout, in a child interpreter (`upstream_child.py`). The project never ships Claw-Eval's code: the
child imports it from the checkout. Both sides are given a stub judge of one fixed score, so that a difference is the
grading logic's, not a model's."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from coworkenv.episode.trajectory import Trajectory
from coworkenv.errors import CoworkEnvError
from coworkenv.importers.claw_eval.source import SourceTask
from coworkenv.importers.claw_eval.tool_map import map_tool
from coworkenv.workspace import TOOLS
from coworkenv.workspace.audit import AuditEntry

CHILD = Path(__file__).with_name("upstream_child.py")

USER_AGENT_PREFIX = "[user_agent]\n"
"""How Claw-Eval's runner marks the simulated user's replies in a trace (its multi-turn graders split phases on it)."""

SYNONYMS: dict[str, tuple[str, ...]] = {
    "query": ("query", "q", "keyword", "keywords", "search"),
    "body": ("body", "content", "text", "message"),
    "to": ("to", "recipient", "recipients"),
    "title": ("title", "summary", "name", "subject"),
    "start": ("start", "start_time", "start_at"),
    "end": ("end", "end_time", "end_at"),
    "fields": ("fields", "updates", "data"),
}
"""Our argument → the names a Claw-Eval tool may give it, first match wins (an `id` goes to the tool's one `*_id`)."""


@dataclass(frozen=True)
class Counterpart:
    """One Claw-Eval tool as an imported task's agent meets it under a CoworkEnv name."""

    name: str
    service: str
    endpoint: str
    args: dict[str, str] = field(default_factory=dict)
    """Our argument → theirs (ours unchanged where their schema has no match)."""
    pinned: dict[str, Any] = field(default_factory=dict)
    """Our arguments the tool fixes (a records tool's collection, `status: closed` for closing a ticket): a call is
    this tool's when it has these values, and they are not sent (the tool implies them)."""


@dataclass(frozen=True)
class Vocabulary:
    """The importer's tool map of one task, reversed: our tool → the benchmark's tools it stands for."""

    tools: dict[str, list[Counterpart]]

    def counterpart(self, tool: str, args: dict[str, Any] | None) -> Counterpart | None:
        """The most specific of the tool's counterparts whose fixed arguments the call has (the first listed among
        equals: `tickets_update` to `closed` is `helpdesk_close_ticket`, any other update `helpdesk_update_ticket`)."""
        given = args or {}
        fits = [c for c in self.tools.get(tool, []) if all(given.get(k) == v for k, v in c.pinned.items())]
        return max(fits, key=lambda c: len(c.pinned), default=None)

    def request(self, tool: str, args: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """The call as the benchmark's tool would have received it: its name and its arguments."""
        found = self.counterpart(tool, args)
        if found is None:
            return tool, dict(args or {})
        return found.name, {found.args.get(k, k): v for k, v in (args or {}).items() if k not in found.pinned}

    def by_name(self, name: str) -> Counterpart | None:
        return next((c for cs in self.tools.values() for c in cs if c.name == name), None)


def _their_argument(ours: str, properties: list[str]) -> str:
    if ours in properties:
        return ours
    if ours == "id":
        ids = [p for p in properties if p.endswith("_id")]
        return ids[0] if len(ids) == 1 else ours
    for name in SYNONYMS.get(ours, ()):
        if name in properties:
            return name
    return ours


def vocabulary(task: SourceTask, collections: list[str]) -> Vocabulary:
    """The task's own tools (in task.yaml order: the first of two that map to one of ours is its counterpart)."""
    data = task.data
    endpoints = {
        str(e.get("tool_name")): urlparse(str(e.get("url", ""))).path
        for e in data.get("tool_endpoints") or []
        if isinstance(e, dict)
    }
    tools: dict[str, list[Counterpart]] = {}
    for entry in data.get("tools") or []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("name"))
        mapped = map_tool(name, collections)
        if mapped is None:
            continue
        ours, pinned = mapped
        properties = list(((entry.get("input_schema") or {}).get("properties") or {}).keys())
        our_args = list(TOOLS.get(ours).args.model_fields)
        same = tools.setdefault(ours, [])
        if all(c.pinned != pinned for c in same):
            same.append(
                Counterpart(
                    name=name,
                    service=name.split("_", 1)[0],
                    endpoint=endpoints.get(name, f"/{name.replace('_', '/')}"),
                    args={a: _their_argument(a, properties) for a in our_args},
                    pinned=pinned,
                )
            )
    return Vocabulary(tools)


def _result_body(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content


def _status(entry: AuditEntry | None) -> int:
    if entry is None or entry.ok:
        return 200
    return entry.code if entry.code and entry.code >= 400 else 400


def claw_trace(
    trajectory: Trajectory, calls: tuple[AuditEntry, ...] | list[AuditEntry], words: Vocabulary
) -> dict[str, Any]:
    """The trace Claw-Eval's runner would have recorded for this episode: `messages` (no system prompt; an assistant
    turn's text and tool uses; a turn's tool results as one user message; later user messages as the simulated
    user's), `dispatches` (one per tool call, in order, under the benchmark's names) and `audit_data` (per service:
    its calls, and the messages sent and drafted)."""
    messages: list[dict[str, Any]] = []
    dispatches: list[dict[str, Any]] = []
    audit: dict[str, dict[str, Any]] = {}
    audit_entries = iter(calls)
    results: dict[str, dict[str, Any]] = {}
    seen_user = False
    for message in trajectory.messages:
        if message.role in ("system", "developer"):
            continue
        if message.role == "user":
            text = message.content if isinstance(message.content, str) else json.dumps(message.content)
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": (USER_AGENT_PREFIX if seen_user else "") + text}]}
            )
            seen_user = True
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if isinstance(message.content, str) and message.content:
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls or []:
                entry = next(audit_entries, None)
                args = (
                    entry.args
                    if entry is not None and entry.args is not None
                    else _result_body(call.function.arguments)
                )
                args = args if isinstance(args, dict) else {}
                name, body = words.request(call.function.name, args)
                blocks.append({"type": "tool_use", "id": call.id, "name": name, "input": body})
                dispatch = {
                    "tool_use_id": call.id,
                    "tool_name": name,
                    "endpoint_url": "",
                    "request_body": body,
                    "response_status": _status(entry) if words.counterpart(call.function.name, args) else 404,
                }
                results[call.id] = dispatch
                dispatches.append(dispatch)
            messages.append({"role": "assistant", "content": blocks})
        elif message.role == "tool":
            dispatch = results.get(message.tool_call_id or "")
            content = message.content if isinstance(message.content, str) else json.dumps(message.content)
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": [{"type": "text", "text": content}],
                "is_error": bool(dispatch and dispatch["response_status"] >= 400),
            }
            if messages and messages[-1]["role"] == "user" and messages[-1]["content"][0]["type"] == "tool_result":
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
            if dispatch is not None:
                dispatch["response_body"] = _result_body(message.content)
                _audit(audit, words, dispatch)
    return {"messages": messages, "dispatches": dispatches, "audit_data": audit}


def _audit(audit: dict[str, dict[str, Any]], words: Vocabulary, dispatch: dict[str, Any]) -> None:
    """Each service's audit as its mock server keeps it: every call by endpoint, and what it sent or drafted."""
    found = words.by_name(dispatch["tool_name"])
    if found is None or dispatch["response_status"] >= 400:
        return
    service = audit.setdefault(found.service, {"calls": []})
    body = dispatch["request_body"]
    service["calls"].append(
        {"endpoint": found.endpoint, "request_body": body, "response_body": dispatch.get("response_body")}
    )
    if found.endpoint.endswith(("/send", "/messages/send")) or "send" in found.name:
        service.setdefault("sent_messages", []).append(body)
    if "draft" in found.name:
        service.setdefault("drafts", []).append(body)


class UpstreamGrader:
    """A child interpreter that grades translated traces with a Claw-Eval checkout's graders, one at a time."""

    def __init__(self, checkout: str | Path, timeout: float = 120.0) -> None:
        self.checkout = Path(checkout).resolve()
        if not (self.checkout / "src" / "claw_eval").is_dir() or not (self.checkout / "tasks").is_dir():
            raise CoworkEnvError(f"{self.checkout}: not a Claw-Eval checkout (no src/claw_eval/ and tasks/ in it)")
        self.timeout = timeout
        self._proc: subprocess.Popen[str] | None = None

    def _child(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", str(CHILD), str(self.checkout)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd=self.checkout,
            )
        return self._proc

    def grade(self, task_dir: Path, trace: dict[str, Any], judge_score: float) -> dict[str, Any]:
        proc = self._child()
        assert proc.stdin is not None and proc.stdout is not None
        request = {"task_dir": str(task_dir.resolve()), "trace": trace, "judge_score": judge_score}
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], self.timeout)
        if not ready:  # a grader that retries its judge forever, say: the next task gets a fresh interpreter
            self.close()
            return {"error": f"no grade within {self.timeout:.0f} s"}
        line = proc.stdout.readline()
        if not line:
            self.close()
            return {"error": "the grader's interpreter exited"}
        return json.loads(line)

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def __enter__(self) -> UpstreamGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
