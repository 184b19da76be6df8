"""`coworkenv eval --agent openai:tiny` through the console script against a real `transformers serve` process serving
the tiny model on 127.0.0.1 (started and stopped by its process id, tests/support/serve.py): the garbage the model
writes is plain text or format errors, never a crash; the rows, the report and the usage come out as for any agent."""

from __future__ import annotations

import json
import os

import pytest

from coworkenv.data.reader import list_releases, read_table
from tests.cli.test_eval_cli import cli, ok
from tests.support.serve import transformers_serve
from tests.support.suites import example_tasks, write_suite

pytestmark = pytest.mark.slow


def test_eval_of_an_openai_agent_at_transformers_serve(tmp_path, tiny_model_dir):
    suite = write_suite(tmp_path / "small.jsonl", example_tasks()[:2])
    args = (
        "eval",
        "--agent",
        "openai:tiny",
        "--suite",
        suite,
        "--trials",
        "1",
        "--max-turns",
        "3",
        "--max-new-tokens",
        "32",
        "--run-id",
        "served",
        "--out",
        tmp_path / "report",
    )
    with transformers_serve(tiny_model_dir) as served:
        assert served.model == "tiny"
        out = ok(
            cli(*args, "--llm-base-url", served.base_url, data_root=tmp_path / "data")
        )  # no --llm-model: the agent names it
    assert served.process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(served.pid, 0)  # stopped, by its pid

    assert "evaluation served: openai:tiny on" in out and "trials: 2 played, 0 passed, 0 crashed" in out
    [release] = [m for m in list_releases(tmp_path / "data") if m.run_id == "served"]
    rows = read_table(tmp_path / "data", release.release_id, "eval_results").to_pylist()
    assert {(r["agent"], r["model"], r["status"], r["passed"]) for r in rows} == {("openai:tiny", "tiny", "ok", False)}
    assert all(1 <= r["n_turns"] <= 3 and r["prompt_tokens"] > 0 for r in rows)
    assert all(
        0 < r["completion_tokens"] <= 32 * r["n_turns"] for r in rows
    )  # --max-new-tokens is the request's max_tokens
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    usage = summary["usage"]
    assert usage["turns"] == sum(r["n_turns"] for r in rows) and usage["completion_tokens"] == sum(
        r["completion_tokens"] for r in rows
    )
    assert usage["format_errors"] == sum(r["n_format_errors"] for r in rows)  # format errors are counted, not crashes
    share = sum(1 for r in rows if r["n_format_errors"]) / len(rows)
    assert summary["overall"]["format_error_rate"]["value"] == pytest.approx(share) and summary["failures"] == {}
    assert (tmp_path / "report" / "report.html").exists() and (tmp_path / "report" / "profile.json").exists()
