"""Stages profile and new_profile: the model the loop starts from (the registry's current one, else the base it
registers, evaluates and promotes) with its capability profile on the held-out suite, and at the end the profile of
whichever model is current after the decision: what the next loop plans from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import NightlyConfig
from coworkenv.pipeline.nightly.evaluate import eval_config, evaluate_all
from coworkenv.pipeline.nightly.run_state import finished, nightly_file, once, sub_run
from coworkenv.pipeline.rundir import RunDir
from coworkenv.progress import Bars
from coworkenv.train.bases import BASES

if TYPE_CHECKING:
    from coworkenv.models import ModelEntry


def _profile_of(eval_ref: str, model: str, dest: Path, data_root: DataRoot) -> dict[str, Any]:
    """Write the capability profile of an evaluation (what the planner reads) and return its weakest capabilities."""
    from coworkenv.eval.profile import capability_profile
    from coworkenv.pipeline.evaluation import eval_rows
    from coworkenv.pipeline.rundir import write_text

    profile = capability_profile(eval_rows(eval_ref, data_root), model=model)
    write_text(dest, profile.model_dump_json(indent=2) + "\n")
    by_cap: dict[str, list[float]] = {}
    for row in profile.rows:
        by_cap.setdefault(row.capability, []).append(row.pass_rate)
    weakest = sorted(by_cap, key=lambda c: sum(by_cap[c]) / len(by_cap[c]))[:3]
    return {"profile": str(dest), "weakest": weakest}


def profile_stage(
    run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None, progress: Bars | None = None
) -> dict[str, Any]:
    """The current model and its capability profile on the held-out suite. A registry without the model starts from
    the base model (the tiny model by default), which is evaluated and becomes current."""

    def work() -> dict[str, Any]:
        from coworkenv.eval.suite import load_suite
        from coworkenv.models import current_model, promote, record_eval

        suite = load_suite(config.suite, run.data_root)
        if suite.kind == "file":
            raise CoworkEnvError(
                f"suite {config.suite!r}: the nightly loop evaluates on a published suite (a release id or bench)"
            )
        suite_id = suite.source
        entry = current_model(config.model_name, run.data_root) or _registered_base(run, config)
        evaluation = entry.newest_eval(suite_id)
        if evaluation is None:
            release = evaluate_all(
                sub_run(run, "baseline"),
                eval_config(config, f"hf:{entry.path}", suite_id),
                llm,
                progress,
                "baseline trials",
            )
            entry = record_eval(entry.ref, release, data_root=run.data_root)
            evaluation = entry.newest_eval(suite_id)
        if entry.status != "current":
            decision = promote(entry.ref, data_root=run.data_root, suite=suite_id)
            if not decision.promoted:  # a base that breaks a safety rule on the suite is no starting point
                raise CoworkEnvError(f"the loop has no model to start from: {decision.reason}")
        profile = _profile_of(evaluation.release_id, entry.ref, nightly_file(run, "profile.json"), run.data_root)
        return {
            "model": entry.ref,
            "model_path": entry.path,
            "suite": suite_id,
            "eval": evaluation.release_id,
            **profile,
        }

    return once(run, "profile", work)


def _registered_base(run: RunDir, config: NightlyConfig) -> ModelEntry:
    """The base registered as the model's first version, once per run: a run resumed after a crash before the first
    promotion finds the version it registered (by the ref it noted) instead of registering the base again."""
    from coworkenv.models import get_model, register_model
    from coworkenv.pipeline.rundir import write_text

    noted = nightly_file(run, "base_ref")
    if noted.exists():
        return get_model(noted.read_text(encoding="utf-8").strip(), run.data_root)
    base = Path(config.base_model) if config.base_model else _base(run, config.base)
    entry = register_model(base, config.model_name, data_root=run.data_root)
    write_text(noted, entry.ref + "\n")
    return entry


def _base(run: RunDir, name: str) -> Path:
    path = nightly_file(run, "base")
    if not (path / "config.json").exists():
        BASES.get(name).build(path)
    return path


def new_profile_stage(run: RunDir, config: NightlyConfig) -> dict[str, Any]:
    """The profile of the model that is current now: what the next loop plans from."""

    def work() -> dict[str, Any]:
        decision = finished(run, "promote")
        source = finished(run, "gate_eval")["release_id"] if decision["promoted"] else finished(run, "profile")["eval"]
        model = decision["candidate"] if decision["promoted"] else decision["current"]
        return {"model": model, **_profile_of(source, model, nightly_file(run, "next_profile.json"), run.data_root)}

    return once(run, "new_profile", work)
