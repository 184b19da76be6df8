"""Every option and argument of every command, found by walking the real typer app (a new option is fuzzed without
touching this file): no value, wrong types, zero, negative, huge, empty, 5,000 characters, undecodable bytes, unknown
options, missing required ones — as a fixed corpus and as hypothesis-drawn values. Each case runs in a fresh scratch
folder (the working directory too, so relative paths land there) through the real `main()`."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fuzz import FULL, check, run_main, snapshot
from tests.support.fuzz_corpus import BAD_FLOATS, BAD_INTS, BAD_TEXTS, TASK, TRAJECTORY, option_numbers, option_texts

POISON = ["--workers", "0", "--repair-rounds", "99"]
"""Two invalid settings, so that no `synthesize` case runs a whole synthesis (fuzzing one of them leaves the other)."""
BASE: dict[str, list[str]] = {
    "airflow-env": ["--profile", "embedded"],
    "airflow-init": [],  # every fuzzed --profile is bad: nothing is ever migrated
    "tools": [],
    "families": [],
    "schema task": [],
    "schema trajectory": [],
    "grade": ["--task", str(TASK), "--trajectory", str(TRAJECTORY)],
    "run": ["--task", str(TASK), "--agent", "null", "--out", "{out}"],
    "check": [str(TASK)],
    "demo": [str(TASK), "--no-airflow"],
    "releases": ["--data-root", "{root}"],
    "export": ["--release", "latest", "--format", "jsonl", "--out", "{out}", "--data-root", "{root}"],
    "sql": ["select 1 as x", "--data-root", "{root}"],
    "plan": ["--n", "3", "--out", "{out}"],
    "generate": ["--n", "2", "--data-root", "{root}", "--run-id", "z"],
    "synthesize": ["--n", "2", "--runtime", "none", "--data-root", "{root}", *POISON],
    **{
        stage: ["--run-id", "z", "--data-root", "{root}"]
        for stage in ("validate", "repair", "rollout", "build", "gate", "publish")
    },
    **{
        f"eval {stage}": ["--run-id", "z", "--data-root", "{root}"]
        for stage in ("trials", "build", "gate", "publish")  # a run that does not exist: no case plays a trial
    },
    # Two invalid settings each (fuzzing one leaves the other): no case builds a suite or a model.
    "eval bench": ["--n", "2", "--workers", "0", "--data-root", "{root}"],
    "eval compare": ["no-such-eval", "no-such-eval", "--data-root", "{root}"],
    "model tiny": ["--out", "{file}", "--seed", "-1"],
    "model smollm2": ["--out", "{file}", "--register", "a/b", "--data-root", "{root}"],
    "model smollm2-gguf": [],
    "model import": ["{file}", "--out", "{file}", "--register", "a/b", "--data-root", "{root}"],
    "eval": [
        "--agent",
        "oracle",
        "--suite",
        "missing.jsonl",
        "--trials",
        "0",
        "--runtime",
        "none",
        "--data-root",
        "{root}",
    ],
    "nightly": ["--suite", "missing-suite", "--budget", "0", "--runtime", "none", "--data-root", "{root}"],
    "nightly-stage": ["train", "--run-id", "z", "--data-root", "{root}"],  # no run z: nothing trains
    "train sft": ["--model", "{dir}", "--out", "{out}", "--max-steps", "0", "--data-root", "{root}"],
    "train rl": ["--model", "{dir}", "--out", "{out}", "--max-steps", "0", "--data-root", "{root}"],
    "train profiles": [],
    "eval sft": ["--run-id", "z", "--out", "{out}", "--threshold", "2", "--data-root", "{root}"],
    # No model is ever registered: the checkpoint folder is empty and the refs name nothing.
    "models": ["--data-root", "{root}"],
    "models register": ["{dir}", "--name", "m", "--data-root", "{root}"],
    "models show": ["m", "--data-root", "{root}"],
    "models eval": ["m", "no-such-eval", "--data-root", "{root}"],
    "models promote": ["m", "--margin", "-1", "--data-root", "{root}"],
    "models decisions": ["m", "--data-root", "{root}"],
    "eval pairs": ["no-such-eval", "--out", "{out}", "--min-score-gap", "2", "--data-root", "{root}"],
    "import claw-eval": ["{dir}", "--out", "{out}"],  # an empty folder: no task.yaml, nothing imported
    "train dpo": [
        "--model",
        "{dir}",
        "--release",
        "no-such-eval",
        "--out",
        "{out}",
        "--max-steps",
        "0",
        "--data-root",
        "{root}",
    ],
}
ALLOWED = {"check": (0, 1, 2), "demo": (0, 1, 2), "gate": (0, 1, 2), "eval gate": (0, 1, 2)}


def _commands() -> dict[str, list]:
    import importlib
    import pkgutil

    import typer

    import coworkenv.cli as package
    from coworkenv.cli.app import app

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"coworkenv.cli.{module.name}")
    found = {}

    def walk(group, prefix: list[str]) -> None:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                if [p for p in command.params if p.opts]:  # a group that runs on its own (`coworkenv eval --agent ...`)
                    found[" ".join([*prefix, name])] = command.params
                walk(command, [*prefix, name])
            else:
                found[" ".join([*prefix, name])] = command.params

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()


def _kind(param) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    annotation = str(param.get_runtime_param().annotation)
    return next((k for k in ("int", "float", "Path") if k in annotation), "text")


def _options() -> list[tuple[str, str, str]]:
    return [
        (command, p.opts[0] if p.opts else p.name, _kind(p))
        for command, params in COMMANDS.items()
        for p in params
        if p.opts and p.opts[0].startswith("--")
    ]


OPTIONS = _options()


def _values(kind: str) -> list[str]:
    paths = ["{dir}", "{file}/below", "{file}"]
    values = {"int": BAD_INTS, "float": BAD_FLOATS, "text": BAD_TEXTS, "Path": [*paths, *BAD_TEXTS]}.get(kind, [])
    return values if FULL else values[:4]


@contextlib.contextmanager
def scratch() -> Iterator[dict[str, str]]:
    """A fresh folder per case, the working directory while it runs: names for {root} {out} {dir} {file}."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "a-dir").mkdir()
        (base / "a-file").write_text("x\n", encoding="utf-8")
        os.chdir(base)
        try:
            yield {
                "root": str(base / "root"),
                "out": str(base / "out" / "result.json"),
                "dir": str(base / "a-dir"),
                "file": str(base / "a-file"),
            }
        finally:
            os.chdir(previous)


def _run(command: str, extra: list[str]) -> None:
    with scratch() as names:
        given = [
            {"{dir}": names["dir"], "{file}": names["file"], "{file}/below": names["file"] + "/below"}.get(a, a)
            for a in extra
        ]
        args = [*command.split(), *(a.format(**names) for a in BASE[command]), *given]
        outputs = [Path(names["out"]), Path(names["root"])]
        check(run_main(args), {p: snapshot(p) for p in outputs}, ALLOWED.get(command, (0, 2)))


CORPUS = [(command, option, value) for command, option, kind in OPTIONS for value in _values(kind)]
CORPUS += [(command, option, None) for command, option, kind in OPTIONS if kind != "flag"]  # the option with no value
CORPUS += [(command, "--no-such-option", "1") for command in COMMANDS]


@pytest.mark.parametrize(("command", "option", "value"), CORPUS, ids=[f"{c}:{o}={v!a}"[:90] for c, o, v in CORPUS])
def test_bad_option_value(command, option, value):
    _run(command, [option] if value is None else [option, value])


@pytest.mark.parametrize("command", [c for c, params in COMMANDS.items() if any(p.required for p in params)])
def test_required_options_missing(command):
    with scratch():
        check(run_main(command.split()))


@given(data=st.data())
def test_drawn_option_values(data):
    command, option, kind = data.draw(st.sampled_from([o for o in OPTIONS if o[2] != "flag"]), label="option")
    strategy = {"int": option_numbers, "float": st.floats().map(repr) | option_texts}.get(kind, option_texts)
    if option.startswith("--llm"):  # never a reachable endpoint: only values the settings refuse
        strategy = st.sampled_from(["0", "-1", "nan", ""])
    _run(command, [option, data.draw(strategy, label="value")])
