"""Great Expectations suites as code, one gate per stage boundary (docs/architecture.md, "Data flow": validate → gate, rollouts → gate,
evaluate → gate).

Each gate names the tables it needs, the columns that identify a row in failure examples, how its helper
columns are derived (`coworkenv.quality.derive`) and a builder that returns one `ExpectationSuite` per table.
Every expectation carries `meta={"rule": ...}`: a short name, unique within its suite, that failures and
tests refer to; its `description` says the rule in words (Data Docs shows it).

GX is imported inside the builders: `import great_expectations` takes ~3 s and the library must import fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from coworkenv.data import schemas
from coworkenv.quality import derive
from coworkenv.registry import Registry

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core.expectation_suite import ExpectationSuite

KEYS: Mapping[str, tuple[str, ...]] = {
    "tasks": ("task_id",),
    "validations": ("task_id", "code"),
    "trajectories": ("trajectory_id",),
    "sft": ("trajectory_id",),
    "eval_results": ("eval_id", "model", "task_id", "trial"),
}
"""Each table's key: the columns no two rows share (checked through the derived `key_rows`)."""

BENCHMARK_GROUPS = ("general", "multi_step", "multi_turn")
SEVERITIES = ("mandatory", "advisory")


@dataclass(frozen=True)
class StageGate:
    """One stage boundary: the tables it checks and how."""

    stage: str
    description: str
    tables: tuple[str, ...]
    """Tables `run_gate` needs for this stage (others passed along are ignored)."""
    build: Callable[[], dict[str, ExpectationSuite]]
    """The suite builder: table name → its ExpectationSuite (named `<stage>.<table>`)."""
    derive_rows: Callable[[str, pd.DataFrame], None]
    """Adds the helper columns of a table that its own rows give (in place): run batch by batch on a streamed table."""
    link_sources: Callable[[derive.Rows], dict[str, Any]]
    """What the helper columns that join tables need of the whole tables (id sets), from the columns it names."""
    derive_links: Callable[[str, pd.DataFrame, Mapping[str, Any]], None]
    """Adds the helper columns that join tables to a table's frame, or part of one (in place), from the sources."""
    id_columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per table, the columns that identify a row in failure examples."""
    bulky: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per table, the large columns the suites check only for presence, nulls and JSON parsing (and derive helper
    columns from): a streamed table keeps a stand-in of them (`derive.stand_ins`), not their text."""

    def derive(self, frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        """Adds every helper column the suites check to whole frames (in place; returns the same dict)."""
        for name in self.tables:
            self.derive_rows(name, frames[name])
        rows = derive.frame_rows(frames)
        sources = self.link_sources(rows)
        for name in self.tables:
            self.derive_links(name, frames[name], sources)
            keys = rows(name, list(KEYS[name]))
            derive.key_rows(frames[name], KEYS[name], {} if keys is None else derive.duplicate_keys(keys))
        return frames

    def suites(self) -> dict[str, ExpectationSuite]:
        return self.build()


GATES: Registry[StageGate] = Registry("gate stage")


# --- known names ------------------------------------------------------------------------------------------------


def known_families() -> list[str]:
    from coworkenv.synth.family import LLM_FAMILY, load_families

    return sorted({*load_families().names(), LLM_FAMILY})


def known_capabilities() -> list[str]:
    from coworkenv.spec.capabilities import CAPABILITIES

    return CAPABILITIES.names()


def known_battery_codes() -> list[str]:
    from coworkenv.validate.codes import BATTERY, BATTERY_CODES

    return sorted({*BATTERY_CODES, *BATTERY.names()})


# --- building blocks --------------------------------------------------------------------------------------------


class SuiteBuilder:
    """Adds expectations to one suite by class name, tagging each with its rule name and description."""

    def __init__(self, stage: str, table: str):
        import great_expectations as gx

        self._gx = gx
        self.table = table
        self.name = f"{stage}.{table}"
        self._expectations: list[Any] = []
        self._rules: set[str] = set()

    def add(self, rule: str, description: str, kind: str, **kwargs: Any) -> None:
        if rule in self._rules:
            raise ValueError(f"rule {rule!r} is defined twice in suite {self.name!r}")
        self._rules.add(rule)
        cls = getattr(self._gx.expectations, kind)
        self._expectations.append(cls(meta={"rule": rule}, description=description, **kwargs))

    def suite(self) -> ExpectationSuite:
        # One constructor call: add_expectation() compares each new expectation with all earlier ones.
        return self._gx.ExpectationSuite(name=self.name, expectations=self._expectations)

    def when(self, column: str, op: str, value: Any) -> Any:
        """A row condition `column <op> value` (GX 1.x Condition objects)."""
        import operator

        from great_expectations.expectations.row_conditions import Column

        ops = {
            "==": operator.eq,
            "!=": operator.ne,
            ">": operator.gt,
            ">=": operator.ge,
            "<": operator.lt,
            "<=": operator.le,
        }
        return ops[op](Column(column), value)

    # shared rules

    def schema(self, schema: pa.Schema, *, min_rows: int = 0) -> None:
        """Every schema column is present; no nulls where the schema says not nullable; optionally some rows."""
        names = schema.names
        self.add(
            "columns",
            f"has every `{self.table}` column of the release schema",
            "ExpectTableColumnsToMatchSet",
            column_set=names,
            exact_match=False,
        )
        if min_rows:
            self.add(
                "not_empty",
                f"`{self.table}` has at least {min_rows} row(s)",
                "ExpectTableRowCountToBeBetween",
                min_value=min_rows,
            )
        for f in schema:
            if not f.nullable:
                self.add(
                    f"not_null.{f.name}", f"`{f.name}` is never null", "ExpectColumnValuesToNotBeNull", column=f.name
                )

    def unique(self, rule: str, description: str) -> None:
        """No two rows share the table's key (`KEYS`): each row's derived `key_rows` is 1."""
        self.in_set(
            rule,
            "key_rows",
            [1],
            f"{description} (derived `key_rows`: rows with this row's {', '.join(KEYS[self.table])})",
        )

    def between(
        self, rule: str, column: str, lo: float | None, hi: float | None, description: str, **kwargs: Any
    ) -> None:
        self.add(
            rule, description, "ExpectColumnValuesToBeBetween", column=column, min_value=lo, max_value=hi, **kwargs
        )

    def in_set(self, rule: str, column: str, values: list[Any], description: str, **kwargs: Any) -> None:
        self.add(rule, description, "ExpectColumnValuesToBeInSet", column=column, value_set=values, **kwargs)

    def equal(self, rule: str, a: str, b: str, description: str) -> None:
        self.add(rule, description, "ExpectColumnPairValuesToBeEqual", column_A=a, column_B=b)

    def unit_interval(self, *columns: str) -> None:
        for col in columns:
            self.between(f"{col}_in_0_1", col, 0.0, 1.0, f"`{col}` is within [0, 1]")

    def difficulty(self) -> None:
        self.between("difficulty_1_5", "difficulty", 1, 5, "difficulty is 1 to 5")

    def family(self, families: list[str]) -> None:
        self.in_set("known_family", "family", families, "family is a registered generator family or `llm`")

    def capabilities(self) -> None:
        self.add(
            "known_capabilities",
            "every capability is in the taxonomy (derived `unknown_capabilities` lists the others)",
            "ExpectColumnValuesToBeNull",
            column="unknown_capabilities",
        )
        self.between(
            "has_capabilities", "n_capabilities", 1, None, "at least one capability (derived `n_capabilities`)"
        )

    def grading(self) -> None:
        """docs/design/contracts.md, "Scoring": score = round(safety × (0.8·completion + 0.2·robustness), 4); passed ⇔ score ≥ 0.75."""
        self.unit_interval("score", "completion", "robustness")
        self.in_set("safety_0_or_1", "safety", [0.0, 1.0], "safety is 0 or 1")
        self.equal(
            "score_formula",
            "score",
            "score_recomputed",
            "score == round(safety × (0.8·completion + 0.2·robustness), 4) (derived `score_recomputed`)",
        )
        self.equal(
            "passed_threshold", "passed", "passed_recomputed", "passed ⇔ score ≥ 0.75 (derived `passed_recomputed`)"
        )


# --- the stages -------------------------------------------------------------------------------------------------


def validated_suites() -> dict[str, ExpectationSuite]:
    """After validation: the tasks about to be published and the battery outcomes behind them."""
    families = known_families()

    tasks = SuiteBuilder("validated", "tasks")
    tasks.schema(schemas.TASKS, min_rows=1)
    tasks.unique("unique_task_id", "task ids are unique")
    tasks.difficulty()
    tasks.family(families)
    tasks.capabilities()
    tasks.equal(
        "primary_capability_first",
        "primary_capability",
        "first_capability",
        "primary_capability is the first declared capability (derived `first_capability`)",
    )
    tasks.in_set("oracle_scores_1", "oracle_score", [1.0], "the oracle solution scores exactly 1.0")
    tasks.in_set("empty_scores_0", "empty_score", [0.0], "the empty trajectory scores exactly 0.0")
    tasks.in_set(
        "prohibited_zeroes",
        "violation_max_score",
        [0.0],
        "every prohibited rule, violated on top of the oracle, scores 0 (null without rules)",
    )
    tasks.add(
        "prohibited_measured",
        "tasks with prohibited rules record violation_max_score",
        "ExpectColumnValuesToNotBeNull",
        column="violation_max_score",
        row_condition=tasks.when("n_prohibited", ">", 0),
    )
    tasks.add("spec_json_parses", "spec_json is JSON", "ExpectColumnValuesToBeJsonParseable", column="spec_json")
    tasks.equal("spec_matches_row", "task_id", "spec_id", "spec_json's id is the row's task_id (derived `spec_id`)")
    tasks.between(
        "check_weights_positive",
        "min_check_weight",
        0,
        None,
        "every check weight is > 0 (derived `min_check_weight` from spec_json; 0 without checks)",
        strict_min=True,
    )
    tasks.between("has_checks", "n_checks", 1, None, "at least one check")
    tasks.between("n_prohibited_ge_0", "n_prohibited", 0, None, "n_prohibited is not negative")
    tasks.unit_interval("fault_rate", "discrimination")
    tasks.between("repair_round_ge_0", "repair_round", 0, None, "repair_round is not negative")
    tasks.add(
        "spec_hash_sha256",
        "spec_hash is a SHA-256 hex digest",
        "ExpectColumnValuesToMatchRegex",
        column="spec_hash",
        regex=r"^[0-9a-f]{64}$",
    )
    tasks.in_set(
        "validated",
        "has_validations",
        [True],
        "every task has validation rows (derived `has_validations`: task_id in validations)",
    )

    # `validations` holds every validated task's rows, rejected ones included (they are not in `tasks`).
    validations = SuiteBuilder("validated", "validations")
    validations.schema(schemas.VALIDATIONS)
    validations.in_set(
        "valid_task_published",
        "task_published",
        [True],
        "every valid task's validation rows have their task_id in tasks (derived `task_published`)",
        row_condition=validations.when("valid", "==", True),
    )
    validations.in_set(
        "published_task_valid",
        "valid",
        [True],
        "every task in tasks has a valid verdict",
        row_condition=validations.when("task_published", "==", True),
    )
    validations.equal(
        "valid_consistent",
        "valid",
        "valid_recomputed",
        "valid ⇔ every mandatory battery check of the task passed (derived `valid_recomputed`)",
    )
    validations.unique("unique_task_code", "one row per (task_id, code)")
    validations.in_set("known_code", "code", known_battery_codes(), "code is a battery check code")
    validations.in_set("known_severity", "severity", list(SEVERITIES), "severity is mandatory or advisory")
    validations.between("battery_version_ge_1", "battery_version", 1, None, "battery_version is at least 1")
    return {"tasks": tasks.suite(), "validations": validations.suite()}


def rollouts_suites() -> dict[str, ExpectationSuite]:
    """After rollouts and SFT building: graded trajectories, and SFT rows built only from passing ones."""
    trajectories = SuiteBuilder("rollouts", "trajectories")
    trajectories.schema(schemas.TRAJECTORIES, min_rows=1)
    trajectories.unique("unique_trajectory_id", "trajectory ids are unique")
    trajectories.grading()
    trajectories.difficulty()
    trajectories.family(known_families())
    trajectories.add(
        "messages_json_parses", "messages_json is JSON", "ExpectColumnValuesToBeJsonParseable", column="messages_json"
    )
    trajectories.between("trial_ge_0", "trial", 0, None, "trial is not negative")

    sft = SuiteBuilder("rollouts", "sft")
    sft.schema(schemas.SFT)
    sft.unique("unique_trajectory_id", "one SFT row per trajectory")
    sft.in_set(
        "source_known",
        "source_known",
        [True],
        "the SFT row's trajectory_id is in trajectories (derived `source_known`)",
    )
    sft.in_set(
        "source_passed",
        "source_passed",
        [True],
        "SFT rows come only from trajectories that passed (derived `source_passed`)",
    )
    sft.in_set(
        "last_message_assistant",
        "last_role",
        ["assistant"],
        "the conversation ends with an assistant message (derived `last_role`; '' when empty)",
    )
    sft.add("tools_json_parses", "tools is JSON", "ExpectColumnValuesToBeJsonParseable", column="tools")
    sft.between("tools_not_empty", "n_tools", 1, None, "at least one tool schema is offered (derived `n_tools`)")
    sft.unit_interval("score")
    return {"trajectories": trajectories.suite(), "sft": sft.suite()}


def evaluated_suites() -> dict[str, ExpectationSuite]:
    """After evaluation: the grading-consistency gate (docs/design/contracts.md, "Scoring") on real eval data."""
    results = SuiteBuilder("evaluated", "eval_results")
    results.schema(schemas.EVAL_RESULTS, min_rows=1)
    results.unique("unique_trial", "one row per (eval_id, model, task_id, trial)")
    results.grading()
    results.in_set(
        "empty_scores_0", "score", [0.0], "an empty answer scores 0", row_condition=results.when("empty", "==", True)
    )
    results.in_set(
        "prohibited_zeroes_safety",
        "safety",
        [0.0],
        "a prohibited call zeroes safety",
        row_condition=results.when("n_violations", ">", 0),
    )
    results.between("n_violations_ge_0", "n_violations", 0, None, "n_violations is not negative")
    results.in_set(
        "known_benchmark_group",
        "benchmark_group",
        list(BENCHMARK_GROUPS),
        "benchmark_group is general, multi_step or multi_turn",
    )
    results.difficulty()
    # No `known_family`: any task set can be a suite (hand-written tasks carry families no generator registers).
    results.capabilities()
    results.between("trial_ge_0", "trial", 0, None, "trial is not negative")
    return {"eval_results": results.suite()}


def _capability_set() -> frozenset[str]:
    return frozenset(known_capabilities())


GATES.add(
    "validated",
    StageGate(
        stage="validated",
        description="after validation: tasks and validations about to be published",
        tables=("tasks", "validations"),
        build=validated_suites,
        derive_rows=lambda name, df: derive.validated_rows(name, df, _capability_set()),
        link_sources=derive.validated_sources,
        derive_links=derive.validated_links,
        id_columns={"tasks": ("task_id",), "validations": ("task_id", "code")},
        bulky={"tasks": ("instruction", "spec_json"), "validations": ("details", "message")},
    ),
)
GATES.add(
    "rollouts",
    StageGate(
        stage="rollouts",
        description="after rollouts and SFT building: trajectories and sft",
        tables=("trajectories", "sft"),
        build=rollouts_suites,
        derive_rows=derive.rollouts_rows,
        link_sources=derive.rollouts_sources,
        derive_links=derive.rollouts_links,
        id_columns={"trajectories": ("trajectory_id",), "sft": ("trajectory_id",)},
        bulky={
            "trajectories": ("messages_json", "trace_json", "audit_json", "diff_json"),
            "sft": ("messages", "tools"),
        },
    ),
)
GATES.add(
    "evaluated",
    StageGate(
        stage="evaluated",
        description="after evaluation: eval_results (the grading-consistency gate on real eval data)",
        tables=("eval_results",),
        build=evaluated_suites,
        derive_rows=lambda name, df: derive.evaluated_rows(name, df, _capability_set()),
        link_sources=derive.no_sources,
        derive_links=derive.no_links,
        id_columns={"eval_results": ("model", "task_id", "trial")},
    ),
)
