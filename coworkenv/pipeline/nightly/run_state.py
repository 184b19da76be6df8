"""A nightly run's files: its config (`nightly/config.json`) and the state of its stages (`nightly/state.json`, each
finished stage's result, which makes a stage run once and a dead run resume where it stopped)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_json
from coworkenv.pipeline.config import NightlyConfig
from coworkenv.pipeline.rundir import NIGHTLY_DIR, RunDir, read_job_config, write_json
from coworkenv.pipeline.summary import fields

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


def nightly_file(run: RunDir, *parts: str) -> Path:
    return run.file(NIGHTLY_DIR, *parts)


def read_config(run: RunDir) -> NightlyConfig:
    missing = f"run {run.run_id!r} is not a nightly run under {run.data_root.url} (no {NIGHTLY_DIR}/config.json)"
    return read_job_config(nightly_file(run, "config.json"), NightlyConfig, missing)


def start(run: RunDir, config: NightlyConfig) -> None:
    """Record the config; a run that has finished a stage resumes only with the same settings. One that has not may
    start over with others: a setting that fails at once (a suite that does not exist) must not lock the run id."""
    path = nightly_file(run, "config.json")
    if path.exists() and read_state(run) and read_config(run) != config:
        raise CoworkEnvError(
            f"run {run.run_id!r} already started with other settings: resume it with the same ones or use another --run-id"
        )
    write_json(path, config.model_dump(mode="json"))


def read_state(run: RunDir) -> dict[str, Any]:
    path = nightly_file(run, "state.json")
    state = read_json(path) if path.exists() else {}
    if not isinstance(state, dict):
        raise CoworkEnvError(f"{path}: expected a JSON object")
    return state


def finished(run: RunDir, stage: str) -> dict[str, Any]:
    """A finished stage's result (what later stages read), or an error naming the stage to run first."""
    state = read_state(run)
    if stage not in state:
        raise CoworkEnvError(f"run {run.run_id!r}: stage {stage!r} has not finished: run it first")
    return state[stage]


def once(run: RunDir, stage: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`work()`'s result, recorded; a stage recorded by an earlier attempt is not run again."""
    state = read_state(run)
    if stage in state:
        log.info("nightly %s: finished by an earlier attempt, not run again: %s", stage, fields(state[stage]))
        return {**state[stage], "resumed": True}
    result = work()
    write_json(nightly_file(run, "state.json"), {**read_state(run), stage: result})
    log.info("nightly %s: %s", stage, fields(result))
    return result


def sub_run(run: RunDir, stage: str) -> RunDir:
    return RunDir.open(f"{run.run_id}.{stage}", run.data_root)
