"""The nightly loop's `train` stage: SFT from the current model, then GRPO, GDPO or DPO when asked; the candidate
registered in the model registry."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.pipeline.config import NightlyConfig
from coworkenv.pipeline.nightly.run_state import finished, nightly_file, once
from coworkenv.pipeline.rundir import RunDir
from coworkenv.progress import Bars, logged
from coworkenv.train.bases import BASES

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


def train_stage(run: RunDir, config: NightlyConfig, progress: Bars | None = None) -> dict[str, Any]:
    """SFT from the current model on the oracle's trajectories and its own successes, then GRPO, GDPO or DPO when
    asked; the final checkpoint is registered as a candidate. `progress`: one display per job (none: logged)."""
    bars = progress or logged()

    def work() -> dict[str, Any]:
        from coworkenv.models import register_model

        jobs = _train_jobs(run, config)
        losses = []
        for job, train, settings in jobs:

            def trained(
                job: str = job, train: Callable[..., dict[str, Any]] = train, settings: Any = settings
            ) -> dict[str, Any]:
                with bars(f"training {job}", settings.max_steps, unit="step") as step:
                    return train(settings, step)

            record = _read_or_train(Path(settings.out), trained)
            losses.append({"job": job, "first": record.get("first_loss"), "last": record.get("last_loss")})
        entry = register_model(
            Path(jobs[-1][2].out), config.model_name, data_root=run.data_root, parent=finished(run, "profile")["model"]
        )
        return {
            "candidate": entry.ref,
            "candidate_path": entry.path,
            "jobs": [job for job, _, _ in jobs],
            "losses": losses,
        }

    return once(run, "train", work)


def _read_or_train(out: Path, train: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A checkpoint written whole by an earlier attempt is kept (resume); otherwise the job runs."""
    from coworkenv.train.checkpoint import read_training

    return read_training(out) if (out / "training.json").exists() else train()


def _train_jobs(run: RunDir, config: NightlyConfig) -> list[tuple[str, Callable[..., dict[str, Any]], Any]]:
    from coworkenv.train.sft import SFTJobConfig, train_sft

    release = finished(run, "gate_tasks")["release_id"]
    rollouts = finished(run, "gate_rollouts")
    checkpoints = nightly_file(run, "checkpoints")
    recipe = BASES.get(config.base).recipe
    sft = SFTJobConfig(
        model=finished(run, "profile")["model_path"],
        release=release,
        out=str(checkpoints / "sft"),
        extra_sft=[rollouts["own_sft"]] if rollouts["own_sft"] else [],
        max_steps=config.sft_steps,
        learning_rate=config.sft_learning_rate or recipe.learning_rate,
        batch_size=config.batch_size or recipe.batch_size,
        max_length=recipe.max_length,
        long_conversations=recipe.long_conversations,
        lora_rank=recipe.lora_rank,
        packing=recipe.packing,
        bf16=recipe.bf16_here(),
        snapshot_steps=config.sft_snapshot_steps,
        seed=config.seed,
    )
    root = run.data_root
    jobs: list[tuple[str, Callable[..., dict[str, Any]], Any]] = [
        ("sft", lambda c, p: train_sft(c, root, progress=p), sft)
    ]
    if config.method in ("grpo", "gdpo"):
        from coworkenv.train.rl import RLJobConfig, train_rl

        rl = RLJobConfig(
            model=sft.out,
            release=release,
            out=str(checkpoints / config.method),
            method=config.method,
            max_steps=config.rl_steps,
            seed=config.seed,
        )
        jobs.append((config.method, lambda c, p: train_rl(c, root, progress=p), rl))
    elif (
        config.method == "dpo"
    ):  # pairs from the current model's rollouts: its failures against its own or the oracle's successes
        from coworkenv.pipeline.training_data import eval_pairs
        from coworkenv.train.dpo import DPOJobConfig, train_dpo

        dpo = DPOJobConfig(
            model=sft.out,
            release=rollouts["release_id"],
            out=str(checkpoints / "dpo"),
            max_steps=config.rl_steps,
            seed=config.seed,
        )
        pairs = lambda: eval_pairs(dpo.release, root, min_score_gap=dpo.min_score_gap)  # noqa: E731 — read only if the job runs
        jobs.append(("dpo", lambda c, p: train_dpo(c, root, pairs=pairs(), progress=p), dpo))
    return jobs
