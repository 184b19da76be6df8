"""The user's contract, through the installed console script `coworkenv` in a fresh process with a timeout: a
representative corpus of the malformed inputs the in-process suite tries (option errors, hostile JSON, bad paths,
damaged run directories and releases). Exit code 0 or 2, one `error:` line for 2, no traceback, no hang, no output
left behind by a failure."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.fuzz import explain, judge, run_console, snapshot
from tests.support.fuzz_corpus import TASK, TRAJECTORY, malformed_json, place, valid_document

pytestmark = pytest.mark.xdist_group("fuzz-console")


def _corpus(base: Path, finished: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """Name → (arguments, output paths that a failure must leave as they were)."""
    task_damage = malformed_json(valid_document("task"))
    files = {
        name: place(base / "in" / f"task-{name}.json", task_damage[name])
        for name in ("deep-array", "non-utf8", "lone-surrogate", "huge-float", "truncated", "directory")
    }
    trajectory = place(
        base / "in" / "trajectory-deep.json", malformed_json(valid_document("trajectory"))["deep-object"]
    )
    profile = place(
        base / "in" / "profile-wrong.json", malformed_json(valid_document("profile"))["all-fields-wrong-type"]
    )
    plan = place(base / "in" / "plan-surrogate.json", malformed_json(valid_document("plan"))["lone-surrogate"])
    a_file = place(base / "a-file", b"x\n")
    bad_sql = place(base / "in" / "query.sql", b"select \xff\xfe")
    root = base / "root"
    shutil.copytree(finished, root, symlinks=True)
    (root / "runs" / "fz" / "config.json").write_text("[" * 100_000, encoding="utf-8")
    (root / "releases" / "LATEST").write_bytes(b"\xff\xfe")
    clean = base / "clean-root"
    shutil.copytree(finished, clean, symlinks=True)
    out = base / "out" / "result.json"
    return {
        "no-command": ([], []),
        "schema-alone": (["schema"], []),
        "unknown-command": (["grde"], []),
        "unknown-option": (["plan", "--bogus", "1"], []),
        "missing-option": (["grade", "--task", str(TASK)], []),
        "missing-value": (["run", "--task"], []),
        "plan --n 0": (["plan", "--n", "0"], []),
        "plan --n huge": (["plan", "--n", "99999999999999999999"], []),
        "plan --n text": (["plan", "--n", "three"], []),
        "synthesize --workers 0": (
            ["synthesize", "--workers", "0", "--data-root", str(base / "fresh")],
            [base / "fresh"],
        ),
        "generate --repair-rounds 99": (
            ["generate", "--repair-rounds", "99", "--data-root", str(base / "fresh")],
            [base / "fresh"],
        ),
        "generate --capabilities empty": (
            ["generate", "--capabilities", "", "--data-root", str(base / "fresh")],
            [base / "fresh"],
        ),
        "sql --max-rows 0": (["sql", "select 1", "--max-rows", "0"], []),
        "demo --n -1": (["demo", "--n", "-1", str(TASK), "--no-airflow"], []),
        **{
            f"run --task {name}": (["run", "--task", str(path), "--out", str(out)], [out])
            for name, path in files.items()
        },
        "grade --trajectory deep": (["grade", "--task", str(TASK), "--trajectory", str(trajectory)], []),
        "plan --profile wrong types": (["plan", "--profile", str(profile), "--out", str(out)], [out]),
        "plan --out under a file": (["plan", "--n", "3", "--out", str(a_file / "plan.json")], []),
        "plan --out at a folder": (["plan", "--n", "3", "--out", str(base)], []),
        "run --out at a folder": (["run", "--task", str(TASK), "--out", str(base)], []),
        "generate --plan surrogate": (
            ["generate", "--plan", str(plan), "--data-root", str(base / "fresh")],
            [base / "fresh"],
        ),
        "generate --tasks missing": (
            ["generate", "--tasks", str(base / "nowhere.jsonl"), "--data-root", str(base / "fresh")],
            [base / "fresh"],
        ),
        "validate with deep config.json": (
            ["validate", "--run-id", "fz", "--data-root", str(root)],
            [root / "runs" / "fz" / "validated"],
        ),
        "releases --data-root a file": (["releases", "--data-root", str(a_file)], []),
        "releases with non-UTF-8 LATEST": (["releases", "--data-root", str(root)], []),
        "sql --file non-UTF-8": (["sql", "--file", str(bad_sql), "--data-root", str(root)], []),
        "export --out under a file": (
            [
                "export",
                "--release",
                "latest",
                "--format",
                "jsonl",
                "--out",
                str(a_file / "x"),
                "--data-root",
                str(clean),
            ],
            [],
        ),
        "success: schema task": (["schema", "task"], []),
        "success: run": (["run", "--task", str(TASK), "--agent", "null", "--out", str(base / "ok" / "t.json")], []),
        "success: grade": (["grade", "--task", str(TASK), "--trajectory", str(TRAJECTORY)], []),
    }


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, finished_root) -> dict:
    base = tmp_path_factory.mktemp("console")
    corpus = _corpus(base, finished_root)
    before = {name: {p: snapshot(p) for p in outputs} for name, (_, outputs) in corpus.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:  # each case is a Python start-up: run them side by side
        done = dict(
            zip(
                corpus,
                pool.map(lambda args: run_console(args, timeout=120), [a for a, _ in corpus.values()]),
                strict=True,
            )
        )
    return {name: (done[name], before[name]) for name in corpus}


def _names() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:  # the names only: build the corpus over an empty finished root
        finished = Path(tmp) / "finished"
        (finished / "runs" / "fz").mkdir(parents=True)
        (finished / "releases").mkdir()
        return list(_corpus(Path(tmp) / "base", finished))


@pytest.mark.parametrize("name", _names())
def test_console_script(outcomes, name):
    outcome, before = outcomes[name]
    judged = judge(outcome, before)
    assert not judged.problems, explain(judged)
    if name.startswith("success:"):
        assert outcome.code == 0, outcome.stderr
