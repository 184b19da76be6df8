"""The nightly loop (docs/design/training.md, "Nightly loop"): one turn of synthesize → train → evaluate → promote,
stage by stage over the run directory, each stage a plain function that records its result in `nightly/state.json`.
A stage already recorded there is not run again, so a run that died mid-way resumes where it stopped (the
synthesis and evaluation runs it starts resume the same way, under sub-run ids `<run id>.<stage>`).

```
nightly/config.json      the run's NightlyConfig
nightly/state.json       each finished stage's result, in order
nightly/profile.json     the capability profile the plan was made from (the current model's, on the held-out suite)
nightly/base/            the tiny model, when the registry starts from it
nightly/own_sft.parquet  the current model's own successes on the training tasks (rejection sampling)
nightly/checkpoints/     sft/, and grpo/, gdpo/ or dpo/ after it
nightly/decision.json    the promotion decision
nightly/report/          the candidate against the current model: report.html, comparison.json, plots
nightly/next_profile.json  the profile the next loop plans from (the model that is current after the decision)
```
"""

from __future__ import annotations

import os
from typing import Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import outermost_missing, remove_created
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import NightlyConfig
from coworkenv.pipeline.job import Job, Stage, StageInputs, gate_stage
from coworkenv.pipeline.nightly.evaluate import evaluate_stage, gate_eval_stage, gate_rollouts_stage, rollouts_stage
from coworkenv.pipeline.nightly.profile_stages import new_profile_stage, profile_stage
from coworkenv.pipeline.nightly.promote import promote_stage
from coworkenv.pipeline.nightly.run_state import nightly_file, read_config, read_state, start
from coworkenv.pipeline.nightly.synthesize import gate_tasks_stage, synthesize_stage
from coworkenv.pipeline.nightly.training import train_stage
from coworkenv.pipeline.rundir import RunDir, StageHook
from coworkenv.progress import Bars

__all__ = ["NIGHTLY", "STAGES", "nightly", "nightly_file", "read_config", "read_state", "run_stage", "start"]

NIGHTLY = Job(
    "nightly",
    (
        Stage(
            "profile",
            lambda run, i: profile_stage(run, i.config, i.llm, i.progress),
            (),
            doc="Check the settings; the current model and its capability profile on the held-out suite.",
            endpoint=True,
            gpu=True,
            summary=lambda run, r: (
                f"current model {r['model']} on {r['suite']}: weakest capabilities {', '.join(r['weakest'])}"
            ),
        ),
        Stage(
            "synthesize",
            lambda run, i: synthesize_stage(run, i.config, i.llm),
            (),
            doc="Training tasks planned from the profile: plan → generate → validate → repair → rollout → build.",
            endpoint=True,
            summary=lambda run, r: f"{r['plan']} plan: {r['rows'].get('tasks', 0)} valid training task(s) built",
        ),
        gate_stage(
            "gate_tasks",
            lambda run, i: gate_tasks_stage(run),
            (),
            doc="The `validated` and `rollouts` gates, then the training release.",
            outlets=("coworkenv-training-release",),
            summary=lambda run, r: (
                f"gates validated + rollouts passed; release {r['release_id']} ({r['sft']} oracle conversations)"
            ),
        ),
        Stage(
            "rollouts",
            lambda run, i: rollouts_stage(run, i.config, i.llm, i.progress),
            (),
            doc="The current model plays every training task (rejection sampling's proposals).",
            endpoint=True,
            gpu=True,
            summary=lambda run, r: (
                r.get("skipped") or f"rejection sampling: {r['trials']} trial(s), {r['passed']} passed"
            ),
        ),
        gate_stage(
            "gate_rollouts",
            lambda run, i: gate_rollouts_stage(run),
            (),
            doc="The `evaluated` gate on the rollouts; their successes become training data.",
            outlets=("coworkenv-rollouts",),
            summary=lambda run, r: (
                f"gate evaluated passed; {r['own_sft_rows']} own success(es) join the training data"
                if r["release_id"]
                else "no rollouts to gate"
            ),
        ),
        Stage(
            "train",
            lambda run, i: train_stage(run, i.config, i.progress),
            (),
            doc="SFT (then GRPO, GDPO or DPO); the checkpoint is registered as a candidate.",
            gpu=True,
            outlets=("coworkenv-candidate-model",),
            summary=lambda run, r: (
                f"trained {' → '.join(r['jobs'])}: candidate {r['candidate']} "
                + "; ".join(
                    f"{x['job']} loss {x['first']:.3f} → {x['last']:.3f}" for x in r["losses"] if x["first"] is not None
                )
            ),
        ),
        Stage(
            "evaluate",
            lambda run, i: evaluate_stage(run, i.config, i.llm, i.progress),
            (),
            doc="The candidate on the held-out suite.",
            endpoint=True,
            gpu=True,
            summary=lambda run, r: f"held-out evaluation: {r['trials']} trial(s), {r['passed']} passed",
        ),
        gate_stage(
            "gate_eval",
            lambda run, i: gate_eval_stage(run),
            (),
            doc="The `evaluated` gate on the candidate's evaluation, then its release.",
            outlets=("coworkenv-eval-report",),
            summary=lambda run, r: f"gate evaluated passed; release {r['release_id']}",
        ),
        Stage(
            "promote",
            lambda run, i: promote_stage(run, i.config),
            (),
            doc="Promote the candidate, or keep the current model; the decision and its reason are recorded.",
            outlets=("coworkenv-current-model",),
            summary=lambda run, r: ("promoted: " if r["promoted"] else "kept the current model: ") + r["reason"],
        ),
        Stage(
            "new_profile",
            lambda run, i: new_profile_stage(run, i.config),
            (),
            doc="The profile of the model that is current now: what tomorrow's plan reads.",
            outlets=("coworkenv-capability-profile",),
            summary=lambda run, r: f"next loop plans from {r['model']}'s profile: weakest {', '.join(r['weakest'])}",
        ),
    ),
    config=NightlyConfig,
    dag_id="coworkenv_nightly",
    recorded=read_config,
    begin=start,
)
"""One turn of the loop, in order; each stage records its result in `nightly/state.json` (and runs once), so its
outputs are the state's, not paths of their own. The DAG runs one task per stage."""
STAGES = NIGHTLY.names()


def nightly(
    config: NightlyConfig,
    run_id: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    progress: Bars | None = None,
    on_stage: StageHook | None = None,
) -> dict[str, Any]:
    """Every stage in order; the same run id resumes a run that stopped. Returns the promotion stage's result.
    `progress(what, total)`: a progress display for each long piece of work (the trials of an evaluation or of the
    rollouts, each training job); none: progress lines logged through `coworkenv.progress`."""
    run = RunDir.open(run_id, data_root)
    llm = llm if llm is not None else config.llm()
    created = outermost_missing(run.path)
    start(run, config)
    try:
        results = NIGHTLY.results(run, StageInputs(config=config, llm=llm, progress=progress), on_stage=on_stage)
    except BaseException:
        recorded = nightly_file(run, "config.json")
        if created is not None and [p for p in run.path.rglob("*") if p.is_file()] == [recorded]:
            recorded.unlink()  # failed before any work (a mistyped suite): leave no run behind
            remove_created(recorded.parent, created)
        raise
    return results["promote"]


def run_stage(
    run_id: str,
    stage: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    progress: Bars | None = None,
) -> dict[str, Any]:
    """One stage of a run that has started (its recorded config), e.g. training in a pod of its own; the stages
    before it must have finished, and a finished one is not run again. `progress`: as in `nightly`."""
    if stage not in STAGES:
        raise CoworkEnvError(f"unknown nightly stage {stage!r}: one of {', '.join(STAGES)}")
    run = RunDir.open(run_id, data_root)
    config = read_config(run)
    inputs = StageInputs(config=config, llm=llm if llm is not None else config.llm(), progress=progress)
    return NIGHTLY.run(run, inputs, first=stage, last=stage)
