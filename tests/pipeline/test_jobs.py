"""One declaration per job (`coworkenv.pipeline.job`): the synthesis and evaluation stages are listed once, the nightly
loop composes those jobs instead of copying their stage lists, and the DAGs and the CLI name the same stages in the
same order."""

from __future__ import annotations

import ast
from graphlib import TopologicalSorter
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.evaluate import EVALUATION
from coworkenv.pipeline.job import Job, Stage, StageInputs
from coworkenv.pipeline.synthesize import SYNTHESIS
from tests.support import ROOT

LIBRARY = ROOT / "coworkenv" / "pipeline"


def _stage_functions(job: Job) -> set[str]:
    """The names of the library functions a job's stages call (read off the lambdas of its `Stage(...)`s)."""
    names = set()
    for node in ast.walk(ast.parse((LIBRARY / ("synthesize.py" if job is SYNTHESIS else "evaluate.py")).read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Stage":
            for arg in node.args:
                if (
                    isinstance(arg, ast.Lambda)
                    and isinstance(arg.body, ast.Call)
                    and isinstance(arg.body.func, ast.Name)
                ):
                    names.add(arg.body.func.id)
    return names


def test_the_jobs_stages():
    assert SYNTHESIS.names() == ("plan", "generate", "validate", "repair", "rollout", "build", "gate", "publish")
    assert EVALUATION.names() == ("prepare", "trials", "build", "gate", "publish")
    assert SYNTHESIS.outputs_after("plan") == ("generated", "validated", "repaired", "rollouts", "tables", "quality")
    assert SYNTHESIS.outputs_after("publish") == ()


@pytest.mark.parametrize("module", ["nightly.py", "nightly_state.py", "nightly_train.py"])
def test_the_nightly_loop_composes_the_jobs_and_copies_no_stage(module: str):
    """No stage function of synthesis or evaluation is called by the nightly loop's own code: it runs them through
    `SYNTHESIS.run` / `EVALUATION.run`, so a stage added to a job is a stage of the loop too."""
    stage_functions = _stage_functions(SYNTHESIS) | _stage_functions(EVALUATION)
    assert {"plan_run", "generate_shard", "validate_shard", "prepare", "run_trials_stage", "publish"} <= stage_functions
    called = set()
    for node in ast.walk(ast.parse((LIBRARY / module).read_text())):
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
    assert job.outputs_after("a") == ("b", "c")
    with pytest.raises(CoworkEnvError, match="job toy has no stage 'd'"):
        job.run(None, StageInputs(), first="d")
    with pytest.raises(ValueError, match="two stages share a name"):
        Job("twice", (stage("a", 1), stage("a", 2)))


def test_the_cli_has_a_command_for_every_synthesis_stage():
    """`coworkenv generate` plans and generates (a new run); every later stage is a command of its own."""
    from coworkenv.cli import pipeline as cli

    for name in SYNTHESIS.names()[1:]:
        assert callable(getattr(cli, name, None)), f"coworkenv {name} is missing"


@pytest.mark.parametrize(("dag_id", "job"), [("coworkenv_synthesize", SYNTHESIS), ("coworkenv_evaluate", EVALUATION)])
def test_the_dag_runs_the_jobs_stages_in_order(dag_id: str, job: Job):
    """The DAG's tasks, in dependency order, are the job's stages (read off the DAG file: each task is a function
    named after its stage, wired by the calls at the end of the DAG function)."""
    tree = ast.parse((ROOT / "dags" / f"{dag_id}.py").read_text())
    dag_fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == dag_id)
    tasks = [n.name for n in dag_fn.body if isinstance(n, ast.FunctionDef)]
    graph: dict[str, set[str]] = {t: set() for t in tasks}
    assigned: dict[str, str] = {}

    def task_of(node: ast.AST) -> str | None:
        """The task a wiring expression ends in: `f(...)`, `f.expand(...)` or a name assigned from one."""
        if isinstance(node, ast.Name):
            return assigned.get(node.id)
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.value.id
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                else getattr(func, "id", None)
            )
            if name in graph:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    upstream = task_of(arg)
                    if upstream is not None:
                        graph[name].add(upstream)
                return name
        return None

    for statement in dag_fn.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            assigned[statement.targets[0].id] = task_of(statement.value) or ""
        elif isinstance(statement, ast.Expr):
            task_of(statement.value)
    order = tuple(TopologicalSorter(graph).static_order())
    assert order == job.names(), f"{dag_id}: tasks {order}, the job's stages {job.names()}"
