"""What the evaluations page shows: every evaluation release with its headline figures, grouped by the suite it ran
on so runs of one suite compare side by side, and the comparison reports runs wrote (the nightly loop's before/after).

The figures are the evaluation's own `summary.json` (the numbers its report shows, with their intervals), read from
its run directory; an evaluation whose run directory is gone is listed with its release only.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.data.layout import Manifest
from coworkenv.data.reader import list_releases
from coworkenv.data.root import Root, open_root
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.compare import Comparison
from coworkenv.eval.metrics import Summary
from coworkenv.pipeline.evaluation import REPORT_DIR
from coworkenv.pipeline.rundir import NIGHTLY_DIR
from coworkenv.ui.runs import RunInfo, list_runs

GROUPS = ("general", "multi_step", "multi_turn")
"""The Claw-Eval benchmark groups, in the order reports show them."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Evaluation(Frozen):
    manifest: Manifest
    run: RunInfo | None = None
    summary: Summary | None = None
    problem: str | None = None
    """Why the summary could not be read, when the run has one."""

    @property
    def agent(self) -> str:
        return str(self.manifest.config.get("agent", ""))

    @property
    def trials(self) -> Any:
        return self.manifest.config.get("trials")


class SuiteEvaluations(Frozen):
    suite: str
    """The suite's release id (the evaluations' parent), or the suite as configured for a file suite."""
    evaluations: list[Evaluation]


class ComparisonReport(Frozen):
    run: RunInfo
    path: str
    comparison: Comparison | None = None
    decision: dict[str, Any] | None = None
    problem: str | None = None


def _summary(path: str | os.PathLike[str]) -> tuple[Summary | None, str | None]:
    from pydantic import ValidationError

    from coworkenv.errors import format_validation_error
    from coworkenv.fileio import read_json

    try:
        return Summary.model_validate(read_json(path)), None
    except ValidationError as exc:
        return None, format_validation_error(exc, str(path))
    except CoworkEnvError as exc:
        return None, str(exc)


def evaluations(data_root: Root) -> tuple[list[SuiteEvaluations], list[ComparisonReport]]:
    """Evaluation releases by suite (suites newest first, evaluations newest first), and the comparison reports."""
    from coworkenv.ui.runs import by_directory, runs_path

    root = open_root(data_root)
    manifests = list_releases(root)
    runs = list_runs(root, manifests)
    by_name = {run.name: run for run in runs}
    base = runs_path(root)
    suites: dict[str, list[Evaluation]] = {}
    for name, manifest in reversed(list(by_directory([m for m in manifests if m.kind == "eval"]).items())):
        run = by_name.get(name)
        summary, problem = None, None
        if run is not None and base is not None and (base / name / REPORT_DIR / "summary.json").is_file():
            summary, problem = _summary(base / name / REPORT_DIR / "summary.json")
        suite = manifest.parent or str(manifest.config.get("suite", ""))
        suites.setdefault(suite, []).append(Evaluation(manifest=manifest, run=run, summary=summary, problem=problem))
    comparisons = (
        [
            _comparison(base / run.name, run, link.path)
            for run in runs
            for link in run.reports
            if link.kind == "comparison"
        ]
        if base
        else []
    )
    return [SuiteEvaluations(suite=s, evaluations=e) for s, e in suites.items()], comparisons


def _comparison(path: Any, run: RunInfo, report: str) -> ComparisonReport:
    from pydantic import ValidationError

    from coworkenv.fileio import read_json

    folder = path / report.rsplit("/", 1)[0]
    decision_file = path / NIGHTLY_DIR / "decision.json"
    try:
        comparison = Comparison.model_validate(read_json(folder / "comparison.json"))
        decision = (
            read_json(decision_file) if report.startswith(NIGHTLY_DIR + "/") and decision_file.is_file() else None
        )
    except (ValidationError, CoworkEnvError) as exc:
        return ComparisonReport(run=run, path=report, problem=str(exc).splitlines()[0])
    return ComparisonReport(
        run=run, path=report, comparison=comparison, decision=decision if isinstance(decision, dict) else None
    )
