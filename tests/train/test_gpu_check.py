"""`bench/gpu_check.py` (docs/benchmarks.md, "GPU check"): `--tiny` runs the GPU check's code on the CPU — a release
built in-process, `train_sft`, GRPO steps rewarded by the grading — and everything it imports is either in the wheels
`make gpu-wheels` downloads or left to the GPU machine's image; without a GPU and without `--tiny` it refuses clearly."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

from tests.cli.test_eval_cli import OFFLINE
from tests.support import ROOT, bench_script
from tests.support.gguf_files import SMOLLM2_INSTALLED

SCRIPT = ROOT / "bench" / "gpu_check.py"


def gpu_check():
    return bench_script("gpu_check")


def key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def gpu_machine_python(dest: Path, distributions: set[str]) -> Path:
    """A virtual environment whose site-packages holds (as links) only these installed distributions: as on the GPU
    machine, nothing else imports. Returns its interpreter."""
    import sysconfig
    import venv
    from importlib.metadata import distributions as installed

    venv.create(dest, with_pip=False, symlinks=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(dest), "platbase": str(dest)}))
    for dist in installed():
        if key(dist.metadata["Name"]) not in distributions:
            continue
        for top in {f.parts[0] for f in dist.files or [] if f.parts and f.parts[0] != ".."}:
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source)
    return dest / "bin" / "python"


def run(*args: str, cwd: Path, python: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE}
    env.pop("PYTHONPATH", None)  # the script finds the checkout itself, as on the GPU machine
    command = [str(python or sys.executable), str(SCRIPT), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False)


def image_packages(module) -> set[str]:
    """ON_THE_GPU_MACHINE and everything they require (on the GPU machine's Python)."""
    from packaging.requirements import Requirement

    found: set[str] = set()
    todo = list(module.ON_THE_GPU_MACHINE)
    while todo:
        name = key(todo.pop())
        if name in found:
            continue
        found.add(name)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({**module.TARGET, "extra": ""}):
                todo.append(requirement.name)
    return found


def test_the_wheels_are_the_lock_pins_of_what_the_machine_lacks():
    module = gpu_check()
    wheels = dict(line.split("==") for line in module.wheel_list())
    lock = {
        key(n): v
        for n, v in (
            line.split("==", 1) for line in (ROOT / "requirements.lock").read_text().splitlines() if "==" in line
        )
    }
    assert {"trl", "datasets", "pydantic", "pydantic-core", "transformers", "google-re2"} <= set(wheels)
    assert all(lock[name] == version for name, version in wheels.items())
    assert not {
        "torch",
        "numpy",
        "pandas",
        "pyarrow",
        "duckdb",
        "apache-airflow",
        "great-expectations",
        "sqlalchemy",
    } & set(wheels)
    assert not [name for name in wheels if name.startswith("nvidia-")]


def test_without_a_gpu_it_refuses_unless_tiny(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    proc = run(cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith("error: no CUDA GPU is visible"), (
        proc.stderr[-2000:]
    )
    assert "--tiny" in proc.stderr and proc.stdout == ""
    proc = run("--tiny", "--batch-size", "3", cwd=tmp_path)
    assert proc.returncode == 2 and "multiple of --generations" in proc.stderr


@pytest.mark.slow
def test_tiny_runs_the_gpu_checks_code_on_the_cpu_with_only_the_carried_wheels(tmp_path):
    """As on the GPU machine: only the carried wheels and the image's packages import (Airflow, duckdb, Great
    Expectations and everything else installed here do not)."""
    module = gpu_check()
    carried = {line.split("==")[0] for line in module.wheel_list()}
    python = gpu_machine_python(tmp_path / "venv", carried | image_packages(module))
    loop = (
        ["--smollm2"] if SMOLLM2_INSTALLED else []
    )  # and the SmolLM2 loop's code, on 2 held-out tasks and 2 SFT steps
    proc = run(
        "--tiny",
        *loop,
        "--json",
        str(tmp_path / "results.json"),
        "--work",
        str(tmp_path / "work"),
        cwd=tmp_path,
        python=python,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    if loop:
        smol = results["smollm2"]
        assert (
            smol["tasks"] == 2
            and smol["sft_steps"] == 2
            and 0 <= smol["score_before"] <= 1
            and 0 <= smol["score_after"] <= 1
        )
        assert smol["sft_fit"]["whole"] > 0 and "SmolLM2 loop: 2 held-out tasks" in proc.stdout
    sft, grpo = results["sft"], results["grpo"]
    assert results["tiny"] and results["device"]["device"] == "cpu" and results["release"]["sft_rows"] == 6
    assert sft["steps"] == 4 and math.isfinite(sft["first_loss"]) and sft["last_loss"] < sft["first_loss"]
    assert (
        sft["tokens_per_s"] > 0 and sft["mfu"] is None and sft["peak_memory_gib"] is None
    )  # no peak FLOP/s, no GPU memory on a CPU
    assert grpo["steps"] == 2 and 0.0 <= grpo["mean_reward"] <= 1.0 and grpo["generated_tokens_per_s"] > 0
    assert (
        tmp_path / "work" / "sft" / "training.json"
    ).is_file()  # the checkpoint train_sft wrote, that GRPO started from
    assert "GPU check on CPU (tiny model, 598,592 parameters)" in proc.stdout and "SFT:  4 steps" in proc.stdout
    assert {"trl", "datasets", "pydantic"} <= {key(d) for d in results["distributions"]}
    assert not {"apache-airflow", "duckdb", "great-expectations", "sqlalchemy"} & {
        key(d) for d in results["distributions"]
    }


def test_peak_flops_by_device_name_and_rates_after_the_warmup():
    module = gpu_check()
    names = {
        "NVIDIA H200": 989.0,
        "NVIDIA GH200 480GB": 989.0,
        "NVIDIA A100-SXM4-80GB": 312.0,
        "NVIDIA L40S": 362.0,
        "Tesla T4": None,
    }
    assert {name: module.peak_tflops(name) for name in names} == names
    clock = module.StepClock()
    clock.ends = [0.0, 1.0, 3.0]  # three steps ended at these times
    assert module.rate([10, 30, 70], clock, warmup=1) == 20.0  # steps 2 and 3: 60 tokens in 3 s
    assert module.rate([10, 30, 70], clock, warmup=3) is None  # no timed step left
    assert module.mfu(6 * 500e6 * 100_000, 989.0) == round(3e14 / 989e12, 4)


def test_the_gpu_model_is_the_tiny_architecture_at_half_a_billion_parameters(tiny_model_dir):
    import torch
    from transformers import Qwen2ForCausalLM

    module = gpu_check()
    config = module.small_config(tiny_model_dir)
    with torch.device("meta"):  # the shape only: no memory
        model = Qwen2ForCausalLM(config)
    assert 0.45e9 < sum(p.numel() for p in model.parameters()) < 0.55e9
    attention = model.model.layers[0].self_attn
    assert attention.q_proj.weight.shape == (896, 896) and attention.k_proj.weight.shape == (
        128,
        896,
    )  # 14 / 2 heads of 64
    assert len(config.layer_types) == 32 and config.vocab_size == 4096 and config.eos_token_id == [1, 2]


def test_the_gpu_model_is_built_and_saved_whole(tmp_path, monkeypatch):
    """build_model's GPU branch, at one layer so that it fits a test on the CPU: a model folder that loads and speaks
    the tiny model's tokens."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    module = gpu_check()
    monkeypatch.setattr(module, "SMALL", {**module.SMALL, "num_hidden_layers": 1})
    path, parameters = module.build_model(tmp_path, tiny=False)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    assert sum(p.numel() for p in model.parameters()) == parameters and model.config.hidden_size == 896
    assert (
        model.generation_config.eos_token_id == [1, 2]
        and tokenizer.eos_token == "<|im_end|>"
        and len(tokenizer) == 4096
    )
