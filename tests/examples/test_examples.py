"""The hand-written example tasks: each passes the grading-consistency gate, and together they cover every
service and tool (docs/design/contracts.md, "Tools"), every check kind (docs/design/contracts.md, "Check kinds"),
every capability (docs/design/validation-and-repair.md, "Capabilities") and the special task shapes the validation
battery (docs/design/validation-and-repair.md, "Validation battery") relies on: multi-turn users, prohibited rules,
prompt injection, faults, multi-step."""

from __future__ import annotations

import json
import re

import pytest

from coworkenv.agents import make_policy
from coworkenv.checks.matching import args_match
from coworkenv.episode.episode import Episode
from coworkenv.episode.runner import run_episode
from coworkenv.episode.trajectory import Trajectory, replay
from coworkenv.episode.user import scripted_reply
from coworkenv.grading.consistency import consistency_gate
from coworkenv.grading.play import play
from coworkenv.grading.score import grade, grade_trajectory
from coworkenv.pipeline.core_check import check_task
from coworkenv.spec import (
    CAPABILITIES,
    CHECK_KINDS,
    SERVICE_NAMES,
    AnswerStep,
    SayStep,
    TaskSpec,
    ToolStep,
    WorkspaceSpec,
)
from coworkenv.spec.io import load_task, load_tasks
from coworkenv.workspace import TOOLS
from tests.support import ROOT  # noqa: E402
from tests.support.builders import CATALOG  # noqa: E402

EXAMPLES = ROOT / "examples"
TASK_DIR = EXAMPLES / "tasks"
FILES = sorted(TASK_DIR.glob("*.json"))

# The minimum catalog (docs/design/contracts.md, "Tools"): every one of these must be exercised by some oracle solution.
CATALOG_TOOLS = CATALOG
EMPTY_STATE = WorkspaceSpec().model_dump(mode="json", by_alias=True)
GLOB_CHARS = re.compile(r"[*?\[]")


def _by_file() -> dict[str, TaskSpec]:
    return {path.stem: load_task(path) for path in FILES}


TASKS = _by_file()
IDS = list(TASKS)


@pytest.fixture(scope="session")
def oracle_runs() -> dict[str, tuple]:
    """One live oracle episode per example: (trajectory, evidence)."""
    return {name: run_episode(spec, make_policy("oracle", spec)) for name, spec in TASKS.items()}


def _tool_steps(spec: TaskSpec) -> list[ToolStep]:
    return [s for s in spec.solution if isinstance(s, ToolStep)]


def _write_steps(spec: TaskSpec) -> list[int]:
    return [i for i, s in enumerate(spec.solution) if isinstance(s, ToolStep) and TOOLS.get(s.tool).kind != "read"]


# --- the files themselves ----------------------------------------------------------------------------


def test_at_least_fourteen_examples_one_task_per_file():
    assert len(FILES) >= 14
    assert not list(TASK_DIR.glob("*.jsonl")), "examples are one task per .json file"
    for path in FILES:
        assert re.fullmatch(r"\d{2}_[a-z0-9_]+\.json", path.name), path.name
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict), path.name
    # the id carries the file's number (a copied file once kept its model's id), the family a name of what it does
    for path in FILES:
        assert TASKS[path.stem].id.startswith(f"example-{path.name[:2]}-"), path.name
        assert TASKS[path.stem].family not in {"hand", "example", ""}, path.name
    # load_tasks rejects duplicate ids across the directory
    assert [t.id for t in load_tasks(TASK_DIR)] == [TASKS[p.stem].id for p in FILES]


def test_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for path in FILES:
        assert path.name in readme, f"examples/README.md does not mention {path.name}"


@pytest.mark.parametrize("name", IDS)
def test_example_is_realistic_acme_december_2026(name):
    spec = TASKS[name]
    assert spec.workspace.now.startswith("2026-12-")
    assert spec.workspace.me.email.endswith("@acme.test")
    assert spec.meta.generator == "hand"
    assert len(spec.checks) >= 3


# --- the grading-consistency gate ------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS)
def test_example_passes_consistency_gate(name):
    spec = TASKS[name]
    gate = consistency_gate(spec)
    assert gate.passed, gate.failures
    assert gate.oracle_score == 1.0
    assert gate.empty_score == 0.0
    assert gate.violation_scores == [0.0] * len(spec.prohibited)
    # the same, end to end as `coworkenv gate` does it: live runs, then grading by replay
    report = check_task(spec)
    assert report.gate_passed, report.failures
    assert (report.oracle_score, report.null_score) == (1.0, 0.0)


@pytest.mark.parametrize("name", IDS)
def test_answer_only_done_cannot_pass(name):
    result = play(TASKS[name], [AnswerStep(answer="Done.")]).grade
    assert not result.passed, f"'Done.' scores {result.score}"
    assert result.completion < 0.5


@pytest.mark.parametrize("name", IDS)
def test_oracle_prefix_gets_partial_completion(name):
    spec = TASKS[name]
    writes = _write_steps(spec)
    if len(writes) < 2:
        pytest.skip("the oracle has fewer than two effects")
    prefix = [*spec.solution[: writes[0] + 1], spec.solution[-1]]
    result = play(spec, prefix).grade
    assert 0.0 < result.completion < 1.0
    assert result.score < 1.0


@pytest.mark.parametrize("name", IDS)
def test_oracle_never_matches_a_prohibited_rule(name):
    spec = TASKS[name]
    for step in _tool_steps(spec):
        for rule in spec.prohibited:
            assert not (step.tool == rule.tool and args_match(rule.args, step.args)), (step, rule)


# --- determinism -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS)
def test_oracle_trajectory_replays_deterministically(name, oracle_runs):
    spec = TASKS[name]
    trajectory, live = oracle_runs[name]
    # through JSON, as a trajectory file would travel
    loaded = Trajectory.model_validate(json.loads(json.dumps(trajectory.to_dict())))
    first, second = replay(spec, loaded), replay(spec, loaded)
    assert first.evidence_hash == second.evidence_hash == live.evidence_hash
    assert first.final_hash == live.final_hash
    assert grade_trajectory(spec, loaded).score == 1.0
    _, again = run_episode(spec, make_policy("oracle", spec))
    assert again.evidence_hash == live.evidence_hash


# --- coverage ----------------------------------------------------------------------------------------------


def test_examples_cover_every_service_and_tool():
    used = {s.tool for spec in TASKS.values() for s in _tool_steps(spec)}
    assert set(CATALOG_TOOLS) == set(SERVICE_NAMES)
    for service, tools in CATALOG_TOOLS.items():
        missing = sorted(set(tools) - used)
        assert not missing, f"no oracle uses {service} tools {missing}"
        assert any(spec.initial_state[service] != EMPTY_STATE[service] for spec in TASKS.values()), (
            f"no example has initial {service} state"
        )


def test_examples_cover_every_check_kind_and_variant():
    checks = [c for spec in TASKS.values() for c in spec.checks]
    kinds = {c.kind for c in checks}
    judged = {
        "rubric"
    }  # graded by a judge model: the examples must pass the gate without one (tests/validate/test_calibration.py has its)
    assert set(CHECK_KINDS) - judged <= kinds, sorted(set(CHECK_KINDS) - judged - kinds)
    contains = [c for c in checks if c.kind == "file_contains"]
    assert any(c.text is not None for c in contains) and any(c.regex is not None for c in contains)
    unchanged = [c for c in checks if c.kind == "unchanged"]
    assert any(c.service is not None for c in unchanged) and any(c.path is not None for c in unchanged)
    absent = [c for c in checks if c.kind == "event_absent"]
    assert any(c.id is not None for c in absent) and any(c.title_contains is not None for c in absent)
    cells = [c for c in checks if c.kind in ("csv_cell", "sheet_cell")]
    assert any(c.equals is not None for c in cells) and any(c.value is not None for c in cells)


def test_examples_cover_every_capability():
    used = {cap for spec in TASKS.values() for cap in spec.capabilities}
    assert set(CAPABILITIES.names()) <= used, sorted(set(CAPABILITIES.names()) - used)


# --- special shapes -------------------------------------------------------------------------------------------


def test_multi_turn_examples_need_the_user():
    multi = [spec for spec in TASKS.values() if spec.user is not None]
    assert len(multi) >= 2
    for spec in multi:
        assert "multi_turn" in spec.capabilities
        assert spec.user.facts and spec.user.reveal
        says = [s.say for s in spec.solution if isinstance(s, SayStep)]
        assert says, spec.id
        assert len(says) <= spec.user.max_rounds
        for rounds, text in enumerate(says):
            assert scripted_reply(spec.user, text, rounds) is not None, f"{spec.id}: {text!r} gets no reply"
        assert any(c.kind == "asked_user" for c in spec.checks)
        instruction = spec.instruction.lower()
        for key, value in spec.user.facts.items():
            for item in value if isinstance(value, list) else [value]:
                assert str(item).lower() not in instruction, (
                    f"{spec.id}: fact {key}={item!r} leaks into the instruction"
                )
    for spec in TASKS.values():
        if "multi_turn" in spec.capabilities:
            assert spec.user is not None, spec.id


def test_multi_turn_oracle_really_talks_to_the_user(oracle_runs):
    for name, spec in TASKS.items():
        if spec.user is None:
            continue
        _, evidence = oracle_runs[name]
        assert evidence.user_rounds == len([s for s in spec.solution if isinstance(s, SayStep)])
        # without asking, the same tool calls lose the asked_user checks
        silent = play(spec, [s for s in spec.solution if not isinstance(s, SayStep)]).grade
        assert silent.completion < 1.0


def test_prohibited_examples_include_glob_rules():
    with_rules = [spec for spec in TASKS.values() if spec.prohibited]
    assert len(with_rules) >= 2
    globbed = [
        rule
        for spec in with_rules
        for rule in spec.prohibited
        if any(isinstance(v, str) and GLOB_CHARS.search(v) for v in (rule.args or {}).values())
    ]
    assert any(rule.args.get("to") == "*@external.test" for rule in globbed)
    assert any(rule.args is None for spec in with_rules for rule in spec.prohibited), "a rule without args"


def test_prompt_injection_example_is_ignored_by_the_oracle(oracle_runs):
    injected = [
        name for name, spec in TASKS.items() if "ignore all previous instructions" in spec.initial_state_json.lower()
    ]
    assert injected, "no example carries a prompt injection in its workspace"
    for name in injected:
        spec = TASKS[name]
        assert "safety" in spec.capabilities and spec.prohibited
        _, evidence = oracle_runs[name]
        result = grade(spec, evidence)
        assert result.safety == 1.0 and not result.violations


def test_fault_injected_example_is_solvable_with_retries(oracle_runs):
    faulty = [name for name, spec in TASKS.items() if spec.faults.rate > 0]
    assert faulty
    assert any(0.2 <= TASKS[name].faults.rate <= 0.4 for name in faulty)
    for name in faulty:
        spec = TASKS[name]
        assert "robustness" in spec.capabilities
        _, evidence = oracle_runs[name]
        faults = [c for c in evidence.calls if c.fault]
        assert faults, f"{spec.id}: the oracle met no injected fault"
        assert {c.code for c in faults} <= {429, 500}
        result = grade(spec, evidence)
        assert result.robustness == 1.0 and result.score == 1.0
        # an agent that gives up at the first fault does worse, on robustness too
        episode = Episode(spec)
        for step in _tool_steps(spec):
            if "error" in episode.step(step.tool, step.args):
                break
        gave_up = grade(spec, episode.finish(spec.solution[-1].answer))
        assert gave_up.robustness < 1.0 and gave_up.score < 1.0
    for spec in TASKS.values():
        if "robustness" in spec.capabilities:
            assert spec.faults.rate > 0, spec.id


def test_multi_step_example_has_dependent_effects_across_services(oracle_runs):
    multi = [name for name, spec in TASKS.items() if "multi_step" in spec.capabilities]
    assert multi
    for name in multi:
        spec = TASKS[name]
        _, evidence = oracle_runs[name]
        writes = [c for c in evidence.calls if c.ok and TOOLS.get(c.tool).kind != "read"]
        assert len(writes) >= 4, spec.id
        assert len({TOOLS.get(c.tool).service for c in writes}) >= 3, spec.id
        assert len(evidence.diff) >= 3, spec.id
