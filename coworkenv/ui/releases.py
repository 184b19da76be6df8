"""What the release pages show, read through the one reader (`data/reader.py`) and the DuckDB views of `sql/`.

The figures of a release come from the marts and example queries `coworkenv sql` runs (`valid_share_by_family`,
`coverage_difficulty_capability`, `release_overview`, `eval_pass_rates_by_group`, `queries/top_rejection_reasons.sql`,
`queries/repair_effectiveness.sql`), so the pages and the SQL never disagree. A release never changes once published,
so its figures are computed once per process and kept (keyed by release id and creation time).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.data.layout import Manifest
from coworkenv.data.reader import latest_release, list_releases, read_manifest, read_table
from coworkenv.data.root import Root, open_root
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.rundir import safe_name
from coworkenv.ui.runs import NotFound, RunInfo, by_directory

DIFFICULTIES = (1, 2, 3, 4, 5)
MAX_TASK_IDS = 500
"""Task ids a release page lists for picking the sample (the first ones by id)."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ReleaseRow(Frozen):
    """One line of the releases page: the manifest (lineage, row counts) and its run's gates."""

    manifest: Manifest
    latest: bool
    run: RunInfo | None = None


class Overview(Frozen):
    n_tasks: int = 0
    """Tasks the battery validated (repairs included)."""
    n_valid: int = 0
    n_published: int = 0
    n_repair_attempts: int = 0
    n_rescued: int = 0
    n_trajectories: int = 0
    trajectory_pass_rate: float | None = None
    n_sft_examples: int = 0
    n_rl_prompts: int = 0
    n_eval_trials: int = 0


class FamilyRow(Frozen):
    family: str
    n_tasks: int
    n_valid: int
    n_invalid: int
    n_published: int
    n_rescued: int
    first_pass_valid_share: float | None = None
    final_valid_share: float | None = None


class CapabilityRow(Frozen):
    capability: str
    benchmark_group: str | None = None
    counts: list[int]
    """Valid tasks at difficulty 1 … 5 (a task counts in each capability it exercises)."""
    total: int


class RejectionRow(Frozen):
    code: str
    rejected_tasks: int
    families_affected: int
    share_of_rejected: float | None = None
    example_task: str | None = None
    example: str | None = None


class RepairRow(Frozen):
    code: str
    n_failed_tasks: int
    n_repaired: int
    n_rescued: int
    rescue_rate: float | None = None
    mean_rescue_round: float | None = None
    code_fix_rate: float | None = None


class EvalRate(Frozen):
    eval_id: str
    model: str
    benchmark_group: str
    n_tasks: int
    k: int
    pass_at_1: float | None = None
    pass_at_1_ci_low: float | None = None
    pass_at_1_ci_high: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    mean_score: float | None = None
    violation_rate: float | None = None


class ReleaseDetail(Frozen):
    overview: Overview
    families: list[FamilyRow]
    capabilities: list[CapabilityRow]
    difficulties: dict[int, int]
    """Published tasks per difficulty."""
    n_rejected: int
    """Validated tasks the battery rejected (failed repairs included)."""
    n_originals_rejected: int
    """Tasks as generated (not repairs of another) that the battery rejected: what repair could rescue."""
    rejections: list[RejectionRow]
    repairs: list[RepairRow]
    repaired_tasks: int
    """Rejected tasks repair made attempts on."""
    rescued_tasks: int
    """Rejected tasks a repair made valid."""
    evals: list[EvalRate]
    task_ids: list[str]

    @property
    def rescue_rate(self) -> float | None:
        """Rescued over rejected, as the repair stage counts it (`repaired/metrics.json`)."""
        return self.rescued_tasks / self.n_originals_rejected if self.n_originals_rejected else None


class Message(Frozen):
    role: str
    content: str = ""
    calls: list[tuple[str, str]] = []
    """(tool, arguments as JSON text) of each tool call the message makes."""


class SampleTask(Frozen):
    task_id: str
    family: str
    difficulty: int
    capabilities: list[str]
    instruction: str
    tools: list[str]
    checks: list[dict[str, Any]]
    prohibited: list[dict[str, Any]]
    spec_json: str
    """The spec, pretty-printed."""
    agent: str | None = None
    """Whose trajectory `messages` is (the oracle's where the release has it)."""
    score: float | None = None
    passed: bool | None = None
    messages: list[Message] = []


def release_rows(data_root: Root) -> list[ReleaseRow]:
    """Every complete release, newest first, with its run (when its run directory is on this data root)."""
    from coworkenv.ui.runs import list_runs

    root = open_root(data_root)
    manifests = list_releases(root)
    latest = latest_release(root)
    runs = {run.name: run for run in list_runs(root, manifests)}
    by_dir = {m.release_id: name for name, m in by_directory(manifests).items()}
    rows = [
        ReleaseRow(manifest=m, latest=m.release_id == latest, run=runs.get(by_dir.get(m.release_id, "")))
        for m in manifests
    ]
    return rows[::-1]


def release(data_root: Root, release_id: str) -> tuple[Manifest, RunInfo | None]:
    """A release's manifest and its run, or NotFound."""
    from coworkenv.ui.runs import run_info

    root = open_root(data_root)
    try:
        manifest = read_manifest(root, release_id)
    except CoworkEnvError as exc:
        raise NotFound(str(exc)) from None
    try:
        run = run_info(root, safe_name(manifest.run_id), [manifest])
    except NotFound:
        run = None
    return manifest, run


def release_detail(data_root: Root, manifest: Manifest) -> ReleaseDetail:
    root = open_root(data_root)
    return _detail(root.url, manifest.release_id, manifest.created_at.isoformat())


@lru_cache(maxsize=32)
def _detail(url: str, release_id: str, created_at: str) -> ReleaseDetail:
    from coworkenv.data.catalog import SQL_DIR, close, connect, run_query

    con = connect(url, release_id)
    try:

        def rows(sql: str) -> list[dict[str, Any]]:
            return run_query(con, sql).to_pylist()

        def query_file(name: str) -> list[dict[str, Any]]:
            return rows((SQL_DIR / "queries" / name).read_text(encoding="utf-8"))

        overview = rows("select * from release_overview")
        statuses = rows(
            "select count(*) filter (where not is_valid) as n_rejected, "
            "count(*) filter (where not is_valid and not is_repair) as n_originals_rejected from task_status"
        )[0]
        examples = {
            r["code"]: r
            for r in rows(
                "select code, arg_min(task_id, task_id) as example_task, arg_min(message, task_id) as example "
                "from stg_validations where is_failure and is_mandatory and not is_valid group by code"
            )
        }
        rejections = [
            RejectionRow(**{**r, **examples.get(r["code"], {})}) for r in query_file("top_rejection_reasons.sql")
        ]
        repaired = rows(
            "select count(distinct parent_id) as repaired, "
            "count(distinct parent_id) filter (where is_valid_after) as rescued from stg_repairs"
        )[0]
        grid: dict[str, dict[str, Any]] = {}
        for cell in rows("select capability, benchmark_group, difficulty, n_valid from coverage_difficulty_capability"):
            row = grid.setdefault(
                cell["capability"], {"benchmark_group": cell["benchmark_group"], "counts": [0] * len(DIFFICULTIES)}
            )
            row["counts"][cell["difficulty"] - 1] = cell["n_valid"]
        capabilities = [CapabilityRow(capability=name, total=sum(row["counts"]), **row) for name, row in grid.items()]
        return ReleaseDetail(
            overview=Overview(**overview[0]) if overview else Overview(),
            families=[FamilyRow(**r) for r in rows("select * from valid_share_by_family order by family")],
            capabilities=[c for c in capabilities if c.total] or capabilities,
            difficulties={
                r["difficulty"]: r["n"]
                for r in rows("select difficulty, count(*) as n from stg_tasks group by difficulty")
            },
            n_rejected=statuses["n_rejected"],
            n_originals_rejected=statuses["n_originals_rejected"],
            rejections=rejections,
            repairs=[RepairRow(**r) for r in query_file("repair_effectiveness.sql")],
            repaired_tasks=repaired["repaired"],
            rescued_tasks=repaired["rescued"],
            evals=[EvalRate(**r) for r in rows("select * from eval_pass_rates_by_group")],
            task_ids=[
                r["task_id"] for r in rows(f"select task_id from stg_tasks order by task_id limit {MAX_TASK_IDS}")
            ],
        )
    finally:
        close(con)


def _messages(text: str | None) -> list[Message]:
    out = []
    for m in json.loads(text) if text else []:
        calls = [
            (c.get("function", {}).get("name", ""), c.get("function", {}).get("arguments", ""))
            for c in m.get("tool_calls") or []
        ]
        out.append(Message(role=m.get("role", ""), content=m.get("content") or "", calls=calls))
    return out


def sample_task(data_root: Root, manifest: Manifest, task_id: str) -> SampleTask:
    """A published task of the release and its trajectory (the oracle's, where the release has one)."""
    root = open_root(data_root)
    wanted = [("task_id", "=", task_id)]
    tasks = read_table(root, manifest.release_id, "tasks", columns=["task_id", "spec_json"], filters=wanted).to_pylist()
    if not tasks:
        raise NotFound(f"release {manifest.release_id} has no task {task_id!r}")
    spec = json.loads(tasks[0]["spec_json"])
    columns = ["agent", "trial", "messages_json", "score", "passed"]
    runs = read_table(root, manifest.release_id, "trajectories", columns=columns, filters=wanted).to_pylist()
    runs.sort(key=lambda r: (r["agent"] != "oracle", r["agent"], r["trial"]))
    trajectory = runs[0] if runs else {}
    return SampleTask(
        task_id=spec["id"],
        family=spec["family"],
        difficulty=spec["difficulty"],
        capabilities=spec["capabilities"],
        instruction=spec["instruction"],
        tools=spec["tools"],
        checks=spec.get("checks", []),
        prohibited=spec.get("prohibited", []),
        spec_json=json.dumps(spec, indent=2, ensure_ascii=False),
        agent=trajectory.get("agent"),
        score=trajectory.get("score"),
        passed=trajectory.get("passed"),
        messages=_messages(trajectory.get("messages_json")),
    )
