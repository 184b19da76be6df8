"""The hardware profiles: each a YAML file next to this module, valid for `accelerate launch --config_file` (accelerate
1.15's schema), and a name and one-line description here. Every training job runs unchanged under any of them: the
jobs build a `transformers` Trainer, which takes the processes, devices and precision from what the launcher set.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.registry import Registry

FOLDER = Path(__file__).resolve().parent


class HardwareProfile(BaseModel):
    """A named accelerate config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The profile's name; its file is <name>.yaml in this folder.")
    distributed_type: str = Field(
        description="accelerate's distributed_type the file sets (NO, MULTI_GPU, FSDP, DEEPSPEED)."
    )
    description: str = Field(description="One line: the hardware it is for and how it splits the work.")

    @property
    def path(self) -> Path:
        return FOLDER / f"{self.name}.yaml"


PROFILES: Registry[HardwareProfile] = Registry("hardware profile")
for _profile in (
    HardwareProfile(
        name="cpu",
        distributed_type="NO",
        description="one process on the CPU, full precision (tests, the demo, no GPU)",
    ),
    HardwareProfile(
        name="single_gpu", distributed_type="NO", description="one process on one GPU, bf16 mixed precision"
    ),
    HardwareProfile(
        name="ddp",
        distributed_type="MULTI_GPU",
        description="data parallel, one process and a full model per GPU, bf16 (--num_processes N)",
    ),
    HardwareProfile(
        name="fsdp2",
        distributed_type="FSDP",
        description="FSDP2: parameters, gradients, optimizer sharded per decoder layer, bf16",
    ),
    HardwareProfile(
        name="deepspeed_zero3",
        distributed_type="DEEPSPEED",
        description="DeepSpeed ZeRO-3 partitioning, bf16 (needs the deepspeed package)",
    ),
):
    PROFILES.add(_profile.name, _profile)


def profile_file(name: str) -> Path:
    """The accelerate config file of a profile; an unknown name is a CoworkEnvError with a did-you-mean hint."""
    return PROFILES.get(name).path


def launch_command(profile: str, args: list[str]) -> list[str]:
    """`accelerate launch --config_file <profile> -m coworkenv <args>` with this interpreter (`--quiet`: a failed run
    ends with its own error, not also the launcher's traceback)."""
    file = str(profile_file(profile))
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--quiet",
        "--config_file",
        file,
        "-m",
        "coworkenv",
        *args,
    ]


def launch(profile: str, args: list[str], config: BaseModel) -> None:
    """Run `coworkenv <args> --config <config as YAML>` under `accelerate launch` with a profile, its output on this
    process's stdout and stderr. The settings travel as a YAML file, so the launched command reads exactly the
    validated settings. A failed run is a CoworkEnvError (its own error is above it)."""
    import yaml

    command = launch_command(profile, args)  # an unknown profile fails before anything runs
    with tempfile.TemporaryDirectory(prefix="coworkenv-launch-") as tmp:
        settings = Path(tmp) / "job.yaml"
        settings.write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
        code = subprocess.run([*command, "--config", str(settings)], check=False).returncode
    if code != 0:
        raise CoworkEnvError(
            f"coworkenv {' '.join(args)} failed under the {profile} profile (exit {code}); its output is above"
        )


def is_main_process() -> bool:
    """Whether this is the process that writes and prints: the only one of a plain run, rank 0 under a launcher. Read
    from the launcher's `RANK`, not from accelerate's state: before the trainer has set that state up (with the CPU
    backend), `PartialState()` takes every process of a CPU launch for a main process."""
    return os.environ.get("RANK", "0").strip() in ("", "0")
