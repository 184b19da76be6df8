"""The pages over a data root the real pipeline made (tests/support/pipeline_root.py): each page's figures against what
the pipeline itself wrote (the release's tables through the reader, the run directory's verdicts, metrics and
summaries), every link of every page followed."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from coworkenv.data.reader import read_table
from coworkenv.pipeline import evaluation as ev
from coworkenv.pipeline.rundir import RunDir, safe_name, verdicts
from coworkenv.ui.html import DOCS_POLICY, PAGE_POLICY, pct
from tests.support.html_tables import links, table_with
from tests.support.pipeline_root import GATE_FAILS, NIGHTLY, ORACLE, SYNTHESIS
from tests.ui.conftest import BASE

pytestmark = pytest.mark.integration


def page(client: TestClient, path: str) -> str:
    reply = client.get(BASE + path)
    assert reply.status_code == 200, reply.text[-2000:]
    assert (
        reply.headers["content-type"].startswith("text/html")
        and reply.headers["content-security-policy"] == PAGE_POLICY
    )
    return reply.text


def plain(text: str) -> str:
    """A page's text as a reader sees it: no tags, entities decoded, whitespace collapsed."""
    inline = re.sub(r"</?(?:a|code|strong|span|em)\b[^>]*>", "", text)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def follow_links(client: TestClient, text: str) -> None:
    """Every link of a page is under the app's prefix and answers 200 (the pages link nowhere else)."""
    for href in set(links(text)):
        target = urlsplit(href)
        assert not target.scheme and target.path.startswith(BASE + "/"), href
        assert client.get(href.split("#")[0]).status_code == 200, href


def test_the_releases_page_lists_every_release_with_lineage_counts_and_gates(client, pipeline_root):
    text = page(client, "/releases")
    rows = {row["release"].split()[0]: row for row in table_with(text, "release")}
    assert list(rows) == [
        pipeline_root.null.release_id,
        pipeline_root.oracle.release_id,
        pipeline_root.tasks.release_id,
    ]  # newest first
    tasks = rows[pipeline_root.tasks.release_id]
    assert (
        "LATEST" in tasks["release"]
        and SYNTHESIS in tasks["lineage"]
        and pipeline_root.tasks.code_version in tasks["lineage"]
    )
    for name, count in pipeline_root.tasks.row_counts.items():
        assert (f"{name} {count}" in tasks["rows"]) == (count > 0), name
    assert (
        tasks["gates"].startswith("passed (validated, rollouts)") and "Data Docs: rollouts, validated" in tasks["gates"]
    )
    oracle = rows[pipeline_root.oracle.release_id]
    assert f"parent {pipeline_root.tasks.release_id}" in oracle["lineage"] and oracle["gates"].startswith(
        "passed (evaluated)"
    )
    assert f'"repair_rounds": {pipeline_root.tasks.config["repair_rounds"]},' in plain(
        text
    )  # the run's config, shown whole
    follow_links(client, text)


def test_the_release_page_counts_tasks_rejections_and_rescues_as_the_pipeline_made_them(client, pipeline_root):
    release = pipeline_root.tasks.release_id
    text = page(client, f"/releases/{release}")
    tasks = read_table(pipeline_root.root, release, "tasks").to_pylist()

    published = {row["family"]: int(row["published"]) for row in table_with(text, "family") if int(row["published"])}
    assert published == Counter(t["family"] for t in tasks)
    grid = {
        row["capability"]: [int(row[f"difficulty {d}"]) for d in range(1, 6)] for row in table_with(text, "capability")
    }
    expected: dict[str, list[int]] = {}
    for t in tasks:
        for capability in t["capabilities"]:
            expected.setdefault(capability, [0] * 5)[t["difficulty"] - 1] += 1
    assert grid == {**expected, "published tasks": [sum(1 for t in tasks if t["difficulty"] == d) for d in range(1, 6)]}

    run = RunDir.open(SYNTHESIS, pipeline_root.root)
    rejected = [v for _, v in verdicts(run) if not v.valid]
    codes = Counter(r.code for v in rejected for r in v.results if not r.passed and r.severity == "mandatory")
    shown = {row["code"]: row for row in table_with(text, "rejected tasks")}
    assert {code: int(row["rejected tasks"]) for code, row in shown.items()} == codes and len(codes) == 3
    assert all(row["example"].split(":")[0] in {v.task_id for v in rejected} for row in shown.values())
    metrics = json.loads(run.file("repaired", "metrics.json").read_text())
    assert f"Of {metrics['initially_invalid']} rejected task(s)" in plain(
        text
    ) and f"rescued {metrics['repaired']}:" in plain(text)
    assert f"rescue rate {pct(metrics['rescue_rate'])}" in plain(text)

    first = min(t["task_id"] for t in tasks)  # the sample, unless another is picked
    assert f"Sample task: <code>{first}</code>" in text
    spec = json.loads(next(t["spec_json"] for t in tasks if t["task_id"] == first))
    assert " ".join(spec["instruction"].split()) in plain(text)
    oracle = read_table(
        pipeline_root.root, release, "trajectories", filters=[("task_id", "=", first), ("agent", "=", "oracle")]
    ).to_pylist()[0]
    calls = [c["function"]["name"] for m in json.loads(oracle["messages_json"]) for c in m.get("tool_calls") or []]
    assert calls and all(f"→ {name}(" in text for name in calls) and "Oracle trajectory — score 1, passed" in text
    follow_links(client, text)


def test_any_task_of_the_release_can_be_the_sample(client, pipeline_root):
    release = pipeline_root.tasks.release_id
    last = max(read_table(pipeline_root.root, release, "tasks", columns=["task_id"]).column("task_id").to_pylist())
    assert f"Sample task: <code>{last}</code>" in page(client, f"/releases/{release}?task={last}")
    assert client.get(f"{BASE}/releases/{release}?task=no-such-task").status_code == 404


def test_an_evaluation_release_shows_its_pass_rates(client, pipeline_root):
    text = page(client, f"/releases/{pipeline_root.oracle.release_id}")
    overall = next(row for row in table_with(text, "pass@1") if row["group"] == "overall")
    assert overall["model"] == "oracle" and overall["pass@1"] == "100.0%" and overall["k"] == "2"
    assert "evaluation report" in text
    report = RunDir.open(ORACLE, pipeline_root.root).file("report")
    plots = re.findall(r'<img src="([^"]+)"', text)
    assert sorted(src.rsplit("/", 1)[1] for src in plots) == sorted(p.name for p in report.glob("*.png")) and plots
    assert all(client.get(src).content == (report / src.rsplit("/", 1)[1]).read_bytes() for src in plots)


def test_the_evaluations_page_compares_the_runs_of_a_suite_and_lists_comparison_reports(client, pipeline_root):
    text = page(client, "/evaluations")
    assert f"Suite {pipeline_root.tasks.release_id}" in plain(text)
    rows = {row["evaluation"]: row for row in table_with(text, "evaluation")}
    for manifest in (pipeline_root.oracle, pipeline_root.null):
        summary = ev.summary_of(RunDir.open(manifest.run_id, pipeline_root.root))
        row = rows[manifest.release_id]
        assert row["agent"] == manifest.config["agent"] and row["pass@1"] == pct(
            summary["overall"]["pass_rate"]["value"]
        )
        assert row["tasks"] == str(summary["overall"]["n_tasks"]) and row["report"] == "evaluation report"
    comparison = table_with(text, "paired tasks")[0]
    decision = json.loads(RunDir.open(NIGHTLY, pipeline_root.root).file("nightly", "decision.json").read_text())
    assert (comparison["base"], comparison["candidate"], comparison["paired tasks"]) == ("oracle", "null", "10")
    assert (
        comparison["decision"] == " ".join(f"not promoted: {decision['reason']}".split()) and not decision["promoted"]
    )
    follow_links(client, text)


def test_a_failed_gate_is_listed_with_its_data_docs(client, pipeline_root):
    text = page(client, "/runs")
    failed = table_with(text, "Data Docs")  # the first table: failed gates
    assert (
        [row["run"] for row in failed] == [GATE_FAILS]
        and failed[0]["gates"] == "failed"
        and failed[0]["release"] == "—"
    )
    every = {row["run"]: row["gates"] for row in table_with(text.split("All runs", 1)[1], "Data Docs")}
    assert every[SYNTHESIS].startswith("passed") and every[NIGHTLY] == "not gated"
    follow_links(client, text)

    site = RunDir.open(GATE_FAILS, pipeline_root.root).path / "quality"
    pages = [p for p in site.rglob("*.html")]
    served = [
        client.get(f"{BASE}/runs/{safe_name(GATE_FAILS)}/files/{p.relative_to(site.parent).as_posix()}") for p in pages
    ]
    assert all(r.status_code == 200 and r.headers["content-security-policy"] == DOCS_POLICY for r in served)
    assert any("sheet_bookkeeping" in r.text for r in served)  # the unregistered family the gate refused


def test_the_dag_run_tab_shows_the_runs_directory_release_and_gates(client, pipeline_root):
    text = page(client, f"/dag-runs/coworkenv_synthesize/{SYNTHESIS}")
    assert pipeline_root.tasks.release_id in text and "passed" in text and "validated" in text
    follow_links(client, text)
    assert "No CoworkEnv run directory" in page(client, "/dag-runs/other_dag/scheduled__2026-01-01T00:00:00+00:00")
    assert "The gate failed" in page(client, f"/dag-runs/coworkenv_synthesize/{GATE_FAILS}")


def test_the_dag_run_tab_of_the_nightly_loop_lists_the_runs_it_started(tmp_path):
    from tests.ui.conftest import TOKEN, mounted

    run = "scheduled__2026-12-02T00:00:00+00:00"  # a run's directory is its run id, as the UI shows it
    for name in (run, f"{run}.synthesize", f"{run}.evaluate", f"{run}1"):
        (tmp_path / "runs" / name).mkdir(parents=True)
    client = TestClient(mounted(tmp_path), headers={"authorization": TOKEN})
    text = page(client, f"/dag-runs/coworkenv_nightly/{run}")
    shown = [html.unescape(h.split(">")[-1]) for h in re.findall(r"<h2><a [^>]*>[^<]*", text)]
    assert shown == [f"{run}{suffix}" for suffix in ("", ".evaluate", ".synthesize")]


def test_reports_are_served_as_they_were_written(client, pipeline_root):
    report = RunDir.open(ORACLE, pipeline_root.root).file("report")
    for name in ("report.html", "groups.png", "summary.json"):
        reply = client.get(f"{BASE}/runs/{ORACLE}/files/report/{name}")
        assert reply.status_code == 200 and reply.content == (report / name).read_bytes(), name
        assert reply.headers["content-security-policy"] == PAGE_POLICY


@pytest.mark.parametrize(
    "path",
    [
        f"/runs/{ORACLE}/files/eval/config.json",  # a run file outside the reports and Data Docs
        f"/runs/{ORACLE}/files/tables/eval_results.parquet",
        f"/runs/{ORACLE}/files/report/..%2Feval%2Fconfig.json",
        f"/runs/{ORACLE}/files/report/%2e%2e/eval/config.json",
        f"/runs/{ORACLE}/files/report//etc/passwd",
        f"/runs/{ORACLE}/files/report/..%2F..%2F..%2Freleases%2FLATEST",
        f"/runs/{ORACLE}/files/%2Fetc%2Fpasswd",
        "/runs/..%2Freleases/files/report/report.html",
        "/runs/%2e%2e/files/releases/LATEST",
        "/releases/..%2F..%2Fetc",
        "/runs/no-such-run",
    ],
)
def test_urls_never_reach_outside_the_served_folders(client, pipeline_root, path):
    reply = client.get(BASE + path)
    leaked = (
        "root:x",
        "batch_size",
        pipeline_root.tasks.release_id,
        "PAR1",
    )  # /etc/passwd, a run's config, LATEST, Parquet
    assert reply.status_code == 404 and not any(text in reply.text for text in leaked)


def test_links_out_of_a_served_folder_are_not_followed(tmp_path):
    from tests.ui.conftest import TOKEN, mounted

    secret = tmp_path / "secret.html"
    secret.write_text("secret", encoding="utf-8")
    docs = tmp_path / "data" / "runs" / "r1" / "quality" / "validated"
    docs.mkdir(parents=True)
    (docs / "index.html").write_text("docs", encoding="utf-8")
    (docs / "leak.html").symlink_to(secret)
    (docs.parent.parent / "report").symlink_to(tmp_path, target_is_directory=True)  # a whole served folder elsewhere
    client = TestClient(mounted(tmp_path / "data"), headers={"authorization": TOKEN})
    assert client.get(f"{BASE}/runs/r1/files/quality/validated/index.html").text == "docs"
    for path in ("quality/validated/leak.html", "report/secret.html"):
        reply = client.get(f"{BASE}/runs/r1/files/{path}")
        assert reply.status_code == 404 and "secret" not in reply.text.replace("secret.html", ""), path


def test_every_page_needs_a_signed_in_user(app, anonymous, client, pipeline_root):
    from fastapi.routing import APIRoute

    mount = next(r for r in app.routes if getattr(r, "path", "") == "/coworkenv")
    routes = [r for r in mount.app.routes if isinstance(r, APIRoute)]
    assert routes and all(r.methods == {"GET"} for r in routes)  # read-only: nothing but GET
    values = {
        "release_id": pipeline_root.tasks.release_id,
        "name": ORACLE,
        "path": "report/report.html",
        "dag_id": "d",
        "run_id": SYNTHESIS,
    }
    for route in routes:
        url = BASE + route.path.replace(":path", "").format(**values)
        assert client.get(url, follow_redirects=False).status_code in (200, 303), url
        refused = anonymous.get(url, follow_redirects=False)
        assert refused.status_code == 401 and pipeline_root.tasks.release_id not in refused.text, url
        assert client.post(url).status_code == 405 and client.delete(url).status_code == 405


def test_text_from_the_data_is_escaped(tmp_path):
    from coworkenv.synth.generate import GenerateRequest, generate
    from tests.support.suites import publish_task_release
    from tests.ui.conftest import TOKEN, mounted

    specs, _ = generate(GenerateRequest(n=1, seed=5))
    hostile = "<script>alert(1)</script>"
    manifest = publish_task_release(tmp_path, specs, run_id=f"run {hostile}")
    client = TestClient(mounted(tmp_path), headers={"authorization": TOKEN})
    for path in ("/releases", f"/releases/{manifest.release_id}"):
        text = page(client, path)
        assert hostile not in text and html.escape(f"run {hostile}") in text


def test_an_empty_data_root_says_what_to_do(tmp_path):
    from tests.ui.conftest import TOKEN, mounted

    client = TestClient(mounted(tmp_path / "empty"), headers={"authorization": TOKEN})
    assert "No release has been published" in page(client, "/releases")
    assert "No evaluation has been published" in page(client, "/evaluations")
    assert "No run under" in page(client, "/runs")
