"""The validation battery (docs/design/validation-and-repair.md, "Validation battery"): one function per code in `BATTERY_CODES`,
run on one task.

Every check is a function of a lazily built context (the oracle run, the empty run, …, each computed once
and shared) that returns `(passed, details, message)`. `validate_spec` runs them all and never raises on a
spec: an exception inside a check becomes a failed outcome of that check with the exception in `details`.

Rules that are not obvious from the code descriptions in `codes.py`:

* **references** — solution tool steps use tools listed in `tools` (and known to the catalog); prohibited
  rules name catalog tools, and their `args` name parameters of that tool (a misspelled argument makes a rule no
  valid call can break). Each check reports the targets it names through its kind's `references` hook: they must
  exist in the initial workspace or in the oracle's final state (`mail_in_folder` ids, the record a `record`
  check matches, the sheet and columns of `sheet_cell`, the event id of an id-based `event_absent`, file paths;
  `file_absent` paths only need to be well-formed: "never create X" is legitimate), and checks naming a tool
  follow the prohibited rules' rule (`tool_called` must also name a tool the task allows).
  Every missing reference is one entry of `details["missing"]`.
* **checks_discriminate** — every check is evaluated (by the grading engine, bypassing the empty-trajectory
  rule) on the evidence of an episode whose agent only answers ""; the checks other than guards (`unchanged`,
  `tool_not_called`: kinds marked `guard`) that already hold are listed in `details["holding"]`. Guard checks ("keep this record",
  "send nothing there") hold by design, so the check fails only when the holding ones carry at least
  `TRIVIAL_WEIGHT_SHARE` (30 %) of the weight: then doing nothing already earns a large part of the completion.
* **prefix_partial** — effects are the oracle's tool steps of kind `write` / `destructive`. With two or more,
  the oracle's steps up to and including the first effect, then its answer step, must give
  0 < completion < 1. Fewer than two effects: passes, `{"applicable": false}`.
* **prohibited_zeroes** — per rule: the oracle plus one call that matches the rule (before the answer) must
  give safety 0 and score 0 (`details["rules"]`, one entry per rule index); a rule the oracle itself breaks
  fails the check too (`details["oracle_violates"]`). No rules: passes, not applicable.
* **deterministic** — the oracle is run twice, on the given spec and on a fresh parse of its JSON; both runs
  and a replay of the first trajectory on the fresh parse must give the same evidence hash and score.
* **solvable_under_faults** — `faults.rate > 0`: the retrying oracle must score 1.0; if its run met no
  injected fault at all the declared fault profile is fake: `details["faults_injected"] == 0` with an
  advisory note, but the check still passes. `rate == 0`: passes, not applicable.
* **no_leakage** — see `leaks()`: numbers are compared as numbers, strings as whole words/phrases,
  case-insensitively.
* **capabilities_consistent** — see `capability_problems()`.
* **judge_calibration** — see `validate/battery/calibration.py`: per rubric, the oracle's verdict and each
  adversarial answer's, in `details["rubrics"]`; not graded (no judge) fails it.

A task is valid iff every mandatory check passed; `discrimination` is the share of the applicable
discriminating checks that passed (a check is not applicable when its details say `"applicable": false`).
"""

import importlib

# Register the checks in BATTERY_CODES order before anything else imports a module of this package.
for _module in ("references", "consistency", "leakage", "capabilities", "calibration"):
    importlib.import_module(f"{__name__}.{_module}")

from coworkenv.validate.battery.capabilities import capability_problems  # noqa: E402
from coworkenv.validate.battery.context import Context  # noqa: E402
from coworkenv.validate.battery.leakage import leaks  # noqa: E402
from coworkenv.validate.battery.references import check_references  # noqa: E402
from coworkenv.validate.battery.run import rejected, run_battery, validate_spec, validate_spec_json  # noqa: E402

__all__ = [
    "Context",
    "capability_problems",
    "check_references",
    "leaks",
    "rejected",
    "run_battery",
    "validate_spec",
    "validate_spec_json",
]
