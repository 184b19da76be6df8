"""Whether this working tree produces exactly what an older commit produces: the check behind every "outputs are
identical" in docs/benchmarks.md.

Method: check the older commit (default HEAD, i.e. "did my uncommitted change alter any output?") out into a
scratch git worktree, start one worker per tree (bench/_versus_worker.py, each importing CoworkEnv from its own
tree only) and have each compute, per item, the SHA-256 of:

- **generate**: each of `--n` planned procedural tasks (families both trees have): its JSON (`TaskSpec.to_json`)
  and its initial-state hash; a rejection's record instead of a task;
- **oracle trajectory**: each task's oracle run live (`run_episode`): every message, tool results included;
- **battery**: each task's `validate_spec` verdict (every check's outcome, details and message);
- **battery from JSON**: the same, from the task's JSON parsed as a dict;
- **replay+grade**: the grade of each task's oracle trajectory replayed (`grade_trajectory`).

The tasks are the older commit's examples/tasks, as in bench/versus_commit.py. The part digests are compared, and
each differing item is named. Exit status 0: identical; 1: some output differs; 2: the check could not run.

    python bench/identity.py                  # the working tree against HEAD
    python bench/identity.py --rev c8cba29 --n 3000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from versus_commit import BenchError, two_trees, working_tree, working_tree_label  # noqa: E402


def part_digest(items: list[list[str]]) -> str:
    return hashlib.sha256("\n".join(f"{name}\t{sha}" for name, sha in items).encode()).hexdigest()


def differences(old: list[list[str]], new: list[list[str]]) -> list[str]:
    """The items whose hash differs, and those only one tree produced, by name."""
    old_by: dict[str, list[str]] = {}
    new_by: dict[str, list[str]] = {}
    for items, by in ((old, old_by), (new, new_by)):
        for name, sha in items:
            by.setdefault(name, []).append(sha)
    names = list(dict.fromkeys([name for name, _ in old] + [name for name, _ in new]))
    return [name for name in names if old_by.get(name) != new_by.get(name)]


def run(rev: str, n: int, seed: int, tasks: str | None) -> dict[str, Any]:
    new = working_tree()
    with two_trees(rev, None, "coworkenv-identity-") as (old_commit, workers, old_tree):
        task_dir = Path(tasks).resolve() if tasks else old_tree / "examples" / "tasks"
        probes = {label: w.ask(op="probe", tasks=str(task_dir)) for label, w in workers.items()}
        files = sorted(set(probes["old"]["loads"]) & set(probes["new"]["loads"]))
        families = sorted(set(probes["old"]["families"]) & set(probes["new"]["families"]))
        for w in workers.values():
            w.ask(op="setup", files=[str(task_dir / f) for f in files], n=1, seed=seed, families=families)
        parts = {label: w.ask(op="digest", n=n, seed=seed, families=families)["parts"] for label, w in workers.items()}
    compared = {
        name: {
            "items": len(parts["new"][name]),
            "old": part_digest(parts["old"][name]),
            "new": part_digest(parts["new"][name]),
            "differing": differences(parts["old"][name], parts["new"][name]),
        }
        for name in parts["new"]
    }
    return {
        "benchmark": "identity",
        "old": {"rev": rev, "commit": old_commit},
        "new": new,
        "n": n,
        "seed": seed,
        "task_files": files,
        "families": families,
        "identical": all(not p["differing"] for p in compared.values()),
        "parts": compared,
    }


def markdown(r: dict[str, Any]) -> str:
    new = working_tree_label(r["new"])
    lines = [
        f"Old: {r['old']['rev']} ({r['old']['commit'][:10]}); new: the working tree at {new}. Tasks: {len(r['task_files'])} "
        f"example files; generate: {r['n']} tasks (seed {r['seed']}) over {len(r['families'])} families.",
        "",
        "| part | items | digest (old) | digest (new) | differing items |",
        "|---|---:|---|---|---|",
    ]
    for name, p in r["parts"].items():
        shown = ", ".join(p["differing"][:5]) + (
            f" and {len(p['differing']) - 5} more" if len(p["differing"]) > 5 else ""
        )
        lines.append(f"| {name} | {p['items']:,} | {p['old'][:16]} | {p['new'][:16]} | {shown or 'none'} |")
    lines += ["", "Identical." if r["identical"] else "Some outputs DIFFER."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the older commit (default HEAD: the last commit)")
    parser.add_argument("--n", type=int, default=3000, help="procedural tasks generated and compared (default 3000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", help="task directory to use instead of the older commit's examples/tasks")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be >= 1")
    try:
        result = run(args.rev, args.n, args.seed, args.tasks)
    except BenchError as exc:
        print(f"identity: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
