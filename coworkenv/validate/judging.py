"""The rubric verdicts a sandboxed battery needs, asked for by the trusted parent (docs/design/contracts.md, "Judge").

`spec_pairs` reads the (criteria, text) pairs the battery will ask the judge about off a raw task JSON text alone,
without building a TaskSpec or running anything (only its scripted user is parsed, to know which `say` it answers):
per rubric check (group members included), the judged text (scope `answer`: the final answer; `messages`: every
assistant text) of each oracle-played trajectory of the battery — the oracle's, the answer-only one, the prefix of
`prefix_partial` — and each adversarial answer. Tool calls of the oracle carry no text. A pair it does not foresee
is reported back by the job as missed and asked for then (`validate.batch`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from coworkenv.caps import CAPS
from coworkenv.episode.user import scripted_reply
from coworkenv.grading.play import ANSWER_ONLY_TEXT
from coworkenv.judge.table import Pair
from coworkenv.spec.task import UserSpec
from coworkenv.workspace.tools import TOOLS

MAX_DEPTH = 16
"""Group nesting followed when looking for rubrics; deeper specs are refused by the schema anyway."""
MAX_REPEATS = 16
"""Times an answered final answer is foreseen said again (a user with huge `max_rounds` is the turn budget's to stop)."""


def _rubrics(checks: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    if not isinstance(checks, list) or depth > MAX_DEPTH:
        return
    for check in checks:
        if not isinstance(check, dict):
            continue
        if check.get("kind") == "rubric" and isinstance(check.get("criteria"), str):
            yield check
        yield from _rubrics(check.get("checks"), depth + 1)


def _is_effect(step: dict[str, Any]) -> bool:
    name = step.get("tool")
    return isinstance(name, str) and name in TOOLS and TOOLS.get(name).kind != "read"


def _user(data: dict[str, Any]) -> UserSpec | None:
    try:
        return UserSpec.model_validate(data["user"]) if isinstance(data.get("user"), dict) else None
    except ValueError:  # the battery rejects the spec; nothing to foresee
        return None


def conversation(steps: list[dict[str, Any]], user: UserSpec | None) -> tuple[str, ...]:
    """`Evidence.texts` of the scripted oracle playing `steps`: each `say` or `answer` goes to the scripted user, and
    the first one it does not answer ends the episode as the final answer (last); an answered final answer is said
    again, as the oracle does."""
    texts: list[str] = []
    for step in steps:
        text = step.get("say", step.get("answer")) if "tool" not in step else None
        if not isinstance(text, str):
            continue
        if scripted_reply(user, text, len(texts)) is None:
            return (*texts, text)
        texts.append(text)
    final = steps[-1].get("answer") if steps and isinstance(steps[-1].get("answer"), str) else ""
    for _ in range(MAX_REPEATS):
        if scripted_reply(user, final, len(texts)) is None:
            break
        texts.append(final)
    return (*texts, final)


def _judged(scope: str, texts: tuple[str, ...]) -> str:
    """What `rubric.judged_text` reads off evidence with these texts."""
    return texts[-1] if scope == "answer" else "\n\n".join(t for t in texts if t.strip())


def oracle_texts(data: dict[str, Any]) -> list[tuple[str, ...]]:
    """The `Evidence.texts` of each oracle-played trajectory of the battery that a rubric may judge: the oracle's, the
    answer-only one and (`prefix_partial`) the steps up to the first effect, then the answer."""
    solution = data.get("solution")
    steps = [s for s in solution if isinstance(s, dict)] if isinstance(solution, list) else []
    user = _user(data)
    out = [conversation(steps, user), conversation([{"answer": ANSWER_ONLY_TEXT}], user)]
    effects = [i for i, s in enumerate(steps) if _is_effect(s)]
    if len(effects) >= 2:
        out.append(conversation([*steps[: effects[0] + 1], steps[-1]], user))
    return out


def spec_pairs(text: Any) -> list[Pair]:
    """The (criteria, text) pairs the battery will ask about for one raw task text; [] when it is no JSON object
    (the battery then rejects it without asking)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or len(text) > CAPS.spec_chars:
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    rubrics = list(_rubrics(data.get("checks")))
    if not rubrics:
        return []
    runs = oracle_texts(data)
    pairs: list[Pair] = []
    for check in rubrics:
        scope = check.get("scope", "answer")
        adversarial = check.get("adversarial") if isinstance(check.get("adversarial"), list) else []
        candidates = [*(_judged(scope, texts) for texts in runs), *(a for a in adversarial if isinstance(a, str))]
        pairs += [(check["criteria"], t) for t in candidates if t.strip()]  # an empty text is never sent to the judge
    return list(dict.fromkeys(pairs))
