"""Battery check `capabilities_consistent`: declared capabilities match what the task tests."""

from __future__ import annotations

from coworkenv.spec.task import SayStep, ToolStep
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check

# --- capabilities ----------------------------------------------------------------------------------------

DATA_CHECKS = ("answer_number", "sheet_cell", "csv_cell", "file_exists", "file_absent", "file_contains", "file_equals")
MULTI_STEP_EFFECTS = 4


def capability_problems(ctx: Context) -> list[dict[str, str]]:
    """Declared capabilities against what the task tests.

    * `multi_turn` ⇒ a `user` with facts, at least one `reveal` rule and at least one `asked_user` check.
    * an `asked_user` check or a `say` step ⇒ `multi_turn` is declared.
    * `robustness` ⇒ `faults.rate > 0`.
    * `safety` ⇒ at least one prohibited rule or `tool_not_called` check.
    * `multi_step` ⇒ the oracle has ≥ 4 write/destructive tool steps spanning ≥ 2 services (DESIGN §8).
    * `scheduling` ⇒ the oracle calls a calendar tool.
    * `data_analysis` ⇒ an `answer_number`, `sheet_cell`, `csv_cell` or `file_*` check.
    """
    from coworkenv.workspace.tools import TOOLS

    spec = ctx.spec
    caps = set(spec.capabilities)
    kinds = {c.kind for c in spec.checks}
    problems: list[dict[str, str]] = []

    def problem(cap: str, text: str) -> None:
        problems.append({"capability": cap, "problem": text})

    says = any(isinstance(s, SayStep) for s in spec.solution)
    if "multi_turn" in caps:
        if spec.user is None:
            problem("multi_turn", "declared but the task has no simulated user")
        else:
            if not spec.user.facts:
                problem("multi_turn", "declared but the user holds no facts")
            if not spec.user.reveal:
                problem("multi_turn", "declared but the user has no reveal rule")
        if "asked_user" not in kinds:
            problem("multi_turn", "declared but no asked_user check")
    elif "asked_user" in kinds or says:
        problem("multi_turn", "the task has " + ("asked_user checks" if "asked_user" in kinds else "say steps") + " but does not declare multi_turn")
    if "robustness" in caps and spec.faults.rate <= 0.0:
        problem("robustness", "declared but faults.rate is 0")
    if "safety" in caps and not spec.prohibited and "tool_not_called" not in kinds:
        problem("safety", "declared but there is no prohibited rule and no tool_not_called check")
    if "multi_step" in caps:
        steps = [spec.solution[i] for i in ctx.effects]
        services = {TOOLS.get(s.tool).service for s in steps}
        if len(steps) < MULTI_STEP_EFFECTS or len(services) < 2:
            problem("multi_step", f"declared but the oracle has {len(steps)} effect(s) across {len(services)} service(s); needs ≥ 4 across ≥ 2")
    if "scheduling" in caps and not any(isinstance(s, ToolStep) and s.tool.startswith("calendar_") for s in spec.solution):
        problem("scheduling", "declared but the oracle never uses a calendar tool")
    if "data_analysis" in caps and not kinds & set(DATA_CHECKS):
        problem("data_analysis", "declared but no answer_number, sheet_cell, csv_cell or file_* check")
    return problems


@battery_check("capabilities_consistent")
def check_capabilities(ctx: Context) -> CheckResultT:
    problems = capability_problems(ctx)
    declared = set(ctx.spec.capabilities)
    details = {
        "declared": list(ctx.spec.capabilities),
        "problems": problems,
        "unsupported": sorted({p["capability"] for p in problems if p["capability"] in declared}),
        "missing": sorted({p["capability"] for p in problems if p["capability"] not in declared}),
    }
    if not problems:
        return True, details, "the declared capabilities match what the task tests"
    return False, details, "; ".join(f"{p['capability']}: {p['problem']}" for p in problems)
