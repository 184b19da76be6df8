"""`coworkenv import claw-eval`: Claw-Eval task folders → TaskSpecs with a derived oracle, and a report of what could
not be expressed (docs/design/evaluation.md, "Importing Claw-Eval tasks"). Task folders are read as data: YAML's safe
loader, JSON fixtures, grader.py parsed for literal constants and never run."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coworkenv.errors import format_validation_error
from coworkenv.grading.consistency import consistency_gate
from coworkenv.importers.claw_eval.criteria import map_criteria, slug
from coworkenv.importers.claw_eval.graded import checkout_named, grader_check
from coworkenv.importers.claw_eval.report import CriterionReport, ImportReport, TaskReport, count, summarize
from coworkenv.importers.claw_eval.solution import NoOracle, derive_oracle, thorough_reads
from coworkenv.importers.claw_eval.source import SourceTask, read_task, task_folders
from coworkenv.importers.claw_eval.tool_map import map_tool
from coworkenv.importers.claw_eval.workspace import build_workspace
from coworkenv.spec.task import TaskSpec

DIFFICULTY = {"simple": 1, "easy": 1, "medium": 2, "hard": 3, "expert": 4}


@dataclass(frozen=True)
class Imported:
    specs: list[TaskSpec]
    report: ImportReport


def _capabilities(checks: list[dict[str, Any]], tools: list[str], prohibited: list[dict[str, Any]]) -> list[str]:
    kinds = {c["kind"] for c in checks} | {m["kind"] for c in checks for m in c.get("checks", [])}
    caps = ["retrieval"]
    if kinds & {"answer_number", "answer_json"}:
        caps.append("data_analysis")
    if kinds & {"mail_sent", "mail_drafted"}:
        caps.append("communication")
    if "calendar_create" in tools:
        caps.append("scheduling")
    if prohibited or "answer_none_of" in kinds:
        caps.append("safety")
    return caps


def _gate(spec: TaskSpec) -> tuple[str, list[str]]:
    verdict = consistency_gate(spec)
    if verdict.passed:
        return "pass", []
    judged_only = all("not graded" in f for f in verdict.failures)
    return ("not graded" if judged_only else "fail"), list(verdict.failures)


def _read_thoroughly(
    spec_data: dict[str, Any], ws: dict[str, Any], tools: list[str], before: tuple[TaskSpec, str, list[str], str]
) -> tuple[TaskSpec, str, list[str], str]:
    """The derived oracle with every record the offered read tools reach read first (`thorough_reads`), kept when
    that passes the gate (or leaves only what a judge must decide); else what it was."""
    solution = spec_data["solution"]
    reads = thorough_reads(ws, tools)
    steps = [*reads, *(s for s in solution if s not in reads)]
    if steps == solution:
        return before
    try:
        spec = TaskSpec.model_validate({**spec_data, "solution": steps})
    except ValidationError:  # more reads than a trajectory may hold
        return before
    gate, failures = _gate(spec)
    if gate == "fail":
        return before
    note = "; ".join(n for n in (before[3], "the oracle reads every record its tools reach first") if n)
    return spec, gate, failures, note


def convert(
    task: SourceTask, root: Path, keep_without_oracle: bool = False, own_grader: bool = False
) -> tuple[TaskSpec | None, TaskReport]:
    """One task folder as a TaskSpec (None where it is not imported) and its report. `own_grader`: the task is graded
    by its own grader.py from the checkout (one `code` check, `graded.grader_check`) instead of the mapped checks,
    which then only derive the oracle."""
    data = task.data
    folder = task.folder.relative_to(root).as_posix() or "."
    if task.problem:  # task.yaml may be unread: the folder names the task
        return None, TaskReport(
            folder=folder, task_id=str(data.get("task_id") or task.folder.name), imported=False, why_not=task.problem
        )
    ws, notes = build_workspace(task.fixtures)
    notes += [f"fixture {name}: not JSON or text, not imported" for name in task.skipped]
    collections = list(ws.get("records", {}).get("collections", {}))
    tools: list[str] = []
    for entry in data.get("tools") or []:
        name = entry.get("name") if isinstance(entry, dict) else entry
        mapped = map_tool(str(name), collections)
        if mapped is None:
            notes.append(f"tool {name!r} has no CoworkEnv counterpart")
        elif mapped[0] not in tools:
            tools.append(mapped[0])
    mapped_criteria, criteria_notes = map_criteria(data, task.constants, collections)
    notes += criteria_notes
    notes += [f"task.yaml `{k}` is not imported" for k in ("user_agent",) if (data.get(k) or {}).get("enabled")]
    if data.get("expected_actions"):
        notes.append("expected_actions are not imported: the state checks come from the scoring components")
    notes += [
        f"prompt attachments {data['prompt']['attachments']} are not imported"
        for _ in [0]
        if data["prompt"].get("attachments")
    ]
    criteria = [CriterionReport(**vars(c)) for c in mapped_criteria.criteria]
    base = {
        "folder": folder,
        "task_id": str(data["task_id"]),
        "criteria": criteria,
        "counts": count(criteria),
        "notes": notes,
    }
    checks = mapped_criteria.checks
    if not checks or not tools:
        return None, TaskReport(
            **base, imported=False, why_not="no criterion maps to a check" if not checks else "no tool maps"
        )
    oracle_note, judged = "", []
    try:
        solution, judged = derive_oracle(checks, ws, tools)
    except NoOracle as exc:
        solution, oracle_note = [{"answer": f"(no oracle: {exc})"}], str(exc)
    if judged:
        oracle_note = f"the answer is unproven against {judged} until a judge grades it"
    spec_data = {
        "id": f"claw-eval-{slug(data['task_id'])}",
        "family": "claw_eval",
        "capabilities": _capabilities(checks, tools, mapped_criteria.prohibited),
        "difficulty": DIFFICULTY.get(str(data.get("difficulty", "")).lower(), 2),
        "instruction": data["prompt"]["text"].strip(),
        "workspace": ws,
        "tools": tools,
        "prohibited": mapped_criteria.prohibited,
        "checks": [grader_check(task.folder.name)] if own_grader else checks,
        "solution": solution,
        "meta": {
            "generator": "import:claw-eval",
            "source": base["folder"],
            "claw_eval_id": str(data["task_id"]),
            "category": str(data.get("category", "")),
        },
    }
    try:
        spec = TaskSpec.model_validate(spec_data)
    except ValidationError as exc:
        return None, TaskReport(**base, imported=False, why_not=f"not a valid TaskSpec: {format_validation_error(exc)}")
    has_oracle = not oracle_note or bool(judged)
    if not has_oracle:
        keep = keep_without_oracle
        return (spec if keep else None), TaskReport(
            **base, imported=keep, why_not="" if keep else "no oracle", oracle_note=oracle_note
        )
    gate, failures = _gate(spec)
    if gate == "fail" and own_grader:  # the grader may ask for reads the checks never name
        spec, gate, failures, oracle_note = _read_thoroughly(spec_data, ws, tools, (spec, gate, failures, oracle_note))
    imported = gate != "fail" or keep_without_oracle
    report = TaskReport(
        **base,
        imported=imported,
        why_not="" if imported else "the oracle fails the gate",
        oracle=True,
        oracle_note=oracle_note,
        gate=gate,
        gate_failures=failures,
    )
    return (spec if imported else None), report


def import_claw_eval(
    root: str | Path,
    *,
    keep_without_oracle: bool = False,
    own_grader: bool = False,
    progress: Callable[[int, int], Any] | None = None,
) -> Imported:
    """Every task folder under `root` (a folder with task.yaml), in name order; `progress(done, total)` before the
    first task and after each one. `own_grader`: `root` is a Claw-Eval checkout and each task is graded by its own
    grader.py (`convert`); the gate runs it from there, and so does any later grading where `CHECKOUT_VARIABLE`
    names the checkout."""
    root = Path(root)
    folders = task_folders(root)
    specs, reports = [], []
    with checkout_named(root) if own_grader else nullcontext():
        for done, folder in enumerate(folders):
            if progress:
                progress(done, len(folders))
            spec, report = convert(read_task(folder), root, keep_without_oracle, own_grader)
            if spec is not None:
                specs.append(spec)
            reports.append(report)
    if progress:
        progress(len(folders), len(folders))
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        from coworkenv.errors import CoworkEnvError

        raise CoworkEnvError(f"{root}: two tasks share an id ({sorted({i for i in ids if ids.count(i) > 1})[0]})")
    return Imported(specs, summarize(str(root), reports, own_grader))
