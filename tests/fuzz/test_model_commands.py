"""The command families that read models, registries and benchmark task folders, fed damaged ones through the real
`main()`: every damaged copy of the tiny model (tests/models/test_untrusted_folders.py, and the JSON corpus on each of
its JSON files) given to `models register`, `train sft|rl|dpo --model`, `eval --agent hf:` and `nightly --base-model`;
a registry whose files are damaged read by every `models` command; Claw-Eval task folders whose `task.yaml` or
fixtures are damaged given to `import claw-eval`; and the config files of `eval` and `nightly`. Exit 0 or one
`error:` line with exit 2, no traceback, no hang, and nothing written where the command failed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.models.test_untrusted_folders import DAMAGE
from tests.support import ROOT
from tests.support.fuzz import FULL, check, run_main, snapshot
from tests.support.fuzz_corpus import DIRECTORY, MISSING, damages, malformed_json, place, valid_document

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

CLAW = ROOT / "examples" / "claw-eval" / "tasks"
QUICK = ("missing", "directory", "truncated", "binary")
"""The JSON damages `make test` gives the slower model commands (training, evaluation); `make fuzz` gives them all."""


@pytest.fixture(scope="module")
def model_root(finished_root, tiny_model_dir, tmp_path_factory) -> Path:
    """The fuzz suite's finished data root plus an evaluation of the null agent on its release (for `train dpo`) and
    the tiny model registered as `m:v1`, made current."""
    from coworkenv.models import register_model
    from coworkenv.models.store import CURRENT_FILE

    root = tmp_path_factory.mktemp("model-root") / "data"
    shutil.copytree(finished_root, root, symlinks=True, ignore=shutil.ignore_patterns("data_docs"))
    check(
        run_main(
            [
                "eval",
                "--agent",
                "null",
                "--suite",
                "latest",
                "--trials",
                "1",
                "--runtime",
                "none",
                "--workers",
                "1",
                "--run-id",
                "ev",
                "--out",
                str(root.parent / "report"),
                "--data-root",
                str(root),
            ],
            timeout=300,
        )
    )
    entry = register_model(tiny_model_dir, "m", data_root=root)
    (root / "models" / "m" / CURRENT_FILE).write_text(f"{entry.version}\n", encoding="utf-8")
    return root


@pytest.fixture
def root(model_root, tmp_path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(model_root, copy, symlinks=True)
    return copy


# --- damaged model folders ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelCommand:
    args: Callable[
        [Path, Path, Path], list[str]
    ]  # (the model folder, a scratch folder, the data root) → the command line
    outputs: Callable[[Path, Path], list[Path]]  # (scratch, data root) → what must stay as it was when it fails
    slow: bool = True  # it loads or trains the model when the folder passes: the quick damages only in `make test`


def _train(job: str, *more: str) -> ModelCommand:
    return ModelCommand(
        lambda m, s, r: [
            "train",
            job,
            "--model",
            str(m),
            "--out",
            str(s / "out"),
            "--max-steps",
            "1",
            "--batch-size",
            "1",
            "--use-cpu",
            "--data-root",
            str(r),
            *more,
        ],
        lambda s, r: [s / "out", r / "models"],
    )


COMMANDS = {
    "models register": ModelCommand(
        lambda m, s, r: ["models", "register", str(m), "--name", "m", "--data-root", str(r)],
        lambda s, r: [r / "models"],
        slow=False,
    ),
    "train sft": _train("sft", "--release", "latest", "--max-length", "512"),
    "train rl": _train(
        "rl",
        "--method",
        "grpo",
        "--release",
        "latest",
        "--num-generations",
        "2",
        "--max-completion-length",
        "8",
        "--max-turns",
        "1",
    ),
    "train dpo": _train("dpo", "--release", "ev", "--max-length", "512"),
    "eval --agent hf:": ModelCommand(
        lambda m, s, r: [
            "eval",
            "--agent",
            f"hf:{m}",
            "--suite",
            "latest",
            "--trials",
            "1",
            "--limit",
            "1",
            "--max-new-tokens",
            "4",
            "--max-turns",
            "1",
            "--runtime",
            "none",
            "--workers",
            "1",
            "--run-id",
            "e2",
            "--out",
            str(s / "report"),
            "--data-root",
            str(r),
        ],
        lambda s, r: [s / "report", r / "releases"],
    ),
    "nightly --base-model": ModelCommand(
        lambda m, s, r: [
            "nightly",
            "--base-model",
            str(m),
            "--model-name",
            "n",
            "--suite",
            "latest",
            "--budget",
            "2",
            "--trials",
            "0",
            "--sft-steps",
            "1",
            "--eval-limit",
            "1",
            "--eval-trials",
            "1",
            "--run-id",
            "n1",
            "--data-root",
            str(r),
        ],
        lambda s, r: [r / "models", r / "releases"],
    ),
}
"""`nightly` gets only the folder damages that the registry must refuse: a folder that passed would start a turn."""

JSON_FILES = ("config.json", "tokenizer_config.json", "tokenizer.json")


def _json_cases() -> list[tuple[str, str, str]]:
    cases = []
    for command, spec in COMMANDS.items():
        if command.startswith("nightly"):
            continue
        for file in JSON_FILES:
            names = damages(malformed_json(valid_document("config")), FULL)
            cases += [(command, file, d) for d in names if FULL or not spec.slow or d in QUICK]
    return cases


FOLDER_CASES = [
    (c, d)
    for c in COMMANDS
    for d in sorted(DAMAGE)
    if FULL
    or not COMMANDS[c].slow
    or c.startswith("nightly")
    or d in ("weights a link to /etc/passwd", "truncated weights", "no chat template", "config of another size")
]
JSON_CASES = _json_cases()


def _run(command: str, folder: Path, scratch: Path, root: Path) -> None:
    spec = COMMANDS[command]
    outputs = spec.outputs(scratch, root)
    before = {p: snapshot(p) for p in outputs}
    outcome = run_main(spec.args(folder, scratch, root), timeout=120)
    check(outcome, before)
    assert outcome.code == 2, f"{command} took a damaged model folder: {outcome.stdout[-500:]}"


@pytest.mark.parametrize(("command", "damage"), FOLDER_CASES, ids=[f"{c}:{d}" for c, d in FOLDER_CASES])
def test_a_damaged_model_folder(command, damage, root, tiny_model_dir, tmp_path):
    folder, scratch = tmp_path / "model", tmp_path / "scratch"
    shutil.copytree(tiny_model_dir, folder)
    scratch.mkdir()
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    DAMAGE[damage][0](folder)
    _run(command, folder, scratch, root)


@pytest.mark.parametrize(("command", "file", "damage"), JSON_CASES, ids=[f"{c}:{f}:{d}" for c, f, d in JSON_CASES])
def test_a_model_folder_with_a_damaged_json_file(command, file, damage, root, tiny_model_dir, tmp_path):
    folder, scratch = tmp_path / "model", tmp_path / "scratch"
    shutil.copytree(tiny_model_dir, folder)
    scratch.mkdir()
    content = malformed_json(json.loads((folder / file).read_text(encoding="utf-8")))[damage]
    (folder / file).unlink()
    place(folder / file, content)
    spec = COMMANDS[command]
    outputs = spec.outputs(scratch, root)
    before = {p: snapshot(p) for p in outputs}
    outcome = run_main(spec.args(folder, scratch, root), timeout=120)
    check(outcome, before)  # a file a model does not need (an extra key) may pass; nothing else may


# --- a damaged registry -----------------------------------------------------------------------------------------------

REGISTRY_READS = {
    "models": ["models"],
    "models --format json": ["models", "--format", "json"],
    "models show m:v1": ["models", "show", "m:v1"],
    "models show m:current": ["models", "show", "m:current"],
    "models decisions m": ["models", "decisions", "m"],
    "models promote m:v1": ["models", "promote", "m:v1"],
    "models eval m:v1 ev": ["models", "eval", "m:v1", "ev"],
}


def _registry_damages() -> dict[str, tuple[str, bytes | str]]:
    """Name → (the file under models/m/, its new content)."""
    out: dict[str, tuple[str, bytes | str]] = {}
    entry = malformed_json({"name": "m", "version": 1, "job": "tiny", "weights_sha256": "0" * 64})
    for damage in damages(entry, FULL):
        out[f"entry.json {damage}"] = ("v0001/entry.json", entry[damage])
    for name, text in {
        "empty": b"",
        "not a number": b"v1\n",
        "huge": b"9" * 5000,
        "negative": b"-1\n",
        "absent version": b"7\n",
        "binary": bytes(range(256)),
        "directory": DIRECTORY,
    }.items():
        out[f"CURRENT {name}"] = ("CURRENT", text)
    for name, text in {
        "garbage line": b"{not json\n",
        "a list": b"[1, 2]\n",
        "not utf-8": b"\xff\xfe\n",
        "deep": b"[" * 100_000,
        "directory": DIRECTORY,
    }.items():
        out[f"decisions.jsonl {name}"] = ("decisions.jsonl", text)
    out["a version folder that is a file"] = ("v0002", b"x")
    out["weights gone from v1"] = ("v0001/model.safetensors", MISSING)
    return out


REGISTRY_DAMAGES = _registry_damages()
REGISTRY_CASES = [(c, d) for c in REGISTRY_READS for d in REGISTRY_DAMAGES]


@pytest.mark.parametrize(("command", "damage"), REGISTRY_CASES, ids=[f"{c}:{d}" for c, d in REGISTRY_CASES])
def test_a_damaged_registry(command, damage, root):
    where, content = REGISTRY_DAMAGES[damage]
    path = root / "models" / "m" / where
    if damage.startswith("entry.json "):
        content = malformed_json(json.loads(path.read_text(encoding="utf-8")))[damage.removeprefix("entry.json ")]
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    place(path, content)
    before = {root / "models": snapshot(root / "models")}
    check(run_main([*REGISTRY_READS[command], "--data-root", str(root)]), before)


# --- damaged Claw-Eval task folders and config files ------------------------------------------------------------------


def _claw_corpus(file: str) -> dict[str, bytes | str]:
    """The JSON corpus of E01's task.yaml (JSON is YAML) or of its first fixture, built from the real document."""
    import json

    import yaml

    task = CLAW / "E01_mail_triage"
    if file == "task.yaml":
        return malformed_json(yaml.safe_load((task / "task.yaml").read_text(encoding="utf-8")))
    fixture = json.loads(sorted(task.glob("fixtures/**/*.json"))[0].read_text(encoding="utf-8"))
    return malformed_json(fixture if isinstance(fixture, dict) else {"items": fixture})


CLAW_CASES = [(f, d) for f in ("task.yaml", "fixture") for d in damages(_claw_corpus(f), FULL)]


@pytest.mark.parametrize(("file", "damage"), CLAW_CASES, ids=[f"{f}:{d}" for f, d in CLAW_CASES])
def test_a_damaged_claw_eval_task_folder(file, damage, tmp_path):
    folder = tmp_path / "tasks"
    shutil.copytree(CLAW, folder)
    task = folder / "E01_mail_triage"
    target = task / "task.yaml" if file == "task.yaml" else sorted(task.glob("fixtures/**/*.json"))[0]
    target.unlink()
    place(target, _claw_corpus(file)[damage])
    out, report = tmp_path / "out" / "c.jsonl", tmp_path / "out" / "r.json"
    check(
        run_main(["import", "claw-eval", str(folder), "--out", str(out), "--report", str(report)]),
        {tmp_path / "out": None},
    )


CONFIGS = {
    "eval --config": (
        lambda f, r: ["eval", "--config", str(f), "--workers", "0", "--data-root", str(r)],
        {"agent": "null", "suite": "latest", "trials": 1, "runtime": "none"},
    ),
    "nightly --config": (
        lambda f, r: ["nightly", "--config", str(f), "--workers", "0", "--data-root", str(r)],
        {"budget": 2, "trials": 0, "suite": "latest", "runtime": "none"},
    ),
}
CONFIG_CASES = [(c, d) for c, (_, valid) in CONFIGS.items() for d in damages(malformed_json(valid), FULL)]


@pytest.mark.parametrize(("command", "damage"), CONFIG_CASES, ids=[f"{c}:{d}" for c, d in CONFIG_CASES])
def test_a_damaged_config_file(command, damage, root, tmp_path):
    """`--workers 0` fails a config that reads well, so no case runs an evaluation or a turn."""
    args, valid = CONFIGS[command]
    damaged = place(tmp_path / "settings.yaml", malformed_json(valid)[damage])
    before = {root / "runs": snapshot(root / "runs"), root / "releases": snapshot(root / "releases")}
    check(run_main(args(damaged, root)), before)
