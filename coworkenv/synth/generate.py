"""Generation: a plan (or a cold-start uniform one) → TaskSpecs, with every failure recorded as a rejection."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError, field_label, format_validation_error
from coworkenv.registry import UnknownName
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.draft import Draft, Split
from coworkenv.synth.family import Family, load_families
from coworkenv.synth.planner import (
    MAX_RUN_SEED,
    RESERVED_SEED_BASE,
    CapabilityProfile,
    Plan,
    PlannerConfig,
    PlanRow,
    check_run_seed,
    make_plan,
    reserved_rows,
)

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


WHAT_TO_MAKE = "What to make"
GENERATION = "Generation"
"""Sections of the trigger form (Airflow Param `section`) for the fields of `GenerateRequest`."""


def _names_field(what: str, names: list[str]) -> Any:
    # `items.enum` lets Airflow refuse an unknown name; `examples` makes its form a multi-select pick-list
    return Field(
        None,
        title=what.capitalize(),
        description=f"Only these {what} (default: all).",
        json_schema_extra={"items": {"enum": names}, "examples": names, "section": WHAT_TO_MAKE},
    )


def _known(names: list[str] | None, what: str, check: Callable[[str], Any]) -> list[str] | None:
    if names is not None and not names:
        raise ValueError(f"an empty list: give at least one {what}, or leave it out for all")
    for name in names or ():
        try:
            check(name)
        except UnknownName as exc:  # a KeyError: pydantic would let it escape without the field's name
            raise ValueError(str(exc)) from None
    return names


class GenerateRequest(BaseModel):
    """What to generate. The synthesis job's config (`pipeline.config.SynthesisConfig`) extends this model, so each
    field is also a CLI option, a key of the run's YAML file and a field of the DAG's form."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(
        100,
        ge=1,
        le=CAPS.tasks_per_run,
        title="Tasks",
        description="Tasks to generate.",
        json_schema_extra={"section": WHAT_TO_MAKE},
    )
    seed: int = Field(
        0,
        ge=0,
        title="Seed",
        json_schema_extra={"maximum": MAX_RUN_SEED, "section": WHAT_TO_MAKE},
        description=f"Run seed (0-{MAX_RUN_SEED}): the same settings give the same tasks.",
    )
    families: list[str] | None = _names_field("families", load_families().names())
    capabilities: list[str] | None = _names_field("capabilities", CAPABILITIES.names())
    difficulty_min: int = Field(
        1,
        ge=1,
        le=5,
        title="Lowest difficulty",
        description="Lowest difficulty (1-5).",
        json_schema_extra={"section": WHAT_TO_MAKE},
    )
    difficulty_max: int = Field(
        5,
        ge=1,
        le=5,
        title="Highest difficulty",
        description="Highest difficulty (1-5), at least the lowest.",
        json_schema_extra={"section": WHAT_TO_MAKE},
    )
    generator: GeneratorKind = Field(
        "procedural", title="Generator", description="Where tasks come from.", json_schema_extra={"section": GENERATION}
    )
    llm_share: float = Field(
        0.25,
        ge=0,
        le=1,
        title="LLM share",
        description="Share of LLM-written tasks when the generator is mixed (0-1).",
        json_schema_extra={"section": GENERATION},
    )

    @field_validator("seed")
    @classmethod
    def _below_reserved(cls, seed: int) -> int:
        return check_run_seed(seed)

    @field_validator("families")
    @classmethod
    def _known_families(cls, names: list[str] | None) -> list[str] | None:
        return _known(names, "family", load_families().get)  # unknown names fail with a "did you mean"

    @field_validator("capabilities")
    @classmethod
    def _known_capabilities(cls, names: list[str] | None) -> list[str] | None:
        return _known(names, "capability", CAPABILITIES.get)

    @model_validator(mode="after")
    def _difficulty_range(self) -> Self:
        if self.difficulty_min > self.difficulty_max:
            low, high = field_label(type(self), "difficulty_min"), field_label(type(self), "difficulty_max")
            raise ValueError(f"{low} {self.difficulty_min} is above {high} {self.difficulty_max}")
        return self


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


def plan_for(
    request: GenerateRequest, profile: CapabilityProfile | None = None, config: PlannerConfig | None = None
) -> Plan:
    difficulties = tuple(range(request.difficulty_min, request.difficulty_max + 1))
    cfg = (config or PlannerConfig()).model_copy(update={"difficulties": difficulties})
    families = select_families(request.families, request.capabilities)
    return make_plan(request.n, request.seed, families, profile, cfg, request.capabilities)


def build_task(family: Family, seed: int, difficulty: int, split: Split = "train") -> TaskSpec:
    return family.build(Draft(family, seed, difficulty, split))


def procedural_tasks(rows: Sequence[PlanRow], split: Split = "train") -> Iterator[TaskSpec | Rejection]:
    """Every task of the plan rows, in order; a family bug becomes a rejection, not a crash."""
    for row in rows:
        fam = load_families().get(row.family)
        for seed in row.seeds:
            try:
                yield build_task(fam, seed, row.difficulty, split)
            except ValidationError as exc:
                yield Rejection(
                    generator=fam.generator,
                    family=fam.name,
                    capability=row.capability,
                    difficulty=row.difficulty,
                    seed=seed,
                    code="invalid_spec",
                    reason=format_validation_error(exc),
                )
            except Exception as exc:  # noqa: BLE001 — a generator bug must not stop the run; it is recorded
                yield Rejection(
                    generator=fam.generator,
                    family=fam.name,
                    capability=row.capability,
                    difficulty=row.difficulty,
                    seed=seed,
                    code="family_error",
                    reason=f"{type(exc).__name__}: {exc}",
                )


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


def check_plan(plan: Plan, split: Split = "train") -> Plan:
    """Fail fast, before any work, on a plan naming unknown families or capabilities, or (outside the bench split)
    using task seeds reserved for held-out suites."""
    for row in plan.rows:
        load_families().get(row.family)
        if row.capability not in CAPABILITIES:
            raise UnknownName(CAPABILITIES.unknown_message(row.capability))
    reserved = reserved_rows(plan) if split == "train" else []
    if reserved:
        row = reserved[0]
        raise CoworkEnvError(
            f"plan row {row.family}/d{row.difficulty} uses task seeds from {row.seed_start}: seeds from "
            f"{RESERVED_SEED_BASE} on are reserved for the held-out benchmark suite"
        )
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


def iter_generate(
    request: GenerateRequest,
    plan: Plan | None = None,
    llm: Any = None,
    progress: Callable[[int], None] | None = None,
    split: Split = "train",
) -> Iterator[TaskSpec | Rejection]:
    """Run a plan, one task or rejection at a time: the procedural rows' in plan order, then the LLM rows'. `llm` is an
    `LLMGenerator` for llm/mixed generation; `split="bench"` (procedural only) words the instructions with the held-out
    phrasings and may use reserved seeds. The plan is checked before the first item: a bad one makes nothing."""
    plan = check_plan(plan or plan_for(request), split)
    if request.generator == "procedural":
        procedural_rows, llm_rows = list(plan.rows), []
    elif request.generator == "llm":
        procedural_rows, llm_rows = [], list(plan.rows)
    else:
        procedural_rows, llm_rows = split_plan(plan, request.llm_share)
    if llm_rows and split != "train":
        raise CoworkEnvError(f"the {split} split is procedural only: its phrasings are the families' held-out ones")
    if llm_rows and llm is None:
        raise CoworkEnvError(
            f"{request.generator} generation needs an LLM endpoint: an LLM connection (llm_conn_id), or an LLM base URL "
            "(llm_base_url) and an LLM model (llm_model)"
        )
    return _items(procedural_rows, llm_rows, llm, progress, split)


def _items(
    procedural_rows: list[PlanRow],
    llm_rows: list[PlanRow],
    llm: Any,
    progress: Callable[[int], None] | None,
    split: Split,
) -> Iterator[TaskSpec | Rejection]:
    for item in procedural_tasks(procedural_rows, split):
        yield item
        if progress:
            progress(1)
    if llm_rows:
        yield from llm.generate_rows(llm_rows, progress=progress)


def generate(
    request: GenerateRequest,
    plan: Plan | None = None,
    llm: Any = None,
    progress: Callable[[int], None] | None = None,
    split: Split = "train",
) -> tuple[list[TaskSpec], list[Rejection]]:
    """`iter_generate`, collected: the tasks and the rejections, each in order."""
    tasks: list[TaskSpec] = []
    rejections: list[Rejection] = []
    for item in iter_generate(request, plan, llm, progress, split):
        (tasks if isinstance(item, TaskSpec) else rejections).append(item)
    return tasks, rejections
