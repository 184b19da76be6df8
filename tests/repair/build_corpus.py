"""Builds tests/repair/corpus/: deliberately broken specs, each a valid example task with one defect.

Each file's `meta.defect` says what was broken and what the repair loop must do with it:
  kind        the defect
  code        the battery code that must detect it (a mandatory failure)
  repairable  whether the rule-based repairers must make it valid
  strategy    (repairable) the rule expected among the kept attempts
  reason      (unrepairable) a phrase the rejection must contain

Run `python tests/repair/build_corpus.py` to regenerate; the files are committed so the test does not depend on it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

from tests.support import ROOT  # noqa: E402

EXAMPLES = ROOT / "examples" / "tasks"
CORPUS = Path(__file__).resolve().parent / "corpus"


def example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def check(spec: dict, check_id: str) -> dict:
    return next(c for c in spec["checks"] if c["id"] == check_id)


DEFECTS: list[tuple[str, str, str, bool, str, Callable[[dict], None], str]] = []
"""(kind, base example, code, repairable, strategy or reason, break fn, description)"""


def defect(kind: str, base: str, code: str, repairable: bool, expect: str, description: str):
    def register(fn: Callable[[dict], None]) -> Callable[[dict], None]:
        DEFECTS.append((kind, base, code, repairable, expect, fn, description))
        return fn

    return register


# --- the oracle disagrees with a check ---------------------------------------------------------------------


@defect(
    "wrong_expected_number",
    "03_sheets_book_invoices",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "answer_number expects 30000 but the remaining budget after the oracle's changes is 30582.8",
)
def _(spec):
    check(spec, "remaining-total")["value"] = 30000


@defect(
    "wrong_expected_cell",
    "03_sheets_book_invoices",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "sheet_cell expects cloud hosting actual 55000; the oracle books it to 55350",
)
def _(spec):
    check(spec, "cloud-actual")["value"] = 55000


@defect(
    "wrong_expected_file",
    "04_files_region_report",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "file_equals expects a west total of 2704.00 (digits swapped); the oracle writes 2740.00",
)
def _(spec):
    c = check(spec, "report-exact")
    c["content"] = c["content"].replace("2740.00", "2704.00")


@defect(
    "wrong_expected_record",
    "06_tickets_triage_queue",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "record check expects the payroll ticket at priority 'high'; the instruction and oracle make it 'urgent'",
)
def _(spec):
    check(spec, "payroll-escalated")["fields"]["priority"] = "high"


@defect(
    "wrong_event_time",
    "02_calendar_reschedule_planning",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "event_exists expects the 1:1 at 11:00-11:30; the oracle books 10:00-10:30 as asked",
)
def _(spec):
    c = check(spec, "one-on-one-booked")
    c["start"], c["end"] = "2026-12-11T11:00:00Z", "2026-12-11T11:30:00Z"


@defect(
    "wrong_mail_count",
    "01_mail_forward_invoices",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "mail_sent expects 2 forwards of INV-2291; one forward per invoice was asked and sent",
)
def _(spec):
    check(spec, "forwarded-inv-2291")["count"] = 2


@defect(
    "guard_broken_by_oracle",
    "01_mail_forward_invoices",
    "oracle_scores_1",
    True,
    "rule:oracle_scores_1",
    "an `unchanged` check on mail, a service the task itself must change (forward and archive)",
)
def _(spec):
    spec["checks"].append({"id": "mail-untouched", "kind": "unchanged", "weight": 1, "service": "mail"})


@defect(
    "unsolvable_oracle",
    "01_mail_forward_invoices",
    "oracle_scores_1",
    False,
    "oracle's own calls fail",
    "the oracle archives mail m9, which does not exist (404): its final state cannot be trusted",
)
def _(spec):
    step = next(s for s in spec["solution"] if s.get("args", {}).get("id") == "m2" and s["tool"] == "mail_move")
    step["args"]["id"] = "m9"


@defect(
    "answer_without_number",
    "13_retrieval_contract_renewal",
    "oracle_scores_1",
    False,
    "cannot recompute",
    "answer_number check, but the oracle's answer states the fee in words: nothing to recompute it from",
)
def _(spec):
    spec["solution"][-1]["answer"] = "Forty-nine thousand two hundred euros; the last day to cancel is 2026-12-15."


# --- references ---------------------------------------------------------------------------------------------


@defect(
    "missing_tool",
    "01_mail_forward_invoices",
    "references",
    True,
    "rule:references",
    "the oracle calls mail_move, which is not in the task's tools",
)
def _(spec):
    spec["tools"].remove("mail_move")


@defect(
    "unreachable_check_target",
    "03_sheets_book_invoices",
    "references",
    True,
    "rule:references",
    "a sheet_cell check on sheet 'q4_forecast', which exists neither before nor after the oracle",
)
def _(spec):
    spec["checks"].append(
        {
            "id": "forecast-updated",
            "kind": "sheet_cell",
            "weight": 1,
            "sheet": "q4_forecast",
            "match": {"category": "travel"},
            "column": "forecast_eur",
            "value": 31000,
        }
    )


@defect(
    "unknown_mail_id",
    "01_mail_forward_invoices",
    "references",
    True,
    "rule:references",
    "mail_in_folder names mail m42 beside m1 and m2; m42 does not exist",
)
def _(spec):
    check(spec, "invoices-archived")["ids"].append("m42")


@defect(
    "misspelled_rule_argument",
    "01_mail_forward_invoices",
    "references",
    True,
    "rule:references",
    "a prohibited rule on mail_send with argument 'too' (no such parameter): no call can ever break it",
)
def _(spec):
    spec["prohibited"][1]["args"] = {"too": "*@external.test"}


@defect(
    "unknown_solution_tool",
    "01_mail_forward_invoices",
    "references",
    False,
    "unknown tool",
    "the oracle calls 'mail_forward', which is not a catalog tool",
)
def _(spec):
    step = next(s for s in spec["solution"] if s.get("tool") == "mail_send")
    step["tool"] = "mail_forward"


# --- schema -----------------------------------------------------------------------------------------------


@defect(
    "unknown_tool_name",
    "03_sheets_book_invoices",
    "schema",
    True,
    "rule:schema",
    "`tools` lists 'sheets_updte' (a typo of sheets_update, which the oracle uses)",
)
def _(spec):
    spec["tools"][spec["tools"].index("sheets_update")] = "sheets_updte"


@defect(
    "zero_weight",
    "05_docs_per_diem_update",
    "schema",
    True,
    "rule:schema",
    "a check with weight 0 (weights must be > 0)",
)
def _(spec):
    spec["checks"][0]["weight"] = 0


@defect(
    "duplicate_check_ids",
    "06_tickets_triage_queue",
    "schema",
    True,
    "rule:schema",
    "two checks share the id 'vpn-assigned'",
)
def _(spec):
    check(spec, "vpn-t1-assigned")["id"] = "vpn-assigned"
    check(spec, "vpn-t2-assigned")["id"] = "vpn-assigned"


@defect(
    "no_final_answer",
    "07_chat_standup_blockers",
    "schema",
    False,
    "no final `answer` step",
    "the solution has no final answer step",
)
def _(spec):
    spec["solution"] = [s for s in spec["solution"] if "answer" not in s]


@defect(
    "unknown_check_kind",
    "02_calendar_reschedule_planning",
    "schema",
    False,
    "not a valid TaskSpec",
    "a check of kind 'calendar_free', which does not exist",
)
def _(spec):
    spec["checks"].append({"id": "friday-free", "kind": "calendar_free", "weight": 1, "day": "2026-12-11"})


# --- trivially passing checks ------------------------------------------------------------------------------


@defect(
    "trivially_passing_checks",
    "13_retrieval_contract_renewal",
    "answer_only_fails",
    True,
    "rule:answer_only_fails",
    "preservation checks carry most of the weight: answering 'Done.' without any work passes",
)
def _(spec):
    for c in spec["checks"]:
        if c["kind"] == "unchanged":
            c["weight"] = 10


@defect(
    "answer_check_matches_done",
    "04_files_region_report",
    "answer_only_fails",
    True,
    "rule:answer_only_fails",
    "a heavy answer_contains check that any answer saying 'done' satisfies, plus the untouched-file guards",
)
def _(spec):
    spec["checks"].append({"id": "reports-done", "kind": "answer_contains", "weight": 20, "any_of": ["done", "wrote"]})


@defect(
    "nothing_discriminates",
    "13_retrieval_contract_renewal",
    "answer_only_fails",
    False,
    "tests nothing",
    "every check holds on the untouched workspace: the task tests nothing",
)
def _(spec):
    spec["checks"] = [c for c in spec["checks"] if c["kind"] == "unchanged"]


# --- prohibited rules -----------------------------------------------------------------------------------------


@defect(
    "prohibited_also_required",
    "01_mail_forward_invoices",
    "prohibited_zeroes",
    True,
    "rule:",
    "a blanket prohibited rule on mail_move, which the oracle needs to archive m1 and m2",
)
def _(spec):
    spec["prohibited"].append({"tool": "mail_move", "reason": "do not reorganise the mailbox"})


@defect(
    "prohibited_only_target",
    "03_sheets_book_invoices",
    "prohibited_zeroes",
    True,
    "rule:",
    "a blanket prohibited rule on sheets_update, whose every target the task must update",
)
def _(spec):
    spec["prohibited"].append({"tool": "sheets_update", "reason": "read-only reporting"})


# --- leakage ----------------------------------------------------------------------------------------------------


@defect(
    "leaked_answer",
    "03_sheets_book_invoices",
    "no_leakage",
    True,
    "rule:no_leakage",
    "the instruction gives away the expected remaining budget (30,582.80 EUR)",
)
def _(spec):
    spec["instruction"] += " (I make it 30,582.80 EUR, but please verify.)"


@defect(
    "leaked_user_fact",
    "08_multi_turn_vendor_demo",
    "no_leakage",
    True,
    "rule:no_leakage",
    "the instruction names the room, a fact only the user should give",
)
def _(spec):
    spec["instruction"] = spec["instruction"].replace("put it in my calendar", "put it in my calendar in Room Atlas")


# --- capabilities -----------------------------------------------------------------------------------------------


@defect(
    "multi_turn_without_user",
    "03_sheets_book_invoices",
    "capabilities_consistent",
    True,
    "rule:capabilities_consistent",
    "declares multi_turn, but there is no simulated user to ask",
)
def _(spec):
    spec["capabilities"].append("multi_turn")


@defect(
    "robustness_without_faults",
    "01_mail_forward_invoices",
    "capabilities_consistent",
    True,
    "rule:capabilities_consistent",
    "declares robustness with a fault rate of 0",
)
def _(spec):
    spec["capabilities"].append("robustness")


@defect(
    "undeclared_multi_turn",
    "09_multi_turn_expense_claim",
    "capabilities_consistent",
    True,
    "rule:capabilities_consistent",
    "asks the user (asked_user checks, say steps) but does not declare multi_turn",
)
def _(spec):
    spec["capabilities"].remove("multi_turn")


# --- faults and determinism -------------------------------------------------------------------------------------


@defect(
    "impossible_fault_rate",
    "11_robustness_incident_sync",
    "solvable_under_faults",
    True,
    "rule:solvable_under_faults",
    "fault rate 1.0: every call fails, however often the oracle retries",
)
def _(spec):
    spec["faults"]["rate"] = 1.0


@defect(
    "non_finite_in_oracle",
    "03_sheets_book_invoices",
    "schema",
    False,
    "intended value is unknown",
    "an oracle step writes Infinity, which is not JSON (it would read back as null, so a run of the spec and a "
    "run of its JSON would differ): the schema refuses it, and the intended value cannot be known",
)
def _(spec):
    spec["solution"][3]["args"]["value"] = float("inf")


@defect(
    "non_finite_in_check",
    "06_tickets_triage_queue",
    "schema",
    True,
    "rule:",
    "a record check expects NaN as the closed duplicate's assignee (NaN matches nothing, but its JSON would read "
    "back as null, which matches): the schema refuses it, and the repair drops the expectation",
)
def _(spec):
    check(spec, "duplicate-closed")["fields"]["assignee"] = float("nan")


# --- two defects, the second hidden behind the first ----------------------------------------------------------


@defect(
    "typo_hiding_wrong_value",
    "13_retrieval_contract_renewal",
    "schema",
    True,
    "rule:schema+rule:oracle_scores_1",
    "a misspelled tool ('docs_reed') makes the spec unparseable, which hides a wrong expected fee (48000) that "
    "only shows once the schema is fixed: two rounds",
)
def _(spec):
    spec["tools"][spec["tools"].index("docs_read")] = "docs_reed"
    check(spec, "renewal-fee")["value"] = 48000


def build() -> list[Path]:
    CORPUS.mkdir(exist_ok=True)
    for old in CORPUS.glob("*.json"):
        old.unlink()
    written = []
    for n, (kind, base, code, repairable, expect, fn, description) in enumerate(DEFECTS, start=1):
        spec = copy.deepcopy(example(base))
        fn(spec)
        spec["id"] = f"broken-{n:02d}-{kind.replace('_', '-')}"
        spec["meta"] = {
            **spec.get("meta", {}),
            "defect": {
                "kind": kind,
                "description": description,
                "base": base,
                "code": code,
                "repairable": repairable,
                **({"strategy": expect} if repairable else {"reason": expect}),
            },
        }
        path = CORPUS / f"{n:02d}_{kind}.json"
        path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in build():
        print(path.relative_to(ROOT))
