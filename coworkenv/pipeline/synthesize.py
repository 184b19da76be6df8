"""Stages of a synthesis run: plan → generate (shards) → validate (shards) → repair → build → gate → publish.

Each stage is a plain function of a `SynthesisConfig`, a run id and small JSON-able inputs; bulky data moves
through files under the run's work directory (`<data_root>/runs/<run_id>/`), so the same functions serve the
`coworkenv_synthesize` DAG (one Airflow task per stage, shards mapped), the CLI and the tests. Every stage
overwrites its own outputs, so a retried or re-run stage with the same run id gives the same result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.sandbox.choices import IN_PROCESS, RuntimeChoice


class SynthesisConfig(BaseModel):
    """What a synthesis run makes; the DAG's trigger form has one field per attribute."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(100, ge=1, le=1_000_000, description="Tasks to generate.")
    seed: int = Field(0, ge=0, description="Run seed: the same config yields the same tasks.")
    families: list[str] | None = Field(None, description="Only these families (default: all).")
    capabilities: list[str] | None = Field(None, description="Only these capabilities (default: all).")
    difficulty_min: int = Field(1, ge=1, le=5, description="Lowest difficulty.")
    difficulty_max: int = Field(5, ge=1, le=5, description="Highest difficulty.")
    generator: Literal["procedural", "llm", "mixed"] = Field("procedural", description="Where tasks come from.")
    llm_share: float = Field(0.25, ge=0, le=1, description="Share of LLM-written tasks when mixed.")
    repair_rounds: int = Field(3, ge=0, le=10, description="Repair rounds before a task is rejected.")
    workers: int = Field(2, ge=1, le=64, description="Sandboxed validation workers per shard.")
    runtime: RuntimeChoice = Field("auto", description="Sandbox runtime for validation.")
    shards: int = Field(2, ge=1, le=256, description="Generation/validation shards (mapped tasks).")
    profile: str | None = Field(None, description="Capability profile JSON to plan from (default: cold start).")
    data_root: str | None = Field(None, description="Data root (default: $COWORKENV_DATA_ROOT or ./data).")


def data_root_of(config: SynthesisConfig) -> str:
    from coworkenv.data.release import default_data_root

    return config.data_root or default_data_root()


def run_dir(config: SynthesisConfig, run_id: str) -> Path:
    """Work directory of a run. Local paths only: shards are staged on a filesystem the workers share."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)
    root = data_root_of(config)
    if "://" in root and not root.startswith("file://"):
        raise CoworkEnvError("the run work directory needs a local or shared filesystem data root")
    path = Path(root.removeprefix("file://")) / "runs" / safe
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_jsonl(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)


def _read_jsonl(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


# --- plan ---------------------------------------------------------------------------------------------------


def plan_shards(config: SynthesisConfig, run_id: str) -> list[dict[str, Any]]:
    """Plan the run (capability-guided when a profile is given) and split the plan rows into shards."""
    from coworkenv.spec.io import load_model
    from coworkenv.synth.generate import GenerateRequest, check_plan, plan_for
    from coworkenv.synth.planner import CapabilityProfile

    request = GenerateRequest(
        n=config.n, seed=config.seed, families=config.families, capabilities=config.capabilities,
        difficulty=(config.difficulty_min, config.difficulty_max), generator=config.generator, llm_share=config.llm_share,
    )  # fmt: skip
    profile = load_model(CapabilityProfile, config.profile) if config.profile else None
    plan = check_plan(plan_for(request, profile))
    (run_dir(config, run_id) / "plan.json").write_text(plan.model_dump_json(indent=2), encoding="utf-8")
    shards: list[list[dict[str, Any]]] = [[] for _ in range(min(config.shards, len(plan.rows)))]
    loads = [0] * len(shards)
    for row in sorted(plan.rows, key=lambda r: -r.count):  # greedy: largest rows first, onto the lightest shard
        i = loads.index(min(loads))
        shards[i].append(row.model_dump())
        loads[i] += row.count
    return [{"shard": i, "rows": rows, "tasks": loads[i]} for i, rows in enumerate(shards)]


# --- generate -----------------------------------------------------------------------------------------------


def generate_shard(config: SynthesisConfig, run_id: str, shard: dict[str, Any], llm: Any = None) -> dict[str, Any]:
    from coworkenv.synth.generate import GenerateRequest, generate
    from coworkenv.synth.planner import Plan, PlanRow

    rows = [PlanRow.model_validate(r) for r in shard["rows"]]
    request = GenerateRequest(n=max(1, shard["tasks"]), seed=config.seed, generator=config.generator, llm_share=config.llm_share)
    tasks, rejections = generate(request, Plan(n=shard["tasks"], seed=config.seed, rows=rows), llm=llm)
    out = run_dir(config, run_id) / "generated"
    _write_jsonl(out / f"shard-{shard['shard']:04d}.jsonl", [t.to_json() for t in tasks])
    _write_jsonl(out / f"shard-{shard['shard']:04d}.rejections.jsonl", [r.model_dump_json() for r in rejections])
    return {"shard": shard["shard"], "tasks": len(tasks), "rejections": len(rejections)}


# --- validate -----------------------------------------------------------------------------------------------


def validate_shard(config: SynthesisConfig, run_id: str, generated: dict[str, Any]) -> dict[str, Any]:
    """Run the battery on a shard's raw task lines, inside the sandbox runtime."""
    from coworkenv.validate.batch import validate_tasks

    base = run_dir(config, run_id)
    name = f"shard-{generated['shard']:04d}"
    lines = _read_jsonl(base / "generated" / f"{name}.jsonl")
    validations = validate_tasks(lines, workers=config.workers, runtime=config.runtime)
    valid = [line for line, v in zip(lines, validations, strict=True) if v.valid]
    invalid = [line for line, v in zip(lines, validations, strict=True) if not v.valid]
    out = base / "validated"
    _write_jsonl(out / f"{name}.valid.jsonl", valid)
    _write_jsonl(out / f"{name}.invalid.jsonl", invalid)
    _write_jsonl(out / f"{name}.validations.jsonl", [v.model_dump_json() for v in validations])
    return {"shard": generated["shard"], "tasks": len(lines), "valid": len(valid), "invalid": len(invalid)}


# --- repair -------------------------------------------------------------------------------------------------


def repair_invalid(config: SynthesisConfig, run_id: str, llm: Any = None) -> dict[str, Any]:
    """Repair every invalid task of the run (rule-based first, then the LLM if configured)."""
    from coworkenv.repair.loop import metrics, repair_many
    from coworkenv.repair.sandboxed import repair_in_sandbox
    from coworkenv.validate.verdict import TaskValidation

    base = run_dir(config, run_id)
    specs, validations = [], []
    for path in sorted((base / "validated").glob("*.invalid.jsonl")):
        by_id = {}
        for line in _read_jsonl(path.with_name(path.name.replace(".invalid.", ".validations."))):
            v = TaskValidation.model_validate_json(line)
            by_id[v.task_id] = v
        for line in _read_jsonl(path):
            spec = json.loads(line)
            specs.append(spec)
            validations.append(by_id[spec["id"]])
    items = list(zip(specs, validations, strict=True))
    if not config.repair_rounds or not items:
        outcomes = []
    elif config.runtime == IN_PROCESS:
        outcomes = repair_many(items, rounds=config.repair_rounds, llm=llm)
    else:
        outcomes = repair_in_sandbox(items, rounds=config.repair_rounds, workers=config.workers, runtime=config.runtime, llm=llm)
    repaired = [json.dumps(o.spec, ensure_ascii=False) for o in outcomes if o.repaired and o.spec]
    attempts = [
        json.dumps({"task_id": f"{o.task_id}-r{a.round}", "parent_id": o.task_id, **a.model_dump(mode="json")}, ensure_ascii=False)
        for o in outcomes
        for a in o.attempts
    ]
    _write_jsonl(base / "repaired" / "repaired.jsonl", repaired)
    _write_jsonl(base / "repaired" / "attempts.jsonl", attempts)
    summary = metrics(outcomes).model_dump(mode="json") if outcomes else {}
    (base / "repaired" / "metrics.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return {"invalid": len(specs), "repaired": len(repaired), "metrics": summary}


# --- build, gate, publish -----------------------------------------------------------------------------------


def _staged(config: SynthesisConfig, run_id: str) -> Path:
    return run_dir(config, run_id) / "tables"


def build_tables(config: SynthesisConfig, run_id: str) -> dict[str, int]:
    """Every release table from the run's valid and repaired tasks (oracle rollouts become the SFT data)."""
    import pyarrow.parquet as pq

    from coworkenv.data.build import release_tables, validations_table
    from coworkenv.data.schemas import REPAIRS
    from coworkenv.spec.task import TaskSpec
    from coworkenv.validate.battery import validate_spec
    from coworkenv.validate.verdict import TaskValidation

    base = run_dir(config, run_id)
    valid_specs, validations = [], []
    for path in sorted((base / "validated").glob("*.validations.jsonl")):
        validations += [TaskValidation.model_validate_json(line) for line in _read_jsonl(path)]
        valid_path = path.with_name(path.name.replace(".validations.", ".valid."))
        valid_specs += [TaskSpec.model_validate_json(line) for line in _read_jsonl(valid_path)]
    # A repaired spec is a new task (`<id>-r<round>`): validate the exact spec being published once more.
    for line in _read_jsonl(base / "repaired" / "repaired.jsonl"):
        spec = TaskSpec.model_validate_json(line)
        valid_specs.append(spec)
        validations.append(validate_spec(spec))
    columns = set(REPAIRS.names)
    attempts = [{k: v for k, v in json.loads(line).items() if k in columns} for line in _read_jsonl(base / "repaired" / "attempts.jsonl")]
    tables = release_tables(valid_specs, {v.task_id: v for v in validations}, repairs=attempts)
    tables["validations"] = validations_table(validations)  # every verdict, rejected and unparsable tasks too
    out = _staged(config, run_id)
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        pq.write_table(table, out / f"{name}.parquet")
    return {name: table.num_rows for name, table in tables.items()}


def load_staged(config: SynthesisConfig, run_id: str) -> dict[str, Any]:
    import pyarrow.parquet as pq

    from coworkenv.data.schemas import TABLES

    out = _staged(config, run_id)
    return {name: pq.read_table(out / f"{name}.parquet", schema=schema) for name, schema in TABLES.items()}


def gate_tables(config: SynthesisConfig, run_id: str) -> dict[str, Any]:
    """The Great Expectations gates at the validation and rollout boundaries; a failure raises `GateFailed`
    (with Data Docs under the run's `quality/` folder) and nothing gets published."""
    from coworkenv.quality.gates import run_gate

    tables = load_staged(config, run_id)
    report_dir = run_dir(config, run_id) / "quality"
    results = {stage: run_gate(stage, tables, report_dir=report_dir) for stage in ("validated", "rollouts")}
    return {stage: r.statistics for stage, r in results.items()}


def publish(config: SynthesisConfig, run_id: str) -> dict[str, Any]:
    """Publish the staged tables as the run's release (atomic; the same run id always gives the same release)."""
    from coworkenv.data.release import latest_release, publish_release

    root = data_root_of(config)
    parent = latest_release(root)
    manifest = publish_release(load_staged(config, run_id), data_root=root, run_id=run_id, parent=parent,
                               config=config.model_dump(mode="json"))  # fmt: skip
    return manifest.model_dump(mode="json")


def run_synthesis(config: SynthesisConfig, run_id: str, llm: Any = None) -> dict[str, Any]:
    """The whole run in one process, stage by stage, as the DAG runs it (used by the CLI and tests)."""
    validated = [validate_shard(config, run_id, generate_shard(config, run_id, s, llm)) for s in plan_shards(config, run_id)]
    repair = repair_invalid(config, run_id, llm)
    rows = build_tables(config, run_id)
    gate_tables(config, run_id)
    manifest = publish(config, run_id)
    return {"validated": validated, "repair": repair, "rows": rows, "manifest": manifest}
