"""The rule pass of the repair loop inside the sandbox pool: same outcomes as in-process, lineage intact."""

from __future__ import annotations

import json
from pathlib import Path

from coworkenv.repair.loop import repair_task
from coworkenv.repair.sandboxed import repair_in_sandbox
from coworkenv.validate.battery import validate_spec

CORPUS = Path(__file__).parent / "corpus"


def test_sandboxed_rule_pass_matches_the_in_process_one():
    names = ["01_wrong_expected_number.json", "08_unsolvable_oracle.json", "25_leaked_answer.json"]
    paths = [p for name in names for p in CORPUS.glob(name.split("_", 1)[0] + "_*.json")]
    assert len(paths) == 3
    items = [(json.loads(p.read_text()), None) for p in paths]
    items = [(spec, validate_spec(spec)) for spec, _ in items]
    sandboxed = repair_in_sandbox(items, rounds=3, workers=2, runtime="auto")
    local = [repair_task(spec, v, rounds=3) for spec, v in items]
    assert [o.valid for o in sandboxed] == [o.valid for o in local]
    assert [o.spec for o in sandboxed] == [o.spec for o in local]
    for outcome in sandboxed:
        if outcome.valid:
            assert outcome.spec["meta"]["parent"] == outcome.task_id and outcome.spec["id"].startswith(
                outcome.task_id + "-r"
            )
        else:
            assert outcome.rejection
