"""SynthesisConfig: one model for the CLI options, the YAML file and the DAG's form; bad settings refused up front."""

from __future__ import annotations

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.airflow import _param_schema
from coworkenv.pipeline.config import SynthesisConfig, read_config_file, synthesis_config


def test_defaults_are_a_valid_procedural_run():
    config = SynthesisConfig()
    assert (config.n, config.generator, config.runtime) == (100, "procedural", "auto") and config.llm() is None


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"difficulty_min": 4, "difficulty_max": 2}, "difficulty_min (4) is above difficulty_max (2)"),
        ({"generator": "mixed"}, "needs an LLM endpoint"),
        ({"families": ["mail_trage"]}, "did you mean 'mail_triage'"),
        ({"capabilities": ["telepathy"]}, "unknown capability 'telepathy'"),
        ({"runtime": "docker"}, "runtime"),
        ({"n": 0}, "n: Input should be greater than or equal to 1"),
        ({"nn": 20}, "nn: Extra inputs are not permitted"),
    ],
)
def test_bad_settings_are_one_line_naming_the_field(values, needle):
    with pytest.raises(CoworkEnvError) as caught:
        synthesis_config(values)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_an_llm_endpoint_by_url_or_by_connection():
    by_url = synthesis_config({"generator": "llm", "llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m", "llm_concurrency": 7})
    llm = by_url.llm()
    assert llm is not None and (llm.model, llm.concurrency, llm.api_key) == ("m", 7, None)
    by_connection = synthesis_config({"generator": "llm", "llm_conn_id": "my_llm"})
    assert by_connection.llm() is None  # resolved by the Airflow adapter, not here


def test_every_field_has_a_title_and_a_description():
    for name, field in SynthesisConfig.model_fields.items():
        assert field.title and field.description, name


def test_form_fields_from_the_json_schema():
    props = SynthesisConfig.model_json_schema()["properties"]
    families = _param_schema(props["families"])
    assert families["type"] == ["array", "null"] and "mail_triage" in families["items"]["enum"] and families["items"]["type"] == "string"
    assert _param_schema(props["n"]) == {"type": "integer", "title": "Tasks", "description": "Tasks to generate.", "minimum": 1, "maximum": 1_000_000}
    assert _param_schema(props["runtime"])["enum"] == ["auto", "bwrap", "rlimit", "none"]
    assert _param_schema(props["profile"])["type"] == ["string", "null"]


@pytest.mark.parametrize(("text", "needle"), [("- a\n", "expected a mapping"), ("n: [1\n", "not valid YAML"), ("\xff", "not UTF-8")])
def test_config_files(tmp_path, text, needle):
    path = tmp_path / "run.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(CoworkEnvError, match=needle):
        read_config_file(path)


def test_an_empty_config_file_is_the_defaults(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("", encoding="utf-8")
    assert synthesis_config(read_config_file(path)) == SynthesisConfig()
