"""The run directory: what a run's stages hand each other, under `<data root>/runs/<run id>/` (docs/design/pipeline.md,
"Run directory"). Every stage reads the files of the stages before it and overwrites its own, so a retried or re-run
stage gives the same result.

```
config.json                          the run's SynthesisConfig (written by the plan stage)
plan.json                            the generation plan; shards.json: its rows split into shards
generated/shard-NNNN.tasks.jsonl     one raw TaskSpec JSON text per line (untrusted: parsed only in the sandbox)
generated/shard-NNNN.rejections.jsonl
validated/shard-NNNN.validations.jsonl   one TaskValidation per line, in the order of the shard's tasks
repaired/tasks.jsonl                 the repaired specs (new ids, lineage in `meta`)
repaired/validations.jsonl           the battery's verdict on each of them (from the sandbox)
repaired/attempts.jsonl, repaired/metrics.json
rollouts/trajectories.jsonl          `trajectories` rows: the oracle rollouts of every valid task
tables/<table>.parquet               the release tables, staged for the gates
quality/data_docs/<stage>/index.html a gate's report (renders offline; GX's own Data Docs under gx/)
quality/passed.json                  the digests of the staged tables the gates passed (what publish accepts)
```
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from coworkenv.data.root import DataRoot, local_path, open_root
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import iter_lines, parse_json, read_json, staged, write_output
from coworkenv.pipeline.config import C, SynthesisConfig, validated_config
from coworkenv.redact import scrub_configured
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import TaskValidation

R = TypeVar("R")

RUNS_DIR = "runs"
GATES_PASSED = ("quality", "passed.json")
NIGHTLY_DIR = "nightly"
"""A nightly run's own folder in its run directory (config, state, checkpoints, the promotion decision)."""


RUN_ID_CHARS = "-_.:+~"
"""Besides letters and digits, what a run id keeps in its directory name: every character of Airflow's run ids
(`manual__2026-01-01T00:00:00.123456+00:00`), so the folder a person looks for is the run id the UI shows."""


def safe_name(run_id: str) -> str:
    """A run id as a directory name: itself, when made of letters, digits and `RUN_ID_CHARS` (as every Airflow and
    CLI run id is); else each other character (`/`, a space) becomes `_` and the name ends in `-<8 hex digits of the
    id's SHA-256>`, so that two ids (`a/b`, `a_b`) never share a folder and one run never clears another's work."""
    if not isinstance(run_id, str) or not run_id.strip():
        raise CoworkEnvError("a run needs a non-empty run id")
    name = "".join(c if c.isalnum() or c in RUN_ID_CHARS else "_" for c in run_id)
    if name != run_id:
        name += "-" + hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    if not name.strip("."):  # `.` or `..` would be the runs folder itself or the data root
        raise CoworkEnvError(f"run id {run_id!r} is not a name: give letters or digits")
    return name


@dataclass(frozen=True)
class RunDir:
    data_root: DataRoot
    run_id: str
    path: Path

    @classmethod
    def open(cls, run_id: str, data_root: str | os.PathLike[str] | DataRoot | None = None) -> RunDir:
        root = open_root(data_root)
        path = local_path(root, "a run's work directory") / RUNS_DIR / safe_name(run_id)
        return cls(data_root=root, run_id=run_id, path=path)

    def file(self, *parts: str) -> Path:
        return self.path.joinpath(*parts)

    def require(self) -> RunDir:
        """This run, or an error when it was never started: the stages after generate would otherwise make its folder
        on their way to failing, leaving an empty run behind."""
        if not self.path.is_dir():
            raise CoworkEnvError(f"run {self.run_id!r} does not exist under {self.data_root.url}: generate it first")
        return self

    # --- the config ---

    def write_config(self, config: SynthesisConfig) -> None:
        write_text(self.file("config.json"), config.model_dump_json(indent=2) + "\n")

    def config(self) -> SynthesisConfig:
        missing = (
            f"run {self.run_id!r} has not been planned under {self.data_root.url} (no config.json): generate it first"
        )
        return read_job_config(self.file("config.json"), SynthesisConfig, missing)

    # --- shards ---

    def shard_ids(self) -> list[int]:
        """The generated shards, in order."""
        names = sorted(self.file("generated").glob("shard-*.tasks.jsonl"))
        if not names:
            raise CoworkEnvError(f"run {self.run_id!r} has no generated tasks under {self.path}: generate it first")
        number = [p.name.split(".")[0].removeprefix("shard-") for p in names]
        if bad := next((p for p, n in zip(names, number, strict=True) if not n.isdigit()), None):
            raise CoworkEnvError(f"{bad}: not a shard file of this run (shard-NNNN.tasks.jsonl)")
        return [int(n) for n in number]

    def shard_file(self, stage: str, shard: int, what: str) -> Path:
        return self.file(stage, f"shard-{shard:04d}.{what}.jsonl")


def read_job_config(path: Path, model: type[C], missing: str) -> C:
    """The job config a run recorded at `path` (`missing`: the error when it has none), checked against its model."""
    if not path.exists():
        raise CoworkEnvError(missing)
    data = read_json(path)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return validated_config(model, data, str(path), recorded=True)


def write_text(path: Path, text: str) -> None:
    """Whole or not at all (`files.write_output`). The last line of defence for secrets: a configured secret (the
    run's API key) never reaches a run file, whatever carried it this far."""
    write_output(path, scrub_configured(text))


BATCH = 1000
"""Tasks a stage holds in memory at once (docs/design/pipeline.md, "Bounded memory"): every stage that reads or writes a
task set streams it in batches of this size, so memory stays flat in the number of tasks."""


def batched(items: Iterable[R], size: int = BATCH) -> Iterator[list[R]]:
    """`items` in lists of `size` (the last one shorter); `itertools.batched` is Python 3.12+."""
    if size < 1:
        raise ValueError(f"batch size {size}: give at least 1")
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


@contextmanager
def jsonl_writer(path: Path) -> Iterator[Callable[[Iterable[str]], int]]:
    """`write(lines)` appends lines to a JSON Lines file that appears whole when the block ends, or not at all; what
    it writes goes through `scrub_configured`, as `write_text` does. Hands back the number of lines written."""
    with staged(path) as tmp, tmp.open("w", encoding="utf-8") as out:

        def write(lines: Iterable[str]) -> int:
            n = 0
            for line in lines:
                out.write(scrub_configured(line) + "\n")
                n += 1
            return n

        yield write


def write_jsonl(path: Path, lines: Iterable[str]) -> None:
    with jsonl_writer(path) as write:
        write(lines)


def iter_jsonl(path: Path) -> Iterator[str]:
    """The non-blank lines of a JSON Lines file, one at a time (none when it does not exist)."""
    if path.exists():
        yield from (line for line in iter_lines(path) if line.strip())


def read_jsonl(path: Path) -> list[str]:
    """The non-blank lines of a JSON Lines file (none when it does not exist)."""
    return list(iter_jsonl(path))


def count_jsonl(path: Path) -> int:
    return sum(1 for _ in iter_jsonl(path))


def iter_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file of the run, one at a time, or an error naming the line."""
    for number, line in enumerate(iter_jsonl(path), start=1):
        row = parse_json(line, f"{path}:{number}")
        if not isinstance(row, dict):
            raise CoworkEnvError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        yield row


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file of the run (none when it does not exist), or an error naming the line."""
    return list(iter_rows(path))


M = TypeVar("M", bound=BaseModel)

StageHook = Callable[[str, Any], None]
"""Called with (stage, its result) after each stage of a whole run: progress reports."""


def stage_reporter(on_stage: StageHook | None) -> Callable[[str, R], R]:
    """`done(stage, result)`: tells `on_stage` (when given) and hands the result back, so a whole run reads as its
    stages (`synthesize`, `evaluate`)."""

    def done(stage: str, result: R) -> R:
        if on_stage is not None:
            on_stage(stage, result)
        return result

    return done


def iter_models(model: type[M], path: Path) -> Iterator[M]:
    """A JSON Lines file of the run as models, one at a time, or an error naming the offending line and field."""
    for number, row in enumerate(iter_rows(path), start=1):
        try:
            yield model.model_validate(row)
        except ValidationError as exc:
            raise CoworkEnvError(format_validation_error(exc, f"{path}:{number}")) from None


def read_models(model: type[M], path: Path) -> list[M]:
    """A JSON Lines file of the run as models, or an error naming the offending line and field."""
    return list(iter_models(model, path))


def write_json(path: Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


# --- what the stages read back ---------------------------------------------------------------------------------


def validated(run: RunDir) -> Iterator[tuple[str, TaskValidation]]:
    """Every generated task's raw text with its battery verdict, shard by shard, in order, one at a time."""
    for shard in run.shard_ids():
        lines = iter_jsonl(run.shard_file("generated", shard, "tasks"))
        verdicts = iter_models(TaskValidation, run.shard_file("validated", shard, "validations"))
        what = f"run {run.run_id!r}: shard {shard} has"
        yield from _paired(
            lines, verdicts, lambda n, m, what=what: f"{what} {n} tasks but {m} verdicts: validate it first"
        )


def repaired(run: RunDir) -> Iterator[tuple[str, TaskValidation]]:
    """The repaired specs with the battery's verdict on each (both written by the repair stage), one at a time."""
    lines = iter_jsonl(run.file("repaired", "tasks.jsonl"))
    verdicts = iter_models(TaskValidation, run.file("repaired", "validations.jsonl"))
    yield from _paired(
        lines, verdicts, lambda n, m: f"run {run.run_id!r}: {n} repaired tasks but {m} verdicts: repair it again"
    )


def _paired(
    lines: Iterator[str], verdicts: Iterator[TaskValidation], mismatch: Callable[[int, int], str]
) -> Iterator[tuple[str, TaskValidation]]:
    """(line, verdict) pairs of two files that must have as many entries; `mismatch(lines, verdicts)` is the error
    when they do not (raised once one runs out, with both counted to the end)."""
    n = 0
    for line in lines:
        verdict = next(verdicts, None)
        if verdict is None:
            raise CoworkEnvError(mismatch(n + 1 + sum(1 for _ in lines), n))
        n += 1
        yield line, verdict
    if (extra := sum(1 for _ in verdicts)) > 0:
        raise CoworkEnvError(mismatch(n, n + extra))


def verdicts(run: RunDir) -> Iterator[tuple[str, TaskValidation]]:
    """Every task of the run with its verdict: the generated ones, then the repaired ones, one at a time."""
    yield from validated(run)
    yield from repaired(run)


def valid_tasks(tasks: Iterable[tuple[str, TaskValidation]]) -> Iterator[tuple[TaskSpec, TaskValidation]]:
    """The valid ones of `verdicts(run)`, parsed (they passed the battery in the sandbox), one at a time."""
    for line, v in tasks:
        if v.valid:
            try:
                spec = TaskSpec.model_validate_json(line)
            except ValidationError as exc:  # the run directory was changed after validation
                raise CoworkEnvError(
                    format_validation_error(exc, f"run {v.task_id!r}: task {v.task_id!r} (marked valid)")
                ) from None
            yield spec, v
