"""Capability-guided planning: turn a model's capability profile into a generation plan for N tasks.

Policy (every knob is a `PlannerConfig` field):
- A (capability, difficulty) cell is *measured* once it has `min_attempts` attempts. Its pass rate puts it in
  one of three zones: *mastered* (≥ `mastered_at`), *hopeless* (≤ `hopeless_at`) or the *learning zone* between.
- Per capability, the target difficulties are its learning-zone cells. If every measured cell is mastered, the
  target steps up to one above the hardest mastered cell; if every one is hopeless, it steps down to one below the
  easiest hopeless cell. A capability with no measured cell is explored uniformly over the difficulty range.
- Budget: every capability first gets `exploration_share / #capabilities` of N; the rest is split in proportion to
  need — a learning-zone cell weighs p·(1−p)·4 (1 at p = 0.5), a stepped-up mastered capability `mastered_weight`,
  a stepped-down hopeless one `hopeless_weight`, an unmeasured one `unknown_weight`.
- A capability's share is split over its target difficulties by weight and then evenly over the families that
  exercise it. Counts are rounded by largest remainder, so the plan sums to exactly N.
- Without a profile (cold start) the plan is uniform over capabilities × difficulties.

Seeds: run seed S gives task seeds in [S·SEED_STRIDE, (S+1)·SEED_STRIDE); run seeds stop at MAX_RUN_SEED, so task
seeds from RESERVED_SEED_BASE on are left to held-out suites (`bench_run_seed`; `coworkenv.eval.suite`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.capabilities import CAPABILITIES, CapabilityProfile, ProfileRow
from coworkenv.synth.family import Family, load_families

SEED_STRIDE = 1_000_000
"""Seed ranges of different runs never overlap: run seed S draws task seeds from [S·stride, (S+1)·stride)."""
RESERVED_SEED_BASE = 1_000_000 * SEED_STRIDE
"""Task seeds from here on belong to held-out suites (`coworkenv-bench`): no training run reaches them."""
MAX_RUN_SEED = RESERVED_SEED_BASE // SEED_STRIDE - 1
"""The highest seed a run may have: its task seeds, below (S+1)·stride, stay under the reserved base."""
BENCH_SEED_LIMIT = MAX_RUN_SEED
"""The highest seed a held-out suite may have (its task seeds stay below 2·base, well inside int64)."""


def check_run_seed(seed: int) -> int:
    """A training run's seed, refused with one line when its task seeds would reach the reserved range."""
    if seed > MAX_RUN_SEED:
        raise ValueError(
            f"run seed {seed} is above {MAX_RUN_SEED}: task seeds from {RESERVED_SEED_BASE} on are reserved for "
            "the held-out benchmark suite (coworkenv-bench)"
        )
    return seed


def bench_run_seed(seed: int) -> int:
    """The plan seed of held-out suite `seed`: its task seeds are RESERVED_SEED_BASE + seed·stride + k."""
    if not 0 <= seed <= BENCH_SEED_LIMIT:
        raise CoworkEnvError(f"a benchmark suite's seed must be between 0 and {BENCH_SEED_LIMIT}, got {seed}")
    return RESERVED_SEED_BASE // SEED_STRIDE + seed


class PlannerConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mastered_at: float = Field(0.85, description="Pass rate at or above which a cell counts as mastered.")
    hopeless_at: float = Field(0.10, description="Pass rate at or below which a cell counts as hopeless.")
    min_attempts: int = Field(5, description="Attempts a cell needs before its pass rate is trusted.")
    exploration_share: float = Field(
        0.15, ge=0.0, le=1.0, description="Share of N spread evenly over every capability first."
    )
    mastered_weight: float = Field(
        0.15, description="Need weight of a capability mastered at every measured difficulty."
    )
    hopeless_weight: float = Field(
        0.35, description="Need weight of a capability hopeless at every measured difficulty."
    )
    unknown_weight: float = Field(0.5, description="Need weight of a capability without measured cells.")
    difficulties: tuple[int, ...] = Field((1, 2, 3, 4, 5), description="Difficulties the plan may use.")


class PlanRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    capability: str
    difficulty: int = Field(ge=1, le=5)
    count: int = Field(ge=1, le=CAPS.tasks_per_run, description="Tasks of this row (at most the cap tasks_per_run).")
    seed_start: int = Field(ge=0)
    reason: str = ""

    @property
    def seeds(self) -> range:
        return range(self.seed_start, self.seed_start + self.count)


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=1, le=CAPS.tasks_per_run, description="Tasks the plan makes: its rows' counts add up to it.")
    seed: int = Field(ge=0)
    rows: list[PlanRow] = Field(max_length=CAPS.plan_rows)

    @model_validator(mode="after")
    def _adds_up(self) -> Plan:
        total = sum(row.count for row in self.rows)
        if total != self.n:
            raise ValueError(f"the rows' counts add up to {total} tasks, not n = {self.n}")
        return self


def reserved_rows(plan: Plan) -> list[PlanRow]:
    """The plan's rows whose task seeds reach into the reserved range."""
    return [row for row in plan.rows if row.seed_start + row.count > RESERVED_SEED_BASE]


def _largest_remainder(weights: dict, total: int) -> dict:
    """Integer counts proportional to weights, summing to `total` (ties broken by key order)."""
    keys = [k for k, w in weights.items() if w > 0]
    if total <= 0 or not keys:
        return {}
    mass = sum(weights[k] for k in keys)
    exact = {k: total * weights[k] / mass for k in keys}
    counts = {k: int(exact[k]) for k in keys}
    left = total - sum(counts.values())
    for k in sorted(keys, key=lambda k: (-(exact[k] - counts[k]), keys.index(k)))[:left]:
        counts[k] += 1
    return {k: c for k, c in counts.items() if c > 0}


def _targets(capability: str, cells: dict[int, ProfileRow], cfg: PlannerConfig) -> tuple[dict[int, float], float, str]:
    """Target difficulties (with relative weights), the capability's need weight, and why."""
    measured = {d: r.pass_rate for d, r in cells.items() if r.attempts >= cfg.min_attempts and d in cfg.difficulties}
    if not measured:
        return {d: 1.0 for d in cfg.difficulties}, cfg.unknown_weight, "unmeasured: explore"
    zone = {d: p for d, p in measured.items() if cfg.hopeless_at < p < cfg.mastered_at}
    if zone:
        weights = {d: max(4 * p * (1 - p), 0.05) for d, p in zone.items()}
        return weights, max(weights.values()), "learning zone"
    if all(p >= cfg.mastered_at for p in measured.values()):
        harder = [d for d in cfg.difficulties if d > max(measured)]
        step = harder[0] if harder else max(cfg.difficulties)
        return {step: 1.0}, cfg.mastered_weight, f"mastered up to {max(measured)}: step up"
    if all(p <= cfg.hopeless_at for p in measured.values()):
        easier = [d for d in cfg.difficulties if d < min(measured)]
        step = easier[-1] if easier else min(cfg.difficulties)
        return {step: 1.0}, cfg.hopeless_weight, f"hopeless from {min(measured)}: step down"
    # Mastered at some difficulties, hopeless at harder ones: the boundary is where learning happens.
    top_mastered = max(d for d, p in measured.items() if p >= cfg.mastered_at)
    harder = [d for d in cfg.difficulties if d > top_mastered]
    step = harder[0] if harder else top_mastered
    return {step: 1.0}, 1.0, f"boundary above {top_mastered}"


def make_plan(
    n: int,
    seed: int,
    families: Sequence[Family] | None = None,
    profile: CapabilityProfile | None = None,
    config: PlannerConfig | None = None,
    capabilities: Sequence[str] | None = None,
) -> Plan:
    cfg = config or PlannerConfig()
    fams = list(families) if families is not None else [load_families().get(name) for name in load_families().names()]
    by_capability: dict[str, list[Family]] = defaultdict(list)
    for fam in fams:
        for cap in fam.capabilities:
            if capabilities is None or cap in capabilities:
                by_capability[cap].append(fam)
    caps = [c for c in CAPABILITIES.names() if by_capability.get(c)]
    if not caps:
        raise CoworkEnvError("no family exercises the requested capabilities")

    cells: dict[str, dict[int, ProfileRow]] = defaultdict(dict)
    for row in profile.rows if profile else ():
        cells[row.capability][row.difficulty] = row
    targets, need, reason = {}, {}, {}
    for cap in caps:
        if profile is None:
            targets[cap], need[cap], reason[cap] = {d: 1.0 for d in cfg.difficulties}, 1.0, "cold start: uniform"
        else:
            targets[cap], need[cap], reason[cap] = _targets(cap, cells[cap], cfg)

    explore = int(n * cfg.exploration_share) if profile is not None else 0
    base = _largest_remainder({c: 1.0 for c in caps}, explore)
    rest = _largest_remainder(need, n - sum(base.values()))
    per_cap = {c: base.get(c, 0) + rest.get(c, 0) for c in caps}

    rows: list[PlanRow] = []
    next_seed: dict[tuple[str, int], int] = defaultdict(lambda: seed * SEED_STRIDE)
    for cap in caps:
        for difficulty, count in _largest_remainder(targets[cap], per_cap[cap]).items():
            members = {f.name: 1.0 for f in by_capability[cap]}
            for fam_name, k in _largest_remainder(members, count).items():
                start = next_seed[(fam_name, difficulty)]
                next_seed[(fam_name, difficulty)] += k
                rows.append(
                    PlanRow(
                        family=fam_name,
                        capability=cap,
                        difficulty=difficulty,
                        count=k,
                        seed_start=start,
                        reason=reason[cap],
                    )
                )
    return Plan(n=n, seed=seed, rows=rows)
