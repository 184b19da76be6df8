"""Stage generate: one shard's plan rows → raw TaskSpec lines, and every failed attempt as a rejection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.rundir import RunDir, write_jsonl
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.synth.planner import Plan, PlanRow


def generate_shard(run: RunDir, shard: dict[str, Any], llm: LLMConfig | None = None, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    from coworkenv.synth.llm import LLMGenerator  # the OpenAI client is imported only where an endpoint is used

    config = run.config()
    rows = [PlanRow.model_validate(r) for r in shard["rows"]]
    request = GenerateRequest(n=max(1, shard["tasks"]), seed=config.seed, generator=config.generator, llm_share=config.llm_share)
    generator = LLMGenerator(llm) if llm is not None else None
    tasks, rejections = generate(request, Plan(n=shard["tasks"], seed=config.seed, rows=rows), llm=generator, progress=progress)
    write_jsonl(run.shard_file("generated", shard["shard"], "tasks"), [t.to_json() for t in tasks])
    write_jsonl(run.shard_file("generated", shard["shard"], "rejections"), [r.model_dump_json() for r in rejections])
    return {"shard": shard["shard"], "tasks": len(tasks), "rejections": len(rejections)}


def import_tasks(run: RunDir, paths: Sequence[Path], shards: int) -> list[dict[str, Any]]:
    """Take tasks from files (hand-written, or written by another tool) as the run's generated shards: each task's raw
    text, unparsed (it is untrusted and parsed only by the battery, in the sandbox). A `.jsonl` file gives one task per
    non-blank line, any other file one task, a directory its `.json`/`.jsonl` files in name order."""
    texts = []
    for path in paths:
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
        if not path.exists() or not files:
            raise CoworkEnvError(f"{path}: no such file, or a directory without .json/.jsonl files")
        for file in files:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CoworkEnvError(f"{file}: cannot read: {exc}") from None
            if file.suffix == ".jsonl":
                texts += [line for line in text.splitlines() if line.strip()]
            elif text.strip():  # a pretty-printed object: raw newlines are only whitespace between JSON tokens
                texts.append(" ".join(text.splitlines()))
    if not texts:
        raise CoworkEnvError("no tasks in " + ", ".join(map(str, paths)))
    size = -(-len(texts) // shards)
    out = []
    for i in range(0, len(texts), size):
        write_jsonl(run.shard_file("generated", i // size, "tasks"), texts[i : i + size])
        write_jsonl(run.shard_file("generated", i // size, "rejections"), [])
        out.append({"shard": i // size, "tasks": len(texts[i : i + size]), "rejections": 0})
    return out
