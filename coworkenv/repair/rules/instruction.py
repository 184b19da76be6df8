"""Repairs of the instruction and the declared capabilities: leaked answers removed, capabilities recomputed."""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from coworkenv.checks import evidence_of, walk
from coworkenv.checks.text import MONEY_TOKEN, phrase_pattern
from coworkenv.repair.rules.common import REPAIRERS, RepairContext, Spec, changed, spec_or_note
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import SayStep, TaskSpec, ToolStep
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.workspace.tools import TOOLS

# --- leakage ------------------------------------------------------------------------------------------------


def _neutral(leak: dict[str, Any]) -> str:
    if leak.get("source") == "user.facts":
        name = re.split(r"[.\[]", str(leak.get("fact", "")))[0].replace("_", " ").strip() or "details"
        return f"the {name} (ask me)"
    return "the figure" if leak.get("source") == "answer_number" else "the answer"


def remove_leak(instruction: str, leak: dict[str, Any], tol: float = 0.0) -> str:
    """The instruction with every rendering of the leaked value replaced by a neutral phrase: the text the battery
    found (`found`), numbers as numbers (any rendering within `tol`), strings as whole words or phrases."""
    value, neutral = leak.get("value"), _neutral(leak)
    number: float | None = None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str) and re.fullmatch(r"[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", value.strip()):
            number = float(value.strip().lstrip("$€£").replace(",", ""))
    except OverflowError:
        number = None
    if number is not None and math.isfinite(number):
        slack = max(tol, 1e-9 * max(1.0, abs(number)))

        def swap(m: re.Match[str]) -> str:
            token = float(m.group().lstrip("$€£").replace(",", ""))
            return neutral if abs(token - number) <= slack else m.group()

        replaced = MONEY_TOKEN.sub(swap, instruction)
        if replaced != instruction:
            return replaced
    for rendering in [leak.get("found"), leak.get("as"), None if number is not None else value]:
        if isinstance(rendering, str) and rendering.strip():
            instruction = re.sub(
                phrase_pattern(rendering), neutral.replace("\\", "\\\\"), instruction, flags=re.IGNORECASE
            )
    return instruction


@REPAIRERS.register("no_leakage")
def repair_leakage(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Replace each leaked expected answer or hidden user fact in the instruction with a neutral phrase
    ("the figure", "the answer", "the <fact> (ask me)"), until the battery's leak finder finds none."""
    from coworkenv.validate.battery import leaks

    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    tolerances = {c.id: getattr(c, "tol", 0.0) for c in walk(spec.checks)}
    instruction, removed = spec.instruction, []
    for _ in range(3):
        found = leaks(spec.model_copy(update={"instruction": instruction}))
        if not found:
            break
        for leak in found:
            instruction = remove_leak(instruction, leak, tolerances.get(leak.get("check"), 0.0))
            removed.append(leak.get("value"))
    if not removed or instruction == spec.instruction:
        ctx.note("no leaked value could be located in the instruction")
        return None
    ctx.note(f"removed leaked value(s) {removed} from the instruction")
    return changed(spec_dict, {**copy.deepcopy(spec_dict), "instruction": instruction})


# --- capabilities ---------------------------------------------------------------------------------------------


def _general_capabilities(spec: TaskSpec) -> list[str]:
    """What a task with no declared capability left evidently exercises, from its tools (the capability each
    declares, `Tool.capability`) and checks: its changes first, then data analysis, then retrieval."""
    used = [TOOLS.get(s.tool) for s in spec.solution if isinstance(s, ToolStep) and s.tool in TOOLS]
    changes = {t.capability for t in used if t.kind != "read"}
    caps = [cap for cap in CAPABILITIES.names() if cap in changes and cap != "retrieval"]
    if "data_analysis" in evidence_of(spec.checks):
        caps.append("data_analysis")
    if any(t.kind == "read" for t in used):
        caps.append("retrieval")
    return caps


def _add_asked_user(spec_dict: Spec, spec: TaskSpec, ctx: RepairContext) -> bool:
    """A task whose user holds facts and whose oracle asks for them, but that has no asked_user check: add one
    on the reveal keywords the oracle's questions hit."""
    if spec.user is None or not spec.user.facts or not spec.user.reveal:
        return False
    says = [s.say.lower() for s in spec.solution if isinstance(s, SayStep)]
    words = list(
        dict.fromkeys(k for rule in spec.user.reveal for k in rule.when_any if any(k.lower() in s for s in says))
    )
    if not words:
        return False
    ids = {c.get("id") for c in walk(spec_dict["checks"]) if isinstance(c, dict)}
    cid = next(
        f"asked-user{'' if n == 1 else f'-{n}'}"
        for n in range(1, 100)
        if f"asked-user{'' if n == 1 else f'-{n}'}" not in ids
    )
    spec_dict["checks"].append({"id": cid, "kind": "asked_user", "weight": 1.0, "about": words})
    ctx.note(f"added check {cid}: the oracle asks the user about {words}")
    return True


@REPAIRERS.register("capabilities_consistent")
def repair_capabilities(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Recompute the declared capabilities from what the task tests: a capability the battery finds unsupported
    is removed; `multi_turn` is declared where the task asks the user (adding the asked_user check its oracle
    earns when only that is missing); an emptied list is inferred from tools and checks."""
    from coworkenv.validate.battery import Context, capability_problems

    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    new = copy.deepcopy(spec_dict)
    problems = (outcome.details or {}).get("problems") or capability_problems(Context(spec))
    caps = list(spec.capabilities)
    for problem in problems:
        cap, text = problem.get("capability"), str(problem.get("problem", ""))
        if cap == "multi_turn" and "no asked_user check" in text and _add_asked_user(new, spec, ctx):
            continue
        if text.startswith("declared") and cap in caps:
            caps.remove(cap)
        elif cap == "multi_turn" and "does not declare" in text:
            if spec.user is not None and spec.user.facts and spec.user.reveal:
                if "multi_turn" not in evidence_of(spec.checks) and not _add_asked_user(new, spec, ctx):
                    ctx.note("the oracle talks to the user but no reveal rule fires: cannot make it multi_turn")
                    return None
                caps.append("multi_turn")
            else:
                ctx.note(
                    "the task talks to the user (say steps / asked_user checks) but has no user with facts and reveal rules"
                )
                return None
    caps = list(dict.fromkeys(caps))
    if not caps:
        caps = _general_capabilities(spec)
    if not caps:
        ctx.note("cannot infer any capability the task exercises")
        return None
    if caps != spec.capabilities:
        ctx.note(f"capabilities {spec.capabilities} → {caps} (recomputed from what the task tests)")
    new["capabilities"] = caps
    return changed(spec_dict, new)
