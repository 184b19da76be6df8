"""Stage trials: every task × trial of the prepared suite played by the configured agent through the rollout engine,
appended to `eval/trials.jsonl` as they finish (a failed attempt resumes from it)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from coworkenv.errors import CoworkEnvError, field_label
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EvaluationConfig, need_endpoint
from coworkenv.pipeline.evaluation.run_files import EVAL_DIR, read_config, suite_tasks
from coworkenv.pipeline.rundir import RunDir, read_jsonl

if TYPE_CHECKING:
    from coworkenv.rollout.trial_record import TrialRecord

log = logging.getLogger(__name__)


def agent_options(config: EvaluationConfig, llm: LLMConfig | None) -> dict[str, Any]:
    """The options of the configured agent's kind (each kind takes only its own)."""
    from coworkenv.agents import parse_agent

    kind, target = parse_agent(config.agent)
    if kind == "hf":
        return {
            "batch_size": config.batch_size,
            "max_new_tokens": config.max_new_tokens,
            "temperature": config.temperature,
            "dtype": config.dtype,
        }
    if kind == "openai":
        if llm is None:
            raise CoworkEnvError(
                need_endpoint(
                    EvaluationConfig, f"{field_label(EvaluationConfig, 'agent')} {config.agent!r}", with_model=False
                )
            )
        update = {"model": target or llm.model, "temperature": config.temperature}
        if config.max_new_tokens is not None:
            update["max_tokens"] = config.max_new_tokens
        return {"llm": llm.model_copy(update=update)}
    return {}


def user_llm(config: EvaluationConfig, llm: LLMConfig | None) -> LLMConfig | None:
    if config.user != "llm":
        return None
    if llm is None:
        raise CoworkEnvError(need_endpoint(EvaluationConfig, f"{field_label(EvaluationConfig, 'user')} 'llm'"))
    return llm


def trial_count(run: RunDir) -> int:
    """Trials the run plays: the prepared suite's tasks × trials per task."""
    return len(read_jsonl(run.file(EVAL_DIR, "suite.jsonl"))) * read_config(run).trials


def run_trials_stage(
    run: RunDir, llm: LLMConfig | None = None, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Every task × trial of the suite, appended to `eval/trials.jsonl`; finished trials of an earlier attempt are kept.
    `progress(n)` advances by the trials just finished (none: progress lines logged through `coworkenv.progress`, which
    Airflow's task log shows)."""
    from coworkenv.agents import load_agent, make_user
    from coworkenv.progress import given_or_logged
    from coworkenv.rollout import run_trials

    config = read_config(run)
    specs = suite_tasks(run)
    agent = load_agent(config.agent, **agent_options(config, llm))
    persona = user_llm(config, llm)
    user = (lambda spec: make_user("llm", spec, llm=persona)) if persona is not None else "scripted"
    done = [0]

    with given_or_logged(progress, "trials", len(specs) * config.trials, unit="trial") as step:

        def advance(finished: int) -> None:
            step(finished - done[0])
            done[0] = finished

        records = run_trials(
            specs,
            agent,
            trials=config.trials,
            workers=config.workers,
            store=run.file(EVAL_DIR, "trials.jsonl"),
            runtime=config.runtime,
            max_turns=config.max_turns,
            episode_wall_s=config.episode_wall_s,
            user=user,
            progress=advance,
            seed=config.seed,
            batch_size=config.batch_size,
        )
    if records and all(_unanswered(r) for r in records):
        # Not one reply in the whole run: the agent (an endpoint's address, key or model name) is broken, and its
        # trials would publish as a model scoring 0. They are dropped, so that a rerun plays them again.
        run.file(EVAL_DIR, "trials.jsonl").unlink(missing_ok=True)
        raise CoworkEnvError(
            f"{config.agent} answered none of the {len(records)} trials ({records[0].error}): nothing recorded or published"
        )
    failed = [r for r in records if not r.ok]
    passed = sum(1 for r in records if r.ok and r.grade.passed)
    example = f" (e.g. {failed[0].task_id}: {failed[0].error})" if failed else ""
    log.info(
        "trials: %d trials of %s (%d per task): %d passed, %d did not, %d failed to run%s",
        len(records),
        config.agent,
        config.trials,
        passed,
        len(records) - passed - len(failed),
        len(failed),
        example,
    )
    return {"trials": len(records), "failed": len(failed), "passed": sum(1 for r in records if r.ok and r.grade.passed)}


def _unanswered(record: TrialRecord) -> bool:
    """A trial whose first request got no reply at all (the endpoint refused the connection, say)."""
    return not record.ok and record.n_turns == 0 and (record.error or "").startswith("reply_error")
