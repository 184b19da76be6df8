"""A gate's report, readable offline: `data_docs/<stage>/index.html` (docs/design/data.md, "Quality gates").

`write_page` writes one self-contained HTML file (an inline stylesheet, no script, no external URL): the verdict,
the failed expectations with their examples, then every expectation of every table with its result, and a link to
GX's own page for each table. GX's Data Docs (under `gx/`) load Bootstrap, Font Awesome, jQuery and Vega from CDNs
and fill their index with JavaScript, so offline they show neither styles nor status icons; `make_offline` rewrites
them: every script and every external stylesheet, image and link removed, the status icons as text, and a small
stylesheet inlined.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.fileio import read_text, write_output

if TYPE_CHECKING:
    from coworkenv.quality.gates import ExpectationOutcome, GateResult

GX_FOLDER = "gx"
"""GX's Data Docs site, inside the stage's report folder."""

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; line-height: 1.45;
       max-width: 80rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
h2 small { font-weight: normal; color: #59636e; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { border: 1px solid #d0d7de; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; overflow-wrap: anywhere; }
.passed { color: #1a7f37; font-weight: 600; } .failed { color: #cf222e; font-weight: 600; }
tr.broken td { background: #ffebe9; }
ul.examples { margin: .3rem 0 0; padding-left: 1.1rem; }
"""

GX_STYLE = (
    STYLE
    + """
.fa-check-circle::before { content: "\\2713  passed"; color: #1a7f37; font-style: normal; font-weight: 600; }
.fa-times::before { content: "\\2717  failed"; color: #cf222e; font-style: normal; font-weight: 600; }
.fa-exclamation-triangle::before { content: "! "; } .fa-question-circle::before { content: "? "; }
"""
)

_EXTERNAL = r"(?:https?:)?//"
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.S | re.I)
_EXTERNAL_TAG = re.compile(
    rf"""<(?:link|img|iframe|source|embed)\b[^>]*?\b(?:href|src)\s*=\s*["']?{_EXTERNAL}[^>]*>""", re.I
)
_EXTERNAL_ATTR = re.compile(
    rf"""\s(?:href|src|action|srcset)\s*=\s*(?:(["']){_EXTERNAL}.*?\1|{_EXTERNAL}[^\s>]*)""", re.I | re.S
)
_EXTERNAL_CSS_URL = re.compile(rf"""url\(\s*["']?{_EXTERNAL}[^)]*\)""", re.I)
_HEAD_END = re.compile(r"</head\s*>", re.I)


def offline_html(text: str) -> str:
    """A GX page without anything it would fetch: scripts (their libraries came from CDNs), external stylesheets,
    images and frames removed, links to outside unlinked (their text stays); our stylesheet inlined."""
    text = _SCRIPT.sub("", text)
    text = _EXTERNAL_TAG.sub("", text)
    text = _EXTERNAL_ATTR.sub("", text)
    text = _EXTERNAL_CSS_URL.sub("none", text)
    style = f"<style>{GX_STYLE}</style>"
    return _HEAD_END.sub(lambda _: style + "</head>", text, count=1) if _HEAD_END.search(text) else style + text


def offline_css(text: str) -> str:
    return _EXTERNAL_CSS_URL.sub("none", text)


def make_offline(site: Path) -> None:
    """Rewrite GX's site in place to render offline. Its index is a JavaScript table, empty without scripts: it
    becomes a pointer to the stage's report page (GX's pages link it as "Home")."""
    for path in sorted(site.rglob("*.html")):
        write_output(path, offline_html(read_text(path)))
    for path in sorted(site.rglob("*.css")):
        write_output(path, offline_css(read_text(path)))
    if (site / "index.html").exists():
        write_output(
            site / "index.html",
            _document(
                "Data Docs",
                '<meta http-equiv="refresh" content="0; url=../index.html">',
                '<p>The report of this gate: <a href="../index.html">index.html</a></p>',
            ),
        )


def gx_pages(site: Path, tables: list[str], source: str) -> dict[str, str]:
    """Each table's GX validation page (`<source>-<table>.html`), relative to the report folder."""
    pages = {}
    for table in tables:
        found = sorted((site / "validations").rglob(f"{source}-{table}.html"))
        if found:
            pages[table] = found[-1].relative_to(site.parent).as_posix()
    return pages


def write_page(docs_dir: Path, result: GateResult, pages: dict[str, str]) -> Path:
    """The gate's report page (`docs_dir/index.html`); its path."""
    index = docs_dir / "index.html"
    write_output(index, render_page(result, pages))
    return index


# --- the page ----------------------------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _document(title: str, head: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>{head}<style>{STYLE}</style></head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


def _verdict(success: bool) -> str:
    return '<span class="passed">passed</span>' if success else '<span class="failed">failed</span>'


def _examples(examples: list[Any]) -> str:
    if not examples:
        return ""
    items = "".join(f"<li><code>{_e(json.dumps(x, ensure_ascii=False, default=str))}</code></li>" for x in examples)
    return f'<ul class="examples">{items}</ul>'


def _row(outcome: ExpectationOutcome) -> str:
    columns = ", ".join(outcome.columns) or "(table)"
    where = f"<br>where <code>{_e(outcome.row_condition)}</code>" if outcome.row_condition else ""
    row = "<tr>" if outcome.success else '<tr class="broken">'
    return (
        f"{row}<td>{_verdict(outcome.success)}</td><td><code>{_e(outcome.rule)}</code></td>"
        f"<td><code>{_e(outcome.expectation)}</code></td><td><code>{_e(columns)}</code>{where}</td><td>{_e(outcome.description)}</td>"
        f"<td>{_e(outcome.observed)}{_examples(outcome.examples)}</td></tr>"
    )


def render_page(result: GateResult, pages: dict[str, str]) -> str:
    """Every expectation of the gate with its result, as one HTML page that needs nothing else to render."""
    stats = result.statistics
    tables: dict[str, dict[str, int]] = stats.get("tables", {})
    body = [f"<h1>Gate <code>{_e(result.stage)}</code>: {_verdict(result.success)}</h1>"]
    sizes = ", ".join(f"{_e(t)} ({n['rows']} rows)" for t, n in tables.items())
    body.append(
        f"<p>{stats.get('unsuccessful_expectations', 0)} of {stats.get('evaluated_expectations', 0)} expectations failed, "
        f"over {sizes}.{'' if result.success else ' Nothing from this stage may be published.'}</p>"
    )
    if result.failures:
        items = "".join(f"<li>{_e(f.message)}</li>" for f in result.failures)
        body.append(f"<h2>Failed expectations</h2><ol>{items}</ol>")
    for table, counts in tables.items():
        body.append(
            f'<h2 id="{_e(table)}">{_e(table)} <small>{counts["rows"]} rows · {counts["expectations"]} expectations · '
            f"{counts['failed']} failed</small></h2>"
        )
        if table in pages:
            body.append(
                f'<p>Great Expectations\' page of this table: <a href="{_e(pages[table])}">{_e(pages[table])}</a></p>'
            )
        rows = "".join(_row(o) for o in result.expectations if o.table == table)
        body.append(
            "<table><thead><tr><th>Result</th><th>Rule</th><th>Expectation</th><th>Columns</th><th>Expected</th>"
            f"<th>Observed</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    return _document(f"Gate {result.stage}: {'passed' if result.success else 'failed'}", "", "\n".join(body))
