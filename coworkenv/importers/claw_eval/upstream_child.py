"""Run in a child interpreter (`python -I upstream_child.py CHECKOUT`): Claw-Eval's own grading of translated traces,
one JSON request a line on stdin, one JSON reply a line on stdout. It imports Claw-Eval from the user's local checkout
(`CHECKOUT/src`, next to its `tasks/`, where the graders' `load_peer_grader` looks), never from this project, and only
the standard library besides; the judge is a stub that answers every question with one fixed score.

A request: {"task_dir", "task_id", "trace": {"messages", "dispatches", "audit_data"}, "judge_score"}; a reply: the
grader's dimension scores with Claw-Eval's task score and pass verdict, or {"error": "..."}."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any


class StubJudge:
    """Every judge method Claw-Eval's graders call, answering `score` (and a JSON object mapping every key the prompt
    names to one label for the graders that ask the client directly: they then find no label they expect)."""

    model_id = "stub-judge"

    def __init__(self, score: float) -> None:
        self.score = score
        self.calls = 0
        self.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=self._create)))

    def _result(self) -> Any:
        self.calls += 1
        return SimpleNamespace(score=self.score, reasoning=f"stub judge: {self.score}")

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        return self._result()

    def evaluate_actions(self, *args: Any, **kwargs: Any) -> Any:
        return self._result()

    def evaluate_visual(self, *args: Any, **kwargs: Any) -> Any:
        return self._result()

    def _create(self, **kwargs: Any) -> Any:
        self.calls += 1
        message = SimpleNamespace(content="{}")
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])

    def get_call_log(self) -> list[dict[str, Any]]:
        return []

    def reset_call_log(self) -> None:
        return None


def grade(request: dict[str, Any]) -> dict[str, Any]:
    from claw_eval.graders.registry import get_grader
    from claw_eval.models.scoring import compute_task_score, is_pass
    from claw_eval.models.task import TaskDefinition
    from claw_eval.models.trace import ToolDispatch, TraceMessage

    task_dir = Path(request["task_dir"])
    task = TaskDefinition.from_yaml(task_dir / "task.yaml")
    grader = get_grader(task.task_id, tasks_dir=task_dir.parent, task_dir=task_dir)
    trace = request["trace"]
    messages = [TraceMessage.model_validate({"trace_id": "coworkenv", "message": m}) for m in trace["messages"]]
    dispatches = [ToolDispatch.model_validate({"trace_id": "coworkenv", **d}) for d in trace["dispatches"]]
    judge = StubJudge(float(request["judge_score"]))
    scores = grader.grade(messages, dispatches, task, audit_data=trace["audit_data"], judge=judge)
    score = compute_task_score(scores)
    return {
        "completion": scores.completion,
        "robustness": scores.robustness,
        "safety": scores.safety,
        "score": score,
        "passed": is_pass(score),
        "judge_calls": judge.calls,
    }


def main() -> None:
    checkout = Path(sys.argv[1])
    sys.path.insert(0, str(checkout / "src"))
    replies, sys.stdout = sys.stdout, sys.stderr  # what a grader prints must not break the protocol
    for line in sys.stdin:
        try:
            reply = grade(json.loads(line))
        except Exception as exc:  # a grader's own failure is this task's result, not the harness's
            where = traceback.extract_tb(exc.__traceback__)[-1]
            reply = {"error": f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})"[:500]}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
