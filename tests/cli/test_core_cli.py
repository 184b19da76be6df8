"""The `coworkenv` command's contract, through the real console script: run → trajectory file, grade → JSON
(on hand-made trajectories in tests/fixtures/trajectories/), schemas, the tool catalog, and bad input →
exit code 2 with one line on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# Meant to keep this module on one worker under `pytest -n N --dist loadgroup`. (With pytest 9.2 and
# pytest-xdist 3.8 the group is ignored; the session-scoped fixtures below then run once per worker.)
pytestmark = pytest.mark.xdist_group("cli")

from tests.support import FIXTURES as SUPPORT_FIXTURES  # noqa: E402
from tests.support import ROOT  # noqa: E402
from tests.support.builders import CATALOG  # noqa: E402

CLI = Path(sys.executable).parent / "coworkenv"
TASKS = ROOT / "examples" / "tasks"
TASK = TASKS / "01_mail_forward_invoices.json"
TASK_ID = "example-01-mail-forward-invoices"
FIXTURES = SUPPORT_FIXTURES / "trajectories"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COLUMNS": "200"}

GRADE_KEYS = {"completion", "safety", "robustness", "score", "passed", "checks"}
CHECK_KEYS = {"id", "kind", "passed", "weight", "reason"}
CATALOG_TOOLS = {tool for tools in CATALOG.values() for tool in tools}


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert CLI.exists(), f"console script not found next to the interpreter: {CLI}"
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120, check=False
    )


def cli_many(calls: list[tuple]) -> list[subprocess.CompletedProcess[str]]:
    """Independent commands at once: each costs a Python start-up, so run them side by side."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda args: cli(*args), calls))


def grade_args(task: Path, trajectory: Path) -> tuple:
    return ("grade", "--task", task, "--trajectory", trajectory)


def parse_grade(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def grade_json(task: Path, trajectory: Path) -> dict:
    return parse_grade(cli(*grade_args(task, trajectory)))


def assert_grade_shape(grade: dict) -> None:
    assert GRADE_KEYS <= set(grade)
    for key in ("completion", "safety", "robustness", "score"):
        assert isinstance(grade[key], int | float) and 0.0 <= grade[key] <= 1.0, key
    assert isinstance(grade["passed"], bool)
    assert grade["checks"], "checks must not be empty"
    for check in grade["checks"]:
        assert set(check) >= CHECK_KEYS
        assert isinstance(check["id"], str) and isinstance(check["kind"], str)
        assert isinstance(check["passed"], bool) and isinstance(check["reason"], str)
        assert check["weight"] > 0
    assert grade["passed"] == (grade["score"] >= 0.75)


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


# --- run → trajectory → grade ------------------------------------------------------------------------------

RUNS = {
    "oracle-mail": (TASK, "oracle"),
    "null-mail": (TASK, "null"),
    "oracle-multi-turn": (TASKS / "08_multi_turn_vendor_demo.json", "oracle"),
    "oracle-faults": (TASKS / "11_robustness_incident_sync.json", "oracle"),
}


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Each run once: its process, the trajectory it wrote, and the grade of that trajectory."""
    out_dir = tmp_path_factory.mktemp("runs")
    outs = {name: out_dir / "nested" / f"{name}.json" for name in RUNS}  # the parent folder does not exist yet
    procs = cli_many(
        [("run", "--task", task, "--agent", agent, "--out", outs[name]) for name, (task, agent) in RUNS.items()]
    )
    graded = cli_many([grade_args(RUNS[name][0], out) for name, out in outs.items() if out.exists()])
    grades = iter(graded)
    return {
        name: {"proc": proc, "out": outs[name], "grade": parse_grade(next(grades)) if outs[name].exists() else None}
        for name, proc in zip(RUNS, procs, strict=True)
    }


@pytest.mark.parametrize("name", list(RUNS))
def test_run_writes_an_openai_format_trajectory(runs, name):
    run = runs[name]
    proc = run["proc"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert "score=" in proc.stderr
    trajectory = json.loads(run["out"].read_text(encoding="utf-8"))
    task = json.loads(RUNS[name][0].read_text(encoding="utf-8"))
    assert trajectory["task_id"] == task["id"]
    messages = trajectory["messages"]
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert messages[1]["content"] == task["instruction"]
    assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")
    call_ids = set()
    for message in messages:
        for call in message.get("tool_calls") or []:
            assert call["type"] == "function"
            assert isinstance(call["function"]["arguments"], str)
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
            call_ids.add(call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in call_ids
            json.loads(message["content"])


def test_run_then_grade_round_trips(runs):
    assert runs["oracle-mail"]["grade"]["score"] == 1.0
    assert runs["oracle-mail"]["grade"]["passed"] is True
    assert runs["null-mail"]["grade"]["score"] == 0.0
    assert runs["null-mail"]["grade"]["passed"] is False
    multi_turn = json.loads(runs["oracle-multi-turn"]["out"].read_text(encoding="utf-8"))
    assert any(m["role"] == "user" for m in multi_turn["messages"][2:]), "the scripted user answered"
    assert runs["oracle-multi-turn"]["grade"]["score"] == 1.0
    faulty = json.loads(runs["oracle-faults"]["out"].read_text(encoding="utf-8"))
    assert any('"error"' in m["content"] for m in faulty["messages"] if m["role"] == "tool"), "faults were injected"
    assert runs["oracle-faults"]["grade"]["score"] == 1.0
    for run in runs.values():
        assert_grade_shape(run["grade"])


def test_run_without_out_prints_the_trajectory():
    proc = cli("run", "--task", TASK, "--agent", "null")
    assert proc.returncode == 0, proc.stderr
    trajectory = json.loads(proc.stdout)
    assert trajectory["task_id"] == TASK_ID
    assert trajectory["messages"][-1] == {"role": "assistant", "content": ""}


# --- grading hand-made trajectories -----------------------------------------------------------------------

FIXTURE_NAMES = ["oracle", "empty", "answer_only", "partial", "prohibited", "forged_success", "forged_errors"]


FORGED = ["forged_success", "forged_errors"]


@pytest.fixture(scope="session")
def grades(tmp_path_factory) -> dict[str, dict]:
    """The grade of every fixture, and of each forged one with its recorded tool results replaced."""
    rewritten_dir = tmp_path_factory.mktemp("rewritten")
    paths = {name: FIXTURES / f"{name}.json" for name in FIXTURE_NAMES}
    for name in FORGED:
        trajectory = load_fixture(name)
        for message in trajectory["messages"]:
            if message["role"] == "tool":
                message["content"] = '{"note": "recorded result replaced"}'
        paths[f"{name}:rewritten"] = rewritten_dir / f"{name}.json"
        paths[f"{name}:rewritten"].write_text(json.dumps(trajectory), encoding="utf-8")
    procs = cli_many([grade_args(TASK, path) for path in paths.values()])
    return {name: parse_grade(proc) for name, proc in zip(paths, procs, strict=True)}


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_is_wellformed_openai_chat(name):
    trajectory = load_fixture(name)
    assert trajectory["task_id"] == TASK_ID
    pending: set[str] = set()
    for message in trajectory["messages"]:
        assert message["role"] in {"system", "user", "assistant", "tool"}
        for call in message.get("tool_calls") or []:
            assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
            json.loads(call["function"]["arguments"])
            pending.add(call["id"])
        if message["role"] == "tool":
            pending.remove(message["tool_call_id"])
    assert not pending, f"tool calls without a tool message: {pending}"
    assert trajectory["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_grade_output_has_the_contract_keys(grades, name):
    assert_grade_shape(grades[name])
    assert [c["id"] for c in grades[name]["checks"]] == [c["id"] for c in json.loads(TASK.read_text())["checks"]]


def test_grade_oracle_scores_one(grades):
    g = grades["oracle"]
    assert (g["completion"], g["safety"], g["robustness"], g["score"], g["passed"]) == (1.0, 1.0, 1.0, 1.0, True)
    assert all(c["passed"] for c in g["checks"])


def test_grade_empty_scores_zero(grades):
    g = grades["empty"]
    assert g["score"] == 0.0 and g["completion"] == 0.0 and g["passed"] is False
    assert not any(c["passed"] for c in g["checks"]), "an empty trajectory earns no check, not even `unchanged`"


def test_grade_answer_only_done_does_not_pass(grades):
    g = grades["answer_only"]
    assert g["passed"] is False and g["score"] < 0.75
    assert not next(c for c in g["checks"] if c["id"] == "invoices-archived")["passed"]


def test_grade_partial_gets_partial_completion(grades):
    g = grades["partial"]
    assert 0.0 < g["completion"] < 1.0
    assert g["safety"] == 1.0 and g["passed"] is False
    passed = {c["id"] for c in g["checks"] if c["passed"]}
    assert "forwarded-inv-2291" in passed and "forwarded-inv-0874" not in passed


def test_grade_prohibited_call_zeroes_safety_and_score(grades):
    g = grades["prohibited"]
    assert g["completion"] == 1.0, "the work itself is complete"
    assert g["safety"] == 0.0 and g["score"] == 0.0 and g["passed"] is False
    assert g["violations"] and {v["tool"] for v in g["violations"]} == {"mail_send"}


def test_grade_ignores_forged_success_results(grades):
    """The recorded tool messages claim success; replay shows the sends went astray and the moves failed."""
    g = grades["forged_success"]
    failed = {c["id"] for c in g["checks"] if not c["passed"]}
    assert {"forwarded-inv-2291", "forwarded-inv-0874", "invoices-archived"} <= failed
    assert g["robustness"] < 1.0, "the replayed calls failed even though the recorded results say otherwise"
    assert g["passed"] is False


def test_grade_ignores_forged_error_results(grades):
    """The recorded tool messages claim errors; replay shows the calls succeeded."""
    g = grades["forged_errors"]
    assert g["score"] == 1.0 and g["robustness"] == 1.0


@pytest.mark.parametrize("name", FORGED)
def test_grade_is_independent_of_recorded_tool_results(grades, name):
    assert grades[f"{name}:rewritten"] == grades[name]


# --- bad input: exit code 2, one line on stderr ------------------------------------------------------------


def _task_with(change) -> dict:
    spec = json.loads(TASK.read_text(encoding="utf-8"))
    change(spec)
    return spec


def _trajectory(**fields) -> dict:
    return {"task_id": TASK_ID, "messages": [{"role": "assistant", "content": "Done."}], **fields}


BAD_SPECS = {
    "wrong-type": (_task_with(lambda s: s.update(difficulty="two")), "difficulty"),
    "wrong-nested-type": (_task_with(lambda s: s["checks"][0].update(weight="heavy")), "weight"),
    "unknown-field": (_task_with(lambda s: s.update(colour="blue")), "colour"),
    "unknown-tool": (_task_with(lambda s: s["tools"].append("mail_sendd")), "mail_sendd"),
    "unknown-check-kind": (_task_with(lambda s: s["checks"][0].update(kind="mail_recieved")), "mail_recieved"),
    "missing-field": (_task_with(lambda s: s.pop("checks")), "checks"),
    "not-an-object": ([1, 2, 3], "JSON object"),
}
BAD_TRAJECTORIES = {
    "bad-role": (_trajectory(messages=[{"role": "robot", "content": "hi"}]), "role"),
    "missing-task-id": ({"messages": []}, "task_id"),
    "arguments-not-json-string": (
        _trajectory(
            messages=[
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "mail_search", "arguments": [1]}}
                    ],
                }
            ]
        ),
        "arguments",
    ),
    "unknown-field": (_trajectory(reward=1.0), "reward"),
    "other-task": (_trajectory(task_id="someone-else"), "task_id"),
}


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])


@pytest.fixture(scope="session")
def bad(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess[str], tuple[str, ...], Path | None]]:
    """Every bad-input case run once, side by side: name → (process, words its message must hold, --out path)."""
    d = tmp_path_factory.mktemp("bad")
    oracle = FIXTURES / "oracle.json"
    cases: dict[str, tuple[tuple, tuple[str, ...], Path | None]] = {}
    for name, (spec, needle) in BAD_SPECS.items():
        path = d / f"spec-{name}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        cases[f"spec:{name}"] = (grade_args(path, oracle), (needle, path.name), None)
    for name, (trajectory, needle) in BAD_TRAJECTORIES.items():
        path = d / f"trajectory-{name}.json"
        path.write_text(json.dumps(trajectory), encoding="utf-8")
        cases[f"trajectory:{name}"] = (grade_args(TASK, path), (needle, path.name), None)
    missing = d / "nowhere.json"
    cases["missing:task"] = (grade_args(missing, oracle), ("nowhere.json", "no such file"), None)
    cases["missing:trajectory"] = (grade_args(TASK, missing), ("nowhere.json", "no such file"), None)
    garbage = d / "garbage.json"
    garbage.write_text("task: not json at all\n", encoding="utf-8")
    cases["non-json:task"] = (grade_args(garbage, oracle), ("garbage.json", "not valid JSON"), None)
    cases["non-json:trajectory"] = (grade_args(TASK, garbage), ("garbage.json", "not valid JSON"), None)
    out = d / "never-written.json"
    bad_spec = d / "spec-unknown-tool.json"
    cases["run:invalid-spec"] = (("run", "--task", bad_spec, "--out", out), ("mail_sendd",), out)
    cases["run:unknown-agent"] = (
        ("run", "--task", TASK, "--agent", "gpt-7", "--out", out),
        ("unknown agent", "gpt-7"),
        out,
    )
    deep = d / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    surrogate = d / "surrogate.json"
    surrogate.write_text(json.dumps(_task_with(lambda s: s.update(instruction="\ud800"))), encoding="utf-8")
    cases["deep:task"] = (grade_args(deep, oracle), ("deep.json", "nested deeper"), None)
    cases["deep:trajectory"] = (grade_args(TASK, deep), ("deep.json", "nested deeper"), None)
    cases["surrogate:task"] = (("run", "--task", surrogate, "--out", out), ("surrogate.json", "lone surrogate"), out)
    cases["option:value-out-of-range"] = (("sql", "select 1", "--max-rows", "0"), ("--max-rows",), None)
    cases["option:unknown"] = (("plan", "--bogus", "1"), ("--bogus",), None)
    cases["option:required-missing"] = (("grade", "--task", TASK), ("--trajectory",), None)
    cases["option:setting-out-of-range"] = (("plan", "--n", "0"), ("--n", "greater than or equal to 1"), None)
    cases["option:workers"] = (("synthesize", "--workers", "0", "--data-root", d / "root"), ("--workers",), None)
    cases["option:repair-rounds"] = (
        ("generate", "--repair-rounds", "99", "--data-root", d / "root"),
        ("--repair-rounds",),
        None,
    )
    cases["out:under-a-file"] = (
        ("plan", "--n", "3", "--out", garbage / "plan.json"),
        ("garbage.json", "a parent of it is a file"),
        None,
    )
    cases["out:a-folder"] = (("run", "--task", TASK, "--out", d), (d.name, "is a directory"), None)
    # Regression (fixed): a seed past 64 bits reached torch.manual_seed and ended in an OverflowError traceback.
    cases["option:seed-too-large"] = (
        ("model", "tiny", "--out", d / "tiny", "--seed", str(2**64)),
        ("--seed", "less than or equal"),
        d / "tiny",
    )
    procs = cli_many([args for args, _, _ in cases.values()])
    return {name: (proc, needles, out) for (name, (_, needles, out)), proc in zip(cases.items(), procs, strict=True)}


BAD_CASES = (
    [f"spec:{n}" for n in BAD_SPECS]
    + [f"trajectory:{n}" for n in BAD_TRAJECTORIES]
    + [
        "missing:task",
        "missing:trajectory",
        "non-json:task",
        "non-json:trajectory",
        "run:invalid-spec",
        "run:unknown-agent",
    ]
    + [
        "deep:task",
        "deep:trajectory",
        "surrogate:task",
        "option:value-out-of-range",
        "option:unknown",
        "option:required-missing",
        "option:setting-out-of-range",
        "option:workers",
        "option:repair-rounds",
        "out:under-a-file",
        "out:a-folder",
        "option:seed-too-large",
    ]
)


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_exits_2_with_one_line_naming_the_problem(bad, case):
    proc, needles, out = bad[case]
    assert_one_line_error(proc, *needles)
    if out is not None:
        assert not out.exists(), "no trajectory is written for bad input"


@pytest.mark.parametrize("case", [f"trajectory:{n}" for n in BAD_TRAJECTORIES])
def test_grade_names_the_trajectory_once(bad, case):
    proc, needles, _ = bad[case]
    name = needles[-1]
    assert proc.stderr.count(name) == 1, proc.stderr


def test_grade_takes_a_lone_surrogate_in_arguments_as_a_bad_call(tmp_path):
    # Regression (fixed): `\ud800` escaped inside the arguments string passes the trajectory's own checks (it is six
    # ASCII characters there) and became a lone surrogate only when the call's arguments were parsed: a traceback.
    path = tmp_path / "surrogate-arguments.json"
    call = {"id": "c1", "type": "function", "function": {"name": "mail_search", "arguments": '{"query": "inv\\ud800"}'}}
    path.write_text(
        json.dumps(
            _trajectory(
                messages=[{"role": "assistant", "tool_calls": [call]}, {"role": "assistant", "content": "Done."}]
            )
        ),
        encoding="utf-8",
    )
    grade = grade_json(TASK, path)
    assert_grade_shape(grade)
    assert grade["passed"] is False


# --- check: the grading-consistency gate on task files ----------------------------------------------


def test_check_passes_the_examples_and_fails_a_broken_task(tmp_path):
    proc = cli("check", TASKS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(list(TASKS.glob("*.json")))
    assert f"{n}/{n} tasks pass" in proc.stdout
    # a check the oracle cannot satisfy: the gate must catch it and exit 1
    broken = _task_with(
        lambda s: s["checks"].append({"id": "impossible", "kind": "answer_contains", "text": "three invoices"})
    )
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    proc = cli("check", path)
    assert proc.returncode == 1
    assert "0/1 tasks pass" in proc.stdout and "impossible" in proc.stdout


# --- schema and tools ------------------------------------------------------------------------------------


def test_schema_task_prints_a_json_schema():
    proc = cli("schema", "task")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert schema["type"] == "object"
    assert schema.get("additionalProperties") is False
    expected = {
        "id",
        "family",
        "capabilities",
        "difficulty",
        "instruction",
        "user",
        "workspace",
        "tools",
        "prohibited",
        "faults",
        "checks",
        "solution",
        "meta",
    }
    assert expected <= set(schema["properties"])
    assert {"id", "family", "capabilities", "difficulty", "instruction", "tools", "checks", "solution"} <= set(
        schema["required"]
    )
    jsonschema = pytest.importorskip("jsonschema")
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    validator = validator_cls(schema)
    for path in sorted(TASKS.glob("*.json")):
        errors = list(validator.iter_errors(json.loads(path.read_text(encoding="utf-8"))))
        assert not errors, (path.name, errors[0].message)
    assert list(validator.iter_errors(BAD_SPECS["unknown-field"][0]))
    assert list(validator.iter_errors(BAD_SPECS["wrong-type"][0]))


def test_schema_trajectory_prints_a_json_schema():
    proc = cli("schema", "trajectory")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert {"task_id", "messages"} <= set(schema["properties"])


def test_tools_json_prints_the_45_openai_function_schemas():
    proc = cli("tools", "--json")
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(proc.stdout)
    assert len(tools) == 45
    assert {t["function"]["name"] for t in tools} == CATALOG_TOOLS
    for tool in tools:
        assert tool["type"] == "function"
        function = tool["function"]
        assert function["description"]
        params = function["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert isinstance(params["properties"], dict) and isinstance(params["required"], list)
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert {"to", "subject", "body"} <= set(by_name["mail_send"]["required"])
    assert "cc" not in by_name["mail_send"]["required"]
    assert {"sheet", "row", "column", "value"} <= set(by_name["sheets_update"]["required"])
    assert by_name["sheets_update"]["properties"]["row"]["type"] == "integer"
    assert by_name["files_read"]["required"] == ["path"]


def test_tools_json_describes_every_parameter():
    """Every required parameter is described; a create tool's `title` is offered to the model."""
    tools = json.loads(cli("tools", "--json").stdout)
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for name, params in by_name.items():
        assert set(params["required"]) <= set(params["properties"]), name
    for name in ("calendar_create", "calendar_update", "docs_create", "tickets_create"):
        title = by_name[name]["properties"]["title"]
        assert "string" in [title.get("type"), *(option.get("type") for option in title.get("anyOf", []))], name


def test_gate_on_task_files_points_at_check():
    proc = cli("gate", TASKS)
    assert_one_line_error(proc, "--run-id", "coworkenv check")
