"""Generation: a plan (or a cold-start uniform one) → TaskSpecs, with every failure recorded as a rejection."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.registry import UnknownName
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import Family, load_families
from coworkenv.synth.planner import CapabilityProfile, Plan, PlannerConfig, PlanRow, make_plan

GeneratorKind = Literal["procedural", "llm", "mixed"]


class Rejection(BaseModel):
    """A generation attempt that produced no valid task, and why."""

    model_config = ConfigDict(frozen=True)

    generator: str
    family: str
    capability: str
    difficulty: int
    seed: int
    code: str
    """Machine-readable: `invalid_spec`, `family_error`, `unparseable`, `schema`, `timeout`, `refusal`, `http_error`."""
    reason: str


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    tasks: int
    rejections: int
    by_family: dict[str, int]
    by_capability: dict[str, int]
    by_difficulty: dict[str, int]
    rejections_by_code: dict[str, int] = {}


class GenerateRequest(BaseModel):
    """What to generate; the same fields are CLI options and DAG params."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=1, description="Number of tasks to generate.")
    seed: int = Field(0, ge=0, description="Run seed: the same request always yields the same tasks.")
    families: list[str] | None = Field(None, description="Only these families (default: all).")
    capabilities: list[str] | None = Field(None, description="Only these capabilities (default: all).")
    difficulty: tuple[int, int] = Field((1, 5), description="Inclusive difficulty range.")
    generator: GeneratorKind = Field("procedural", description="procedural, llm, or mixed.")
    llm_share: float = Field(0.25, ge=0.0, le=1.0, description="Share of tasks from the LLM when generator is mixed.")


def select_families(families: Sequence[str] | None, capabilities: Sequence[str] | None) -> list[Family]:
    registry = load_families()
    names = list(families) if families else registry.names()
    chosen = [registry.get(name) for name in names]  # unknown names raise with a suggestion
    for cap in capabilities or ():
        if cap not in CAPABILITIES:
            raise UnknownName(CAPABILITIES.unknown_message(cap))
    if capabilities:
        chosen = [f for f in chosen if set(f.capabilities) & set(capabilities)]
    if not chosen:
        raise CoworkEnvError("no family matches the requested families and capabilities")
    return chosen


def plan_for(request: GenerateRequest, profile: CapabilityProfile | None = None, config: PlannerConfig | None = None) -> Plan:
    lo, hi = request.difficulty
    if not 1 <= lo <= hi <= 5:
        raise CoworkEnvError(f"difficulty range must be within 1-5, got {lo}-{hi}")
    cfg = (config or PlannerConfig()).model_copy(update={"difficulties": tuple(range(lo, hi + 1))})
    families = select_families(request.families, request.capabilities)
    return make_plan(request.n, request.seed, families, profile, cfg, request.capabilities)


def build_task(family: Family, seed: int, difficulty: int) -> TaskSpec:
    return family.build(Draft(family, seed, difficulty))


def procedural_tasks(rows: Sequence[PlanRow]) -> Iterator[TaskSpec | Rejection]:
    """Every task of the plan rows, in order; a family bug becomes a rejection, not a crash."""
    for row in rows:
        fam = load_families().get(row.family)
        for seed in row.seeds:
            try:
                yield build_task(fam, seed, row.difficulty)
            except ValidationError as exc:
                yield Rejection(generator=fam.generator, family=fam.name, capability=row.capability, difficulty=row.difficulty,
                                seed=seed, code="invalid_spec", reason=format_validation_error(exc))  # fmt: skip
            except Exception as exc:  # noqa: BLE001 — a generator bug must not stop the run; it is recorded
                yield Rejection(generator=fam.generator, family=fam.name, capability=row.capability, difficulty=row.difficulty,
                                seed=seed, code="family_error", reason=f"{type(exc).__name__}: {exc}")  # fmt: skip


def summarize(items: Sequence[TaskSpec | Rejection]) -> Summary:
    tasks = [t for t in items if isinstance(t, TaskSpec)]
    rejections = [r for r in items if isinstance(r, Rejection)]
    caps: Counter[str] = Counter()
    for t in tasks:
        caps.update(t.capabilities)
    return Summary(
        tasks=len(tasks),
        rejections=len(rejections),
        by_family=dict(sorted(Counter(t.family for t in tasks).items())),
        by_capability={c: caps[c] for c in CAPABILITIES.names() if caps[c]},
        by_difficulty={str(d): c for d, c in sorted(Counter(t.difficulty for t in tasks).items())},
        rejections_by_code=dict(sorted(Counter(r.code for r in rejections).items())),
    )


def check_plan(plan: Plan) -> Plan:
    """Fail fast, before any work, on a plan naming unknown families or capabilities."""
    for row in plan.rows:
        load_families().get(row.family)
        if row.capability not in CAPABILITIES:
            raise UnknownName(CAPABILITIES.unknown_message(row.capability))
    return plan


def split_plan(plan: Plan, llm_share: float) -> tuple[list[PlanRow], list[PlanRow]]:
    """Mixed generation: the first `llm_share` of each row's seeds go to the LLM, the rest stay procedural."""
    procedural, llm = [], []
    for row in plan.rows:
        k = round(row.count * llm_share)
        if k:
            llm.append(row.model_copy(update={"count": k}))
        if row.count - k:
            procedural.append(row.model_copy(update={"count": row.count - k, "seed_start": row.seed_start + k}))
    return procedural, llm


def generate(
    request: GenerateRequest,
    plan: Plan | None = None,
    llm: Any = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[TaskSpec], list[Rejection]]:
    """Run a plan. `llm` is an `LLMGenerator` for llm/mixed generation."""
    plan = check_plan(plan or plan_for(request))
    if request.generator == "procedural":
        procedural_rows, llm_rows = list(plan.rows), []
    elif request.generator == "llm":
        procedural_rows, llm_rows = [], list(plan.rows)
    else:
        procedural_rows, llm_rows = split_plan(plan, request.llm_share)
    if llm_rows and llm is None:
        raise CoworkEnvError("llm generation needs an LLM endpoint (--llm-base-url / --llm-conn)")
    tasks: list[TaskSpec] = []
    rejections: list[Rejection] = []
    for item in procedural_tasks(procedural_rows):
        (tasks if isinstance(item, TaskSpec) else rejections).append(item)
        if progress:
            progress(1)
    if llm_rows:
        for item in llm.generate_rows(llm_rows, progress=progress):
            (tasks if isinstance(item, TaskSpec) else rejections).append(item)
    return tasks, rejections
