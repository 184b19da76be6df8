"""Rollout-engine overhead against an endpoint that answers at once: turns/s of `run_trials` with the `openai:` agent.

Method: the instant endpoint (`tests/support/instant_endpoint.py`) in a process of its own, answering `--calls` tool
calls to the first tool, then a final answer; `n` procedural tasks (`generate(GenerateRequest(n, seed=1))`, not
timed), one trial each. For each concurrency C the whole `run_trials(specs, load_agent("openai:instant",
base_url=..., concurrency=C), concurrency=C, runtime="none", store=None)` call is timed (the event loop, connections,
episodes, grading, the records). The floor is the same call with an in-process async agent that builds the very same
replies without HTTP or JSON (the difference is what the HTTP client and the wire cost). Every record must be ok and
the two agents' conversations identical, or the run fails. Modes and concurrencies are interleaved repeat by repeat;
medians are reported. Turns/s: assistant turns completed per wall second; turn latency: `latency_s` of each turn as
the agent saw it (the HTTP round trip and its parsing); CPU: this process (`time.process_time`) and the endpoint's
(`/proc/<pid>/stat`) per turn.

    python bench/rollout_endpoint.py                         # markdown table
    python bench/rollout_endpoint.py --episodes 512 --concurrency 1,16,64 --repeats 3 --json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.agents.base import Reply, Request, load_agent  # noqa: E402
from coworkenv.agents.openai_agent import reply_from  # noqa: E402
from coworkenv.llm.async_chat import Completion  # noqa: E402
from coworkenv.rollout import run_trials  # noqa: E402
from coworkenv.rollout.trial_record import TrialRecord  # noqa: E402
from coworkenv.synth.generate import GenerateRequest, generate  # noqa: E402
from tests.support.instant_endpoint import Behaviour, instant_endpoint, parse_options  # noqa: E402

HTTP, FLOOR = "openai: agent → HTTP endpoint", "in-process instant agent (floor)"


class InstantAgent:
    """An `async` agent that answers in-process what the instant endpoint would (the same messages), at once."""

    kind = label = "instant"
    model = "instant"
    mode = "async"

    def __init__(self, calls: int):
        self.behaviour = Behaviour(parse_options(["--calls", str(calls)]))

    async def areply(self, request: Request) -> Reply:
        start = time.perf_counter()
        await asyncio.sleep(0)  # yield to the loop once, as the wait for a reply would: the episodes interleave
        body = self.behaviour.completion({"messages": request.messages, "tools": request.tools}, {})
        choice, usage = body["choices"][0], body["usage"]
        completion = Completion(
            choice["message"],
            usage["prompt_tokens"],
            usage["completion_tokens"],
            time.perf_counter() - start,
            1,
            choice["finish_reason"],
        )
        n_calls = sum(len(m.get("tool_calls") or ()) for m in request.messages if m.get("role") == "assistant")
        return reply_from(completion, first_id=n_calls + 1)

    def policy(self, spec: Any, *, seed: int = 0) -> Any:
        raise NotImplementedError("the benchmark drives this agent through run_trials only")


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux `/proc`); None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def one_run(
    specs: list[Any], mode: str, concurrency: int, endpoint: Any, calls: int, store: Path | None
) -> tuple[dict[str, Any], list[TrialRecord]]:
    agent = (
        load_agent("openai:instant", base_url=endpoint.base_url, concurrency=concurrency)
        if mode == HTTP
        else InstantAgent(calls)
    )
    gc.collect()
    server_start = proc_cpu_s(endpoint.pid) if mode == HTTP else None
    start, cpu_start = time.perf_counter(), time.process_time()
    records = run_trials(specs, agent, trials=1, concurrency=concurrency, runtime="none", store=store)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    server_end = proc_cpu_s(endpoint.pid) if mode == HTTP else None
    bad = next((r for r in records if not r.ok), None)
    if bad is not None:
        raise SystemExit(f"{mode}, concurrency {concurrency}: trial {bad.task_id} failed ({bad.error})")
    turns = [t for r in records for t in r.trace]
    server_cpu = None if server_start is None or server_end is None else server_end - server_start
    return {
        "wall_s": wall,
        "episodes": len(records),
        "turns": len(turns),
        "tool_calls": sum(len(t["calls"]) for t in turns),
        "client_cpu_s": cpu,
        "server_cpu_s": server_cpu,
        "latency_p50_s": percentile([t["latency_s"] for t in turns], 0.5),
        "latency_p95_s": percentile([t["latency_s"] for t in turns], 0.95),
    }, records


def same_conversations(a: list[TrialRecord], b: list[TrialRecord]) -> bool:
    return [(r.task_id, r.messages, r.grade.score) for r in a] == [(r.task_id, r.messages, r.grade.score) for r in b]


def summarise(runs: list[dict[str, Any]], calib: dict[str, Any]) -> dict[str, Any]:
    first = runs[0]
    med = {
        k: statistics.median(r[k] for r in runs) for k in ("wall_s", "client_cpu_s", "latency_p50_s", "latency_p95_s")
    }
    rates = sorted(first["turns"] / r["wall_s"] for r in runs)
    server = [r["server_cpu_s"] for r in runs if r["server_cpu_s"] is not None]
    return {
        "episodes": first["episodes"],
        "turns": first["turns"],
        "tool_calls": first["tool_calls"],
        "median_s": med["wall_s"],
        "turns_per_s": statistics.median(rates),
        "turns_per_s_min": rates[0],
        "turns_per_s_max": rates[-1],
        "turns_per_s_per_1k_calib": calibrated(statistics.median(rates), calib),
        "episodes_per_s": first["episodes"] / med["wall_s"],
        "tool_calls_per_s": first["tool_calls"] / med["wall_s"],
        "latency_p50_ms": 1000 * med["latency_p50_s"],
        "latency_p95_ms": 1000 * med["latency_p95_s"],
        "client_cpu_ms_per_turn": 1000 * med["client_cpu_s"] / first["turns"],
        "server_cpu_ms_per_turn": 1000 * statistics.median(server) / first["turns"] if server else None,
        "runs_s": [r["wall_s"] for r in runs],
    }


def run(episodes: int, concurrencies: list[int], calls: int, repeats: int, store: bool) -> dict[str, Any]:
    calib = calibration()
    specs, _ = generate(GenerateRequest(n=episodes, seed=1))
    modes = [HTTP, FLOOR]
    raw: dict[tuple[str, int], list[dict[str, Any]]] = {(m, c): [] for m in modes for c in concurrencies}
    load_before = os.getloadavg()
    with instant_endpoint(calls=calls) as endpoint, tempfile.TemporaryDirectory() as tmp:
        for mode in modes:  # warm-up: imports, regular expressions, the endpoint's first connections
            one_run(specs[: min(len(specs), 64)], mode, max(concurrencies), endpoint, calls, None)
        for repeat in range(repeats):
            for c in concurrencies:
                kept: dict[str, list[TrialRecord]] = {}
                for mode in modes:
                    path = Path(tmp) / f"{repeat}-{c}-{modes.index(mode)}.jsonl" if store else None
                    result, kept[mode] = one_run(specs, mode, c, endpoint, calls, path)
                    raw[(mode, c)].append(result)
                if repeat == 0 and not same_conversations(kept[HTTP], kept[FLOOR]):
                    raise SystemExit(f"concurrency {c}: the endpoint's and the in-process agent's conversations differ")
    return {
        "n_tasks": len(specs),
        "calls_per_episode": calls,
        "repeats": repeats,
        "store": store,
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "machine": machine_info(None),
        "calibration": calib,
        "results": [
            {"mode": m, "concurrency": c, **summarise(raw[(m, c)], calib)} for m in modes for c in concurrencies
        ],
    }


def markdown(out: dict[str, Any]) -> str:
    first = out["results"][0]
    load = (
        ", ".join(f"{x:.1f}" for x in out["load_avg_before"])
        + " → "
        + ", ".join(f"{x:.1f}" for x in out["load_avg_after"])
    )
    lines = [
        f"{out['n_tasks']} episodes ({first['turns']} assistant turns, {first['tool_calls']} tool calls; the endpoint makes "
        f"{out['calls_per_episode']} calls, then answers), median of {out['repeats']}"
        f"{', trials file written' if out['store'] else ''}; load average {load}; {out['machine']['cpu']}, "
        f"{out['machine']['logical_cpus']} logical CPUs",
        calibration_line(out["calibration"]),
        "",
        "| mode | concurrent episodes | turns/s (median) | min – max | turns/s per 1k calib | episodes/s | tool calls/s | turn latency p50 / p95 "
        "| client CPU per turn | endpoint CPU per turn |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in out["results"]:
        server = f"{r['server_cpu_ms_per_turn']:.2f} ms" if r["server_cpu_ms_per_turn"] is not None else "—"
        lines.append(
            f"| {r['mode']} | {r['concurrency']} | **{r['turns_per_s']:.0f}** | {r['turns_per_s_min']:.0f} – {r['turns_per_s_max']:.0f} "
            f"| {r['turns_per_s_per_1k_calib']:.2f} "
            f"| {r['episodes_per_s']:.0f} | {r['tool_calls_per_s']:.0f} | {r['latency_p50_ms']:.2f} / {r['latency_p95_ms']:.2f} ms "
            f"| {r['client_cpu_ms_per_turn']:.2f} ms | {server} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=512, help="generated tasks, one episode each")
    parser.add_argument("--concurrency", default="1,16,64", help="comma-separated concurrent episodes")
    parser.add_argument(
        "--calls", type=int, default=3, help="tool-call turns the endpoint makes before its final answer"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per mode and concurrency (median reported)")
    parser.add_argument("--store", action="store_true", help="write a trials file too (one fsync'd line per trial)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a markdown table")
    args = parser.parse_args()
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    if not concurrencies or min(concurrencies) < 1 or args.episodes < 1 or args.repeats < 1 or args.calls < 0:
        parser.error("episodes, repeats and every concurrency must be at least 1, calls at least 0")
    out = run(args.episodes, concurrencies, args.calls, args.repeats, args.store)
    print(json.dumps(out, indent=2) if args.json else markdown(out))


if __name__ == "__main__":
    main()
