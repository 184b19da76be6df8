"""A job as one declaration: its stages in order, each a plain function over the run directory with the run-folder
paths it writes (docs/design/pipeline.md, "Pipeline"). From the declaration come running the job in one process, or
any consecutive part of it (the nightly loop runs the synthesis and evaluation jobs in parts, between its own
stages), what a new start makes stale (`outputs_after`), and the checks that the DAGs and the CLI name the same
stages in the same order (`tests/pipeline/test_jobs.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.llm import LLMConfig
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


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[..., Any]
    """`run(run_dir, inputs)`, or `run(run_dir, inputs, shard)` for a stage mapped over shards."""
    outputs: tuple[str, ...]
    """The run-folder paths the stage writes (files or folders): what its rerun replaces and a new start clears."""
    shards: Callable[[RunDir, Any], Iterable[Any]] | None = None
    """For a stage mapped over shards (one Airflow task each): the shards, from the run and the previous result."""
    doc: str = ""


@dataclass(frozen=True)
class Job:
    name: str
    stages: tuple[Stage, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {stage.name: i for i, stage in enumerate(self.stages)})
        if len(self._index) != len(self.stages):
            raise ValueError(f"job {self.name}: two stages share a name")

    def names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)

    def position(self, name: str) -> int:
        if name not in self._index:
            raise CoworkEnvError(f"job {self.name} has no stage {name!r} (it has {', '.join(self.names())})")
        return self._index[name]

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
        on_stage: StageHook | None = None,
    ) -> Any:
        """The stages from `first` to `last` (default: all), in order, each given the result of the one before; a
        stage mapped over shards runs once per shard, reported once per shard. Returns the last stage's result."""
        start = self.position(first) if first is not None else 0
        stop = self.position(last) + 1 if last is not None else len(self.stages)
        done = stage_reporter(on_stage)
        result = inputs.previous
        for stage in self.stages[start:stop]:
            here = replace(inputs, previous=result)
            if stage.shards is None:
                result = done(stage.name, stage.run(run, here))
            else:
                result = [done(stage.name, stage.run(run, here, shard)) for shard in list(stage.shards(run, result))]
        return result
