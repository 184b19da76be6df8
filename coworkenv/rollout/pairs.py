"""Preference pairs for DPO (docs/design/agents-and-rollouts.md, "Rollouts"): per task, a passing and a failing continuation of the
same prompt, both graded by the environment, with the score gap recorded.

Chosen: the evaluated model's best passing trial (highest score, then lowest trial); when it has none, the oracle's
passing trajectory from the suite's task release. Rejected: the model's failing trial with the lowest score (then the
lowest trial). Only trials with status `ok` count: a crashed trial (an endpoint down, a sandbox limit) says nothing
about the model's choices. The prompt is the task's opening messages (everything before the first assistant message:
the system prompt and the instruction); chosen and rejected are the rest of each conversation — assistant turns, tool
results, the simulated user's replies. A task gives no pair (`PairSet.skipped` counts why) when the model passed every
trial, when neither it nor the oracle passed, when the gap is under the minimum, or when the two prompts differ.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, computed_field

from coworkenv.data.build import messages_rows, spec_from_row, tools_json
from coworkenv.data.schemas import MESSAGE
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec

Source = Literal["model", "oracle"]
SKIP_REASONS = ("all_passed", "none_passed", "small_gap", "prompt_mismatch")

PAIRS = pa.schema(
    [
        pa.field("prompt", pa.list_(MESSAGE), nullable=False),
        pa.field("chosen", pa.list_(MESSAGE), nullable=False),
        pa.field("rejected", pa.list_(MESSAGE), nullable=False),
        pa.field("tools", pa.string(), nullable=False),
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("family", pa.string(), nullable=False),
        pa.field("chosen_id", pa.string(), nullable=False),
        pa.field("rejected_id", pa.string(), nullable=False),
        pa.field("chosen_source", pa.string(), nullable=False),
        pa.field("rejected_source", pa.string(), nullable=False),
        pa.field("score_chosen", pa.float64(), nullable=False),
        pa.field("score_rejected", pa.float64(), nullable=False),
        pa.field("score_gap", pa.float64(), nullable=False),
    ]
)
"""The Parquet file of pairs (`write_pairs`): messages as the release's MESSAGE structs (tool-call arguments JSON
strings), `tools` a JSON string — TRL's conversational preference format plus where each side came from."""


class PreferencePair(BaseModel):
    """One task's pair: the same prompt, a chosen (passing) and a rejected (failing) continuation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    family: str
    prompt: list[dict[str, Any]] = Field(description="The opening messages (system, instruction) as MESSAGE rows.")
    chosen: list[dict[str, Any]] = Field(
        description="The passing continuation: assistant turns, tool results, user replies."
    )
    rejected: list[dict[str, Any]] = Field(description="The failing continuation.")
    tools: str = Field(description="The OpenAI tool schemas the task offers, as a JSON string.")
    chosen_id: str = Field(description="The chosen trajectory's id (`<task>/<agent>/<trial>`).")
    rejected_id: str = Field(description="The rejected trajectory's id.")
    chosen_source: Source = Field(description="`model` (the model's own passing trial) or `oracle` (the fallback).")
    rejected_source: Source = "model"
    score_chosen: float
    score_rejected: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def score_gap(self) -> float:
        return self.score_chosen - self.score_rejected


class PairSet(BaseModel):
    """The pairs of one evaluation, and how many tasks gave none, by reason (`SKIP_REASONS`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="The evaluation the pairs come from: its release id or run id.")
    pairs: tuple[PreferencePair, ...]
    tasks: int = Field(description="Tasks with at least one usable trial.")
    skipped: dict[str, int] = Field(default_factory=dict)

    @property
    def oracle_chosen(self) -> int:
        return sum(1 for p in self.pairs if p.chosen_source == "oracle")

    @property
    def mean_gap(self) -> float | None:
        return sum(p.score_gap for p in self.pairs) / len(self.pairs) if self.pairs else None


@dataclass(frozen=True, slots=True)
class _Side:
    """A usable trial: its id, trial number, grade and its conversation split at the first assistant message."""

    trajectory_id: str
    trial: int
    score: float
    passed: bool
    prompt: list[dict[str, Any]]
    continuation: list[dict[str, Any]]


def _side(row: Mapping[str, Any]) -> _Side | None:
    """A `trajectories` row as one side of a pair; None for a crashed trial or one without an assistant message."""
    if (row.get("status") or "ok") != "ok":
        return None
    raw = row["messages"] if "messages" in row else json.loads(row["messages_json"])
    messages = messages_rows(raw)
    start = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), None)
    if start is None:
        return None
    return _Side(
        trajectory_id=row["trajectory_id"],
        trial=int(row["trial"]),
        score=float(row["score"]),
        passed=bool(row["passed"]),
        prompt=messages[:start],
        continuation=messages[start:],
    )


def _by_task(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[_Side]]:
    sides: dict[str, list[_Side]] = {}
    for row in rows:
        side = _side(row)
        if side is not None:
            sides.setdefault(row["task_id"], []).append(side)
    return sides


def _best(sides: Iterable[_Side]) -> _Side | None:
    return min((s for s in sides if s.passed), key=lambda s: (-s.score, s.trial, s.trajectory_id), default=None)


def preference_pairs(
    trials: Iterable[Mapping[str, Any]],
    specs: Iterable[TaskSpec] | Mapping[str, TaskSpec],
    *,
    oracle: Iterable[Mapping[str, Any]] = (),
    min_score_gap: float,
    source: str = "",
) -> PairSet:
    """The pairs of one evaluation's `trajectories` rows (`trials`: the model's; `oracle`: the task release's oracle
    rollouts, the fallback chosen side), one per task at most, in task id order."""
    if not 0.0 <= min_score_gap <= 1.0:
        raise CoworkEnvError(f"the minimum score gap must be in [0, 1], got {min_score_gap}")
    by_id = dict(specs) if isinstance(specs, Mapping) else {s.id: s for s in specs}
    model = _by_task(trials)
    fallback = _by_task(oracle)
    pairs: list[PreferencePair] = []
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    for task_id in sorted(model):
        spec = by_id.get(task_id)
        if spec is None:
            raise CoworkEnvError(f"trajectories of task {task_id!r}, which the evaluation's suite does not hold")
        sides = model[task_id]
        rejected = min(
            (s for s in sides if not s.passed), key=lambda s: (s.score, s.trial, s.trajectory_id), default=None
        )
        if rejected is None:
            skipped["all_passed"] += 1
            continue
        chosen, chosen_source = _best(sides), "model"
        if chosen is None:
            chosen, chosen_source = _best(fallback.get(task_id, ())), "oracle"
        if chosen is None:
            skipped["none_passed"] += 1
        elif chosen.score - rejected.score < min_score_gap:
            skipped["small_gap"] += 1
        elif chosen.prompt != rejected.prompt:
            skipped["prompt_mismatch"] += 1
        else:
            pairs.append(
                PreferencePair(
                    task_id=task_id,
                    family=spec.family,
                    prompt=rejected.prompt,
                    chosen=chosen.continuation,
                    rejected=rejected.continuation,
                    tools=tools_json(spec),
                    chosen_id=chosen.trajectory_id,
                    rejected_id=rejected.trajectory_id,
                    chosen_source=chosen_source,
                    score_chosen=chosen.score,
                    score_rejected=rejected.score,
                )
            )
    return PairSet(source=source, pairs=tuple(pairs), tasks=len(model), skipped={k: v for k, v in skipped.items() if v})


def refuse_benchmark(kind: str | None, what: str) -> None:
    """Pairs from a held-out suite would train on it and contaminate every later evaluation there."""
    if kind == "benchmark":
        raise CoworkEnvError(f"{what} evaluated a benchmark suite: its trials must not become training data")


def oracle_trajectories(data_root: Any, release: str) -> list[dict[str, Any]]:
    """The oracle's `trajectories` rows of a task release (its synthesis run's rollouts)."""
    from coworkenv.data.reader import read_table

    return read_table(data_root, release, "trajectories", filters=[("agent", "=", "oracle")]).to_pylist()


def release_pairs(data_root: Any, release: str, *, min_score_gap: float) -> PairSet:
    """The pairs of a published evaluation (a release of kind `eval`): its trials, against the oracle rollouts and
    with the tasks of its parent, the task release it evaluated."""
    from coworkenv.data.reader import read_manifest, read_table
    from coworkenv.data.root import open_root

    root = open_root(data_root)
    manifest = read_manifest(root, release)
    if manifest.kind != "eval":
        raise CoworkEnvError(
            f"release {manifest.release_id} is a {manifest.kind} release: preference pairs come from an evaluation "
            "(a release of kind eval) of a model on training tasks"
        )
    if manifest.parent is None:
        raise CoworkEnvError(
            f"evaluation {manifest.release_id} evaluated a suite file, not a task release: "
            f"build its pairs from its run ({manifest.run_id})"
        )
    suite = read_manifest(root, manifest.parent)
    refuse_benchmark(suite.kind, f"evaluation {manifest.release_id}")
    specs = [spec_from_row(r) for r in read_table(root, suite.release_id, "tasks", columns=["spec_json"]).to_pylist()]
    trials = read_table(root, manifest.release_id, "trajectories").to_pylist()
    return preference_pairs(
        trials,
        specs,
        oracle=oracle_trajectories(root, suite.release_id),
        min_score_gap=min_score_gap,
        source=manifest.release_id,
    )


def pairs_table(pairs: Iterable[PreferencePair]) -> pa.Table:
    return pa.Table.from_pylist([p.model_dump() for p in pairs], schema=PAIRS)


def write_pairs(pairs: PairSet | Sequence[PreferencePair], dest: str | os.PathLike[str]) -> int:
    """The pairs as one Parquet file (whole or not at all); the number of pairs."""
    import pyarrow.parquet as pq

    from coworkenv.fileio import staged

    table = pairs_table(pairs.pairs if isinstance(pairs, PairSet) else pairs)
    with staged(dest) as tmp:
        pq.write_table(table, tmp)
    return table.num_rows
