"""Stage generate: one shard's plan rows → raw TaskSpec lines, and every failed attempt as a rejection.

Tasks stream from the generator to the shard's files `batch_size` at a time (docs/design/pipeline.md, "Bounded memory"):
what a shard holds in memory is one batch, whatever its size."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_text, staged
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.rundir import BATCH, RunDir, batched, iter_jsonl, jsonl_writer
from coworkenv.pipeline.summary import Reasons, block
from coworkenv.pipeline.synthesis.plan import start_run
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.generate import GenerateRequest, Rejection, iter_generate
from coworkenv.synth.planner import Plan, PlanRow

log = logging.getLogger(__name__)


def _generate(
    run: RunDir, shard: dict[str, Any], llm: LLMConfig | None, progress: Callable[[int], None] | None
) -> Iterator[TaskSpec | Rejection]:
    from coworkenv.synth.llm import LLMGenerator  # the OpenAI client is imported only where an endpoint is used

    config = run.config()
    rows = [PlanRow.model_validate(r) for r in shard["rows"]]
    request = GenerateRequest(
        n=max(1, shard["tasks"]), seed=config.seed, generator=config.generator, llm_share=config.llm_share
    )
    generator = LLMGenerator(llm) if llm is not None else None
    return iter_generate(request, Plan(n=shard["tasks"], seed=config.seed, rows=rows), llm=generator, progress=progress)


def _write_shard(
    folder: Path, shard: int, items: Iterable[TaskSpec | Rejection | str], batch_size: int
) -> tuple[dict[str, Any], Reasons]:
    """A shard's two files from its tasks (specs, or raw texts taken from files) and rejections, one batch at a time;
    each file appears whole when all of them are written, or not at all."""
    tasks = rejections = 0
    reasons = Reasons()
    with (
        jsonl_writer(folder / f"shard-{shard:04d}.tasks.jsonl") as write_tasks,
        jsonl_writer(folder / f"shard-{shard:04d}.rejections.jsonl") as write_rejections,
    ):
        # a spec becomes its line as it comes: a batch holds lines, not the far larger objects
        for batch in batched((item.to_json() if isinstance(item, TaskSpec) else item for item in items), batch_size):
            tasks += write_tasks(item for item in batch if not isinstance(item, Rejection))
            rejected = [item for item in batch if isinstance(item, Rejection)]
            for r in rejected:
                reasons.add(r.code, f"{r.family} seed {r.seed}", r.reason)
            rejections += write_rejections(r.model_dump_json() for r in rejected)
    return {"shard": shard, "tasks": tasks, "rejections": rejections}, reasons


def _make_shard(
    run: RunDir,
    folder: Path,
    shard: dict[str, Any],
    llm: LLMConfig | None,
    progress: Callable[[int], None] | None,
    batch_size: int,
) -> dict[str, Any]:
    result, reasons = _write_shard(folder, shard["shard"], _generate(run, shard, llm, progress), batch_size)
    head = f"generate shard {shard['shard']}: {result['tasks']} tasks of {shard['tasks']} planned, {result['rejections']} failed attempts"
    log.info("%s", block(head + (", most frequent reasons:" if reasons else ""), reasons.lines("attempt")))
    return result


def generate_shard(
    run: RunDir,
    shard: dict[str, Any],
    llm: LLMConfig | None = None,
    progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH,
) -> dict[str, Any]:
    """One shard (Airflow maps over them): its files are written whole, next to the other shards'."""
    return _make_shard(run, run.file("generated"), shard, llm, progress, batch_size)


def generate_run(
    run: RunDir,
    shards: Sequence[dict[str, Any]],
    llm: LLMConfig | None = None,
    progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH,
) -> list[dict[str, Any]]:
    """Every shard of the run, `generated/` replaced only when all of them were made."""
    with staged(run.file("generated"), folder=True) as folder:
        return [_make_shard(run, folder, shard, llm, progress, batch_size) for shard in shards]


def iter_task_texts(paths: Sequence[Path]) -> Iterator[str]:
    """Each task's raw text, unparsed (it is untrusted and parsed only by the battery, in the sandbox), one at a time.
    A `.jsonl` file gives one task per non-blank line, any other file one task, a directory its `.json`/`.jsonl`
    files in name order."""
    for path in paths:
        files = (
            sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
            if path.is_dir()
            else [path]
        )
        if not path.exists() or not files:
            raise CoworkEnvError(f"{path}: no such file, or a directory without .json/.jsonl files")
        for file in files:
            if file.suffix == ".jsonl":  # the line breaks of `str.splitlines`, read a line at a time
                yield from (text for line in iter_jsonl(file) for text in line.splitlines() if text.strip())
                continue
            text = read_text(file)
            if text.strip():  # a pretty-printed object: raw newlines are only whitespace between JSON tokens
                yield " ".join(text.splitlines())


def import_tasks(
    run: RunDir, paths: Sequence[Path], shards: int, start: SynthesisConfig | None = None, batch_size: int = BATCH
) -> list[dict[str, Any]]:
    """Take tasks from files (hand-written, or written by another tool) as the run's generated shards; with `start`,
    the run is started with that config once every file has been read (a bad file leaves the run as it was). The
    files are read twice, a task at a time: to count the tasks (and find a bad file), then to write the shards."""
    total = sum(1 for _ in iter_task_texts(paths))
    if not total:
        raise CoworkEnvError("no tasks in " + ", ".join(map(str, paths)))
    if start is not None:
        start_run(run, start)
    size = -(-total // shards)
    texts = iter_task_texts(paths)
    with staged(run.file("generated"), folder=True) as folder:
        return [_write_shard(folder, shard, islice(texts, size), batch_size)[0] for shard in range(-(-total // size))]
