"""`coworkenv validate`: run the validation battery over task files and write the verdicts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.errors import CoworkEnvError

RESULT_COLUMNS = ("task_id", "code", "passed", "severity", "discriminating", "details", "message")


def read_raw_tasks(path: Path) -> list[tuple[str, str]]:
    """(source label, raw JSON text) per task, unparsed: a `.jsonl` file gives one per non-blank line, any other
    file one per file, a directory its `.json`/`.jsonl` files in name order."""
    if not path.exists():
        raise CoworkEnvError(f"{path}: no such file or directory")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
        if not files:
            raise CoworkEnvError(f"{path}: no .json or .jsonl files")
    else:
        files = [path]
    tasks: list[tuple[str, str]] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CoworkEnvError(f"{file}: cannot read: {exc}") from None
        if file.suffix == ".jsonl":
            tasks.extend((f"{file}:{n}", line) for n, line in enumerate(text.splitlines(), start=1) if line.strip())
        elif text.strip():
            tasks.append((str(file), text))
    if not tasks:
        raise CoworkEnvError(f"{path}: no tasks")
    return tasks


def _one_line(raw: str) -> str:
    """A valid task's text as one JSONL line (a pretty-printed .json file is compacted; it passed the battery)."""
    raw = raw.strip()
    if "\n" not in raw and "\r" not in raw:
        return raw
    return json.dumps(json.loads(raw), ensure_ascii=False)


def result_rows(validations: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "task_id": r.task_id,
            "code": r.code,
            "passed": r.passed,
            "severity": r.severity,
            "discriminating": r.discriminating,
            "details": json.dumps(r.details, ensure_ascii=False, sort_keys=True),
            "message": r.message,
        }  # fmt: skip
        for v in validations
        for r in v.results
    ]


def summarize(validations: list[Any], runtime: str) -> dict[str, Any]:
    from coworkenv.validate.codes import BATTERY_VERSION

    n = len(validations)
    valid = sum(v.valid for v in validations)
    failures = Counter(r.code for v in validations for r in v.results if not r.passed)
    rejections = Counter(code for v in validations for code in dict.fromkeys(v.failed_codes))
    return {
        "tasks": n,
        "valid": valid,
        "rejected": n - valid,
        "valid_share": round(valid / n, 6) if n else 0.0,
        "failures_by_code": dict(failures.most_common()),
        "rejections_by_code": dict(rejections.most_common()),
        "mean_discrimination": round(sum(v.discrimination for v in validations) / n, 6) if n else 0.0,
        "runtime": runtime,
        "battery_version": BATTERY_VERSION,
    }


def _write_parquet(path: Path, rows: list[dict[str, Any]], schema: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def write_outputs(out: Path, tasks: list[tuple[str, str]], validations: list[Any], runtime: str) -> dict[str, Any]:
    import pyarrow as pa

    out.mkdir(parents=True, exist_ok=True)
    valid_lines, rejected_lines = [], []
    for (source, raw), v in zip(tasks, validations, strict=True):
        if v.valid:
            valid_lines.append(_one_line(raw))
        else:
            record = {"task_id": v.task_id, "source": source, "failed_codes": v.failed_codes, "task": raw}
            rejected_lines.append(json.dumps(record, ensure_ascii=False))
    (out / "valid.jsonl").write_text("".join(line + "\n" for line in valid_lines), encoding="utf-8")
    (out / "rejected.jsonl").write_text("".join(line + "\n" for line in rejected_lines), encoding="utf-8")
    rows = result_rows(validations)
    (out / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result_schema = pa.schema([
        ("task_id", pa.string()), ("code", pa.string()), ("passed", pa.bool_()), ("severity", pa.string()),
        ("discriminating", pa.bool_()), ("details", pa.string()), ("message", pa.string()),
    ])  # fmt: skip
    _write_parquet(out / "results.parquet", rows, result_schema)
    task_rows = [
        {"task_id": v.task_id, "source": source, "valid": v.valid, "discrimination": v.discrimination,
         "failed_codes": v.failed_codes, "evidence_hash": v.evidence_hash, "battery_version": v.battery_version}
        for (source, _), v in zip(tasks, validations, strict=True)
    ]  # fmt: skip
    task_schema = pa.schema([
        ("task_id", pa.string()), ("source", pa.string()), ("valid", pa.bool_()), ("discrimination", pa.float64()),
        ("failed_codes", pa.list_(pa.string())), ("evidence_hash", pa.string()), ("battery_version", pa.int64()),
    ])  # fmt: skip
    _write_parquet(out / "tasks.parquet", task_rows, task_schema)
    summary = summarize(validations, runtime)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


@app.command()
def validate(
    tasks: Annotated[Path, typer.Argument(help="Tasks: a .jsonl file (one per line), a .json file, or a directory of them.")],
    out: Annotated[Path, typer.Option(help="Output directory: valid.jsonl, rejected.jsonl, results.jsonl/.parquet, tasks.parquet, summary.json.")],
    workers: Annotated[int, typer.Option(min=1, help="Parallel sandboxed jobs.")] = 2,
    runtime: Annotated[str, typer.Option(help="Sandbox: auto, bwrap, rlimit, or none (in-process, trusted input only).")] = "auto",
) -> None:
    """Run the validation battery on every task; write valid and rejected tasks and one result row per check."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from coworkenv.sandbox.choices import RUNTIME_CHOICES
    from coworkenv.validate.batch import validate_tasks
    from coworkenv.validate.codes import BATTERY_CODES

    if runtime not in RUNTIME_CHOICES:
        raise CoworkEnvError(f"--runtime must be one of {', '.join(RUNTIME_CHOICES)}, got {runtime!r}")
    raw = read_raw_tasks(tasks)  # never parsed here: untrusted text is only evaluated inside the runtime
    if out.exists() and not out.is_dir():
        raise CoworkEnvError(f"{out}: exists and is not a directory")
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("validating", total=len(raw))
        try:
            validations = validate_tasks(
                [text for _, text in raw], workers=workers, runtime=runtime, names=[source for source, _ in raw],
                progress=lambda n=1: progress.advance(bar, n),
            )  # fmt: skip
        except ImportError as exc:
            raise CoworkEnvError(f"the sandbox runtime is not available ({exc}); use --runtime none for trusted input") from None
    try:
        summary = write_outputs(out, raw, validations, runtime)
    except OSError as exc:
        raise CoworkEnvError(f"{out}: cannot write: {exc}") from None

    console = Console()
    table = Table("code", "severity", "failed", title="battery failures", title_justify="left")
    for code, count in summary["failures_by_code"].items():
        severity = BATTERY_CODES[code][0] if code in BATTERY_CODES else "mandatory"
        table.add_row(code, severity, str(count))
    if summary["failures_by_code"]:
        console.print(table)
    console.print(
        f"{summary['valid']}/{summary['tasks']} tasks valid ({summary['valid_share']:.1%}), "
        f"mean discrimination {summary['mean_discrimination']:.3f} → {out}"
    )
