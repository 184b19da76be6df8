"""A gate as a person meets it: a report page that renders offline with every expectation's result, GX's own pages
rewritten to render offline too, and a task log that says the verdict and where the report is, without GX's noise."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from coworkenv.quality import GATES, GateFailed, run_gate
from coworkenv.quality.report import offline_css, offline_html
from tests.support import ROOT

EXTERNAL_REF = re.compile(r"""\b(?:src|href|action|srcset)\s*=\s*["']?(?:https?:)?//""", re.I)


class _Visible(HTMLParser):
    """The text a browser shows without running anything: data outside <script> and <style>."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.text.append(data)


def visible_text(html_text: str) -> str:
    parser = _Visible()
    parser.feed(html_text)
    return " ".join(" ".join(parser.text).split())


def test_offline_html_removes_everything_a_page_would_fetch() -> None:
    page = """<html><head><title>x</title>
    <link rel="stylesheet" href="https://cdn.example/bootstrap.css"/><link rel="stylesheet" href="//cdn.example/b.css">
    <link rel="stylesheet" href="static/styles/local.css">
    <script src="https://code.example/jquery.js"></script><script>$(function () { render(); });</script>
    <style>.logo { background: url('https://assets.example/logo.png'); }</style></head>
    <body><img src="https://assets.example/logo.png" alt="logo"><img src="static/images/local.png">
    <a href="https://example.org/docs">the docs</a> <a href="../index.html">Home</a>
    <form action="https://example.org/subscribe"><input name="email"></form>
    <i class="fas fa-times text-danger"></i></body></html>"""
    out = offline_html(page)
    assert not EXTERNAL_REF.search(out) and "https://" not in out and "<script" not in out
    assert (
        'href="static/styles/local.css"' in out
        and 'src="static/images/local.png"' in out
        and 'href="../index.html"' in out
    )
    assert "the docs" in visible_text(out) and "Home" in visible_text(
        out
    )  # an external link loses its target, not its text
    assert out.index("<style>") < out.index("</head>") and ".fa-times::before" in out  # the status icons as text
    assert offline_css("a { background: url(https://x.example/a.png) } b { background: url('img/b.png') }") == (
        "a { background: none } b { background: url('img/b.png') }"
    )


def test_the_report_page_shows_every_expectation_and_needs_nothing_from_outside(
    tmp_path: Path, clean_frames: dict[str, pd.DataFrame], gx_loaded: None
) -> None:
    frames = {name: clean_frames[name].copy(deep=True) for name in GATES.get("rollouts").tables}
    frames["sft"]["tools"] = frames["sft"]["tools"].astype(object)
    frames["sft"].iat[0, frames["sft"].columns.get_loc("tools")] = "[]"
    with pytest.raises(GateFailed) as failed:
        run_gate("rollouts", frames, report_dir=tmp_path)
    result = failed.value.result
    docs = tmp_path / "data_docs" / "rollouts"
    index = docs / "index.html"
    assert result.report_path == str(index) and f"Data Docs: {index}" in str(failed.value)

    page = index.read_text(encoding="utf-8")
    assert "<script" not in page and "http://" not in page and "https://" not in page and "<link" not in page
    shown = visible_text(page)
    assert "Gate rollouts : failed" in shown and "Nothing from this stage may be published" in shown
    expected = [
        (table, e.meta["rule"], e.expectation_type)
        for table, suite in GATES.get("rollouts").suites().items()
        for e in suite.expectations
    ]
    assert [(o.table, o.rule, o.expectation) for o in result.expectations] == expected  # every one, in suite order
    for _, rule, kind in expected:
        assert rule in shown and kind in shown
    broken = [o for o in result.expectations if not o.success]
    assert [(o.table, o.rule) for o in broken] == [(f.table, f.rule) for f in result.failures] and broken
    assert page.count('<tr class="broken">') == len(broken)
    assert shown.count("passed") >= len(expected) - len(broken)
    sft_tools = next(o for o in broken if o.table == "sft")
    assert sft_tools.description in shown and sft_tools.observed in shown and sft_tools.examples

    # GX's pages, linked from the report, are there and fetch nothing either
    links = re.findall(r'href="(gx/[^"]+\.html)"', page)
    assert {Path(link).name for link in links} == {"coworkenv-trajectories.html", "coworkenv-sft.html"}
    assert all((docs / link).is_file() for link in links)
    html_files = list(docs.rglob("*.html"))
    assert len(html_files) > 3
    for path in html_files:
        text = path.read_text(encoding="utf-8")
        assert not EXTERNAL_REF.search(text) and "<script" not in text, path
    for path in docs.rglob("*.css"):
        assert not re.search(r"url\(\s*[\"']?(?:https?:)?//", path.read_text(encoding="utf-8")), path
    sft_page = (docs / next(link for link in links if link.endswith("coworkenv-sft.html"))).read_text(encoding="utf-8")
    assert ".fa-times::before" in sft_page and "at least one tool schema is offered" in visible_text(sft_page)


QUIET = textwrap.dedent("""
    import logging, sys, warnings
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s %(levelname)s %(message)s")
    logging.captureWarnings(True)  # as in a task: warnings are log lines
    warnings.simplefilter("default")
    assert "great_expectations" not in sys.modules
    from coworkenv.pipeline.release_tables import gate_tables
    from coworkenv.pipeline.rundir import RunDir
    from coworkenv.pipeline.synthesis import GATES
    gate_tables(RunDir.open(sys.argv[1], sys.argv[2]), GATES)
    from coworkenv.quality.gates import _context
    _context(None)  # outside the gate: GX's INFO lines do reach this log
""")


@pytest.mark.slow
def test_a_gate_run_logs_its_verdict_and_where_the_report_is_and_nothing_of_gx(
    tmp_path: Path, clean_tables: dict[str, pa.Table]
) -> None:
    """A fresh process logging at INFO with warnings captured, as Airflow runs a task: the gate's log is its verdict
    and the report's path, where GX alone used to write some 220 lines."""
    from coworkenv.data.schemas import TABLES, conform_table
    from coworkenv.pipeline.release_tables import stage_tables
    from coworkenv.pipeline.rundir import RunDir

    run = RunDir.open("manual__2026-12-03T06:32:06+00:00", tmp_path)
    stage_tables(run, {name: conform_table(name, clean_tables.get(name)) for name in TABLES})
    env: dict[str, Any] = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", QUIET, run.run_id, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = proc.stdout.splitlines()
    gx = [line for line in log if "great_expectations" in line or "Calculating Metrics" in line or "Warning" in line]
    assert gx == [
        "great_expectations.datasource.fluent.config INFO Loading 'datasources' ->"
    ]  # the control, after the gate
    assert "Calculating Metrics" not in proc.stderr and "Warning" not in proc.stderr
    ours = log[: log.index(gx[0])]
    docs = run.file("quality", "data_docs")
    count = {
        stage: sum(len(suite.expectations) for suite in GATES.get(stage).suites().values())
        for stage in ("validated", "rollouts")
    }
    assert ours == [
        f"coworkenv.pipeline.release_tables INFO gate 'validated' passed: 0 of {count['validated']} expectations failed",
        f"  Data Docs: {docs / 'validated' / 'index.html'}",
        f"coworkenv.pipeline.release_tables INFO gate 'rollouts' passed: 0 of {count['rollouts']} expectations failed",
        f"  Data Docs: {docs / 'rollouts' / 'index.html'}",
    ]
