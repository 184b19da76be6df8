"""One declaration per job (`coworkenv.pipeline.job`): the synthesis and evaluation stages are listed once, the nightly
loop composes those jobs instead of copying their stage lists, and the DAGs and the CLI name the same stages in the
same order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.evaluation import EVALUATION
from coworkenv.pipeline.job import Job, Stage, StageInputs
from coworkenv.pipeline.nightly import NIGHTLY, STAGES
from coworkenv.pipeline.synthesis import SYNTHESIS
from tests.support import ROOT

LIBRARY = ROOT / "coworkenv" / "pipeline"


def _stage_functions(job: Job) -> set[str]:
    """The names of the library functions a job's stages call: the call a stage's lambda makes, or the call its named
    stage function returns (read off the declaring module)."""
    tree = ast.parse((LIBRARY / job.name / "__init__.py").read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("Stage", "gate_stage"):
            run = node.args[1]
            if isinstance(run, ast.Name) and run.id in functions:
                run = functions[run.id].body[-1]
            body = getattr(run, "body", None) if isinstance(run, ast.Lambda) else getattr(run, "value", None)
            if isinstance(body, ast.Call) and isinstance(body.func, ast.Name):
                names.add(body.func.id)
    return names


NIGHTLY_STAGES = (
    "profile",
    "synthesize",
    "gate_tasks",
    "rollouts",
    "gate_rollouts",
    "train",
    "evaluate",
    "gate_eval",
    "promote",
    "new_profile",
)
"""The nightly loop's stages, in order: what its declaration and its DAG (tests/dags/test_dags_nightly.py) must say."""


def test_the_jobs_stages():
    assert SYNTHESIS.names() == ("plan", "generate", "validate", "repair", "rollout", "build", "gate", "publish")
    assert EVALUATION.names() == ("prepare", "trials", "build", "gate", "publish")
    assert SYNTHESIS.outputs_after("plan") == ("generated", "validated", "repaired", "rollouts", "tables", "quality")
    assert SYNTHESIS.outputs_after("publish") == ()
    assert NIGHTLY.names() == STAGES == NIGHTLY_STAGES


@pytest.mark.parametrize("module", sorted(p.name for p in (LIBRARY / "nightly").glob("*.py")))
def test_the_nightly_loop_composes_the_jobs_and_copies_no_stage(module: str):
    """No stage function of synthesis or evaluation is called by the nightly loop's own code: it runs them through
    `SYNTHESIS.run` / `EVALUATION.run`, so a stage added to a job is a stage of the loop too."""
    stage_functions = _stage_functions(SYNTHESIS) | _stage_functions(EVALUATION)
    assert {
        "plan_run",
        "generate_shard",
        "validate_shard",
        "prepare",
        "run_trials_stage",
        "publish",
        "gate_tables",
    } <= stage_functions
    called = set()
    for node in ast.walk(ast.parse((LIBRARY / "nightly" / module).read_text())):
        if isinstance(node, ast.Call):  # f(...), or ev.f(...) on the evaluation module imported as `ev`
            func = node.func
            if isinstance(func, ast.Name):
                called.add(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "ev":
                called.add(func.attr)
    assert not called & stage_functions, f"{module} calls stage functions itself: {sorted(called & stage_functions)}"


def test_a_job_runs_in_parts_each_stage_given_the_one_before(tmp_path: Path):
    seen: list[tuple[str, object]] = []

    def stage(name: str, result: object) -> Stage:
        return Stage(name, lambda run, i: seen.append((name, i.previous)) or result, (name,))

    job = Job(
        "toy",
        (
            stage("a", [1, 2]),
            Stage("b", lambda run, i, shard: shard * 10, ("b",), shards=lambda run, previous: previous),
            stage("c", "done"),
        ),
    )
    reports: list[tuple[str, object]] = []
    assert job.run(None, StageInputs(), last="b", on_stage=lambda s, r: reports.append((s, r))) == [10, 20]
    assert reports == [("a", [1, 2]), ("b", 10), ("b", 20)]
    assert job.run(None, StageInputs(previous=[10, 20]), first="c") == "done"
    assert seen == [("a", None), ("c", [10, 20])]
    assert job.results(None, StageInputs(), last="b") == {"a": [1, 2], "b": [10, 20]}
    assert job.outputs_after("a") == ("b", "c")
    with pytest.raises(CoworkEnvError, match="job toy has no stage 'd'"):
        job.run(None, StageInputs(), first="d")
    with pytest.raises(ValueError, match="two stages share a name"):
        Job("twice", (stage("a", 1), stage("a", 2)))


def test_the_cli_has_a_command_for_every_synthesis_stage():
    """`coworkenv generate` plans and generates (a new run); every later stage is a command made from its
    declaration (its doc is the command's help)."""
    from coworkenv.cli.app import app
    from coworkenv.cli.pipeline import generate

    assert callable(generate)
    commands = {c.name: c for c in app.registered_commands}
    for stage in SYNTHESIS.stages[2:]:
        assert stage.name in commands, f"coworkenv {stage.name} is missing"
        assert commands[stage.name].callback.__doc__ == stage.doc


def test_the_cli_has_a_command_for_every_evaluation_stage_after_prepare():
    """`coworkenv eval` prepares (a new run or a resumed one); every later stage is `coworkenv eval <stage>`."""
    from coworkenv.cli.evaluation import eval_app

    commands = {c.name: c for c in eval_app.registered_commands}
    for stage in EVALUATION.stages[1:]:
        assert stage.name in commands, f"coworkenv eval {stage.name} is missing"
        assert commands[stage.name].callback.__doc__ == stage.doc


@pytest.mark.parametrize("dag_id", ["coworkenv_synthesize", "coworkenv_evaluate", "coworkenv_nightly"])
def test_a_dag_file_is_its_jobs_declaration(dag_id: str):
    """A job's DAG file defines no task: it calls `job_dag` with the job, so the tasks are the declaration's stages
    (their order, mapping, retries, queues and assets: tests/dags)."""
    tree = ast.parse((ROOT / "dags" / f"{dag_id}.py").read_text())
    assert not [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)], f"{dag_id} defines functions"
    calls = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    assert [c.value.func.id for c in calls] == ["job_dag"], dag_id
    job = calls[0].value.args[0].id  # the DAG's id and trigger form are the job's own
    assert {name: j.dag_id for name, j in JOBS_BY_CONSTANT.items()}[job] == dag_id
    assert "dag_id" not in {k.arg for k in calls[0].value.keywords}, dag_id


JOBS = {"synthesis": SYNTHESIS, "evaluation": EVALUATION, "nightly": NIGHTLY}
JOBS_BY_CONSTANT = {"SYNTHESIS": SYNTHESIS, "EVALUATION": EVALUATION, "NIGHTLY": NIGHTLY}


def _written_stage_lists(path: Path) -> list[tuple[int, str]]:
    """Literal sequences of three or more strings, or dicts keyed by as many, all stage names of one job: a stage list
    written out (a table of per-stage lines beside the declaration is one too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) and len(elts) >= 3:
            values = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(values) == len(elts):
                found += [(node.lineno, job) for job, j in JOBS.items() if set(values) <= set(j.names())]
    return found


def test_no_stage_list_is_written_twice():
    """The declarations are the only stage lists of the library, the DAGs, the plugin and the benchmarks: everything
    else asks the job (`names()`, `stages`, `outputs_after`)."""
    declarations = {LIBRARY / job / "__init__.py" for job in JOBS}
    folders = [ROOT / "coworkenv", ROOT / "dags", ROOT / "plugins", ROOT / "bench"]
    written = {
        f"{path.relative_to(ROOT)}:{line} ({job})": job
        for folder in folders
        for path in sorted(folder.rglob("*.py"))
        for line, job in _written_stage_lists(path)
    }
    assert not written, f"stage lists written outside the job declarations: {sorted(written)}"
    for path in declarations:  # the declarations themselves list stages as Stage(...) calls, not as names
        assert not _written_stage_lists(path), path
