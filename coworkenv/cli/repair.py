"""The `repair` command: tasks + their battery results → repaired tasks, rejections, attempts with lineage, metrics."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.errors import CoworkEnvError


def _json_lines(path: Path, what: str) -> list[tuple[str, Any]]:
    """(where, value) for each JSON value in a .jsonl file (or the one value of a .json file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CoworkEnvError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CoworkEnvError(f"{path}: cannot read: {exc}") from None
    if path.suffix != ".jsonl":
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise CoworkEnvError(f"{path}: not valid JSON: {exc}") from None
        return [(f"{path}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list) else [(str(path), value)]
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"{path}:{number}", json.loads(line)))
        except ValueError as exc:
            raise CoworkEnvError(f"{path}:{number}: {what} is not valid JSON: {exc}") from None
    return rows


def _unwrap(row: Any, where: str) -> Any:
    """A row of `coworkenv validate`'s rejected.jsonl carries the task's raw text under `task`."""
    if isinstance(row, dict) and "task" in row and "task_id" in row and "instruction" not in row:
        task = row["task"]
        if isinstance(task, str):
            try:
                return json.loads(task)
            except ValueError as exc:
                raise CoworkEnvError(f"{where}: the rejected task's text is not valid JSON: {exc}") from None
        return task
    return row


def read_tasks(path: Path) -> list[dict[str, Any]]:
    """Specs as plain JSON data (a spec that does not parse as a TaskSpec is what repair is for)."""
    files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
    if path.is_dir() and not files:
        raise CoworkEnvError(f"{path}: no .json or .jsonl files")
    tasks, seen = [], set()
    for file in files:
        for where, value in _json_lines(file, "task"):
            value = _unwrap(value, where)
            if not isinstance(value, dict):
                raise CoworkEnvError(f"{where}: expected a JSON object, got {type(value).__name__}")
            task_id = value.get("id")
            if not isinstance(task_id, str) or not task_id:
                raise CoworkEnvError(f"{where}: a task needs a string `id` to be matched with its feedback")
            if task_id in seen:
                raise CoworkEnvError(f"{where}: task id {task_id!r} appears twice")
            seen.add(task_id)
            tasks.append(value)
    return tasks


def read_feedback(path: Path) -> dict[str, Any]:
    """task id → TaskValidation, from TaskValidation rows or from one row per battery outcome (results.jsonl)."""
    from pydantic import ValidationError

    from coworkenv.errors import format_validation_error
    from coworkenv.validate.codes import BATTERY_CODES
    from coworkenv.validate.verdict import CheckOutcome, TaskValidation

    validations: dict[str, TaskValidation] = {}
    outcomes: dict[str, list[CheckOutcome]] = defaultdict(list)
    for where, row in _json_lines(path, "feedback row"):
        if not isinstance(row, dict):
            raise CoworkEnvError(f"{where}: expected a JSON object, got {type(row).__name__}")
        try:
            if "results" in row:
                validation = TaskValidation.model_validate(row)
                validations[validation.task_id] = validation
                continue
            if isinstance(row.get("details"), str):  # results.jsonl keeps details as a JSON string
                try:
                    row = {**row, "details": json.loads(row["details"]) if row["details"].strip() else {}}
                except ValueError:
                    row = {**row, "details": {"raw": row["details"]}}
            code = row.get("code")
            severity, discriminating, _ = BATTERY_CODES.get(code, ("mandatory", False, ""))
            outcome = CheckOutcome.model_validate({"severity": severity, "discriminating": discriminating, **row})
        except ValidationError as exc:
            raise CoworkEnvError(format_validation_error(exc, f"{where}: not a battery result")) from None
        outcomes[outcome.task_id].append(outcome)
    for task_id, results in outcomes.items():
        valid = all(r.passed for r in results if r.severity == "mandatory")
        applicable = [r for r in results if r.discriminating and r.details.get("applicable", True) is not False]
        discrimination = sum(r.passed for r in applicable) / len(applicable) if applicable else 1.0
        validations[task_id] = TaskValidation(task_id=task_id, valid=valid, discrimination=round(discrimination, 6), results=results)
    return validations


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    """Strict JSON; a NaN/Infinity (only in a rejected spec) is written as null."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False)


def _write_jsonl(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(_dumps(row) + "\n" for row in rows), encoding="utf-8")


@app.command("repair")
def repair_command(
    tasks: Annotated[
        Path, typer.Argument(help="Tasks: a .jsonl (one spec per line, or `coworkenv validate`'s rejected.jsonl), a .json, or a directory.")
    ],
    feedback: Annotated[Path, typer.Option(help="Battery results: results.jsonl rows (one per outcome) or TaskValidation rows.")],
    out: Annotated[Path, typer.Option(help="Output directory: repaired.jsonl, rejected.jsonl, repairs.jsonl, metrics.json.")],
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Repair rounds per task before it is rejected.")] = 3,
    llm_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for the LLM repairer (after the rules).")] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name at that endpoint.")] = None,
    llm_timeout: Annotated[float, typer.Option(help="LLM request timeout (s).")] = 120.0,
    advisory: Annotated[bool, typer.Option("--advisory", help="Also repair advisory failures (checks_discriminate, prefix_partial).")] = False,
    keep_valid: Annotated[bool, typer.Option("--keep-valid", help="Also copy tasks that were already valid into repaired.jsonl.")] = False,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Sandboxed workers for the rule pass.")] = 2,
    runtime: Annotated[str, typer.Option(help="Sandbox for the repairers' episodes: auto, bwrap, rlimit or none (in-process).")] = "auto",
) -> None:
    """Repair failing tasks: rule-based repairers by failure code, then (optionally) an LLM; every patch re-validated."""
    from pydantic import ValidationError
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from coworkenv.errors import format_validation_error
    from coworkenv.repair.llm import LLMRepairer
    from coworkenv.repair.loop import failed_codes, metrics, repair_task
    from coworkenv.sandbox.choices import IN_PROCESS, RUNTIME_CHOICES, either
    from coworkenv.synth.llm import LLMConfig
    from coworkenv.validate.battery import validate_spec

    if bool(llm_base_url) != bool(llm_model):
        raise CoworkEnvError("the LLM repairer needs both --llm-base-url and --llm-model")
    llm = None
    if llm_base_url:
        try:
            llm = LLMRepairer(LLMConfig(base_url=llm_base_url, model=llm_model or "", timeout_s=llm_timeout, temperature=0.0))
        except ValidationError as exc:
            raise CoworkEnvError(format_validation_error(exc)) from None
    specs = read_tasks(tasks)
    validations = read_feedback(feedback)
    console = Console(stderr=True)
    unknown = set(validations) - {s["id"] for s in specs}
    if unknown:
        console.print(f"note: feedback for {len(unknown)} task(s) not in {tasks} is ignored")
    if runtime not in RUNTIME_CHOICES:
        raise CoworkEnvError(f"--runtime must be {either(RUNTIME_CHOICES)}, got {runtime!r}")
    outcomes = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("repairing", total=len(specs))
        if runtime == IN_PROCESS:
            for spec in specs:
                outcomes.append(repair_task(spec, validations.get(spec["id"]), rounds=rounds, llm=llm, validate=validate_spec,
                                            include_advisory=advisory))  # fmt: skip
                progress.advance(bar)
        else:
            from coworkenv.repair.sandboxed import repair_in_sandbox

            items = [(spec, validations.get(spec["id"])) for spec in specs]
            outcomes = repair_in_sandbox(items, rounds=rounds, advisory=advisory, workers=workers, runtime=runtime, llm=llm,
                                         progress=lambda k: progress.advance(bar, k))  # fmt: skip
    repaired = [o.spec for o in outcomes if o.repaired or (keep_valid and o.valid)]
    rejected = [
        {"task_id": o.task_id, "initially_failed": o.initially_failed,
         "failed_codes": failed_codes(o.validation, include_advisory=advisory) if o.validation else o.initially_failed,
         "rejection": o.rejection, "rounds_used": o.rounds_used, "last_spec": o.last_spec}
        for o in outcomes if not o.valid
    ]  # fmt: skip
    repairs = [
        {"task_id": o.task_id, "repaired_id": o.spec["id"] if o.repaired and o.spec else None, **a.model_dump(mode="json")}
        for o in outcomes for a in o.attempts
    ]  # fmt: skip
    summary = metrics(outcomes)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_jsonl(out / "repaired.jsonl", repaired)
        _write_jsonl(out / "rejected.jsonl", rejected)
        _write_jsonl(out / "repairs.jsonl", repairs)
        (out / "metrics.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CoworkEnvError(f"{out}: cannot write: {exc}") from None
    table = Table("failure code", "failed", "rescued", "rescue rate", title="repair", title_justify="left")
    for code, m in summary.by_code.items():
        table.add_row(code, str(m.failed), str(m.rescued), f"{m.rescue_rate:.0%}")
    stdout = Console()
    stdout.print(table)
    stdout.print(
        f"{summary.tasks} tasks: {summary.initially_valid} already valid, {summary.repaired} repaired, {summary.rejected} rejected "
        f"(rescue rate {summary.rescue_rate:.0%}, {summary.attempts} attempts) → {out}"
    )
