"""One side of bench/versus_commit.py: a long-lived process that imports CoworkEnv from one source tree and times
workloads on request, so that the old and the new tree run in the same interpreter build, on the same core, one
repeat after the other.

Protocol: one JSON object per line on stdin, one JSON reply per line on the file descriptor given by `--reply-fd`
(stdout is sent to stderr, so that a library that prints cannot corrupt the replies). Requests:

- `{"op": "probe", "tasks": DIR}` -> the procedural families this tree has, and which task files of DIR it loads
  (a newer tree may reject an old task file, e.g. a regex its engine no longer accepts);
- `{"op": "setup", "files": [...], "n": N, "seed": S, "families": [...]}` -> loads the task files, records the
  oracle trajectories (every replayed oracle must score 1.0), plans N procedural tasks over the families, and runs
  each workload once untimed (the warm-up);
- `{"op": "time", "workload": W, "rounds": R}` -> wall and CPU seconds of R passes over workload W;
- `{"op": "calibration"}` -> `_common.calibration()` in this process;
- `{"op": "digest", "n": N, "seed": S, "families": [...]}` -> what the workloads produce, one SHA-256 per item
  (bench/identity.py compares two trees with it): each of N generated tasks' JSON and initial-state hash, each
  task's oracle trajectory (tool results included), battery verdict (from the spec object and from its JSON) and
  replayed oracle's grade.

Only names that exist both at commit 27970e3 and today are used; where a module moved, each known location is
tried, and a module that resolves outside the tree under test counts as missing (a clear error, not a silent mix).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# Where each name lives, oldest layout last; the first location that exists inside the tree is used.
LOCATIONS: dict[str, tuple[str, ...]] = {
    "load_tasks": ("coworkenv.spec.io",),
    "run_episode": ("coworkenv.episode.runner", "coworkenv.env.runner"),
    "make_policy": ("coworkenv.agents",),
    "grade_trajectory": ("coworkenv.grading.score",),
    "validate_spec": ("coworkenv.validate.battery",),
    "GenerateRequest": ("coworkenv.synth.generate",),
    "plan_for": ("coworkenv.synth.generate",),
    "procedural_tasks": ("coworkenv.synth.generate",),
    "load_families": ("coworkenv.synth.family",),
}


class Missing(Exception):
    """The tree under test lacks a name the benchmark needs."""


def isolate(tree: Path) -> None:
    """Import CoworkEnv from `tree` only: first on sys.path, and no editable-install finder that would fill a module
    the tree lacks from another checkout."""
    sys.path.insert(0, str(tree))
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    import coworkenv

    origin = Path(coworkenv.__file__).resolve()
    if tree not in origin.parents:
        raise Missing(f"coworkenv is imported from {origin}, not from the tree under test")


def resolve(tree: Path, name: str) -> Any:
    tried = []
    for module_name in LOCATIONS[name]:
        try:
            spec = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:
            spec = None
        if spec is None or spec.origin is None or tree not in Path(spec.origin).resolve().parents:
            tried.append(module_name)
            continue
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            return getattr(module, name)
        tried.append(f"{module_name} (no {name})")
    raise Missing(f"this tree has no {name}: tried {', '.join(tried)}")


class Workloads:
    def __init__(self, tree: Path) -> None:
        self.api = {name: resolve(tree, name) for name in LOCATIONS}
        self.specs: list[Any] = []
        self.pairs: list[tuple[Any, Any]] = []
        self.rows: list[Any] = []

    def probe(self, tasks: str) -> dict[str, Any]:
        loads, rejects = [], {}
        for path in sorted(p for p in Path(tasks).iterdir() if p.suffix in (".json", ".jsonl")):
            try:
                self.api["load_tasks"](path)
                loads.append(path.name)
            except Exception as exc:
                rejects[path.name] = f"{type(exc).__name__}: {str(exc)[:300]}"
        return {"families": sorted(self.api["load_families"]()), "loads": loads, "rejects": rejects}

    def setup(self, files: list[str], n: int, seed: int, families: list[str]) -> dict[str, Any]:
        api = self.api
        specs = [spec for path in files for spec in api["load_tasks"](path)]
        self.specs = specs
        self.pairs = []
        for spec in specs:
            trajectory, _ = api["run_episode"](spec, api["make_policy"]("oracle", spec))
            score = api["grade_trajectory"](spec, trajectory).score
            if score != 1.0:
                raise Missing(f"{spec.id}: the replayed oracle scores {score} in this tree, not 1.0")
            self.pairs.append((spec, trajectory))
        self.rows = list(api["plan_for"](api["GenerateRequest"](n=n, seed=seed, families=families)).rows)
        valid = sum(bool(api["validate_spec"](spec).valid) for spec in specs)
        generated = self.generate()
        return {"tasks": len(specs), "battery_valid": valid, "generated": generated}

    def replay(self) -> int:
        grade = self.api["grade_trajectory"]
        for spec, trajectory in self.pairs:
            grade(spec, trajectory)
        return len(self.pairs)

    def battery(self) -> int:
        validate = self.api["validate_spec"]
        for spec in self.specs:
            validate(spec)
        return len(self.specs)

    def generate(self) -> int:
        built = 0
        for item in self.api["procedural_tasks"](self.rows):
            if hasattr(item, "to_json"):  # a TaskSpec; a Rejection is counted out, as the pipeline does
                item.to_json()
                built += 1
        return built


def _sha(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _dumped(model: Any) -> Any:
    return model.model_dump(mode="json")


def digest(workloads: Workloads, n: int, seed: int, families: list[str]) -> dict[str, Any]:
    """Per part, (item name, SHA-256) of every item: the named items let a difference point at its task."""
    api = workloads.api
    rows = api["plan_for"](api["GenerateRequest"](n=n, seed=seed, families=families)).rows
    generated = []
    for item in api["procedural_tasks"](rows):
        if hasattr(item, "to_json"):
            generated.append((item.id, _sha(item.to_json() + "\n" + item.initial_state_hash)))
        else:
            generated.append((f"rejected {item.family} {item.seed}", _sha(_dumped(item))))
    validate = api["validate_spec"]
    return {
        "generate": generated,
        "oracle trajectory": [(spec.id, _sha(_dumped(t))) for spec, t in workloads.pairs],
        "battery": [(spec.id, _sha(_dumped(validate(spec)))) for spec in workloads.specs],
        "battery from JSON": [
            (spec.id, _sha(_dumped(validate(json.loads(spec.to_json()))))) for spec in workloads.specs
        ],
        "replay+grade": [(spec.id, _sha(_dumped(api["grade_trajectory"](spec, t)))) for spec, t in workloads.pairs],
    }


def timed(work: Any, rounds: int) -> dict[str, Any]:
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    items = sum(work() for _ in range(rounds))
    return {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu_start, "items": items}


def serve(tree: Path, reply: Any) -> None:
    workloads: Workloads | None = None
    error: str | None = None
    try:
        isolate(tree)
        workloads = Workloads(tree)
    except Exception as exc:  # reported on the first request, so the parent can name the tree that failed
        error = str(exc) if isinstance(exc, Missing) else f"{type(exc).__name__}: {exc}"
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if workloads is None:
                raise Missing(error)
            op = request["op"]
            if op == "probe":
                out: dict[str, Any] = workloads.probe(request["tasks"])
            elif op == "setup":
                out = workloads.setup(request["files"], request["n"], request["seed"], request["families"])
            elif op == "time":
                out = timed(getattr(workloads, request["workload"]), request["rounds"])
            elif op == "digest":
                out = {"parts": digest(workloads, request["n"], request["seed"], request["families"])}
            elif op == "calibration":
                from _common import calibration  # bench/_common.py of the benchmark's own checkout, for both trees

                out = calibration()
            else:
                raise ValueError(f"unknown request {op!r}")
            out["ok"] = True
        except Missing as exc:
            out = {"ok": False, "error": str(exc)}
        except Exception as exc:
            out = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        reply.write(json.dumps(out) + "\n")
        reply.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, help="the source tree to import CoworkEnv from")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to this CPU")
    args = parser.parse_args()
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    reply = os.fdopen(args.reply_fd, "w")
    sys.stdout = sys.stderr
    serve(args.tree.resolve(), reply)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
