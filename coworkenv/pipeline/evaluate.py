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

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.data.layout import Manifest
from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError, field_label
from coworkenv.fileio import read_json
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EvaluationConfig, evaluation_config, need_endpoint
from coworkenv.pipeline.job import Job, Stage, StageInputs, gate_stage, release_event
from coworkenv.pipeline.rundir import RunDir, StageHook, read_job_config, read_jsonl, write_json, write_jsonl
from coworkenv.spec.task import TaskSpec

if TYPE_CHECKING:
    from coworkenv.rollout.trial_record import TrialRecord

log = logging.getLogger(__name__)

EVAL_DIR = "eval"
REPORT_DIR = "report"


def write_config(run: RunDir, config: EvaluationConfig) -> None:
    write_json(run.file(EVAL_DIR, "config.json"), config.model_dump(mode="json"))


def read_config(run: RunDir) -> EvaluationConfig:
    missing = f"run {run.run_id!r} is not an evaluation run under {run.data_root.url} (no {EVAL_DIR}/config.json)"
    return read_job_config(run.file(EVAL_DIR, "config.json"), EvaluationConfig, missing)


def suite_tasks(run: RunDir) -> list[TaskSpec]:
    """The tasks the prepare stage chose (they were checked when the suite was loaded)."""
    lines = read_jsonl(run.file(EVAL_DIR, "suite.jsonl"))
    if not lines:
        raise CoworkEnvError(f"run {run.run_id!r} has no suite: prepare it first")
    return [TaskSpec.model_validate_json(line) for line in lines]


def suite_info(run: RunDir) -> dict[str, Any]:
    path = run.file(EVAL_DIR, "suite.json")
    if not path.exists():
        read_config(run)  # a run id that names no evaluation is told so
        raise CoworkEnvError(f"run {run.run_id!r} has no suite: prepare it first")
    info = read_json(path)
    if not isinstance(info, dict):
        raise CoworkEnvError(f"run {run.run_id!r}: {EVAL_DIR}/suite.json is not a JSON object: prepare it again")
    return info


# --- stages -----------------------------------------------------------------------------------------------------


def _note_model(run: RunDir, config: EvaluationConfig) -> None:
    """The checkpoint an `hf:` agent runs, by its weights (`models.verify.weights_digest`), noted before its trials:
    the published evaluation carries it, and the registry attaches the evaluation only to a version with those weights."""
    from coworkenv.agents.base import parse_agent
    from coworkenv.models.verify import MODEL_SHA256, weights_digest

    kind, target = parse_agent(config.agent)
    if kind == "hf" and target and Path(target).is_dir():
        write_json(run.file(EVAL_DIR, "model.json"), {MODEL_SHA256: weights_digest(Path(target))})


def _model_identity(run: RunDir) -> dict[str, Any]:
    path = run.file(EVAL_DIR, "model.json")
    return read_json(path) if path.exists() else {}


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


def build(run: RunDir, out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The run's tables (staged for the gate), its report and profile (under `out`, default the run's `report/`)."""
    from coworkenv.data.build import eval_results_table, trajectories_table
    from coworkenv.data.schemas import TABLES, conform_table
    from coworkenv.eval.metrics import summarize
    from coworkenv.eval.profile import capability_profile, profile_table
    from coworkenv.eval.report import write_report
    from coworkenv.pipeline.build import stage_tables
    from coworkenv.rollout import eval_rows, read_trials, trajectory_rows

    config = read_config(run)
    specs = {t.id: t for t in suite_tasks(run)}
    suite = suite_info(run)
    wanted = {(task_id, trial) for task_id in specs for trial in range(config.trials)}
    # A run resumed with fewer trials or tasks leaves the others' records in the file: they are not this evaluation's.
    records = [r for r in read_trials(run.file(EVAL_DIR, "trials.jsonl")) if r.key in wanted]
    expected = len(wanted)
    if len(records) != expected:
        raise CoworkEnvError(
            f"run {run.run_id!r}: {len(records)} of {expected} trials recorded: run the trials stage again"
        )
    records.sort(key=lambda r: (r.task_id, r.trial))  # finishing order varies with the workers; the tables must not
    label = records[0].agent
    rows = eval_rows(records, specs, eval_id=run.run_id, suite=suite["name"])
    tables = {name: conform_table(name, None) for name in TABLES}
    tables["eval_results"] = eval_results_table(rows)
    tables["trajectories"] = trajectories_table(trajectory_rows(records, specs))
    tables["capability_profile"] = profile_table(rows, model=label)
    stage_tables(run, tables)
    report_dir = Path(out) if out is not None else run.file(REPORT_DIR)
    summary = summarize(rows, seed=config.seed)
    write_report(
        report_dir, summary, rows, title=f"{label} on {suite['name']}", profile=capability_profile(rows, model=label)
    )
    report = (report_dir / "report.html").absolute()
    log.info(
        "build: %d eval_results rows, pass rate %.3f; report: %s", len(rows), summary.overall.pass_rate.value, report
    )
    return {
        "eval_results": len(rows),
        "report": str(report_dir / "report.html"),
        "pass_rate": summary.overall.pass_rate.value,
    }


def gate(run: RunDir) -> dict[str, Any]:
    from coworkenv.pipeline.gate import gate_tables

    return gate_tables(run, stages=("evaluated",))


def publish(run: RunDir) -> Manifest:
    """The gated tables as a release of kind `eval` (LATEST keeps pointing at the newest task release)."""
    from coworkenv.data.publisher import publish_release
    from coworkenv.pipeline.build import staged_table_files
    from coworkenv.pipeline.gate import require_passed
    from coworkenv.pipeline.publish import published

    config = read_config(run)
    require_passed(run)
    parent = suite_info(run).get("release_id")
    manifest = publish_release(
        staged_table_files(run),
        data_root=run.data_root,
        run_id=run.run_id,
        parent=parent,
        config={**config.model_dump(mode="json"), **_model_identity(run)},
        kind="eval",
    )
    log.info("%s", published(manifest, run))
    return manifest


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


EVALUATION = Job(
    "evaluation",
    (
        Stage(
            "prepare",
            lambda run, i: prepare(run, i.config),
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
            lambda run, i: run_trials_stage(run, i.llm, i.progress),
            (f"{EVAL_DIR}/trials.jsonl",),
            doc="Every task × trial played by the agent (resumes the trials a failed attempt finished).",
            endpoint=True,
        ),
        Stage(
            "build",
            lambda run, i: build(run, i.out),
            ("tables", REPORT_DIR),
            doc="eval_results, trajectories and capability_profile tables; the report and the profile.",
        ),
        gate_stage(
            "gate",
            lambda run, i: gate(run),
            ("quality",),
            doc="The `evaluated` Great Expectations gate; a failure stops the run here and nothing is published.",
        ),
        Stage(
            "publish",
            lambda run, i: publish(run),
            (),
            doc="The gated tables as a release of kind `eval`; the report and the profile become visible as assets.",
            outlets=("coworkenv-eval-report", "coworkenv-capability-profile"),
            xcom=release_event,
        ),
    ),
    config=evaluation_config,
    recorded=read_config,
)
"""The evaluation job (docs/design/pipeline.md, "Pipeline"): `evaluate` runs it, the `coworkenv_evaluate` DAG one
task a stage, the nightly loop in two parts (prepare to build, then gate and publish)."""


def summary_of(run: RunDir, out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The run's `summary.json` (written by the build stage)."""
    path = (Path(out) if out is not None else run.file(REPORT_DIR)) / "summary.json"
    data = read_json(path)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a JSON object")
    return data


def eval_rows(ref: str, data_root: str | os.PathLike[str] | DataRoot | None = None) -> list[dict[str, Any]]:
    """One evaluation's `eval_results` rows: from its release (kind `eval`) or, before it is published, its run's
    staged table."""
    import pyarrow.parquet as pq

    from coworkenv.data.reader import complete_manifest, read_table
    from coworkenv.data.root import open_root
    from coworkenv.data.schemas import EVAL_RESULTS

    root = open_root(data_root)
    if complete_manifest(root, ref) is not None:
        rows = read_table(root, ref, "eval_results").to_pylist()
    else:
        run = RunDir.open(ref, root)
        staged = run.file("tables", "eval_results.parquet")
        if not staged.exists():
            raise CoworkEnvError(f"{ref!r} is neither an evaluation release nor an evaluation run under {root.url}")
        rows = pq.read_table(staged, schema=EVAL_RESULTS).to_pylist()
    if not rows:
        raise CoworkEnvError(f"{ref!r} holds no eval_results rows: is it an evaluation?")
    return rows
