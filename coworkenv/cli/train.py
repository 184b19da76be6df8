"""`coworkenv train`: training jobs (docs/architecture.md, "Training"), one command per job, its options generated
from the job's config model (and `--config job.yaml`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.cli.pipeline import DataRootOpt, progress_bar
from coworkenv.train.sft import SFTJobConfig

train_app = typer.Typer(help="Train models on released tasks (SFT), on the hardware profiles.", no_args_is_help=True)
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
    name: Annotated[str | None, typer.Argument(help="A profile's name: print only its file (for `accelerate launch --config_file`).")] = None,
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
    with progress_bar("training", config.max_steps) as step:
        record = train_sft(config, data_root, progress=step)
    if not is_main_process():  # under `accelerate launch`: one report, from the process that wrote the checkpoint
        return
    typer.echo(f"trained {record['steps']} step(s) on {record['rows']} conversation(s) of release {record['release_id']} "
               f"in {record['seconds']:.0f} s: loss {record['first_loss']:.3f} → {record['last_loss']:.3f}")  # fmt: skip
    typer.echo(f"checkpoint: {config.out} (training.json, curves.png); evaluate it with: coworkenv eval --agent hf:{config.out}")
