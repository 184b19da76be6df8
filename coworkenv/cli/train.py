"""`coworkenv train`: training jobs (docs/design/training.md, "Training"), one command per job, its options generated
from the job's config model (and `--config job.yaml`)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.cli.pipeline import DataRootOpt, progress_bar
from coworkenv.train.dpo import DPOJobConfig
from coworkenv.train.fit import FitReport
from coworkenv.train.rl import RLJobConfig
from coworkenv.train.sft import SFTJobConfig

train_app = typer.Typer(
    help="Train models on released tasks: SFT, GRPO / GDPO, DPO on graded pairs; on hardware profiles.",
    no_args_is_help=True,
)
app.add_typer(train_app, name="train")


ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Hardware profile (see `coworkenv train profiles`): run the job under `accelerate launch` with it "
        "(default: this process, on a GPU when there is one).",
    ),
]


@train_app.command("profiles")
def profiles_command(
    name: Annotated[
        str | None,
        typer.Argument(help="A profile's name: print only its file (for `accelerate launch --config_file`)."),
    ] = None,
) -> None:
    """The hardware profiles: accelerate configs shipped with CoworkEnv, for `accelerate launch --config_file FILE -m
    coworkenv train ...` or a job's `--profile NAME`."""
    from coworkenv.train.accelerate.profiles import PROFILES, profile_file

    if name is not None:
        typer.echo(str(profile_file(name)))
        return
    width = max(map(len, PROFILES))
    for profile in (PROFILES.get(n) for n in PROFILES):
        typer.echo(f"{profile.name:<{width}}  {profile.description}")
        typer.echo(f"{'':<{width}}  {profile.path}")


@train_app.command("sft")
@with_config_options(SFTJobConfig)
def sft_command(settings: dict[str, Any], data_root: DataRootOpt = None, profile: ProfileOpt = None) -> None:
    """Supervised fine-tuning (TRL SFTTrainer) on a release's `sft` rows, loss on assistant tokens only; the checkpoint
    gets training.json (config, release, metrics) and curves.png."""
    from coworkenv.train.accelerate.profiles import is_main_process, launch, profile_file
    from coworkenv.train.sft import check_sft_inputs, train_sft

    config = SFTJobConfig.model_validate(settings)  # the options were checked against it already
    if profile is not None:  # the same command again, under `accelerate launch` with the profile's file
        profile_file(profile)  # an unknown name first, before the inputs
        check_sft_inputs(config, data_root)
        launch(profile, ["train", "sft", *(["--data-root", str(data_root)] if data_root else [])], config)
        return
    main = (
        is_main_process()
    )  # under `accelerate launch`: one progress line and one report, from the process that writes the checkpoint
    with progress_bar("training", config.max_steps, unit="step") if main else nullcontext() as step:
        record = train_sft(config, data_root, progress=step)
    if not main:
        return
    typer.echo(
        f"trained {record['steps']} step(s) on {record['rows']} conversation(s) of release {record['release_id']} "
        f"in {record['seconds']:.0f} s ({record['tokens_per_s']:,.0f} tokens/s): "
        f"loss {record['first_loss']:.3f} → {record['last_loss']:.3f}"
    )
    typer.echo(f"  {FitReport.model_validate(record['fit']).line()}")
    typer.echo(
        f"checkpoint: {config.out} (training.json, curves.png); evaluate it with: coworkenv eval --agent hf:{config.out}"
    )


@train_app.command("rl")
@with_config_options(RLJobConfig)
def rl_command(settings: dict[str, Any], data_root: DataRootOpt = None) -> None:
    """GRPO / GDPO (TRL GRPOTrainer) on a release's `rl` rows: the model plays each task in its workspace and is
    rewarded by the task's own checks (completion, safety, robustness) and by the form of its turns; the checkpoint gets
    training.json (config, release, reward curves) and curves.png."""
    from coworkenv.train.rl import train_rl

    config = RLJobConfig.model_validate(settings)  # the options were checked against it already
    with progress_bar("training", config.max_steps, unit="step") as step:
        record = train_rl(config, data_root, progress=step)
    typer.echo(
        f"{config.method} trained {record['steps']} step(s) on {record['rows']} task(s) of release {record['release_id']} "
        f"in {record['seconds']:.0f} s: mean reward {record['first_reward']:.3f} → {record['last_reward']:.3f}"
    )
    typer.echo(
        f"checkpoint: {config.out} (training.json, curves.png); evaluate it with: coworkenv eval --agent hf:{config.out}"
    )


@train_app.command("dpo")
@with_config_options(DPOJobConfig)
def dpo_command(settings: dict[str, Any], data_root: DataRootOpt = None) -> None:
    """Direct preference optimization (TRL DPOTrainer) on an evaluation's preference pairs: per training task, a passing
    and a failing continuation of the same prompt, graded by the environment; the checkpoint gets training.json (config,
    evaluation, pairs, metrics) and curves.png."""
    from coworkenv.pipeline.training_data import eval_pairs
    from coworkenv.train.checkpoint import check_model_dir, check_out
    from coworkenv.train.dpo import train_dpo

    config = DPOJobConfig.model_validate(settings)  # the options were checked against it already
    check_model_dir(Path(config.model))  # a bad folder is refused before the evaluation is read
    check_out(Path(config.out))
    pairs = eval_pairs(config.release, data_root, min_score_gap=config.min_score_gap)
    with progress_bar("training", config.max_steps, unit="step") as step:
        record = train_dpo(config, data_root, pairs=pairs, progress=step)
    typer.echo(
        f"trained {record['steps']} step(s) on {record['pairs']} pair(s) of evaluation {record['release_id']} "
        f"(mean score gap {record['mean_gap']:.2f}) in {record['seconds']:.0f} s: loss {record['first_loss']:.3f} → "
        f"{record['last_loss']:.3f}, reward accuracy {record['first_reward_accuracy']:.2f} → {record['last_reward_accuracy']:.2f}, "
        f"margin {record['first_reward_margin']:.3f} → {record['last_reward_margin']:.3f}"
    )
    typer.echo(
        f"checkpoint: {config.out} (training.json, curves.png); evaluate it with: coworkenv eval --agent hf:{config.out}"
    )
