"""How closely an imported Claw-Eval task grades like the original: the same episodes graded twice, by CoworkEnv's
imported task and by the task's own `grader.py` from a local Claw-Eval checkout, with one stub judge of a fixed score
on both sides (docs/design/evaluation.md, "Agreement with Claw-Eval's graders").

Per imported task, the episodes: the imported oracle, the empty one (no call, no answer) and the answer-only one
("Done."), each played on CoworkEnv's workspace and translated into Claw-Eval's trace (its tool and argument names,
its message blocks, each service's audit). Per judge score (`--judge-scores`, default 0 and 1; CoworkEnv's rubric
checks pass at a score of 0.5 or more): both task scores (0.8 completion + 0.2 robustness, times safety), both pass
verdicts (score ≥ 0.75); reported per task and per category (general, multi_turn) as pass-verdict agreement and mean
|Δ score|, with the tasks the importer left out and the graders that failed.

    python bench/claw_agreement.py --claw-src ~/src/claw-eval --out results/claw_agreement.json
    python bench/claw_agreement.py --claw-src ~/src/claw-eval --tasks 'T0*' --judge-scores 0 0.5 1

The checkout is the user's: nothing of it is copied into this repository or its results (task ids and figures only).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import statistics
import sys
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine_info  # noqa: E402

CATEGORIES = {"T": "general", "C": "multi_turn", "M": "multimodal"}
"""Claw-Eval's task-id prefixes."""

EPISODES = ("oracle", "empty", "answer_only", "reads_skipped", "partial", "negated", "wrong_value", "prohibited")


class StubVerdicts:
    """CoworkEnv's side of the stub judge: a rubric passes when the fixed score is 0.5 or more; a code check's program
    (the task's own grader, with --own-grader) is given the score itself."""

    def __init__(self, score: float) -> None:
        self.fixed = score

    def verdict(self, criteria: str, text: str) -> Any:
        from coworkenv.judge.endpoint import Verdict

        return Verdict(passed=self.fixed >= 0.5, reason=f"stub judge: {self.fixed}")

    def score(self, criteria: str, text: str) -> float:
        return self.fixed


def category(task_id: str) -> str:
    return CATEGORIES.get(task_id[:1], "other")


def _episodes(spec: Any) -> dict[str, Any]:
    """Each episode played once, with no judge: its grade under each stub score is taken from its evidence."""
    from coworkenv.grading.play import play, play_answer_only, play_null
    from coworkenv.importers.claw_eval.perturbations import perturbed
    from coworkenv.judge.endpoint import using_judge

    with using_judge(None):
        runs = {"oracle": play(spec), "empty": play_null(spec), "answer_only": play_answer_only(spec)}
        return {**runs, **{name: play(spec, steps) for name, steps in perturbed(spec).items()}}


def task_rows(
    folder: Path, root: Path, grader: Any, scores: list[float], own_grader: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from coworkenv.grading.score import grade
    from coworkenv.importers.claw_eval import convert
    from coworkenv.importers.claw_eval.source import read_task
    from coworkenv.importers.claw_eval.upstream import claw_trace, vocabulary
    from coworkenv.judge.endpoint import using_judge

    task = read_task(folder)
    with using_judge(StubVerdicts(1.0) if own_grader else None):  # the import's gate: a judge that approves all
        spec, report = convert(task, root, own_grader=own_grader)
    info = {
        "task": folder.name,
        "category": category(folder.name),
        "imported": spec is not None,
        "why_not": report.why_not,
        "measured": spec is not None,
    }
    if spec is None and own_grader and report.why_not in ("no oracle", "the oracle fails the gate"):
        # graded by its own grader, a task whose derived answer is not proven is still measured: its episodes are
        # graded by the same program on both sides, so it says how faithfully the translation grades
        with using_judge(StubVerdicts(1.0)):
            spec, _ = convert(task, root, keep_without_oracle=True, own_grader=True)
        info["measured"] = spec is not None
    if spec is None:
        return info, []
    records = spec.workspace.model_dump().get("records") or {}
    words = vocabulary(task, list(records.get("collections") or {}))
    runs = _episodes(spec)
    traces = {kind: claw_trace(run.trajectory, run.evidence.calls, words) for kind, run in runs.items()}
    rows = []
    for score in scores:
        for kind, run in runs.items():
            theirs = grader.grade(folder, traces[kind], score)
            ours = grade(spec, replace(run.evidence, judge=StubVerdicts(score)))
            row = {
                "task": folder.name,
                "category": info["category"],
                "episode": kind,
                "judge_score": score,
                "ours": {
                    "score": ours.score,
                    "passed": ours.passed,
                    "completion": ours.completion,
                    "safety": ours.safety,
                },
                "theirs": theirs,
            }
            if "error" not in theirs:
                row["agree"] = ours.passed == theirs["passed"]
                row["delta"] = round(abs(ours.score - theirs["score"]), 4)
            rows.append(row)
    return info, rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [r for r in rows if "agree" in r]
    return {
        "episodes": len(rows),
        "graded": len(graded),
        "grader_errors": len(rows) - len(graded),
        "agreement": round(sum(r["agree"] for r in graded) / len(graded), 4) if graded else None,
        "mean_abs_delta": round(statistics.fmean(r["delta"] for r in graded), 4) if graded else None,
        "ours_pass": sum(1 for r in graded if r["ours"]["passed"]),
        "theirs_pass": sum(1 for r in graded if r["theirs"]["passed"]),
        "ours_pass_theirs_fail": sum(1 for r in graded if r["ours"]["passed"] and not r["theirs"]["passed"]),
        "ours_fail_theirs_pass": sum(1 for r in graded if not r["ours"]["passed"] and r["theirs"]["passed"]),
        "perturbations_passing_where_original_fails": sum(
            1
            for r in graded
            if r["episode"] not in ("oracle", "empty", "answer_only")
            and r["ours"]["passed"]
            and not r["theirs"]["passed"]
        ),
    }


def _figures(s: dict[str, Any]) -> str:
    """A summary's pass agreement and mean |Δ score| as two table cells (– where nothing was graded)."""
    agreement = f"{s['agreement']:.1%}" if s["agreement"] is not None else "–"
    delta = f"{s['mean_abs_delta']:.3f}" if s["mean_abs_delta"] is not None else "–"
    return f"{agreement} | {delta}"


def tables(results: dict[str, Any]) -> str:
    lines = [
        "| category | tasks | imported | measured | episodes graded | grader errors | pass agreement | mean abs Δ score "
        "| ours pass, theirs fail | ours fail, theirs pass |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in results["by_category"].items():
        lines.append(
            f"| {name} | {s['tasks']} | {s['imported']} | {s.get('measured', s['imported'])} | {s['graded']} "
            f"| {s['grader_errors']} | {_figures(s)} | {s['ours_pass_theirs_fail']} | {s['ours_fail_theirs_pass']} |"
        )
    rows = [r for r in results["rows"] if r["episode"] != "empty"]
    lines += ["", "Without the empty episode (0 here by contract, Claw-Eval's robustness alone there):", ""]
    lines += ["| category | episodes graded | pass agreement | mean abs Δ score |", "|---|---|---|---|"]
    for name in results["by_category"]:
        s = summary([r for r in rows if name in ("all", r["category"])])
        lines.append(f"| {name} | {s['graded']} | {_figures(s)} |")
    lines += [
        "",
        "| episode | judge score | graded | ours pass | Claw-Eval passes | pass agreement | mean abs Δ score |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, s in results["by_episode"].items():
        lines.append(
            f"| {key.replace('@', ' | ')} | {s['graded']} | {s.get('ours_pass', '–')} | {s.get('theirs_pass', '–')} | "
            f"{_figures(s)} |"
        )
    return "\n".join(lines)


def dump(results: dict[str, Any]) -> str:
    """The results as JSON, the summaries indented and one row a line (a diff of two runs stays readable)."""
    head = json.dumps({k: v for k, v in results.items() if k != "rows"}, indent=1)
    rows = ",\n".join(json.dumps(r, ensure_ascii=False) for r in results["rows"])
    return head[:-2] + ',\n "rows": [\n' + rows + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claw-src", type=Path, help="A local Claw-Eval checkout (src/ and tasks/).")
    parser.add_argument("--tasks", default="*", help="Task folders to measure (a glob over their names).")
    parser.add_argument(
        "--categories", nargs="+", default=["general", "multi_turn"], choices=sorted(set(CATEGORIES.values()))
    )
    parser.add_argument("--judge-scores", type=float, nargs="+", default=[0.0, 1.0])
    parser.add_argument("--timeout", type=float, default=60.0, help="Seconds a grader may take for one episode.")
    parser.add_argument(
        "--own-grader",
        action="store_true",
        help="Import each task with its own grader.py as a sandboxed code check (coworkenv import claw-eval --own-grader).",
    )
    parser.add_argument("--out", type=Path, help="Write every row and the summaries here (JSON).")
    parser.add_argument("--tables", action="store_true", help="Print the Markdown tables of --out and stop.")
    args = parser.parse_args()
    if args.tables:
        print(tables(json.loads(args.out.read_text())))
        return
    if args.claw_src is None:
        parser.error("--claw-src is required (a local Claw-Eval checkout)")

    from tqdm import tqdm

    from coworkenv.importers.claw_eval.graded import checkout_named
    from coworkenv.importers.claw_eval.upstream import UpstreamGrader

    root = args.claw_src / "tasks"
    folders = [
        f
        for f in sorted(root.iterdir())
        if (f / "task.yaml").is_file() and fnmatch.fnmatch(f.name, args.tasks) and category(f.name) in args.categories
    ]
    began = time.perf_counter()
    infos, rows = [], []
    named = checkout_named(args.claw_src) if args.own_grader else nullcontext()
    with UpstreamGrader(args.claw_src, timeout=args.timeout) as grader, named:
        for folder in tqdm(folders, unit="task", file=sys.stderr):
            info, task_rows_ = task_rows(folder, root, grader, args.judge_scores, args.own_grader)
            infos.append(info)
            rows += task_rows_
    by_category = {}
    for name in [*args.categories, "all"]:
        tasks = [i for i in infos if name in ("all", i["category"])]
        by_category[name] = {
            "tasks": len(tasks),
            "imported": sum(i["imported"] for i in tasks),
            "measured": sum(i.get("measured", i["imported"]) for i in tasks),
            **summary([r for r in rows if name in ("all", r["category"])]),
        }
    by_episode = {
        f"{kind}@{score:g}": summary([r for r in rows if r["episode"] == kind and r["judge_score"] == score])
        for kind in EPISODES
        for score in args.judge_scores
    }
    results = {
        "machine": machine_info(None),
        "settings": {
            "tasks": args.tasks,
            "categories": args.categories,
            "judge_scores": args.judge_scores,
            "own_grader": args.own_grader,
        },
        "seconds": round(time.perf_counter() - began, 1),
        "by_category": by_category,
        "by_episode": by_episode,
        "tasks": infos,
        "rows": rows,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(dump(results))
    print(tables(results))


if __name__ == "__main__":
    main()
