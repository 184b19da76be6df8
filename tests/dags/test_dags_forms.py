"""The trigger forms of CoworkEnv's DAGs as Airflow's React form renders them: Params generated from each DAG's config
model in `pipeline.all_jobs.JOBS` (titles, sections, pick-lists, bounds it refuses rather than clamps), a description on every
DAG, and bad settings that still reach a run failing its first task at once, in the form's words."""

from __future__ import annotations

import pytest

from tests.dags.conftest import DAGS_FOLDER, load_dag

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


def _job_dags() -> list[str]:
    from coworkenv.pipeline.all_jobs import job_configs

    return list(job_configs())


@pytest.mark.parametrize("dag_id", sorted(p.stem for p in DAGS_FOLDER.glob("coworkenv_*.py")))
def test_every_dag_says_what_it_does_in_one_short_line(airflow_home, dag_id):
    dag = load_dag(dag_id)
    assert dag.description and len(dag.description) <= 120 and "\n" not in dag.description


@pytest.mark.parametrize("dag_id", _job_dags())
def test_the_form_is_the_config_model_section_by_section(airflow_home, dag_id):
    from coworkenv.pipeline.all_jobs import job_configs
    from coworkenv.pipeline.config import form_order

    model = job_configs()[dag_id]
    params = load_dag(dag_id).params
    assert list(params.keys()) == form_order(model)
    seen: list[str] = []
    for name in params.keys():
        param, field = params.get_param(name), model.model_fields[name]
        assert param.schema["title"] == field.title and param.description == field.description, name
        section = param.schema["section"]
        assert section in model.form_sections and (not seen or seen[-1] == section or section not in seen), (
            name
        )  # one block each
        seen.append(section)
        # Airflow's form clamps a number into `minimum`/`maximum` instead of refusing it: neither may reach it
        assert "minimum" not in param.schema and "maximum" not in param.schema, name
    assert list(dict.fromkeys(seen)) == list(model.form_sections)


def test_families_and_capabilities_are_multi_select_pick_lists(airflow_home):
    """The React form renders an `array` Param with a list of `examples` (or `enum`) as a multi-select of those
    values; `items.enum` lets Airflow refuse any other name."""
    from airflow.sdk.definitions.param import ParamValidationError

    from coworkenv.spec.capabilities import CAPABILITIES
    from coworkenv.synth.family import load_families

    params = load_dag("coworkenv_synthesize").params
    for name, names in (("families", load_families().names()), ("capabilities", CAPABILITIES.names())):
        schema = params.get_param(name).schema
        assert schema["type"] == ["array", "null"] and schema["examples"] == names and schema["items"]["enum"] == names
        assert "enum" not in schema  # at the top level an enum would be the one allowed value of the whole list
    params["families"] = ["mail_triage", "sheet_join"]
    params["capabilities"] = None  # a cleared multi-select sends null: all capabilities
    with pytest.raises(ParamValidationError):
        params["families"] = ["mail_triage", "no_such_family"]


@pytest.mark.parametrize(
    ("dag_id", "name", "value"),
    [
        ("coworkenv_synthesize", "n", -1),
        ("coworkenv_synthesize", "difficulty_max", 6),
        ("coworkenv_evaluate", "trials", 0),
        ("coworkenv_nightly", "budget", 0),
    ],
)
def test_an_integer_out_of_range_is_refused_by_the_param(airflow_home, dag_id, name, value):
    from airflow.sdk.definitions.param import ParamValidationError

    params = load_dag(dag_id).params
    with pytest.raises(ParamValidationError):
        params[name] = value


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        (
            {"difficulty_min": 5, "difficulty_max": 1},
            "settings: Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1",
        ),
        pytest.param(
            {"profile": "no/such/profile.json"},
            "settings: Capability profile (profile): no/such/profile.json: no such file",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"nn": 20}, "settings: 'nn' is not a setting of this run (did you mean Tasks (n)?)", marks=pytest.mark.slow
        ),
    ],
)
def test_bad_settings_that_reach_a_run_fail_its_first_task_at_once(airflow_home, conf, message, capfd):
    """A scheduled run, `airflow dags trigger` or a profile deleted after the trigger: Airflow's Params pass these, the
    plan task refuses them without retries (the DAG's default is 2) and says why in the form's words."""
    dag = load_dag("coworkenv_synthesize")
    run = dag.test(run_conf=conf)
    assert str(run.state) == "failed"
    tis = {ti.task_id: ti for ti in run.get_task_instances()}
    assert str(tis["plan"].state) == "failed" and tis["plan"].try_number == 1 and dag.default_args["retries"] == 2
    assert all(str(tis[t].state) == "upstream_failed" for t in ("generate", "gate", "publish"))
    assert f"AirflowFailException: {message}" in capfd.readouterr().out  # the task's log


def test_free_text_settings_suggest_what_exists(airflow_home, tiny_model_dir, tmp_path, monkeypatch):
    """Agent, suite, base model and training releases offer, as the DAG file is parsed, what the data root holds:
    a text box with a pick-list (a list field: a multi-select), where nothing exists, the plain box."""
    from coworkenv.eval.suite import build_bench
    from coworkenv.models.versions import register_model
    from tests.support.suites import example_tasks, publish_task_release

    data = tmp_path / "data"
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(data))
    params = load_dag("coworkenv_evaluate").params
    assert "examples" not in params.get_param("suite").schema  # nothing published yet
    plain = params.get_param("agent").schema["examples"]  # the kinds that need no target (tests may add their own)
    assert {"random", "oracle", "null"} <= set(plain) and not {"hf", "openai"} & set(plain)
    bench = build_bench(n=2, data_root=data).release_id
    tasks = publish_task_release(data, example_tasks()[:2]).release_id
    entry = register_model(tiny_model_dir, "agent", data_root=data)

    params = load_dag("coworkenv_evaluate").params
    assert params.get_param("suite").schema["examples"] == ["bench", tasks, bench]
    assert params.get_param("agent").schema["examples"] == [*plain, f"hf:{entry.path}"]
    assert params.get_param("train_releases").schema["examples"] == [tasks]
    nightly = load_dag("coworkenv_nightly").params
    assert nightly.get_param("suite").schema["examples"] == ["bench", tasks, bench]
    assert nightly.get_param("base_model").schema["examples"] == [entry.path]
    params["suite"] = "a-release-published-after-the-parse"  # a suggestion, not a constraint
