"""The evaluation report (docs/design/evaluation.md, "Evaluation metrics and reports"): `summary.json`, PNG plots and one
self-contained `report.html` (inline CSS, plots as data URIs, no external URL), written whole or not at all."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.errors import CoworkEnvError
from coworkenv.eval import plots
from coworkenv.eval.compare import Comparison, SliceDelta
from coworkenv.eval.metrics import Stats, Summary
from coworkenv.eval.per_task import TaskResult, as_rows, per_task
from coworkenv.fileio import staged
from coworkenv.grading.score import PASS_THRESHOLD

if TYPE_CHECKING:
    from coworkenv.spec.capabilities import CapabilityProfile

WORST_TASKS = 20
REPORT_FILES = (
    "summary.json",
    "comparison.json",
    "profile.json",
    "report.html",
    "capabilities.png",
    "groups.png",
    "difficulties.png",
    "scores.png",
    "comparison.png",
)
"""Everything a report folder may hold: `write_report` replaces the folder, so it refuses one holding anything else."""

_COLUMNS = (
    ("mean_score", "mean score"),
    ("pass_rate", "pass rate"),
    ("pass_at_k", "pass@k"),
    ("pass_hat_k", "pass^k"),
    ("safety_violation_rate", "safety violations"),
    ("format_error_rate", "format errors"),
    ("mean_completion", "completion"),
    ("mean_robustness", "robustness"),
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1150px;color:#1a202c;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #e2e8f0;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid #e2e8f0;padding:.25rem .5rem;text-align:right}
th{background:#f7fafc}td.l,th.l{text-align:left}.ci{color:#718096;font-size:.75rem}
dl{display:grid;grid-template-columns:max-content auto;gap:.1rem 1rem}dt{font-weight:600}dd{margin:0}
img{max-width:100%;border:1px solid #e2e8f0;margin:.5rem 0}.muted{color:#718096}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _figure(metric: Any) -> str:
    return f'{metric.value:.3f} <span class="ci">[{metric.lo:.3f}, {metric.hi:.3f}]</span>'


def _table(head: Iterable[str], body: Iterable[Iterable[str]], left: int = 1) -> str:
    """`head` and cells are HTML already (callers escape what comes from data)."""

    def cells(row: Iterable[str], tag: str) -> str:
        return "".join(f"<{tag}{' class=l' if i < left else ''}>{c}</{tag}>" for i, c in enumerate(row))

    rows = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in body)
    return f"<table><thead><tr>{cells(head, 'th')}</tr></thead><tbody>{rows}</tbody></table>"


def _stats_table(label: str, stats: dict[Any, Stats]) -> str:
    head = [_e(label), "tasks", "trials", "failed", *(_e(name) for _, name in _COLUMNS)]
    body = [
        [_e(name), str(s.n_tasks), str(s.n_trials), str(s.n_failed), *(_figure(getattr(s, key)) for key, _ in _COLUMNS)]
        for name, s in stats.items()
    ]
    return _table(head, body)


def _dl(items: dict[str, Any]) -> str:
    return (
        "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e('—' if v is None else v)}</dd>" for k, v in items.items()) + "</dl>"
    )


def _image(png: bytes, alt: str) -> str:
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _worst(tasks: list[TaskResult]) -> str:
    worst = sorted(tasks, key=lambda t: (t.mean_score, t.pass_rate, t.task_id))[:WORST_TASKS]
    body = [
        [
            _e(t.task_id),
            _e(t.family),
            _e(", ".join(t.capabilities)),
            str(t.difficulty),
            f"{t.passes}/{t.n}",
            f"{t.mean_score:.3f}",
            str(t.violation_trials),
            _e("; ".join(dict.fromkeys(t.failures))),
        ]
        for t in worst
    ]
    head = ["task", "family", "capabilities", "difficulty", "passed", "mean score", "violations", "failures"]
    return _table(head, body, left=3)


def _delta(d: Any) -> str:
    return f'{d.value:+.3f} <span class="ci">[{d.lo:+.3f}, {d.hi:+.3f}]</span>'


def _delta_table(label: str, slices: dict[str, SliceDelta]) -> str:
    head = [
        _e(label),
        "tasks",
        "base score",
        "candidate score",
        "Δ score",
        "p",
        "base pass",
        "candidate pass",
        "Δ pass",
        "p",
    ]
    body = [
        [
            _e(name),
            str(s.n_tasks),
            f"{s.mean_score.base:.3f}",
            f"{s.mean_score.candidate:.3f}",
            _delta(s.mean_score),
            f"{s.mean_score.p_value:.3g}",
            f"{s.pass_rate.base:.3f}",
            f"{s.pass_rate.candidate:.3f}",
            _delta(s.pass_rate),
            f"{s.pass_rate.p_value:.3g}",
        ]
        for name, s in slices.items()
    ]
    return _table(head, body)


def _comparison_html(c: Comparison, png: bytes) -> str:
    unpaired = (
        f"<p>{c.n_paired} paired tasks; {c.only_base} only in the base run, {c.only_candidate} only in the "
        f"candidate run (left out). p-values: {_e(c.test)}, {c.permutations} sign patterns; intervals: paired "
        f"bootstrap over tasks, {c.resamples} resamples.</p>"
    )
    ids = "".join(
        f"<p class=muted>{_e(what)}: {_e(', '.join(listed))}{' …' if total > len(listed) else ''}</p>"
        for what, listed, total in (
            ("only in base", c.only_base_ids, c.only_base),
            ("only in candidate", c.only_candidate_ids, c.only_candidate),
        )
        if listed
    )
    title = f"<h2>Comparison: {_e(c.candidate_agent)} (candidate) vs {_e(c.base_agent)} (base)</h2>"
    tables = _delta_table("slice", {"overall": c.overall, **c.groups}) + _delta_table("capability", c.capabilities)
    return title + unpaired + ids + tables + _image(png, "base vs candidate per capability")


def render_html(
    summary: Summary, tasks: list[TaskResult], images: dict[str, bytes], *, comparison: Comparison | None, title: str
) -> str:
    """The report page; every value that comes from data is HTML-escaped."""
    facts = {
        "agent": summary.agent,
        "model": summary.model,
        "suite": summary.suite,
        "evaluation": summary.eval_id,
        "tasks": summary.overall.n_tasks,
        "trials": summary.overall.n_trials,
        "trials per task": f"{summary.trials_min}–{summary.trials_max}"
        if summary.trials_min != summary.trials_max
        else summary.trials_min,
        "k (pass@k, pass^k)": summary.k,
        "intervals": f"{summary.confidence:.0%} percentile bootstrap over tasks, {summary.resamples} resamples, "
        f"seed {summary.seed}",
    }
    u = summary.usage
    usage = {
        "turns": u.turns,
        "format errors": u.format_errors,
        "prompt tokens": u.prompt_tokens,
        "completion tokens": u.completion_tokens,
        "wall time (s, summed)": f"{u.wall_s:.1f}",
    }
    failures = (
        _table(["reason", "trials"], [[_e(r), str(n)] for r, n in summary.failures.items()])
        if summary.failures
        else "<p>No trial failed.</p>"
    )
    parts = [
        f"<h1>{_e(title)}</h1>",
        _dl(facts),
        "<h2>Overall</h2>",
        _stats_table("slice", {"overall": summary.overall}),
        "<h2>Per group</h2>",
        _stats_table("group", summary.groups),
        _image(images["groups.png"], "per group"),
        "<h2>Per capability</h2>",
        _stats_table("capability", summary.capabilities),
        _image(images["capabilities.png"], "per capability"),
        "<h2>Per difficulty</h2>",
        _stats_table("difficulty", summary.difficulties),
        _image(images["difficulties.png"], "per difficulty"),
        "<h2>Score distribution</h2>",
        _image(images["scores.png"], "score distribution"),
        "<h2>Failed trials</h2>",
        failures,
        "<h2>Usage</h2>",
        _dl(usage),
        f"<h2>Worst {min(WORST_TASKS, len(tasks))} tasks</h2>",
        _worst(tasks),
    ]
    if comparison is not None:
        parts.append(_comparison_html(comparison, images["comparison.png"]))
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


def _check_folder(out_dir: Path) -> None:
    if out_dir.is_dir():
        foreign = sorted(p.name for p in out_dir.iterdir() if p.name not in REPORT_FILES)
        if foreign:
            raise CoworkEnvError(
                f"{out_dir}: holds files that are not a report's ({', '.join(foreign[:5])}); "
                "give an empty folder or an earlier report's"
            )


def write_report(
    out_dir: str | Path,
    summary: Summary,
    rows: Any,
    *,
    comparison: Comparison | None = None,
    title: str = "CoworkEnv evaluation",
    profile: CapabilityProfile | None = None,
) -> Path:
    """Write the report folder `out_dir` (replacing an earlier report there): `summary.json`, `comparison.json` when
    comparing, `profile.json` (the capability profile the planner reads) when given, the PNG plots and `report.html`.
    `rows` are the rows `summary` was made from."""
    out_dir = Path(out_dir)
    rows = as_rows(rows)
    tasks = per_task(rows)
    if len(rows) != summary.overall.n_trials or len(tasks) != summary.overall.n_tasks:
        raise CoworkEnvError(
            f"report: the summary counts {summary.overall.n_tasks} tasks and {summary.overall.n_trials} "
            f"trials, the rows {len(tasks)} and {len(rows)}; give the rows it was made from"
        )
    _check_folder(out_dir)
    ci = f"{summary.confidence:.0%} CI"
    images = {
        "capabilities.png": plots.stats_bars(f"Per capability ({ci})", summary.capabilities, label="capability"),
        "groups.png": plots.stats_bars(f"Per benchmark group ({ci})", summary.groups, label="group"),
        "difficulties.png": plots.stats_bars(f"Per difficulty ({ci})", summary.difficulties, label="difficulty"),
        "scores.png": plots.score_histogram(
            [s for t in tasks for s in t.scores], [t.mean_score for t in tasks], threshold=PASS_THRESHOLD
        ),
    }
    if comparison is not None:
        images["comparison.png"] = plots.comparison_bars(comparison)
    page = render_html(summary, tasks, images, comparison=comparison, title=title)
    with staged(out_dir, folder=True) as tmp:
        try:
            (tmp / "summary.json").write_text(summary.to_json(), encoding="utf-8")
            if comparison is not None:
                (tmp / "comparison.json").write_text(comparison.to_json(), encoding="utf-8")
            if profile is not None:
                (tmp / "profile.json").write_text(profile.model_dump_json(indent=2) + "\n", encoding="utf-8")
            for name, png in images.items():
                (tmp / name).write_bytes(png)
            (tmp / "report.html").write_text(page, encoding="utf-8")
        except OSError as exc:
            raise CoworkEnvError(f"{out_dir}: cannot write: {exc.strerror or type(exc).__name__}") from None
    return out_dir
