"""The hardware profiles (docs/design/training.md, "Training"): every shipped accelerate config loads with accelerate's own
loader and launcher code and gives the setup it names; `coworkenv train profiles` lists them; and `coworkenv train sft`
runs unchanged under `accelerate launch` as the README gives it — one CPU process (the same checkpoint as a plain
run, also through `--profile cpu`) and two (real data-parallel training over gloo, one checkpoint, one report)."""

from __future__ import annotations

import fnmatch
import hashlib
import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from unittest import mock

import pytest

from coworkenv.train.accelerate.profiles import FOLDER, PROFILES, launch_command, profile_file
from tests.cli.test_eval_cli import CLI, OFFLINE, assert_one_line_error, cli, ok
from tests.support import ROOT

ACCELERATE = Path(sys.executable).parent / "accelerate"
STEPS = ["--max-steps", "3", "--batch-size", "2", "--max-length", "1024", "--logging-steps", "1"]


def launcher_env(name: str) -> tuple[object, dict[str, str]]:
    """What `accelerate launch --config_file <profile>` hands its processes: accelerate's own validation of the file,
    then the environment its launcher (simple, torchrun or DeepSpeed) builds, without starting anything."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import prepare_deepspeed_cmd_env, prepare_multi_gpu_env, prepare_simple_launcher_cmd_env

    args = launch_command_parser().parse_args(
        ["--config_file", str(profile_file(name)), "-m", "coworkenv", "train", "sft"]
    )
    args, defaults, _ = _validate_launch_command(args)
    if args.use_deepspeed:
        args.deepspeed_fields_from_accelerate_config = ",".join(defaults.deepspeed_config)
        return args, prepare_deepspeed_cmd_env(args)[1]
    if args.use_fsdp or args.multi_gpu:
        return args, prepare_multi_gpu_env(args)
    return args, prepare_simple_launcher_cmd_env(args)[1]


def test_every_profile_is_a_valid_accelerate_config():
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    assert sorted(p.stem for p in FOLDER.glob("*.yaml")) == sorted(PROFILES)  # every file has a name, every name a file
    known = {action.dest for action in launch_command_parser()._actions}
    for name in PROFILES:
        profile = PROFILES.get(name)
        config = load_config_from_file(str(profile.path))  # refuses unknown top-level keys
        assert config.distributed_type.value == profile.distributed_type, name
        assert config.num_machines == 1 and config.num_processes >= 1, name
        assert config.mixed_precision == ("no" if name == "cpu" else "bf16"), name
        assert config.use_cpu is (name == "cpu"), name
        nested = {**config.fsdp_config, **config.deepspeed_config}
        assert set(nested) <= known, (name, set(nested) - known)  # the launcher copies these into its own arguments


def test_the_launcher_builds_the_setup_each_profile_names():
    from accelerate.utils import DeepSpeedPlugin, FullyShardedDataParallelPlugin

    args, env = launcher_env("cpu")
    assert env["ACCELERATE_USE_CPU"] == "True" and env["ACCELERATE_MIXED_PRECISION"] == "no" and args.num_processes == 1
    args, env = launcher_env("single_gpu")
    assert (
        env["ACCELERATE_USE_CPU"] == "False" and env["ACCELERATE_MIXED_PRECISION"] == "bf16" and args.num_processes == 1
    )
    args, env = launcher_env("ddp")
    assert args.multi_gpu and int(args.nproc_per_node) == 2 and env["ACCELERATE_MIXED_PRECISION"] == "bf16"
    args, env = launcher_env("fsdp2")
    assert env["ACCELERATE_USE_FSDP"] == "true" and env["FSDP_VERSION"] == "2"
    with mock.patch.dict(os.environ, env):  # the plugin accelerate builds in every process from that environment
        fsdp = FullyShardedDataParallelPlugin()
    assert (
        fsdp.fsdp_version == 2 and "FULL_STATE_DICT" in str(fsdp.state_dict_type) and fsdp.reshard_after_forward is True
    )
    args, env = launcher_env("deepspeed_zero3")
    assert env["ACCELERATE_USE_DEEPSPEED"] == "true" and env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] == "3"
    with mock.patch.dict(os.environ, env):
        deepspeed = DeepSpeedPlugin()
    zero = deepspeed.deepspeed_config["zero_optimization"]
    assert (
        zero["stage"] == 3 and zero["stage3_gather_16bit_weights_on_model_save"] is True
    )  # the checkpoint is a whole model
    assert deepspeed.deepspeed_config["gradient_accumulation_steps"] == "auto"  # the job's own settings fill it


def test_the_profiles_ship_with_the_package():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "coworkenv.train.accelerate"
    ]
    assert all(any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns) for p in FOLDER.glob("*.yaml"))
    assert (FOLDER / "__init__.py").is_file()  # a package: setuptools finds it and its data


def test_profiles_command_lists_them(tmp_path):
    printed = ok(cli("train", "profiles", data_root=tmp_path))
    for name in PROFILES:
        profile = PROFILES.get(name)
        assert f"{name} " in printed and profile.description in printed and str(profile.path) in printed
    assert ok(cli("train", "profiles", "fsdp2", data_root=tmp_path)).strip() == str(profile_file("fsdp2"))
    assert_one_line_error(
        cli("train", "profiles", "fsdp", data_root=tmp_path), "unknown hardware profile 'fsdp'", "fsdp2"
    )
    assert launch_command("ddp", ["train", "sft"])[-4:] == ["-m", "coworkenv", "train", "sft"]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A data root with one synthesized task release (6 tasks, their oracle trajectories as `sft` rows)."""
    home = tmp_path_factory.mktemp("train-accelerate")
    ok(cli("synthesize", "--n", "6", "--seed", "4", "--runtime", "none", "--run-id", "accel", data_root=home / "data"))
    return home


def launched(home: Path, profile: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`accelerate launch --config_file "$(coworkenv train profiles NAME)" -m coworkenv train sft ...`, as the README has it."""
    config_file = ok(cli("train", "profiles", profile, data_root=home / "data")).strip()
    env = {**os.environ, **OFFLINE, "COWORKENV_DATA_ROOT": str(home / "data")}
    command = [
        str(ACCELERATE),
        "launch",
        "--config_file",
        config_file,
        *extra,
        "-m",
        "coworkenv",
        "train",
        "sft",
        "--model",
        str(home / "model"),
        "--release",
        "latest",
        "--out",
        str(out),
        *STEPS,
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=home, timeout=600, check=False)


@pytest.fixture(scope="module")
def plain(home, tiny_model_dir) -> Path:
    """The tiny model (copied where the launches find it) trained by a plain `coworkenv train sft` on the CPU."""
    import shutil

    shutil.copytree(tiny_model_dir, home / "model")
    ok(
        cli(
            "train",
            "sft",
            "--model",
            home / "model",
            "--out",
            home / "plain",
            *STEPS,
            "--use-cpu",
            data_root=home / "data",
        )
    )
    return home / "plain"


def weights(checkpoint: Path) -> str:
    return hashlib.sha256((checkpoint / "model.safetensors").read_bytes()).hexdigest()


@pytest.mark.slow
def test_the_cpu_profile_trains_the_same_checkpoint_as_a_plain_run(home, plain):
    from coworkenv.train.checkpoint import read_training

    proc = launched(home, "cpu", home / "cpu")
    printed = ok(proc)
    assert printed.count("trained 3 step(s) on 6 conversation(s)") == 1, printed
    assert weights(home / "cpu") == weights(plain)  # the same code path: byte-identical weights
    record = read_training(home / "cpu")
    assert record["processes"] == 1 and record["steps"] == 3
    assert [e.get("loss") for e in record["log_history"]] == [
        e.get("loss") for e in read_training(plain)["log_history"]
    ]


@pytest.mark.slow
def test_the_profile_option_relaunches_under_accelerate(home, plain):
    printed = ok(
        cli(
            "train",
            "sft",
            "--profile",
            "cpu",
            "--model",
            home / "model",
            "--out",
            home / "option",
            *STEPS,
            data_root=home / "data",
        )
    )
    assert printed.count("trained 3 step(s)") == 1 and weights(home / "option") == weights(plain)
    proc = cli(
        "train",
        "sft",
        "--profile",
        "cpu",
        "--model",
        home / "no-model",
        "--out",
        home / "o2",
        *STEPS,
        data_root=home / "data",
    )
    assert_one_line_error(proc, "not a model checkpoint")  # checked before anything is launched
    assert_one_line_error(
        cli(
            "train", "sft", "--profile", "gpu", "--model", home / "model", "--out", home / "o3", data_root=home / "data"
        ),
        "unknown hardware profile 'gpu'",
    )


@pytest.mark.slow
def test_two_processes_train_one_checkpoint_over_gloo(home, plain):
    """The ddp profile on a machine without a GPU: two CPU processes (torchrun, gloo) train one model together; only
    the main one writes the checkpoint and prints, and nothing is left beside it."""
    from coworkenv.agents import load_agent
    from coworkenv.train.checkpoint import read_training

    out = home / "ddp"
    proc = launched(home, "ddp", out, "--num_processes", "2", "--mixed_precision", "no")
    printed = ok(proc)
    assert printed.count("trained 3 step(s) on 6 conversation(s)") == 1, printed
    finished = [line for line in proc.stderr.splitlines() if line.startswith("training: ") and "done in" in line]
    assert len(finished) == 1 and finished[0].startswith("training: 3/3 (100%)"), (
        finished
    )  # one progress report, rank 0's
    record = read_training(out)
    assert record["processes"] == 2 and record["steps"] == 3
    losses = [e["loss"] for e in record["log_history"] if "loss" in e]
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses)
    plain_tokens = [e["num_tokens"] for e in read_training(plain)["log_history"] if "num_tokens" in e]
    ddp_tokens = [e["num_tokens"] for e in record["log_history"] if "num_tokens" in e]
    assert ddp_tokens[-1] > plain_tokens[-1]  # each step saw both processes' batches
    assert weights(out) != weights(plain)
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")) == []  # no staging left
    assert not (out / "trainer").exists() and (out / "curves.png").read_bytes().startswith(b"\x89PNG")
    load_agent(f"hf:{out}", max_new_tokens=4)  # a whole checkpoint: it loads


def test_python_m_coworkenv_is_the_cli(tmp_path):
    """`-m coworkenv` (what `accelerate launch -m` runs) is the same command as the console script."""
    env = {**os.environ, **OFFLINE, "COWORKENV_DATA_ROOT": str(tmp_path)}
    module = subprocess.run(
        [sys.executable, "-m", "coworkenv", "train", "profiles", "cpu"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    script = subprocess.run(
        [str(CLI), "train", "profiles", "cpu"], capture_output=True, text=True, env=env, check=False
    )
    assert module.returncode == script.returncode == 0 and module.stdout == script.stdout
