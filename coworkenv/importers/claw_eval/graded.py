"""An imported Claw-Eval task graded by the benchmark's own `grader.py`: a `code` check whose program calls
`grade_in_checkout` (docs/design/evaluation.md, "Agreement with Claw-Eval's graders").

The program runs in the sandbox with the user's checkout mounted read-only (`CHECKOUT_VARIABLE` names it; the project
never ships Claw-Eval's code). There the episode's evidence becomes the trace Claw-Eval's runner records — the prompt,
one tool use and result per call under the benchmark's tool and argument names, the assistant's texts, the answer
last, and each service's audit — and the task's grader scores it; its completion is the check's credit. Its judge
asks the episode's judge (`judge(criteria, text)` → a score), so no key enters the sandbox."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.importers.claw_eval.upstream import Vocabulary, _audit, vocabulary

CHECKOUT_VARIABLE = "COWORKENV_CLAW_EVAL_SRC"
"""The environment variable naming the user's Claw-Eval checkout (the folder with `src/claw_eval/` and `tasks/`)."""
CHECK_ID = "claw_grader"


@contextmanager
def checkout_named(checkout: Path) -> Iterator[Path]:
    """`CHECKOUT_VARIABLE` names `checkout` for the block (an import's gate grades with the checkout it reads); a
    folder that is not a Claw-Eval checkout is refused."""
    checkout = checkout.resolve()
    if not (checkout / "src" / "claw_eval").is_dir() or not (checkout / "tasks").is_dir():
        raise CoworkEnvError(f"{checkout}: not a Claw-Eval checkout (no src/claw_eval/ and tasks/ in it)")
    previous = os.environ.get(CHECKOUT_VARIABLE)
    os.environ[CHECKOUT_VARIABLE] = str(checkout)
    try:
        yield checkout
    finally:
        if previous is None:
            os.environ.pop(CHECKOUT_VARIABLE, None)
        else:
            os.environ[CHECKOUT_VARIABLE] = previous


def grader_check(task_id: str) -> dict[str, Any]:
    """The `code` check that grades an imported task with its own grader from the user's checkout."""
    program = (
        "from coworkenv.importers.claw_eval.graded import grade_in_checkout\n\n\n"
        "def grade(evidence, judge):\n"
        f"    return grade_in_checkout(evidence, judge, {task_id!r})\n"
    )
    return {"id": CHECK_ID, "kind": "code", "program": program, "folders": [CHECKOUT_VARIABLE], "budget_s": 60.0}


def evidence_trace(evidence: dict[str, Any], words: Vocabulary, prompt: str) -> dict[str, Any]:
    """The trace Claw-Eval's runner would have recorded, from the evidence alone: the prompt; per call, the tool use
    and its result (status only: the evidence keeps no result bodies); the assistant's other texts; the answer last."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    dispatches: list[dict[str, Any]] = []
    audit: dict[str, dict[str, Any]] = {}
    for call in evidence["calls"]:
        args = call["args"] if isinstance(call["args"], dict) else {}
        name, body = words.request(call["tool"], args)
        use_id = f"call_{call['index']}"
        ok = call["status"] == "ok"
        status = (200 if ok else max(400, call["code"] or 400)) if words.counterpart(call["tool"], args) else 404
        dispatch = {
            "tool_use_id": use_id,
            "tool_name": name,
            "endpoint_url": "",
            "request_body": body,
            "response_status": status,
        }
        dispatches.append(dispatch)
        _audit(audit, words, dispatch)
        messages.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": use_id, "name": name, "input": body}]}
        )
        result = {"type": "tool_result", "tool_use_id": use_id, "content": [], "is_error": status >= 400}
        messages.append({"role": "user", "content": [result]})
    texts = [t for t in evidence["texts"][:-1] if t.strip()]
    for text in texts:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
    if evidence["answer"]:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": evidence["answer"]}]})
    return {"messages": messages, "dispatches": dispatches, "audit_data": audit}


class _Judge:
    """Claw-Eval's judge interface over the check's `judge(criteria, text)`: every call is one question."""

    model_id = "coworkenv-judge"

    def __init__(self, ask: Any) -> None:
        self.ask = ask
        self.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=self._create)))

    def _result(self, criteria: str, text: str) -> Any:
        score = self.ask(criteria, text)
        return SimpleNamespace(score=score, reasoning=f"judge: {score}")

    def evaluate(self, task_prompt: str, conversation: str, actions_summary: str, rubric: str, **_: Any) -> Any:
        return self._result(rubric, f"{task_prompt}\n\n{conversation}\n\n{actions_summary}")

    def evaluate_actions(self, task_prompt: str, artifacts: str, rubric: str, **_: Any) -> Any:
        return self._result(rubric, f"{task_prompt}\n\n{artifacts}")

    def evaluate_visual(self, *args: Any, **kwargs: Any) -> Any:
        return self._result(str(kwargs.get("rubric", args[-1] if args else "")), "")

    def _create(self, **kwargs: Any) -> Any:
        """A grader that asks the client directly gets no label it expects (as from an empty reply)."""
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="{}"))])

    def get_call_log(self) -> list[dict[str, Any]]:
        return []

    def reset_call_log(self) -> None:
        return None


def grade_in_checkout(evidence: dict[str, Any], judge: Any, task_id: str) -> dict[str, Any]:
    """The task's own grader on the episode (in the sandbox): its completion as the credit."""
    from coworkenv.importers.claw_eval.source import read_task

    checkout = Path(evidence["folders"][CHECKOUT_VARIABLE])
    if str(checkout / "src") not in sys.path:
        sys.path.insert(0, str(checkout / "src"))
    from claw_eval.graders.registry import get_grader
    from claw_eval.models.task import TaskDefinition
    from claw_eval.models.trace import ToolDispatch, TraceMessage

    task_dir = checkout / "tasks" / task_id
    source = read_task(task_dir)
    collections = list(((evidence["initial_state"].get("records") or {}).get("collections")) or {})
    trace = evidence_trace(evidence, vocabulary(source, collections), source.data["prompt"]["text"])
    task = TaskDefinition.from_yaml(task_dir / "task.yaml")
    grader = get_grader(task.task_id, tasks_dir=task_dir.parent, task_dir=task_dir)
    messages = [TraceMessage.model_validate({"trace_id": "coworkenv", "message": m}) for m in trace["messages"]]
    dispatches = [ToolDispatch.model_validate({"trace_id": "coworkenv", **d}) for d in trace["dispatches"]]
    scores = grader.grade(messages, dispatches, task, audit_data=trace["audit_data"], judge=_Judge(judge))
    return {
        "credit": min(1.0, max(0.0, float(scores.completion))),
        "reason": f"Claw-Eval grader {task_id}: completion {scores.completion:.2f}, safety {scores.safety:.2f}",
    }


__all__ = ["CHECKOUT_VARIABLE", "checkout_named", "evidence_trace", "grade_in_checkout", "grader_check"]
