"""A job as one declaration: its config model and its stages in order, each a plain function over the run directory
with the run-folder paths it writes (docs/design/pipeline.md, "Pipeline"). From the declaration come running the job
in one process, or any consecutive part of it (the nightly loop runs the synthesis and evaluation jobs in parts,
between its own stages), what a new start makes stale (`outputs_after`), the job's DAG (`pipeline.airflow.job_dag`:
one task a stage, mapped, queued, retried and publishing assets as the stage declares) and its per-stage commands.

A declaring module stays light (the DAG processor imports it): a stage's function imports the heavy stack when it
runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from coworkenv.errors import CoworkEnvError
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import validated_config
from coworkenv.pipeline.rundir import RunDir, StageHook, stage_reporter


@dataclass(frozen=True)
class StageInputs:
    """What a stage may read besides the run folder: the job's config (for the first stage; later ones read the
    config the run recorded), the LLM endpoint, a progress callback, and the result of the stage before it."""

    config: Any = None
    llm: LLMConfig | None = None
    progress: Callable[..., None] | None = None
    out: Any = None
    """Where a report goes instead of the run folder (an evaluation's `--out`)."""
    previous: Any = None


ASSETS: dict[str, str] = {
    "coworkenv-task-release": "coworkenv://releases/tasks",
    "coworkenv-eval-report": "coworkenv://eval/report",
    "coworkenv-capability-profile": "coworkenv://eval/capability-profile",
    "coworkenv-training-release": "coworkenv://nightly/training-release",
    "coworkenv-rollouts": "coworkenv://nightly/rollouts",
    "coworkenv-candidate-model": "coworkenv://nightly/candidate-model",
    "coworkenv-current-model": "coworkenv://nightly/current-model",
}
"""The Airflow assets a stage may update (`Stage.outlets`), by name: their URIs."""


def release_event(manifest: Any) -> dict[str, Any]:
    """A published release (its `Manifest`) as a task's result and its asset event's extra: which release, how many
    rows."""
    return {"release_id": manifest.release_id, "row_counts": manifest.row_counts}


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[..., Any]
    """`run(run_dir, inputs)`, or `run(run_dir, inputs, shard)` for a stage mapped over shards."""
    outputs: tuple[str, ...]
    """The run-folder paths the stage writes (files or folders): what its rerun replaces and a new start clears."""
    shards: Callable[[RunDir, Any], Iterable[Any]] | None = None
    """For a stage mapped over shards: the shards, from the run and the previous stage's result (a list), one shard
    per item of it, so that the DAG maps one task over each item of the previous task's result."""
    doc: str = ""
    """What the stage does, in a line (the task's doc in the Airflow UI, the command's help)."""
    endpoint: bool = False
    """The stage may call the run's LLM endpoint or its rubric judge: a DAG task reads both from the run's config."""
    final: bool = False
    """A `CoworkEnvError` (bad settings, a failed gate) fails the task at once: no retry can make bad input good."""
    retries: int | None = None
    """The task's retries, where not the DAG's default (a gate: 0)."""
    gpu: bool = False
    """The stage runs a local model: its task goes to the GPU queue and pool."""
    outlets: tuple[str, ...] = ()
    """The assets (`ASSETS`) whose events the task emits, its result as their extra."""
    xcom: Callable[[Any], Any] | None = None
    """The stage's result as its task returns it (JSON), where the result is not JSON already."""
    summary: Callable[[RunDir, Any], str] | None = None
    """What its command prints of the stage's result."""
    total: Callable[[RunDir], int] | None = None
    """How many `unit`s of work the stage does, known before it runs (its command's progress bar)."""
    unit: str = "item"


def gate_stage(name: str, run: Callable[..., Any], outputs: tuple[str, ...], **more: Any) -> Stage:
    """A quality gate's stage: a failed gate fails its task at once and is never retried (retrying cannot make bad
    data good)."""
    return Stage(name, run, outputs, final=True, retries=0, **more)


@dataclass(frozen=True)
class Job:
    name: str
    stages: tuple[Stage, ...]
    config: type[BaseModel] | None = None
    """The config model of its runs: the CLI's options, a YAML file and the DAG's trigger form all read it."""
    dag_id: str | None = None
    """The job's DAG (`pipeline.airflow.job_dag`); its trigger form and the refusal of bad settings come from
    `config`."""
    recorded: Callable[[RunDir], Any] | None = None
    """The config a started run recorded (what a later stage's task reads its endpoint from)."""
    begin: Callable[[RunDir, Any], None] | None = None
    """What starting a run does before its first stage, if anything (the nightly loop records its config)."""
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {stage.name: i for i, stage in enumerate(self.stages)})
        if len(self._index) != len(self.stages):
            raise ValueError(f"job {self.name}: two stages share a name")

    def settings(self, values: dict[str, Any], where: str = "", data_root: Any = None) -> Any:
        """The first stage's config from a trigger's plain values (a one-line error names the field); `data_root`:
        where the releases its settings name must be published."""
        if self.config is None:
            raise CoworkEnvError(f"job {self.name} takes no settings")
        return validated_config(self.config, values, where, data_root=data_root)

    def names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)

    def position(self, name: str) -> int:
        if name not in self._index:
            raise CoworkEnvError(f"job {self.name} has no stage {name!r} (it has {', '.join(self.names())})")
        return self._index[name]

    def stage(self, name: str) -> Stage:
        return self.stages[self.position(name)]

    def outputs_after(self, name: str) -> tuple[str, ...]:
        """What every stage after `name` writes: the outputs a new run of `name` makes stale."""
        return tuple(out for stage in self.stages[self.position(name) + 1 :] for out in stage.outputs)

    def run(
        self,
        run: RunDir,
        inputs: StageInputs,
        *,
        first: str | None = None,
        last: str | None = None,
        before: str | None = None,
        on_stage: StageHook | None = None,
    ) -> Any:
        """The stages from `first` to `last`, or to the one `before` a stage (default: all), in order, each given the
        result of the one before; a stage mapped over shards runs once per shard, reported once per shard. Returns
        the last stage's result."""
        results = self.results(run, inputs, first=first, last=last, before=before, on_stage=on_stage)
        return [*results.values()][-1] if results else inputs.previous

    def results(
        self,
        run: RunDir,
        inputs: StageInputs,
        *,
        first: str | None = None,
        last: str | None = None,
        before: str | None = None,
        on_stage: StageHook | None = None,
    ) -> dict[str, Any]:
        """As `run`, but every stage's result by name, in order (a mapped stage's: the list of its shards')."""
        start = self.position(first) if first is not None else 0
        stop = len(self.stages)
        if last is not None:
            stop = self.position(last) + 1
        elif before is not None:
            stop = self.position(before)
        done = stage_reporter(on_stage)
        out: dict[str, Any] = {}
        result = inputs.previous
        for stage in self.stages[start:stop]:
            here = replace(inputs, previous=result)
            if stage.shards is None:
                result = done(stage.name, stage.run(run, here))
            else:
                result = [done(stage.name, stage.run(run, here, shard)) for shard in list(stage.shards(run, result))]
            out[stage.name] = result
        return out
