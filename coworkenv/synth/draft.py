"""Draft: the builder every family writes a task through — workspace records, oracle calls, checks, rules.

A draft owns a `random.Random` seeded from (family, seed, difficulty), so a family that draws only from
`draft` is deterministic: the same triple always yields a byte-identical spec.

A draft belongs to a *split*: `train` (every release the factory publishes) or `bench` (the held-out suite,
`coworkenv-bench`). Instruction phrasings (`variant(..., held_out=...)`) differ between them: a bench task says
what it asks in words no training task uses. The bench split draws exactly what the train split draws from the
draft's random stream (its own phrasing choice comes from a second stream), so both splits of one seed build the
same workspace, checks and oracle, and the train split's output is what it was before splits existed.

The workspace a draft fills is one section per registered service (`draft.state`), and the record helpers
(`add_mail`, `add_doc`, `add_sheet`, …) come from the services themselves (each `Service.draft`), so a new service
brings its own helpers.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.family import Family
from coworkenv.synth.knobs import DIFFICULTY_KNOBS
from coworkenv.timeutil import format_instant
from coworkenv.workspace.service import SERVICES

T = TypeVar("T")

EPOCH = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday

Split = Literal["train", "bench"]
SPLITS: tuple[Split, ...] = ("train", "bench")
"""`train`: the phrasings of every release the factory publishes; `bench`: the held-out ones of `coworkenv-bench`."""


@dataclass(frozen=True)
class Phrasing:
    """One `variant` call: the phrasings it could use in each split, its fields and the text it gave."""

    templates: tuple[str, ...]
    held_out: tuple[str, ...]
    fields: Mapping[str, Any] = field(repr=False)
    text: str

    def renderings(self, split: Split) -> list[str]:
        """Every text the call could give in `split`."""
        chosen = self.held_out if split == "bench" and self.held_out else self.templates
        return [t.format(**self.fields) for t in chosen]


class _Sections(dict[str, Any]):
    """`Draft.state`: a service's empty section is made when a family first reads it (most use two or three of the
    services, and copying every empty section was a noticeable share of a small task's build)."""

    def __missing__(self, name: str) -> Any:
        section = self[name] = SERVICES.get(name).empty()
        return section


class Draft:
    def __init__(self, family: Family, seed: int, difficulty: int, split: Split = "train"):
        if difficulty not in DIFFICULTY_KNOBS:
            raise ValueError(f"difficulty must be 1–5, got {difficulty}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        self.family = family
        self.seed = seed
        self.difficulty = difficulty
        self.split: Split = split
        self.knobs = DIFFICULTY_KNOBS[difficulty]
        self.rng = random.Random(f"{family.name}|{family.version}|{seed}|{difficulty}")
        # A stream of its own, so that choosing a held-out phrasing leaves `rng` where the train split leaves it;
        # made on first use (only bench drafts use it).
        self._held_out_rng: random.Random | None = None
        self.phrasings: list[Phrasing] = []
        """Every `variant` call so far, in order (tests check that bench instructions are held out)."""
        self.company = self.rng.choice(vocab.COMPANIES)
        self.domain = f"{self.company.lower().replace(' ', '')}.test"
        weekday = self.rng.randrange(0, 30)
        weekday += {5: 2, 6: 1}.get((EPOCH + timedelta(days=weekday)).weekday(), 0)
        self.today = EPOCH + timedelta(days=weekday)
        self.now = self.today.replace(hour=8, minute=self.rng.choice((0, 15, 30, 45)))
        self._used_names: set[str] = set()
        self.me = self._new_person(team=self.rng.choice(vocab.TEAMS))
        self.state: dict[str, Any] = _Sections()
        """The workspace being built: one JSON section per service (made on first use)."""
        self.tools: list[str] = []
        self.checks: list[dict[str, Any]] = []
        self.solution: list[dict[str, Any]] = []
        self.prohibited: list[dict[str, Any]] = []
        self.user: dict[str, Any] | None = None
        self.fault_rate = 0.0
        self._counters: dict[str, int] = {}

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """The services' record helpers, installed as methods below: `d.add_mail(...)` is mail's `add_mail(d, ...)`."""

    def records(self, service: str, collection: str | None = None) -> list[dict[str, Any]]:
        """A list of id'd records being built: the service's one (mail messages, calendar events, contacts, …), or
        the named collection of a service that has several (`d.records("records", "crm.customers")`)."""
        svc = SERVICES.get(service)
        records = svc.records_of(self.state[service], collection or svc.collection or "")
        if records is None:
            raise KeyError(f"{service} has no collection {collection!r}")
        return records

    # --- randomness -----------------------------------------------------------------------------------

    def _below(self, n: int) -> int:
        """`rng._randbelow(n)` (0 <= r < n, n > 0): the draw behind `choice` and `randrange`, made here in one Python
        call instead of two or three. Drafts make about a hundred of them, and the draws must stay exactly the ones
        `random` makes, so that every seed keeps its task (tests/synth/test_draft_draws.py compares them)."""
        bits = self.rng.getrandbits
        k = n.bit_length()
        r = bits(k)
        while r >= n:
            r = bits(k)
        return r

    def pick(self, items: Sequence[T]) -> T:
        """`rng.choice(items)`."""
        if not items:
            return self.rng.choice(items)  # its IndexError
        return items[self._below(len(items))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        # A sequence is sampled in place (the same draws as from a list of it): listing `range(10000, 99999)` first
        # cost more than all the rest of some tasks.
        return self.rng.sample(items if isinstance(items, Sequence) else list(items), k)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def amount(self, lo: int, hi: int, step: int = 1) -> int:
        """`rng.randrange(lo // step, hi // step + 1) * step`."""
        start, stop = lo // step, hi // step + 1
        if type(start) is not int or stop <= start:
            return self.rng.randrange(start, stop) * step  # its TypeError or ValueError
        return (start + self._below(stop - start)) * step

    def variant(self, *templates: str, held_out: Sequence[str] = (), **fields: Any) -> str:
        """One of several phrasings, filled in: wording varies as much as the data.

        `held_out`: phrasings only the bench split uses (every variant that words the instruction has them). The
        train split's draw is made in both splits, so the rest of the task does not depend on the split."""
        template = self.pick(templates)
        if self.split == "bench" and held_out:
            if self._held_out_rng is None:
                self._held_out_rng = random.Random(
                    f"{self.family.name}|{self.family.version}|{self.seed}|{self.difficulty}|held-out"
                )
            template = held_out[self._held_out_rng.randrange(len(held_out))]
        text = template.format(**fields)
        self.phrasings.append(Phrasing(tuple(templates), tuple(held_out), dict(fields), text))
        return text

    @staticmethod
    def number(value: float) -> str:
        """How answers and files write numbers: integers plainly, others with at most two decimals."""
        if float(value).is_integer():
            return str(int(value))
        return f"{value:.2f}".rstrip("0").rstrip(".")

    def next_id(self, prefix: str) -> str:
        self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}{self._counters[prefix]}"

    # --- time ---------------------------------------------------------------------------------------

    def at(self, days: int = 0, hour: int = 9, minute: int = 0) -> str:
        """An instant `days` after today (negative: before), at hour:minute UTC."""
        return _instant(self.today, days, hour, minute)

    def day_name(self, days: int = 0) -> str:
        return _day_name(self.today, days)

    # --- people -------------------------------------------------------------------------------------

    def _new_person(self, team: str | None = None, domain: str | None = None) -> dict[str, Any]:
        for _ in range(1000):
            first, last = self.pick(vocab.FIRST_NAMES), self.pick(vocab.LAST_NAMES)
            if f"{first} {last}" not in self._used_names:
                break
        self._used_names.add(f"{first} {last}")
        team = team or self.pick(vocab.TEAMS)
        city, tz = self.pick(vocab.CITIES)
        return {
            "id": "",
            "name": f"{first} {last}",
            "email": f"{first}.{last}@{domain or self.domain}".lower(),
            "team": team,
            "title": self.pick(vocab.ROLES[team]),
            "phone": f"+1-555-{self.amount(1000, 9999):04d}",
            "timezone": tz,
            "city": city,
        }

    def person(self, team: str | None = None, *, in_contacts: bool = True) -> dict[str, Any]:
        """A new colleague with a unique name; added to contacts unless told otherwise."""
        p = self._new_person(team)
        p["id"] = self.next_id("c")
        if in_contacts:
            self.records("contacts").append({k: v for k, v in p.items() if k != "city"})
        return p

    def outsider(self) -> dict[str, Any]:
        """Someone outside the company (an external domain), not in contacts."""
        p = self._new_person(domain=self.pick(vocab.EXTERNAL_DOMAINS))
        p["id"] = self.next_id("x")
        return p

    # --- the task -----------------------------------------------------------------------------------

    def allow(self, *tools: str) -> None:
        for name in tools:
            if name not in self.tools:
                self.tools.append(name)

    def call(self, tool: str, **args: Any) -> None:
        """An oracle step; the tool is allowed automatically."""
        self.allow(tool)
        self.solution.append({"tool": tool, "args": args})

    def say(self, text: str) -> None:
        self.solution.append({"say": text})

    def check(self, kind: str, *, weight: float = 1.0, id: str | None = None, **params: Any) -> None:
        self.checks.append({"id": id or f"{kind}-{len(self.checks) + 1}", "kind": kind, "weight": weight, **params})

    def forbid(self, tool: str, reason: str, **args: Any) -> None:
        rule: dict[str, Any] = {"tool": tool, "reason": reason}
        if args:
            rule["args"] = args
        self.prohibited.append(rule)

    def unchanged(self, *services: str, weight: float = 0.5, collection: str | None = None) -> None:
        """`unchanged` checks on whole services, or on one collection of one (`collection`)."""
        for service in services:
            if collection is None:
                self.check("unchanged", weight=weight, id=f"{service}-untouched", service=service)
            else:
                self.check(
                    "unchanged", weight=weight, id=f"{collection}-untouched", service=service, collection=collection
                )

    def ask_user(self, facts: dict[str, Any], reveal: list[tuple[list[str], str]], persona: str = "") -> None:
        self.user = {
            "persona": persona or f"{self.me['name']}, {self.me['title']} at {self.company}",
            "facts": facts,
            "reveal": [{"when_any": keys, "say": say} for keys, say in reveal],
            "max_rounds": len(reveal) + 1,
        }

    def build(self, instruction: str, answer: str, *, capabilities: Sequence[str] | None = None) -> TaskSpec:
        workspace: dict[str, Any] = {
            "now": format_instant(self.now),
            "me": {"name": self.me["name"], "email": self.me["email"]},
        }
        for name, service in SERVICES.items():
            section = self.state.get(name, service.empty_state)
            if section != service.empty_state:
                workspace[name] = section
        spec = {
            "id": f"{self.family.name}-d{self.difficulty}-{self.seed:07d}",
            "version": 1,
            "family": self.family.name,
            "capabilities": list(capabilities or self.family.capabilities),
            "difficulty": self.difficulty,
            "instruction": instruction,
            "user": self.user,
            "workspace": workspace,
            "tools": self.tools,
            "prohibited": self.prohibited,
            "faults": {"rate": self.fault_rate, "seed": self.seed},
            "checks": self.checks,
            "solution": [*self.solution, {"answer": answer}],
            "meta": {
                "seed": self.seed,
                "generator": self.family.generator,
                "parent": None,
                "knobs": self.knobs.model_dump(),
            },
        }
        return TaskSpec.model_validate(spec)


# Tasks fall on a few dozen days at a few times each, and formatting dates was a noticeable share of a build.
# `typed`: `at(0, 9.0)` must fail as it always did, not return the text cached for `at(0, 9)`.
@lru_cache(maxsize=8192, typed=True)
def _instant(today: datetime, days: int, hour: int, minute: int) -> str:
    return format_instant((today + timedelta(days=days)).replace(hour=hour, minute=minute))


@lru_cache(maxsize=1024, typed=True)
def _day_name(today: datetime, days: int) -> str:
    return (today + timedelta(days=days)).strftime("%A %d %B").replace(" 0", " ")


# The services' record helpers (`fn(draft, ...)`) become methods of Draft; Draft's own names come first.
for _name, _helper in [(name, fn) for _, service in SERVICES.items() for name, fn in service.draft.items()]:
    if not hasattr(Draft, _name):
        setattr(Draft, _name, _helper)
