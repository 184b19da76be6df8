"""The evaluation run (docs/design/evaluation.md, "Evaluation"), stage by stage over the run directory:

prepare (the suite's tasks, the contamination check) → trials (the rollout engine; resumable) → build (the
`eval_results`, `trajectories` and `capability_profile` tables, the report, the profile) → gate (`evaluated`) →
publish (a release of kind `eval`). `evaluate` runs them in order, the `coworkenv_evaluate` DAG one task each, and
`coworkenv eval` is `evaluate` with a progress bar.

```
eval/config.json         the run's EvaluationConfig
eval/suite.json          which suite: name, kind, source, release id, task count
eval/suite.jsonl         the tasks evaluated, one TaskSpec JSON per line
eval/contamination.json  the contamination report against the training releases
eval/trials.jsonl        one trial record per line, appended as trials finish (a killed run resumes from it)
report/                  report.html, summary.json, *.png, profile.json
tables/, quality/        as in a synthesis run
```
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from coworkenv.data.layout import Manifest
from coworkenv.data.root import DataRoot
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EvaluationConfig
from coworkenv.pipeline.evaluation.run_files import (
    EVAL_DIR,
    REPORT_DIR,
    eval_rows,
    read_config,
    suite_info,
    suite_tasks,
    summary_of,
)
from coworkenv.pipeline.job import Job, Stage, StageInputs, gate_stage, release_event
from coworkenv.pipeline.rundir import RunDir, StageHook
from coworkenv.pipeline.summary import gates_summary, published_summary

__all__ = [
    "EVALUATION",
    "EVAL_DIR",
    "REPORT_DIR",
    "eval_rows",
    "evaluate",
    "read_config",
    "suite_info",
    "suite_tasks",
    "summary_of",
]

GATES = ("evaluated",)
"""The Great Expectations suite an evaluation's tables pass before they are published."""


def _prepare(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.evaluation.prepare import prepare

    return prepare(run, i.config)


def _trials(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.evaluation.trials import run_trials_stage

    return run_trials_stage(run, i.llm, i.progress)


def _trial_count(run: RunDir) -> int:
    from coworkenv.pipeline.evaluation.trials import trial_count

    return trial_count(run)


def _build(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.evaluation.build import build

    return build(run, i.out)


def _gate(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.release_tables import gate_tables

    return gate_tables(run, GATES)


def _publish(run: RunDir, i: StageInputs) -> Manifest:
    from coworkenv.pipeline.evaluation.publish import publish

    return publish(run)


EVALUATION = Job(
    "evaluation",
    (
        Stage(
            "prepare",
            _prepare,
            (
                f"{EVAL_DIR}/config.json",
                f"{EVAL_DIR}/suite.json",
                f"{EVAL_DIR}/suite.jsonl",
                f"{EVAL_DIR}/contamination.json",
            ),
            doc="Validate the settings, resolve the suite, check it against the training releases for contamination.",
            final=True,  # bad settings or a contaminated suite
        ),
        Stage(
            "trials",
            _trials,
            (f"{EVAL_DIR}/trials.jsonl",),
            doc="Every task × trial played by the agent (resumes the trials a failed attempt finished).",
            endpoint=True,
            summary=lambda run, r: (
                f"run {run.run_id}: {r['trials']} trials, {r['passed']} passed, {r['failed']} failed to run"
            ),
            total=_trial_count,
            unit="trial",
        ),
        Stage(
            "build",
            _build,
            ("tables", REPORT_DIR),
            doc="eval_results, trajectories and capability_profile tables; the report and the profile.",
            summary=lambda run, r: (
                f"run {run.run_id}: {r['eval_results']} rows, pass rate {r['pass_rate']:.3f}; report: {r['report']}"
            ),
        ),
        gate_stage(
            "gate",
            _gate,
            ("quality",),
            doc="The `evaluated` Great Expectations gate; a failure stops the run here and nothing is published.",
            summary=gates_summary,
        ),
        Stage(
            "publish",
            _publish,
            (),
            doc="The gated tables as a release of kind `eval`; the report and the profile become visible as assets.",
            outlets=("coworkenv-eval-report", "coworkenv-capability-profile"),
            xcom=release_event,
            summary=published_summary,
        ),
    ),
    config=EvaluationConfig,
    dag_id="coworkenv_evaluate",
    recorded=read_config,
)
"""The evaluation job (docs/design/pipeline.md, "Pipeline"): `evaluate` runs it, the `coworkenv_evaluate` DAG one
task a stage, the nightly loop in two parts (prepare to build, then gate and publish)."""


def evaluate(
    config: EvaluationConfig,
    run_id: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
    on_stage: StageHook | None = None,
) -> Manifest:
    """prepare → trials → build → gate → publish; the same run id resumes an interrupted evaluation."""
    run = RunDir.open(run_id, data_root)
    inputs = StageInputs(config=config, llm=llm if llm is not None else config.llm(), progress=progress, out=out)
    return EVALUATION.run(run, inputs, on_stage=on_stage)
