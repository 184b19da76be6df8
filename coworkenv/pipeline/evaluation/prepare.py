"""Stage prepare: the settings checked against what the run already holds, the suite resolved and written, the
checkpoint noted by its weights, and the contamination check against the training releases."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.config import EvaluationConfig
from coworkenv.pipeline.evaluation.run_files import EVAL_DIR, read_config, write_config
from coworkenv.pipeline.rundir import RunDir, write_json, write_jsonl

log = logging.getLogger(__name__)


def _note_model(run: RunDir, config: EvaluationConfig) -> None:
    """The checkpoint an `hf:` agent runs, by its weights (`models.verify.weights_digest`), noted before its trials:
    the published evaluation carries it, and the registry attaches the evaluation only to a version with those weights."""
    from coworkenv.agents.base import parse_agent
    from coworkenv.models.verify import MODEL_SHA256, weights_digest

    kind, target = parse_agent(config.agent)
    if kind == "hf" and target and Path(target).is_dir():
        write_json(run.file(EVAL_DIR, "model.json"), {MODEL_SHA256: weights_digest(Path(target))})


def prepare(run: RunDir, config: EvaluationConfig) -> dict[str, Any]:
    """Resolve the suite, keep its first `limit` tasks, and refuse to go on if they overlap the training data."""
    from coworkenv.eval.contamination import check_contamination, ensure_clean, training_tasks
    from coworkenv.eval.suite import load_suite

    check_resumable(run, config)  # the agent and its endpoint were checked by the config model
    suite = load_suite(config.suite, run.data_root)  # before anything is written: a mistyped suite leaves no run behind
    write_config(run, config)
    _note_model(run, config)
    tasks = list(suite.tasks[: config.limit] if config.limit else suite.tasks)
    release_id = suite.source if suite.kind != "file" else None
    releases = training_releases(run.data_root, config, release_id)
    training = training_tasks(run.data_root, releases) if releases else []
    report = check_contamination(
        tasks, training, threshold=config.contamination_threshold, max_share=config.max_contaminated_share
    )
    write_json(
        run.file(EVAL_DIR, "contamination.json"), {"training_releases": releases, **report.model_dump(mode="json")}
    )
    ensure_clean(report)
    write_jsonl(run.file(EVAL_DIR, "suite.jsonl"), [t.to_json() for t in tasks])
    info = {
        "name": suite.name,
        "kind": suite.kind,
        "source": suite.source,
        "release_id": release_id,
        "tasks": len(tasks),
    }
    write_json(run.file(EVAL_DIR, "suite.json"), info)
    log.info(
        "prepare: suite %s (%s, %d tasks) for agent %s; contamination against %s: %d tasks similar, max similarity %.2f",
        suite.name,
        suite.kind,
        len(tasks),
        config.agent,
        ", ".join(releases) or "no training release",
        len(report.contaminated_ids),
        report.max_similarity,
    )
    return {
        **info,
        "training_releases": releases,
        "contaminated": len(report.contaminated_ids),
        "max_similarity": report.max_similarity,
    }


TRIAL_SETTINGS = ("agent", "suite", "seed", "temperature", "max_new_tokens", "max_turns", "user", "dtype")
"""What decides a trial's outcome: a run that holds trials resumes only with the same values (trials and limit may grow)."""


def check_resumable(run: RunDir, config: EvaluationConfig) -> None:
    """Refuse settings that would mix trials of different evaluations in one run, before anything is overwritten."""
    if not run.file(EVAL_DIR, "trials.jsonl").exists() or not run.file(EVAL_DIR, "config.json").exists():
        return
    before = read_config(run)
    changed = [name for name in TRIAL_SETTINGS if getattr(before, name) != getattr(config, name)]
    if changed:
        was = ", ".join(f"{name} {getattr(before, name)!r}" for name in changed)
        raise CoworkEnvError(
            f"run {run.run_id!r} already holds trials with {was}: resume it with the same settings or use another --run-id"
        )


def training_releases(data_root: DataRoot, config: EvaluationConfig, suite_release: str | None) -> list[str]:
    """The releases to check the suite against: those named, else the LATEST task release (none on a fresh root)."""
    from coworkenv.data.reader import latest_release

    if config.train_releases:
        return list(config.train_releases)
    latest = latest_release(data_root)
    return [latest] if latest and latest != suite_release else []
