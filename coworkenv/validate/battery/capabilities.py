"""Battery check `capabilities_consistent`: declared capabilities match what the task tests."""

from __future__ import annotations

from coworkenv.checks import CHECKS, evidence_of
from coworkenv.spec.task import SayStep, ToolStep
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.tools import TOOLS

MULTI_STEP_EFFECTS = 4
"""docs/design/validation-and-repair.md, "Capabilities": multi_step means ≥ 4 dependent effects across services."""


def evidence_kinds(capability: str) -> list[str]:
    """The check kinds that are evidence of a capability (`asked_user` for multi_turn, …)."""
    return [name for name, kind in CHECKS.items() if capability in kind.evidence_for]


def _service_writes(step: object) -> str | None:
    """What a change to the service of a step's tool exercises (`Service.writes`); None for a say step."""
    tool = TOOLS.find(step.tool) if isinstance(step, ToolStep) else None
    return SERVICES.get(tool.service).writes if tool is not None else None


def _no_check(capability: str) -> str:
    names = evidence_kinds(capability)
    return (", ".join(names[:-1]) + " or " + names[-1]) if len(names) > 1 else names[0]


def capability_problems(ctx: Context) -> list[dict[str, str]]:
    """Declared capabilities against what the task tests.

    A check kind is evidence of the capabilities in its `evidence_for` (multi_turn: `asked_user`; safety:
    `tool_not_called`; data_analysis: `answer_number`, the cell checks and the file checks).

    * `multi_turn` ⇒ a `user` with facts, at least one `reveal` rule and at least one check evidencing multi_turn.
    * such a check or a `say` step ⇒ `multi_turn` is declared.
    * `robustness` ⇒ `faults.rate > 0`.
    * `safety` ⇒ at least one prohibited rule or a check evidencing safety.
    * `multi_step` ⇒ the oracle has ≥ 4 write/destructive tool steps spanning ≥ 2 services.
    * `scheduling` ⇒ the oracle calls a calendar tool.
    * `data_analysis` ⇒ a check evidencing data_analysis.
    """
    spec = ctx.spec
    caps = set(spec.capabilities)
    shown = evidence_of(spec.checks)  # group members included
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
        if "multi_turn" not in shown:
            problem("multi_turn", f"declared but no {_no_check('multi_turn')} check")
    elif "multi_turn" in shown or says:
        what = f"{_no_check('multi_turn')} checks" if "multi_turn" in shown else "say steps"
        problem("multi_turn", f"the task has {what} but does not declare multi_turn")
    if "robustness" in caps and spec.faults.rate <= 0.0:
        problem("robustness", "declared but faults.rate is 0")
    if "safety" in caps and not spec.prohibited and "safety" not in shown:
        problem("safety", f"declared but there is no prohibited rule and no {_no_check('safety')} check")
    if "multi_step" in caps:
        steps = [spec.solution[i] for i in ctx.effects]
        services = {TOOLS.get(s.tool).service for s in steps}
        if len(steps) < MULTI_STEP_EFFECTS or len(services) < 2:
            problem(
                "multi_step",
                f"declared but the oracle has {len(steps)} effect(s) across {len(services)} service(s); needs ≥ 4 across ≥ 2",
            )
    if "scheduling" in caps and not any(_service_writes(s) == "scheduling" for s in spec.solution):
        services = "/".join(n for n, s in SERVICES.items() if s.writes == "scheduling")
        problem("scheduling", f"declared but the oracle never uses a {services} tool")
    if "data_analysis" in caps and "data_analysis" not in shown:
        problem("data_analysis", f"declared but no {_no_check('data_analysis')} check")
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
