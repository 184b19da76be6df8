"""Repairs of the spec as a whole: fault profiles, non-finite values, mechanical schema fixes."""

from __future__ import annotations

import copy
import math
from typing import Any

import jsonpatch

from coworkenv.checks import walk
from coworkenv.checks.tool_refs import solution_tools
from coworkenv.grading.play import play
from coworkenv.registry import closest
from coworkenv.repair.rules.common import (
    REPAIRERS,
    SCHEMA_FIELDS,
    RepairContext,
    Spec,
    changed,
    oracle_run,
    parse,
    spec_or_note,
)
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.workspace.tools import TOOLS

# --- faults ---------------------------------------------------------------------------------------------------


FAULT_RATES = (0.3, 0.2, 0.1, 0.05)
SEED_TRIES = 32


def _fault_profile_ok(spec_dict: Spec, rate: float, seed: int) -> bool:
    spec = parse({**spec_dict, "faults": {"rate": rate, "seed": seed}})
    if spec is None:
        return False
    oracle = play(spec)
    return oracle.grade.score == 1.0 and oracle.faults > 0


@REPAIRERS.register("solvable_under_faults")
def repair_faults(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Lower a fault rate that the retrying oracle cannot get through: the highest of 0.3, 0.2, 0.1, 0.05 (below
    the declared rate), with the first seed from the declared one on, under which the oracle scores 1.0 and
    still meets at least one injected fault."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    rate, seed = spec.faults.rate, spec.faults.seed
    if rate <= 0.0:
        ctx.note("no fault profile to repair")
        return None
    if oracle_run(spec).grade.score != 1.0:
        ctx.note("the oracle fails even without faults: not a fault-profile problem")
        return None
    for candidate in [
        r for r in sorted({*FAULT_RATES, round(rate / 2, 4)}, reverse=True) if 0 < r < rate and r <= FAULT_RATES[0]
    ]:
        for s in range(seed, seed + SEED_TRIES):
            if _fault_profile_ok(spec_dict, candidate, s):
                ctx.note(
                    f"fault profile rate {rate}, seed {seed} → rate {candidate}, seed {s}: the retrying oracle scores 1.0 through injected faults"
                )
                return changed(spec_dict, {**copy.deepcopy(spec_dict), "faults": {"rate": candidate, "seed": s}})
    ctx.note(f"no lower fault rate lets the retrying oracle score 1.0 (declared {rate})")
    return None


# --- determinism ----------------------------------------------------------------------------------------------


def non_finite(node: Any, path: str = "") -> list[str]:
    """JSON Pointers of the NaN/Infinity numbers in a spec: they do not survive its JSON serialization (they
    come back as null), so a run of the spec and a run of its own JSON differ."""
    if isinstance(node, float) and not math.isfinite(node):
        return [path]
    if isinstance(node, dict):
        return [
            p for k, v in node.items() for p in non_finite(v, f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}")
        ]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in non_finite(v, f"{path}/{i}")]
    return []


@REPAIRERS.register("deterministic")
def repair_determinism(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Runs of the spec and of its own JSON differ. Episodes are pure functions of the spec, so the element that
    can make them differ is a value that does not survive serialization (NaN/Infinity). Inside a check, a
    prohibited rule's args or metadata it is removed (the check's key, the rule's argument, the field); inside
    the oracle's solution the intended value is unknown, and with no such value nothing is identifiable: both
    unrepairable."""
    pointers = non_finite(spec_dict)
    if not pointers:
        ctx.note("no identifiable non-deterministic element: the spec holds no value that changes on serialization")
        return None
    in_solution = [p for p in pointers if p.startswith("/solution/") or p.startswith("/workspace/")]
    if in_solution:
        ctx.note(f"non-finite value(s) at {in_solution} in the oracle or the workspace: the intended value is unknown")
        return None
    new = copy.deepcopy(spec_dict)
    for pointer in sorted(pointers, reverse=True):
        parts = pointer.split("/")
        if parts[1] == "prohibited" and len(parts) >= 5 and parts[3] == "args":
            pointer = "/".join(parts[:5])
        elif parts[1] == "checks" and len(parts) >= 4:
            pointer = "/".join(parts[:4])
        try:
            jsonpatch.JsonPatch([{"op": "remove", "path": pointer}]).apply(new, in_place=True)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
            continue
        ctx.note(f"removed {pointer}: a NaN/Infinity there reads back as null")
    return changed(spec_dict, new)


# --- schema ---------------------------------------------------------------------------------------------------


@REPAIRERS.register("schema")
def repair_schema(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Mechanical schema fixes: unknown top-level fields dropped, unknown tool and capability names mapped to
    the closest known one (or dropped), duplicate tools and check ids made unique, weights ≤ 0 set to 1,
    difficulty and fault rate clamped. Anything else (a missing final answer, an unknown check kind) is not
    mechanical."""
    if not isinstance(spec_dict, dict):
        ctx.note("the spec is not a JSON object")
        return None
    new = copy.deepcopy(spec_dict)
    if non_finite(new):  # the schema refuses NaN/Infinity: remove them where their intent is clear
        fixed = repair_determinism(new, outcome, ctx)
        if fixed is None:
            return None
        new = fixed
    extra = sorted(k for k in new if k not in SCHEMA_FIELDS)
    for key in extra:
        del new[key]
    if extra:
        ctx.note(f"dropped unknown top-level field(s) {extra}")
    in_solution = solution_tools(new)  # a list: the tools added below keep the solution's order
    if isinstance(new.get("tools"), list):
        tools: list[str] = []
        for name in new["tools"]:
            fixed = name if isinstance(name, str) and name in TOOLS else closest(name, TOOLS.names())
            if fixed is None or (fixed != name and fixed not in in_solution and name not in in_solution):
                ctx.note(f"dropped unknown tool {name!r} from `tools`")
                continue
            if fixed != name:
                ctx.note(f"tool {name!r} → {fixed!r}")
            if fixed not in tools:
                tools.append(fixed)
        tools += [t for t in dict.fromkeys(in_solution) if t in TOOLS and t not in tools]
        new["tools"] = tools
    if isinstance(new.get("capabilities"), list):
        caps: list[str] = []
        for name in new["capabilities"]:
            fixed = name if isinstance(name, str) and name in CAPABILITIES else closest(name, CAPABILITIES.names())
            if fixed is None:
                ctx.note(f"dropped unknown capability {name!r}")
            elif fixed not in caps:
                caps.append(fixed)
        new["capabilities"] = caps
    if isinstance(new.get("checks"), list):
        seen: set[str] = set()
        for ch in walk(new["checks"]):  # group members included: ids are unique across the spec
            if not isinstance(ch, dict):
                continue
            weight = ch.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
                ctx.note(f"check {ch.get('id')}: weight {weight!r} → 1.0")
                ch["weight"] = 1.0
            cid = ch.get("id")
            if isinstance(cid, str) and cid in seen:
                n = 2
                while f"{cid}-{n}" in seen:
                    n += 1
                ctx.note(f"duplicate check id {cid!r} → {cid}-{n}")
                ch["id"] = f"{cid}-{n}"
            if isinstance(ch.get("id"), str):
                seen.add(ch["id"])
    if isinstance(new.get("difficulty"), int) and not isinstance(new["difficulty"], bool):
        new["difficulty"] = min(5, max(1, new["difficulty"]))
    faults = new.get("faults")
    if isinstance(faults, dict) and isinstance(faults.get("rate"), int | float):
        faults["rate"] = min(1.0, max(0.0, float(faults["rate"])))
    solution = new.get("solution")
    if isinstance(solution, list):
        answers = [i for i, s in enumerate(solution) if isinstance(s, dict) and "answer" in s]
        if not answers:
            ctx.note("the solution has no final `answer` step: not a mechanical fix")
        elif answers != [len(solution) - 1]:
            last = answers[-1]
            new["solution"] = [s for i, s in enumerate(solution) if i not in answers[:-1] and i <= last]
            ctx.note("solution: kept only the last `answer` step, at the end")
    return changed(spec_dict, new)
