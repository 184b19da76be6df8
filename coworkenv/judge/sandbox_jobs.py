"""Sandbox jobs that may grade rubrics (docs/design/contracts.md, "Judge"): the one protocol, used by validation, the
oracle's rollouts and local agents' trials.

A judged job's payload is a JSON object; with a judge active, the parent adds `"verdicts": [TableRow, ...]` (the
pairs it foresees for that item) and the job, through `judged_job`, answers `{"output", "missed"}`; the parent asks
the judge for what was missed and runs those items once more (`judge.table.run_judged`), and hands on each item's
`output` as if the job had answered it plainly (`run_jobs_judged`). Without a judge the payloads go in unchanged and
the job answers its plain output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from coworkenv.judge.endpoint import JudgeLike, active_judge
from coworkenv.judge.table import Pair, Report, TableRow, missed_from_json, play_judged, rows_json, run_judged

VERDICTS = "verdicts"


def judged_job(request: dict[str, Any], work: Callable[[], Any]) -> Any:
    """Inside a job: `work()`, as is when the request carries no verdicts, else with a `TableJudge` of them installed
    and wrapped as `{"output", "missed"}`."""
    if VERDICTS not in request:
        return work()
    output, missed = play_judged(request[VERDICTS], work)
    return {"output": output, "missed": missed}


def _with_verdicts(payload: str, rows: list[TableRow]) -> str:
    request = json.loads(payload)  # the parent's own payload
    return json.dumps({**request, VERDICTS: rows_json(rows)}, ensure_ascii=False)


def _missed(result: Any) -> list[Pair]:
    return missed_from_json(result.output.get("missed")) if result.ok and isinstance(result.output, dict) else []


def _unwrapped(result: Any, index: int) -> Any:
    if result.ok and not (isinstance(result.output, dict) and "output" in result.output):
        return result.model_copy(
            update={
                "index": index,
                "ok": False,
                "output": None,
                "error_code": "sandbox_bad_output",
                "error": "the judged job returned no output",
            }
        )
    return result.model_copy(update={"index": index, "output": result.output["output"] if result.ok else None})


def run_jobs_judged(
    job: str,
    payloads: Sequence[str],
    wanted: Sequence[Sequence[Pair]],
    *,
    judge: JudgeLike | None = None,
    progress: Callable[[int], None] | None = None,
    on_result: Callable[[Any], None] | None = None,
    run: Callable[[str, list[str], Callable[[Any], None]], None] | None = None,
    **options: Any,
) -> list[Any]:
    """`sandbox.pool.run_jobs(job, payloads, ...)` where item i's job gets the verdicts of `judge` (default: the active
    one) on `wanted[i]`, and an item whose job missed pairs runs once more with those too (its second result is the
    one returned). With no judge: plain `run_jobs`. `progress` and `on_result` see each item's final result. `run(job,
    texts, on_result)` runs a batch elsewhere (a pool the caller keeps), calling `on_result` with each `JobResult`,
    its `index` the text's position; default: `run_jobs` with `options`."""
    from coworkenv.sandbox.pool import run_jobs

    judge = judge if judge is not None else active_judge()
    if judge is None and run is None:
        return run_jobs(job, payloads, progress=progress, on_result=on_result, **options)

    def in_pool(job: str, texts: list[str], on_result: Callable[[Any], None]) -> None:
        run_jobs(job, texts, on_result=on_result, **options)

    run = run or in_pool
    payloads = list(payloads)
    out: list[Any] = [None] * len(payloads)

    def done(index: int, result: Any) -> None:
        out[index] = result
        if on_result is not None:
            on_result(result)
        if progress is not None:
            progress(1)

    if judge is None:
        run(job, payloads, lambda r: done(r.index, r))
        return out

    def jobs(indices: list[int], tables: list[list[TableRow]], report: Report) -> None:
        texts = [_with_verdicts(payloads[i], rows) for i, rows in zip(indices, tables, strict=True)]
        run(job, texts, lambda r: report(indices[r.index], r))

    run_judged(wanted, judge, jobs, _missed, lambda index, result: done(index, _unwrapped(result, index)))
    return out
