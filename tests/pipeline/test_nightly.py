"""The nightly loop (`coworkenv.pipeline.nightly`) end to end on a small budget: the registry starts from the tiny
model, one turn synthesizes, samples, trains, evaluates and decides; every stage is recorded, a stopped run resumes
without redoing finished stages, and other settings under the same run id are refused. Real episodes, real TRL
steps, real Parquet releases and Great Expectations gates."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.eval.suite import build_bench
from coworkenv.pipeline import nightly as loop
from coworkenv.pipeline.config import NightlyConfig, nightly_config
from coworkenv.pipeline.nightly.profile_stages import _registered_base
from coworkenv.pipeline.nightly.run_state import finished
from coworkenv.pipeline.rundir import RunDir
from coworkenv.train.checkpoint import bf16_pays
from tests.support.gguf_files import needs_smollm2

pytestmark = pytest.mark.slow


def settings(suite: str, tiny: Path, **values) -> NightlyConfig:
    base = {
        "suite": suite,
        "base_model": str(tiny),
        "budget": 10,
        "trials": 1,
        "eval_trials": 1,
        "sft_steps": 4,
        "max_new_tokens": 24,
        "runtime": "none",
        "workers": 1,
        "seed": 2,
    }
    return NightlyConfig(**{**base, **values})


@pytest.fixture(scope="module")
def finished_loop(tmp_path_factory, tiny_model_dir) -> tuple[Path, NightlyConfig, dict]:
    root = tmp_path_factory.mktemp("data")
    bench = build_bench(6, seed=5, data_root=root, runtime="none", workers=1)
    config = settings(bench.release_id, tiny_model_dir)
    seen: list[str] = []
    decision = loop.nightly(config, "night-1", root, on_stage=lambda stage, _: seen.append(stage))
    assert seen == list(loop.STAGES)
    return root, config, decision


def test_one_turn_registers_evaluates_and_decides(finished_loop):
    from coworkenv.models import get_model, list_models

    root, config, decision = finished_loop
    run = RunDir.open("night-1", root)
    state = loop.read_state(run)
    assert list(state) == list(loop.STAGES)
    profile, tasks, trained = state["profile"], state["gate_tasks"], state["train"]
    assert profile["model"] == "coworkenv-agent:v1" and profile["suite"] == config.suite and profile["weakest"]
    assert tasks["tasks"] > 0 and tasks["sft"] > 0  # the oracle's conversations of the valid tasks
    assert state["rollouts"]["trials"] == tasks["tasks"] * config.trials
    assert trained["jobs"] == ["sft"] and trained["candidate"] == "coworkenv-agent:v2"
    candidate = get_model("coworkenv-agent:v2", root)
    assert (
        candidate.parent == "coworkenv-agent:v1"
        and candidate.training_release == tasks["release_id"]
        and candidate.job == "sft"
    )
    assert [e.release_id for e in candidate.evals] == [state["gate_eval"]["release_id"]]
    recorded = json.loads(loop.nightly_file(run, "decision.json").read_text())
    assert (
        recorded["promoted"] == decision["promoted"] and recorded["reason"] == decision["reason"] and decision["reason"]
    )
    current = [m.ref for m in list_models(root) if m.status == "current"]
    assert current == (["coworkenv-agent:v2"] if decision["promoted"] else ["coworkenv-agent:v1"])
    assert state["new_profile"]["model"] == current[0]
    assert (loop.nightly_file(run, "report", "report.html")).exists() and (
        loop.nightly_file(run, "next_profile.json")
    ).exists()
    contamination = json.loads(RunDir.open("night-1.evaluate", root).file("eval", "contamination.json").read_text())
    assert tasks["release_id"] in contamination["training_releases"]


def test_a_finished_run_is_not_redone(finished_loop, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="coworkenv")
    root, config, _ = finished_loop

    def refuse(*args, **kwargs):
        raise AssertionError("a finished stage ran again")

    monkeypatch.setattr("coworkenv.train.sft.train_sft", refuse)
    monkeypatch.setattr("coworkenv.pipeline.synthesis.plan.plan_run", refuse)
    results = []
    loop.nightly(config, "night-1", root, on_stage=lambda stage, result: results.append(result))
    assert len(results) == len(loop.STAGES) and all(r.get("resumed") for r in results)
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("coworkenv.pipeline.nightly")]
    assert [line.split(":")[0] for line in logged] == [f"nightly {stage}" for stage in loop.STAGES]
    assert all("finished by an earlier attempt, not run again: " in line for line in logged)
    assert f"release_id {finished(RunDir.open('night-1', root), 'gate_tasks')['release_id']}, tasks " in logged[2]


def test_other_settings_under_the_same_run_id_are_refused(finished_loop):
    root, config, _ = finished_loop
    with pytest.raises(CoworkEnvError, match="already started with other settings"):
        loop.nightly(config.model_copy(update={"budget": 11}), "night-1", root)


def test_a_run_stopped_in_training_resumes_there(finished_loop, tmp_path, monkeypatch):
    """Training dies; the rerun trains and goes on, without planning, synthesizing or sampling again."""
    import coworkenv.train.sft as sft

    root, config, _ = finished_loop
    copy = tmp_path / "data"
    shutil.copytree(root, copy)
    real = sft.train_sft
    monkeypatch.setattr(sft, "train_sft", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        loop.nightly(config, "night-2", copy)
    state = loop.read_state(RunDir.open("night-2", copy))
    assert list(state) == ["profile", "synthesize", "gate_tasks", "rollouts", "gate_rollouts"]
    assert state["profile"]["model"] == "coworkenv-agent:v1" or state["profile"]["model"] == "coworkenv-agent:v2"
    monkeypatch.setattr(sft, "train_sft", real)
    monkeypatch.setattr("coworkenv.pipeline.synthesis.plan.plan_run", lambda *a, **k: pytest.fail("planned again"))
    stages: list[tuple[str, bool]] = []
    loop.nightly(
        config, "night-2", copy, on_stage=lambda stage, result: stages.append((stage, bool(result.get("resumed"))))
    )
    assert [s for s, resumed in stages if resumed] == [
        "profile",
        "synthesize",
        "gate_tasks",
        "rollouts",
        "gate_rollouts",
    ]
    assert list(loop.read_state(RunDir.open("night-2", copy))) == list(loop.STAGES)


def test_a_run_that_failed_before_any_stage_finished_starts_over_with_corrected_settings(tmp_path, tiny_model_dir):
    root = tmp_path / "data"
    with pytest.raises(CoworkEnvError, match="no complete release 'nope'"):
        loop.nightly(settings("nope", tiny_model_dir), "n0", root)
    assert not root.exists()  # a turn that did no work leaves no run (and no data root) behind
    # a run folder that holds only its recorded settings (made by another process, say) starts over with others too
    run = RunDir.open("n0", root)
    loop.start(run, settings("nope", tiny_model_dir))
    with pytest.raises(
        CoworkEnvError, match="no complete release 'r-typo'"
    ):  # not "already started with other settings"
        loop.nightly(settings("r-typo", tiny_model_dir), "n0", root)
    assert loop.read_config(run).suite == "r-typo" and loop.read_state(run) == {}  # its folder was there before: kept


def test_a_file_suite_is_refused(tmp_path, tiny_model_dir):
    from tests.support.suites import example_tasks, write_suite

    suite = write_suite(tmp_path / "suite.jsonl", example_tasks())
    with pytest.raises(
        CoworkEnvError, match=r"Held-out suite \(suite\): .*published suite"
    ):  # by the settings, before a run exists
        nightly_config({"suite": str(suite), "base_model": str(tiny_model_dir)})


def test_the_training_pods_command_trains_a_stopped_run_and_hands_its_result_on(finished_loop, tmp_path, monkeypatch):
    """What the KubernetesPodOperator launches, run here: the manifest's command and environment (its data root where
    the shared volume would be mounted) train a run stopped before training; the next stage goes on from its files."""
    import os
    import subprocess
    import sys

    import coworkenv.train.sft as sft
    from coworkenv.pipeline.kubernetes import TrainPodSettings, train_pod

    root, config, _ = finished_loop
    copy = tmp_path / "data"
    shutil.copytree(root, copy)
    monkeypatch.setattr(
        sft, "train_sft", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("the pod trains, not this process"))
    )
    with pytest.raises(RuntimeError):
        loop.nightly(config, "night-3", copy)
    monkeypatch.undo()
    (container,) = train_pod("night-3", TrainPodSettings(data_mount=str(copy)))["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]} | {
        "COWORKENV_RESULT_FILE": str(tmp_path / "xcom" / "return.json")
    }
    command = [str(Path(sys.executable).parent / container["command"][0]), *container["command"][1:]]
    done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    state = loop.read_state(RunDir.open("night-3", copy))
    assert list(state)[-1] == "train" and state["train"]["jobs"] == ["sft"]
    assert json.loads((tmp_path / "xcom" / "return.json").read_text())["candidate"] == state["train"]["candidate"]
    assert f"nightly night-3 train: trained sft: candidate {state['train']['candidate']}" in done.stdout
    stages: list[tuple[str, bool]] = []
    loop.nightly(
        config, "night-3", copy, on_stage=lambda stage, result: stages.append((stage, bool(result.get("resumed"))))
    )
    assert [s for s, resumed in stages if not resumed] == ["evaluate", "gate_eval", "promote", "new_profile"]


@pytest.mark.xdist_group("smollm2")
@needs_smollm2
def test_a_turn_on_smollm2_trains_with_its_recipe_and_skips_rollouts(tmp_path, smollm2_model):
    """`--base smollm2` (the real 135M model): the SFT job gets SmolLM2's recipe (packed, bf16, whole conversations,
    its learning rate), the episodes its turn and token limits, and `trials 0` skips rejection sampling."""
    from coworkenv.train.bases import BASES
    from coworkenv.train.checkpoint import read_training

    root = tmp_path / "data"
    bench = build_bench(4, seed=5, data_root=root, runtime="none", workers=1)
    config = NightlyConfig(
        suite=bench.release_id,
        base="smollm2",
        base_model=str(smollm2_model.path),
        budget=4,
        trials=0,
        eval_trials=1,
        eval_limit=2,
        sft_steps=2,
        max_new_tokens=12,
        max_turns=2,
        runtime="none",
        workers=1,
        seed=1,
    )
    loop.nightly(config, "small", root)
    run = RunDir.open("small", root)
    state = loop.read_state(run)
    assert state["rollouts"]["run_id"] is None and state["gate_rollouts"]["own_sft_rows"] == 0
    sft = read_training(loop.nightly_file(run, "checkpoints", "sft"))["config"]
    recipe = BASES.get("smollm2").recipe
    assert (sft["learning_rate"], sft["packing"], sft["bf16"], sft["long_conversations"]) == (
        recipe.learning_rate,
        True,
        bf16_pays(),
        "drop",
    )
    evaluation = json.loads((root / "runs" / "small.evaluate" / "eval" / "config.json").read_text())
    assert (evaluation["max_turns"], evaluation["max_new_tokens"]) == (2, 12)
    assert (
        state["promote"]["promoted"] is False
    )  # two paired tasks can never show a significant gain: the base stays current
    with pytest.raises(ValueError, match="trials must be at least 1"):
        NightlyConfig(suite=bench.release_id, method="dpo", trials=0)


def test_a_run_resumed_before_its_first_promotion_registers_the_base_once(tmp_path, tiny_model_dir):
    """A crash between registering the base and promoting it (the baseline evaluation failed half-way) must not
    register it again on the rerun: the evaluation's trials belong to the first version's folder."""
    from coworkenv.models import list_models

    run = RunDir.open("night-x", tmp_path)
    config = settings("bench", tiny_model_dir)
    first = _registered_base(run, config)
    again = _registered_base(run, config)
    assert first.ref == again.ref == "coworkenv-agent:v1" and [m.ref for m in list_models(tmp_path)] == [
        "coworkenv-agent:v1"
    ]
