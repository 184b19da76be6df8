"""What the registry records about a model version (docs/design/training.md, "Model registry and promotion"): its
lineage, its evaluations and its status, and the refs that name it."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError

Job = Literal["tiny", "import", "sft", "grpo", "gdpo", "dpo", "external"]
JOBS: tuple[str, ...] = ("tiny", "import", "sft", "grpo", "gdpo", "dpo", "external")
TRAINING_JOBS: tuple[str, ...] = ("sft", "grpo", "gdpo", "dpo")
"""The jobs a training.json may name; `tiny` and `import` come from the model card, `external` from no record at all."""
Status = Literal["candidate", "current", "retired", "rejected"]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""A model name: a folder name under `models/` that a ref can carry (no `:`, no `/`)."""
ALIASES = ("current", "latest")


class EvalRecord(BaseModel):
    """One evaluation of a model version: which published evaluation, on which suite, and its overall figures."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release_id: str = Field(description="The evaluation's release (kind `eval`): where its rows are read again.")
    run_id: str = Field(description="The evaluation run that published it.")
    suite: str | None = Field(description="The suite's name (`coworkenv-bench`, a release id, a file's stem).")
    suite_release: str | None = Field(
        description="The suite's release id (the eval release's parent); None for a file suite."
    )
    agent: str = Field(description="The agent label the rows carry (e.g. `hf:<dir>`).")
    recorded_at: str = Field(description="When it was attached to the entry (ISO 8601, UTC).")
    mean_safety: float = Field(description="Mean over tasks of each task's mean `safety` over its trials.")
    summary: dict[str, Any] = Field(
        description="The overall figures of the evaluation's summary.json (mean_score, pass_rate, safety_violation_rate, "
        "… each as value, lo, hi): `eval.metrics.summarize` of its rows with the evaluation's seed."
    )

    def matches(self, suite: str) -> bool:
        """Whether `suite` names this evaluation's suite (its name or its release id)."""
        return suite in (self.suite, self.suite_release)

    @property
    def suite_key(self) -> str:
        """What two evaluations must share to be compared: the suite's release, else its name."""
        return self.suite_release or self.suite or ""


class ModelEntry(BaseModel):
    """One registered version of a model: `<data root>/models/<name>/v<NNNN>/` holds the checkpoint and `entry.json`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The model's name (one registry line of versions).")
    version: int = Field(ge=1, description="1, 2, … in registration order.")
    path: str = Field(description="The checkpoint folder (what `hf:<path>` and training load).")
    job: Job = Field(
        description="What made the checkpoint: the training job of its training.json, `tiny`, `import` (a pretrained base "
        "imported from a GGUF file), or `external`."
    )
    base_model: str | None = Field(None, description="The model folder the job started from (training.json).")
    parent: str | None = Field(
        None, description="The registry ref (`name:vN`) of the version it was trained from, if registered."
    )
    training_release: str | None = Field(
        None, description="The data release it was trained on (training.json `release_id`)."
    )
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="The job's config (the tiny model's shape; an imported base's "
        "provenance: package, version, file, sha256, bytes).",
    )
    code_version: str | None = Field(None, description="The code version that trained it (training.json).")
    weights_sha256: str | None = Field(
        None, description="`models.verify.weights_digest` of its checkpoint: what an evaluation of it must record."
    )
    created_at: str = Field(description="When it was registered (ISO 8601, UTC).")
    evals: list[EvalRecord] = Field(default_factory=list, description="Its evaluations, oldest first.")
    status: Status = Field("candidate", description="candidate, current (the one CURRENT names), retired or rejected.")

    @property
    def ref(self) -> str:
        return f"{self.name}:v{self.version}"

    def newest_eval(self, suite: str | None = None) -> EvalRecord | None:
        """The newest evaluation, or the newest on `suite` (a suite name or release id)."""
        found = [e for e in self.evals if suite is None or e.matches(suite)]
        return found[-1] if found else None


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise CoworkEnvError(
            f"model name {str(name)[:60]!r}: use letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)"
        )
    return name


def parse_ref(ref: str) -> tuple[str, int | str | None]:
    """`name` → (name, None); `name:vN` or `name:N` → (name, N); `name:current` / `name:latest` → (name, alias)."""
    if not isinstance(ref, str) or not ref.strip():
        raise CoworkEnvError("a model ref is empty: give name, name:vN, name:current or name:latest")
    name, sep, which = ref.strip().partition(":")
    check_name(name)
    if not sep:
        return name, None
    if which in ALIASES:
        return name, which
    match = re.fullmatch(r"v?(\d{1,9})", which)
    if not match or int(match.group(1)) < 1:
        raise CoworkEnvError(f"model ref {ref[:80]!r}: after ':' give vN (N ≥ 1), current or latest")
    return name, int(match.group(1))
