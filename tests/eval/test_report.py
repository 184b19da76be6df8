"""The evaluation report: summary.json, PNG plots and a self-contained HTML page."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.eval.compare import compare
from coworkenv.eval.metrics import summarize
from coworkenv.eval.report import write_report
from tests.support.eval_rows import bernoulli_rows, trial

HOSTILE = '<script>alert("x")</script>'
PNG = b"\x89PNG\r\n\x1a\n"


def _rows(seed: int, agent: str, shift: float) -> list[dict]:
    rows = bernoulli_rows(np.clip(np.linspace(0.0, 1.0, 24) + shift, 0, 1), 3, seed=seed, agent=agent)
    for i, row in enumerate(rows):
        row["capabilities"] = [["retrieval"], ["scheduling", "multi_step"], ["multi_turn"]][i // 3 % 3]
    # One more task, with a single trial that crashed: k becomes 1.
    rows.append(trial(f"{HOSTILE}-task", 0, score=0.0, status="failed", error=f"crash {HOSTILE}", agent=agent))
    return rows


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, list[dict]]:
    base = _rows(1, "base", 0.0)[:-1] + [trial("only-in-base", 0, agent="base")]
    cand = _rows(2, f"hf:{HOSTILE}", 0.3)
    summary = summarize(cand)
    out = tmp_path_factory.mktemp("report") / "report"
    write_report(out, summary, cand, comparison=compare(base, cand), title=f"Eval {HOSTILE}")
    return out, cand


def test_every_file_is_written(written):
    out, _ = written
    names = {
        "summary.json",
        "comparison.json",
        "report.html",
        "capabilities.png",
        "groups.png",
        "difficulties.png",
        "scores.png",
        "comparison.png",
    }
    assert {p.name for p in out.iterdir()} == names
    for name in names:
        if name.endswith(".png"):
            assert (out / name).read_bytes().startswith(PNG)


def test_summary_json_has_the_figures(written):
    out, rows = written
    data = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in ("pass_rate", "pass_hat_k", "pass_at_k", "mean_score", "safety_violation_rate", "format_error_rate"):
        assert set(data["overall"][key]) == {"value", "lo", "hi"}
        assert data["groups"]["general"][key]["lo"] <= data["groups"]["general"][key]["hi"]
        assert key in data["capabilities"]["retrieval"] and key in data["difficulties"]["1"]
    assert data["agent"] == f"hf:{HOSTILE}" and data["suite"] == "suite-1" and data["eval_id"] == "e1"
    assert (data["k"], data["overall"]["n_trials"], data["overall"]["n_tasks"]) == (1, len(rows), 25)
    assert data["failures"] == {f"crash {HOSTILE}": 1}


def test_the_page_is_self_contained_and_embeds_the_plots(written):
    out, _ = written
    page = (out / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"https?://|//cdn|<link|<script", page, re.IGNORECASE)
    sources = re.findall(r'src="([^"]*)"', page)
    assert len(sources) == 5 and all(s.startswith("data:image/png;base64,") for s in sources)
    for name in ("capabilities.png", "groups.png", "difficulties.png", "scores.png", "comparison.png"):
        assert base64.b64encode((out / name).read_bytes()).decode() in page


def test_data_is_escaped(written):
    out, _ = written
    page = (out / "report.html").read_text(encoding="utf-8")
    assert HOSTILE not in page
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert f"<title>Eval {escaped}</title>" in page
    assert f"{escaped}-task" in page  # the worst tasks list it
    assert f"crash {escaped}" in page  # the failure reasons
    assert f"hf:{escaped}" in page  # the agent, in the facts and the comparison


def test_the_page_has_the_tables(written):
    out, _ = written
    page = (out / "report.html").read_text(encoding="utf-8")
    for heading in (
        "Overall",
        "Per group",
        "Per capability",
        "Per difficulty",
        "Score distribution",
        "Failed trials",
        "Worst 20 tasks",
        "Comparison",
    ):
        assert f"<h2>{heading}" in page
    assert "24 paired tasks; 1 only in the base run, 1 only in the candidate run" in page
    assert "only in base: only-in-base" in page


def test_a_new_report_replaces_an_old_one_and_other_folders_are_refused(tmp_path):
    rows = _rows(1, "a", 0.0)
    summary = summarize(rows)
    out = tmp_path / "r"
    write_report(out, summary, rows, comparison=compare(rows, rows))
    write_report(out, summary, rows)
    assert not (out / "comparison.png").exists() and (out / "report.html").exists()
    (out / "trials.jsonl").write_text("{}\n")
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(CoworkEnvError, match=r"holds files that are not a report's \(trials.jsonl\)"):
        write_report(out, summary, rows)
    assert sorted(p.name for p in out.iterdir()) == before


def test_rows_that_are_not_the_summarys_are_refused(tmp_path):
    rows = _rows(1, "a", 0.0)
    with pytest.raises(CoworkEnvError, match="give the rows it was made from"):
        write_report(tmp_path / "r", summarize(rows), rows[:-1])
    assert not (tmp_path / "r").exists()
