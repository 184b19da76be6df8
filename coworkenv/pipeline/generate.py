"""Stage generate: one shard's plan rows → raw TaskSpec lines, and every failed attempt as a rejection."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.files import read_text, staged
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.plan import start_run
from coworkenv.pipeline.rundir import RunDir, write_jsonl
from coworkenv.pipeline.summary import block, top_reasons
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.synth.planner import Plan, PlanRow

log = logging.getLogger(__name__)


def _generate(run: RunDir, shard: dict[str, Any], llm: LLMConfig | None, progress: Callable[[int], None] | None) -> tuple[list[str], list[str]]:
    from coworkenv.synth.llm import LLMGenerator  # the OpenAI client is imported only where an endpoint is used

    config = run.config()
    rows = [PlanRow.model_validate(r) for r in shard["rows"]]
    request = GenerateRequest(n=max(1, shard["tasks"]), seed=config.seed, generator=config.generator, llm_share=config.llm_share)
    generator = LLMGenerator(llm) if llm is not None else None
    tasks, rejections = generate(request, Plan(n=shard["tasks"], seed=config.seed, rows=rows), llm=generator, progress=progress)
    reasons = [(r.code, f"{r.family} seed {r.seed}", r.reason) for r in rejections]
    head = f"generate shard {shard['shard']}: {len(tasks)} tasks of {shard['tasks']} planned, {len(rejections)} failed attempts"
    log.info("%s", block(head + (", most frequent reasons:" if reasons else ""), top_reasons(reasons, "attempt")))
    return [t.to_json() for t in tasks], [r.model_dump_json() for r in rejections]


def _write_shard(folder: Path, shard: int, tasks: list[str], rejections: list[str]) -> dict[str, Any]:
    write_jsonl(folder / f"shard-{shard:04d}.tasks.jsonl", tasks)
    write_jsonl(folder / f"shard-{shard:04d}.rejections.jsonl", rejections)
    return {"shard": shard, "tasks": len(tasks), "rejections": len(rejections)}


def generate_shard(run: RunDir, shard: dict[str, Any], llm: LLMConfig | None = None, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """One shard (Airflow maps over them): its files are written whole, next to the other shards'."""
    return _write_shard(run.file("generated"), shard["shard"], *_generate(run, shard, llm, progress))


def generate_run(
    run: RunDir, shards: Sequence[dict[str, Any]], llm: LLMConfig | None = None, progress: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Every shard of the run, `generated/` replaced only when all of them were made."""
    made = [(shard["shard"], *_generate(run, shard, llm, progress)) for shard in shards]
    with staged(run.file("generated"), folder=True) as folder:
        return [_write_shard(folder, *shard) for shard in made]


def read_task_texts(paths: Sequence[Path]) -> list[str]:
    """Each task's raw text, unparsed (it is untrusted and parsed only by the battery, in the sandbox). A `.jsonl`
    file gives one task per non-blank line, any other file one task, a directory its `.json`/`.jsonl` files in name
    order."""
    texts = []
    for path in paths:
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
        if not path.exists() or not files:
            raise CoworkEnvError(f"{path}: no such file, or a directory without .json/.jsonl files")
        for file in files:
            text = read_text(file)
            if file.suffix == ".jsonl":
                texts += [line for line in text.splitlines() if line.strip()]
            elif text.strip():  # a pretty-printed object: raw newlines are only whitespace between JSON tokens
                texts.append(" ".join(text.splitlines()))
    if not texts:
        raise CoworkEnvError("no tasks in " + ", ".join(map(str, paths)))
    return texts


def import_tasks(run: RunDir, paths: Sequence[Path], shards: int, start: SynthesisConfig | None = None) -> list[dict[str, Any]]:
    """Take tasks from files (hand-written, or written by another tool) as the run's generated shards; with `start`,
    the run is started with that config once every file has been read (a bad file leaves the run as it was)."""
    texts = read_task_texts(paths)
    if start is not None:
        start_run(run, start)
    size = -(-len(texts) // shards)
    with staged(run.file("generated"), folder=True) as folder:
        return [_write_shard(folder, i // size, texts[i : i + size], []) for i in range(0, len(texts), size)]
