"""The job configs: one pydantic model each for the CLI options, the YAML file and the DAG's form; bad settings
refused up front, in the form's words (a field's title and key, never a CLI flag)."""

from __future__ import annotations

import json
import os

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.airflow import _param_schema
from coworkenv.pipeline.all_jobs import job_configs
from coworkenv.pipeline.config import (
    EvaluationConfig,
    NightlyConfig,
    SynthesisConfig,
    evaluation_config,
    form_order,
    nightly_config,
    read_config_file,
    synthesis_config,
    validated_config,
)
from coworkenv.spec.capabilities import CAPABILITIES

PROFILE = {"model": "m", "rows": [{"capability": "retrieval", "difficulty": 3, "attempts": 50, "pass_rate": 0.5}]}


def test_defaults_are_a_valid_procedural_run():
    config = SynthesisConfig()
    assert (config.n, config.generator, config.runtime) == (100, "procedural", "auto") and config.llm() is None


def refusal(make, values) -> str:
    with pytest.raises(CoworkEnvError) as caught:
        make(values, "settings")
    message = str(caught.value)
    assert "\n" not in message and "--" not in message, message  # one line, no CLI flag
    assert message.startswith("settings: ")
    return message.removeprefix("settings: ")


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"difficulty_min": 5, "difficulty_max": 1},
            "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1",
        ),
        (
            {"generator": "llm"},
            "Generator (generator) 'llm' needs an LLM endpoint: an LLM connection (llm_conn_id), or an LLM base URL "
            "(llm_base_url) and an LLM model (llm_model)",
        ),
        (
            {"generator": "mixed", "llm_base_url": "http://127.0.0.1:9/v1"},
            "Generator (generator) 'mixed' needs an LLM endpoint",
        ),
        ({"nn": 20}, "'nn' is not a setting of this run (did you mean Tasks (n)?)"),
        ({"n": -1}, "Tasks (n): Input should be greater than or equal to 1"),
        ({"families": ["mail_trage"]}, "Families (families): unknown family 'mail_trage'; did you mean 'mail_triage'?"),
        ({"families": []}, "Families (families): an empty list"),
        ({"capabilities": ["telepathy"]}, "Capabilities (capabilities): unknown capability 'telepathy'"),
        ({"runtime": "docker"}, "Sandbox (runtime): Input should be 'auto', 'bwrap', 'rlimit' or 'none'"),
        ({"profile": "no/such/profile.json"}, "Capability profile (profile): no/such/profile.json: no such file"),
        ({"profile": os.devnull}, f"Capability profile (profile): {os.devnull}: not a file"),
        ({"n": 0, "seed": -1}, "Tasks (n): Input should be greater than or equal to 1 (and 1 more)"),
    ],
)
def test_bad_synthesis_settings_are_refused_in_the_forms_words(values, expected):
    assert refusal(synthesis_config, values).startswith(expected)


def test_the_profile_must_parse_as_a_capability_profile(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({**PROFILE, "rows": [{**PROFILE["rows"][0], "capability": "telepathy"}]}))
    assert refusal(synthesis_config, {"profile": str(path)}).startswith(
        f"Capability profile (profile): {path}: unknown capability 'telepathy'"
    )
    path.write_text("[1, 2]")
    assert "expected a JSON object" in refusal(synthesis_config, {"profile": str(path)})
    path.write_text(json.dumps(PROFILE))
    assert synthesis_config({"profile": str(path)}).profile == str(path)


def test_a_recorded_config_is_not_refused_for_a_file_gone_since(tmp_path):
    """A run checks the files it names when it starts; later stages read the recorded config and must not fail
    because the profile (or a model directory) was removed meanwhile."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(PROFILE))
    recorded = synthesis_config({"profile": str(path)}).model_dump(mode="json")
    path.unlink()
    assert validated_config(SynthesisConfig, recorded, recorded=True).profile == str(path)
    with pytest.raises(CoworkEnvError, match="no such file"):
        validated_config(SynthesisConfig, recorded)
    hf = {"agent": f"hf:{tmp_path / 'gone'}"}
    assert validated_config(EvaluationConfig, hf, recorded=True).agent == hf["agent"]
    assert validated_config(NightlyConfig, {"base_model": str(tmp_path / "gone")}, recorded=True).base_model


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"agent": "oracel"}, "Agent (agent): unknown agent 'oracel'; did you mean 'oracle'?"),
        ({"agent": "hf"}, "Agent (agent): agent 'hf' needs a local model directory: hf:<dir>"),
        ({"agent": "hf:no/such/model"}, "Agent (agent): hf:no/such/model: no such model directory"),
        (
            {"agent": "openai:gpt-x"},
            "Agent (agent) 'openai:gpt-x' needs an LLM endpoint: an LLM connection (llm_conn_id), or an LLM base URL (llm_base_url)",
        ),
        (
            {"agent": "openai", "llm_base_url": "http://127.0.0.1:9/v1"},
            "Agent (agent) 'openai' needs a model: openai:<model>, or an LLM model (llm_model)",
        ),
        ({"user": "llm"}, "Simulated user (user) 'llm' needs an LLM endpoint"),
        ({"user": "llm", "llm_base_url": "http://127.0.0.1:9/v1"}, "Simulated user (user) 'llm' needs an LLM endpoint"),
        ({"suite": "no/such/suite.jsonl"}, "Suite (suite): no/such/suite.jsonl: no such file"),
        ({"trials": 0}, "Trials (trials): Input should be greater than or equal to 1"),
        ({"trails": 2}, "'trails' is not a setting of this run (did you mean Trials (trials)?)"),
    ],
)
def test_bad_evaluation_settings_are_refused_in_the_forms_words(values, expected):
    assert refusal(evaluation_config, values).startswith(expected)


def test_endpoints_that_do_make_an_agent_and_a_user():
    assert (
        evaluation_config({"agent": "openai:m1", "llm_base_url": "http://127.0.0.1:9/v1", "user": "llm"}).llm().model
        == "m1"
    )
    assert (
        evaluation_config({"agent": "openai", "llm_conn_id": "my_llm", "user": "llm"}).llm() is None
    )  # Airflow resolves it


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"base_model": "no/such/checkpoint"}, "Base model (base_model): no/such/checkpoint: no such model directory"),
        (
            {"suite": "held_out.jsonl"},
            "Held-out suite (suite): held_out.jsonl: the nightly loop evaluates on a published suite",
        ),
        ({"model_name": "-bad"}, "Model name (model_name): String should match pattern"),
        ({"alpha": 0}, "Significance (alpha): Input should be greater than 0"),
        ({"budgte": 5}, "'budgte' is not a setting of this run (did you mean Task budget (budget)?)"),
    ],
)
def test_bad_nightly_settings_are_refused_in_the_forms_words(values, expected):
    assert refusal(nightly_config, values).startswith(expected)


def test_an_llm_endpoint_by_url_or_by_connection():
    by_url = synthesis_config(
        {"generator": "llm", "llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m", "llm_concurrency": 7}
    )
    llm = by_url.llm()
    assert llm is not None and (llm.model, llm.concurrency, llm.api_key) == ("m", 7, None)
    by_connection = synthesis_config({"generator": "llm", "llm_conn_id": "my_llm"})
    assert by_connection.llm() is None  # resolved by the Airflow adapter, not here


@pytest.mark.parametrize("model", job_configs().values(), ids=lambda m: m.__name__)
def test_every_field_has_a_title_a_description_and_a_section_of_its_form(model):
    props = model.model_json_schema()["properties"]
    for name, field in model.model_fields.items():
        assert field.title and field.description, name
        assert props[name].get("section") in model.form_sections, name


@pytest.mark.parametrize("model", job_configs().values(), ids=lambda m: m.__name__)
def test_the_form_shows_one_section_after_another(model):
    props = model.model_json_schema()["properties"]
    order = form_order(model)
    assert sorted(order) == sorted(model.model_fields)
    sections = [props[name]["section"] for name in order]
    assert [s for i, s in enumerate(sections) if i == 0 or sections[i - 1] != s] == list(
        model.form_sections
    )  # each once, in order
    assert sections[-1] == "LLM endpoint" or "llm_base_url" not in model.model_fields


def test_form_fields_from_the_json_schema():
    props = SynthesisConfig.model_json_schema()["properties"]
    families = _param_schema(props["families"])
    assert (
        families["type"] == ["array", "null"]
        and "mail_triage" in families["items"]["enum"]
        and families["items"]["type"] == "string"
    )
    assert families["examples"] == families["items"]["enum"]  # what makes Airflow's form a multi-select pick-list
    assert _param_schema(props["capabilities"])["examples"] == CAPABILITIES.names()
    assert _param_schema(props["n"]) == {
        "type": "integer",
        "title": "Tasks",
        "description": "Tasks to generate.",
        "section": "What to make",
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1_000_001,
    }
    assert _param_schema(props["runtime"])["enum"] == ["auto", "bwrap", "rlimit", "none"]
    assert _param_schema(props["profile"])["type"] == ["string", "null"]
    assert _param_schema(props["task_budget_s"])["exclusiveMinimum"] == 0 and "maximum" not in _param_schema(
        props["task_budget_s"]
    )
    assert "minimum" not in _param_schema(props["llm_share"]) and "maximum" not in _param_schema(props["llm_share"])


def test_integer_bounds_keep_the_same_integers_without_the_inclusive_keys():
    """The form clamps into `minimum`/`maximum`; the exclusive bounds it ignores refuse exactly the same integers."""
    for model in job_configs().values():
        props = model.model_json_schema()["properties"]
        for name, prop in props.items():
            schema = _param_schema(prop)
            assert "minimum" not in schema and "maximum" not in schema, name
            inner = next((v for v in prop.get("anyOf", [prop]) if v.get("type") == "integer"), None)
            if inner and "minimum" in inner:
                assert schema["exclusiveMinimum"] == inner["minimum"] - 1, name
            if inner and "maximum" in inner:
                assert schema["exclusiveMaximum"] == inner["maximum"] + 1, name


@pytest.mark.parametrize(
    ("text", "needle"), [("- a\n", "expected a mapping"), ("n: [1\n", "not valid YAML"), ("\xff", "not UTF-8")]
)
def test_config_files(tmp_path, text, needle):
    path = tmp_path / "run.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(CoworkEnvError, match=needle):
        read_config_file(path)


def test_an_empty_config_file_is_the_defaults(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("", encoding="utf-8")
    assert synthesis_config(read_config_file(path)) == SynthesisConfig()
