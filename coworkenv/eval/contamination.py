"""The contamination check (docs/design/evaluation.md, "Benchmark suite and contamination"): before an evaluation, make
sure no suite task is, or nearly is, a task the model was trained on.

Three kinds of match between a suite task and a training task:
- `workspace`: the same initial state (canonical JSON hash, as `TaskSpec.initial_state_hash`);
- `solution`: the same oracle steps (canonical JSON hash of `solution`);
- `instruction`: near-duplicate wording — word 3-gram shingles, MinHash (128 permutations) and LSH find the
  candidates, and the exact Jaccard similarity of their shingle sets must reach the threshold. The LSH index is
  built for `threshold - LSH_MARGIN`: at the threshold itself banding finds a pair only about half the time (0.4 for
  0.8 with 128 permutations), 0.2 lower it finds 0.99 of them; the exact similarity then drops the extra candidates.

A suite task with any match is contaminated; `ensure_clean` fails when their share is above what is allowed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.data.reader import Root, read_manifest, read_table
from coworkenv.data.root import open_root
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec

MatchKind = Literal["workspace", "solution", "instruction"]
KINDS: tuple[MatchKind, ...] = ("workspace", "solution", "instruction")
DEFAULT_THRESHOLD = 0.8
NUM_PERM = 128
SHINGLE_WORDS = 3
LSH_MARGIN = 0.2
"""How far below the threshold the LSH index looks for candidates (recall; the exact Jaccard gives precision)."""
MAX_PAIRS = 10_000
"""Pairs a report keeps (a suite copied from a release with many duplicates could match millions)."""
_WORD = re.compile(r"\w+")


class ContaminationError(CoworkEnvError):
    """The suite overlaps the training tasks more than allowed."""


class ContaminationPair(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    suite_id: str
    train_id: str
    kind: MatchKind
    similarity: float = Field(description="1.0 for exact matches; the shingles' Jaccard similarity for instructions.")


class ContaminationReport(BaseModel):
    """What the check found; `clean` when the contaminated share is at most `max_share`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite_tasks: int
    training_tasks: int
    threshold: float = Field(description="Jaccard similarity from which two instructions are near-duplicates.")
    max_share: float = Field(description="Share of contaminated suite tasks allowed.")
    num_perm: int
    shingle_words: int
    pairs: tuple[ContaminationPair, ...] = Field(
        description="Matches, by suite task, kind and training task (at most MAX_PAIRS)."
    )
    pairs_left_off: int = Field(0, description="Matches found beyond MAX_PAIRS.")
    contaminated_ids: tuple[str, ...] = Field(description="Suite tasks with at least one match, in suite order.")
    max_similarity: float = Field(
        description="Highest instruction similarity among the LSH candidates (found from about threshold - LSH_MARGIN on; 0 when none)."
    )

    @property
    def share(self) -> float:
        return len(self.contaminated_ids) / self.suite_tasks if self.suite_tasks else 0.0

    @property
    def clean(self) -> bool:
        return self.share <= self.max_share

    def by_kind(self) -> dict[str, int]:
        counts = Counter(p.kind for p in self.pairs)
        return {k: counts[k] for k in KINDS}


@dataclass(frozen=True, slots=True)
class _Print:
    id: str
    workspace: str
    solution: str
    shingles: frozenset[str]


def shingles(text: str, words: int = SHINGLE_WORDS) -> frozenset[str]:
    """Word n-grams of the lower-cased text (the whole text as one shingle when it is shorter than n words)."""
    tokens = _WORD.findall(text.lower())
    if len(tokens) <= words:
        return frozenset([" ".join(tokens)]) if tokens else frozenset()
    return frozenset(" ".join(tokens[i : i + words]) for i in range(len(tokens) - words + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def workspace_hash(spec: TaskSpec) -> str:
    """`initial_state_hash`, computed afresh: that cached property survives a `model_copy` that changes the workspace."""
    return content_hash(canonical_json(spec.workspace.model_dump(mode="json", by_alias=True)))


def solution_hash(spec: TaskSpec) -> str:
    return content_hash(canonical_json(spec.model_dump(mode="json", by_alias=True)["solution"]))


def _fingerprint(spec: TaskSpec, words: int) -> _Print:
    return _Print(spec.id, workspace_hash(spec), solution_hash(spec), shingles(spec.instruction, words))


def _minhashes(prints: Sequence[_Print], num_perm: int) -> list:
    from datasketch import MinHash  # heavy: imported when a check runs

    return MinHash.bulk([[s.encode("utf-8") for s in sorted(p.shingles)] for p in prints], num_perm=num_perm)


def check_contamination(
    suite_tasks: Iterable[TaskSpec],
    training_tasks: Iterable[TaskSpec],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_share: float = 0.0,
    num_perm: int = NUM_PERM,
    shingle_words: int = SHINGLE_WORDS,
) -> ContaminationReport:
    """Compare every suite task with the training tasks (a `Suite`'s `.tasks`, `training_tasks(...)`)."""
    from datasketch import MinHashLSH

    if not 0.0 < threshold <= 1.0:
        raise CoworkEnvError(f"the similarity threshold must be in (0, 1], got {threshold}")
    if not 0.0 <= max_share <= 1.0:
        raise CoworkEnvError(f"the allowed contaminated share must be in [0, 1], got {max_share}")
    suite = [_fingerprint(t, shingle_words) for t in suite_tasks]
    train = [_fingerprint(t, shingle_words) for t in training_tasks]
    found: list[ContaminationPair] = []
    by_workspace: dict[str, list[int]] = defaultdict(list)
    by_solution: dict[str, list[int]] = defaultdict(list)
    for j, t in enumerate(train):
        by_workspace[t.workspace].append(j)
        by_solution[t.solution].append(j)
    for s in suite:
        found += [
            ContaminationPair(suite_id=s.id, train_id=train[j].id, kind="workspace", similarity=1.0)
            for j in by_workspace.get(s.workspace, ())
        ]
        found += [
            ContaminationPair(suite_id=s.id, train_id=train[j].id, kind="solution", similarity=1.0)
            for j in by_solution.get(s.solution, ())
        ]

    best = 0.0
    if suite and train:
        lsh = MinHashLSH(threshold=max(0.05, threshold - LSH_MARGIN), num_perm=num_perm)
        for j, m in enumerate(_minhashes(train, num_perm)):
            lsh.insert(j, m, check_duplication=False)
        for s, m in zip(suite, _minhashes(suite, num_perm), strict=True):
            for j in sorted(lsh.query(m)):  # candidates: verified by the exact similarity
                similarity = jaccard(s.shingles, train[j].shingles)
                best = max(best, similarity)
                if similarity >= threshold:
                    found.append(
                        ContaminationPair(
                            suite_id=s.id, train_id=train[j].id, kind="instruction", similarity=round(similarity, 4)
                        )
                    )

    order = {s.id: i for i, s in enumerate(suite)}
    found.sort(key=lambda p: (order[p.suite_id], KINDS.index(p.kind), -p.similarity, p.train_id))
    contaminated = tuple(dict.fromkeys(p.suite_id for p in found))
    return ContaminationReport(
        suite_tasks=len(suite),
        training_tasks=len(train),
        threshold=threshold,
        max_share=max_share,
        num_perm=num_perm,
        shingle_words=shingle_words,
        pairs=tuple(found[:MAX_PAIRS]),
        pairs_left_off=max(0, len(found) - MAX_PAIRS),
        contaminated_ids=contaminated,
        max_similarity=round(best, 4),
    )


def ensure_clean(report: ContaminationReport, max_share: float | None = None, *, show: int = 5) -> ContaminationReport:
    """The report, or a one-line `ContaminationError` naming the first pairs when the contaminated share is above
    `max_share` (default: the report's own)."""
    allowed = report.max_share if max_share is None else max_share
    if report.share <= allowed:
        return report
    pairs = "; ".join(
        f"{p.suite_id} ~ {p.train_id} ({p.kind}" + (f" {p.similarity:.2f})" if p.kind == "instruction" else ")")
        for p in report.pairs[:show]
    )
    more = len(report.pairs) + report.pairs_left_off - show
    raise ContaminationError(
        f"contaminated suite: {len(report.contaminated_ids)} of {report.suite_tasks} tasks ({report.share:.1%}) match "
        f"training tasks, above the allowed {allowed:.1%}: {pairs}" + (f" (and {more} more pairs)" if more > 0 else "")
    )


def training_tasks(data_root: Root, release_ids: Sequence[str]) -> list[TaskSpec]:
    """The tasks of task releases (`latest` allowed), read through the one reader, in release order."""
    if isinstance(release_ids, str) or not release_ids:
        raise CoworkEnvError("give the training release ids as a non-empty list")
    root = open_root(data_root)
    tasks: list[TaskSpec] = []
    for release in release_ids:
        manifest = read_manifest(root, release)
        if manifest.kind != "tasks":
            raise CoworkEnvError(
                f"release {manifest.release_id} is a {manifest.kind} release, not a task release: it holds no training data"
            )
        for row in read_table(root, manifest.release_id, "tasks", columns=["spec_json"]).to_pylist():
            tasks.append(TaskSpec.model_validate_json(row["spec_json"]))
    return tasks
