"""Benchmark suites (docs/design/evaluation.md, "Benchmark suite and contamination"): `coworkenv-bench` and any task set.

`coworkenv-bench` is made of what no training release can hold: the families' held-out phrasings (the bench split,
`synth.draft`) and task seeds from `RESERVED_SEED_BASE` on (`synth.planner`). Its tasks are spread evenly over the
three Claw-Eval groups and, within a group, over its capabilities × difficulties and the families exercising each
capability; every task is proven by the validation battery in the sandbox, and the valid ones are published as a
release of kind `benchmark`. Any release (by id) or `.jsonl` file of TaskSpecs can be loaded as a suite too.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from math import lcm
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.caps import CAPS
from coworkenv.data.build import benchmark_group, release_tables
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import Root, read_manifest, read_table
from coworkenv.data.root import open_root
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import read_text
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.io import parse_model
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.generate import GenerateRequest, generate, select_families
from coworkenv.synth.planner import RESERVED_SEED_BASE, SEED_STRIDE, Plan, PlanRow, bench_run_seed
from coworkenv.validate.batch import validate_tasks

SUITE_NAME = "coworkenv-bench"
DEFAULT_N = 300
GROUPS = ("general", "multi_step", "multi_turn")
"""The Claw-Eval report groups, in report order (`data.build.benchmark_group`)."""
DIFFICULTIES = (1, 2, 3, 4, 5)
SuiteKind = Literal["tasks", "benchmark", "eval", "file"]


class Suite(BaseModel):
    """A fixed set of tasks to evaluate on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="`coworkenv-bench`, a release's suite name or id, or a file's stem.")
    kind: SuiteKind = Field(description="The kind of the release it was read from, or `file` for a JSONL file.")
    tasks: tuple[TaskSpec, ...] = Field(description="The tasks (ids unique): a file's in its order, a release's by id.")
    source: str = Field(description="Where it came from: the release id, or the file's path.")

    @property
    def ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    def composition(self) -> dict[str, dict[str, int]]:
        """Tasks per benchmark group, capability (a task counts under each of its own), difficulty and family."""
        caps: Counter[str] = Counter(c for t in self.tasks for c in t.capabilities)
        groups = Counter(benchmark_group(t.capabilities) for t in self.tasks)
        return {
            "group": {g: groups[g] for g in GROUPS if groups[g]},
            "capability": {c: caps[c] for c in CAPABILITIES.names() if caps[c]},
            "difficulty": {str(d): c for d, c in sorted(Counter(t.difficulty for t in self.tasks).items())},
            "family": dict(sorted(Counter(t.family for t in self.tasks).items())),
        }


class BenchBuild(BaseModel):
    """What `build_bench` made: the suite, its release and the counts along the way."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: Suite
    release_id: str | None = Field(description="The benchmark release, or None when not published.")
    planned: int = Field(description="Tasks the plan asked for.")
    generated: int = Field(description="Tasks the families built.")
    generation_rejections: int = Field(description="Plan seeds a family failed on.")
    valid: int = Field(description="Tasks the battery proved: the suite.")
    invalid: int = Field(description="Tasks the battery rejected (kept out of the suite, listed in `validations`).")
    invalid_by_code: dict[str, int] = Field(description="Rejected tasks per failed battery code.")


# --------------------------------------------------------------------------------------------- building


def _cells(caps: Sequence[str], count: int) -> Iterator[tuple[str, int]]:
    """`count` (capability, difficulty) cells in an order balanced over both at every prefix: k → (k mod C, k mod D),
    shifted by one difficulty after each lcm(C, D) cells so that every pair comes up."""
    n_caps, n_diff = len(caps), len(DIFFICULTIES)
    block = lcm(n_caps, n_diff)
    for k in range(count):
        yield caps[k % n_caps], DIFFICULTIES[(k % n_diff + k // block) % n_diff]


def bench_plan(n: int = DEFAULT_N, seed: int = 0, families: Sequence[str] | None = None) -> Plan:
    """The suite's plan: n split evenly over the groups the families cover, each group's share dealt over its
    capabilities × difficulties, each cell going to the capability's family with the fewest tasks of the group so
    far (so that families that exercise one capability are not crowded out); task seeds from the reserved range."""
    if not 1 <= n <= CAPS.tasks_per_run:
        raise CoworkEnvError(f"a suite needs between 1 and {CAPS.tasks_per_run} tasks, not {n}")
    run_seed = bench_run_seed(seed)
    members: dict[str, dict[str, list[str]]] = {g: {} for g in GROUPS}  # group → capability → family names
    for fam in select_families(families, None):
        group = benchmark_group(fam.capabilities)
        for cap in fam.capabilities:
            if CAPABILITIES.get(cap).benchmark_group == group:  # onboarding_chain counts as multi_step, not scheduling
                members[group].setdefault(cap, []).append(fam.name)
    present = [g for g in GROUPS if members[g]]
    picks: Counter[tuple[str, str, int, str]] = Counter()  # (family, capability, difficulty, group) → tasks
    for i, group in enumerate(present):
        share = n // len(present) + (1 if i < n % len(present) else 0)
        caps = [c for c in CAPABILITIES.names() if c in members[group]]
        used: Counter[str] = Counter()
        for cap, difficulty in _cells(caps, share):
            names = members[group][cap]
            family = min(names, key=lambda f: (used[f], names.index(f)))
            picks[(family, cap, difficulty, group)] += 1
            used[family] += 1
    next_seed: dict[tuple[str, int], int] = defaultdict(lambda: run_seed * SEED_STRIDE)
    rows = []
    for (family, cap, difficulty, group), count in picks.items():
        start = next_seed[(family, difficulty)]
        next_seed[(family, difficulty)] += count
        rows.append(
            PlanRow(
                family=family,
                capability=cap,
                difficulty=difficulty,
                count=count,
                seed_start=start,
                reason=f"{SUITE_NAME}: {group}",
            )
        )
    return Plan(n=n, seed=run_seed, rows=rows)


def bench_run_id(n: int, seed: int, families: Sequence[str] | None = None) -> str:
    """The suite's run id (its release id is `release_id_for` of it): the same settings name the same release."""
    return f"{SUITE_NAME}-n{n}-seed{seed}" + (f"-{'-'.join(sorted(families))}" if families else "")


def build_bench(
    n: int = DEFAULT_N,
    seed: int = 0,
    *,
    families: Sequence[str] | None = None,
    data_root: Root = None,
    publish: bool = True,
    workers: int = 2,
    runtime: str = "auto",
    budget_s: float | None = None,
    progress: Callable[..., Any] | None = None,
) -> BenchBuild:
    """Build `coworkenv-bench`: plan, generate in the bench split, validate in the sandbox (`runtime`), keep the valid
    tasks and publish them as a `benchmark` release (unless `publish` is False). Deterministic: the same n, seed and
    families give the same tables, so building again republishes the same release (a no-op)."""
    plan = bench_plan(n, seed, families)
    specs, rejections = generate(GenerateRequest(n=n), plan, split="bench")
    validations = validate_tasks(specs, workers=workers, runtime=runtime, budget_s=budget_s, progress=progress)
    verdicts = {v.task_id: v for v in validations}
    valid = [s for s in specs if s.id in verdicts and verdicts[s.id].valid]
    invalid_by_code = Counter(code for v in validations if not v.valid for code in dict.fromkeys(v.failed_codes))
    if not valid:
        codes = ", ".join(f"{code} ({count})" for code, count in invalid_by_code.most_common(5))
        raise CoworkEnvError(f"no task of the suite passed the battery: {codes}")
    run_id = bench_run_id(n, seed, families)
    release_id = None
    if publish:
        config = {
            "suite": SUITE_NAME,
            "n": n,
            "seed": seed,
            "families": sorted(families) if families else None,
            "split": "bench",
            "plan_seed": plan.seed,
            "reserved_seed_base": RESERVED_SEED_BASE,
            "valid": len(valid),
        }
        manifest = publish_release(
            release_tables(specs, validations),
            data_root=data_root,
            run_id=run_id,
            parent=None,
            config=config,
            kind="benchmark",
        )
        release_id = manifest.release_id
    suite = Suite(
        name=SUITE_NAME, kind="benchmark", tasks=tuple(sorted(valid, key=lambda t: t.id)), source=release_id or run_id
    )
    return BenchBuild(
        suite=suite,
        release_id=release_id,
        planned=n,
        generated=len(specs),
        generation_rejections=len(rejections),
        valid=len(valid),
        invalid=len(specs) - len(valid),
        invalid_by_code=dict(invalid_by_code.most_common()),
    )


# --------------------------------------------------------------------------------------------- loading


BENCH_REF = "bench"
"""The suite reference meaning the newest benchmark release."""


def newest_benchmark(data_root: Root = None) -> str:
    """The id of the newest release of kind `benchmark`, or a one-line error saying how to build one."""
    from coworkenv.data.reader import list_releases

    root = open_root(data_root)
    benches = [m for m in list_releases(root) if m.kind == "benchmark"]
    if not benches:
        raise CoworkEnvError(f"no benchmark release under {root.url}: build one with `coworkenv eval bench`")
    return max(benches, key=lambda m: m.created_at).release_id


def load_suite(ref: str | os.PathLike[str], data_root: Root = None) -> Suite:
    """A suite from a `.jsonl` file of TaskSpecs (one per line), `bench` (the newest benchmark release) or a release
    id of any kind (`latest`: the newest task release)."""
    text = os.fspath(ref)
    if text == BENCH_REF:
        return _from_release(data_root, newest_benchmark(data_root))
    if text.endswith(".jsonl"):
        return _from_file(Path(text))
    if Path(text).is_file():
        raise CoworkEnvError(f"{text}: a suite file must be a .jsonl file of TaskSpecs, one per line")
    return _from_release(data_root, text)


def _from_file(path: Path) -> Suite:
    tasks: list[TaskSpec] = []
    first_line: dict[str, int] = {}
    # Split on newlines only: JSON text may hold U+2028 and other characters `splitlines` would cut at.
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        if len(line) > CAPS.spec_chars:
            raise CoworkEnvError(f"{where}: {len(line)} characters, over the cap spec_chars ({CAPS.spec_chars})")
        if len(tasks) >= CAPS.tasks_per_run:
            raise CoworkEnvError(f"{where}: more than {CAPS.tasks_per_run} tasks (the cap tasks_per_run)")
        task = parse_model(TaskSpec, line, where)
        if task.id in first_line:
            raise CoworkEnvError(f"{where}: task id {task.id!r} appears twice (first on line {first_line[task.id]})")
        first_line[task.id] = number
        tasks.append(task)
    if not tasks:
        raise CoworkEnvError(f"{path}: no tasks")
    return Suite(name=path.stem, kind="file", tasks=tuple(tasks), source=str(path))


def _from_release(data_root: Root, release: str) -> Suite:
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    rows = read_table(root, manifest.release_id, "tasks", columns=["task_id", "spec_json"]).to_pylist()
    if not rows:
        raise CoworkEnvError(f"release {manifest.release_id} holds no tasks")
    tasks = []
    for row in sorted(rows, key=lambda r: r["task_id"]):  # by id: the order does not depend on the partitioning
        try:
            tasks.append(TaskSpec.model_validate_json(row["spec_json"]))
        except ValidationError as exc:
            raise CoworkEnvError(
                format_validation_error(exc, f"release {manifest.release_id}: task {row['task_id']}")
            ) from None
    name = manifest.config.get("suite") if isinstance(manifest.config.get("suite"), str) else manifest.release_id
    return Suite(name=name, kind=manifest.kind, tasks=tuple(tasks), source=manifest.release_id)
