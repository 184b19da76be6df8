"""The Airflow side of the pipeline (`coworkenv.pipeline.airflow`): an LLM endpoint read from a real Airflow connection,
its key kept a secret and never copied into the environment."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]

KEY = "sk-test-0123456789abcdef"


def test_an_llm_endpoint_from_a_connection_keeps_its_key_secret(monkeypatch):
    from coworkenv.pipeline.airflow import llm_config_from_connection

    conn = {
        "conn_type": "http",
        "host": "http://127.0.0.1",
        "port": 8000,
        "password": KEY,
        "extra": {"model": "qwen-tiny", "max_retries": 1},
    }
    monkeypatch.setenv("AIRFLOW_CONN_MY_LLM", json.dumps(conn))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = dict(os.environ)
    config = llm_config_from_connection("my_llm", concurrency=2)
    assert (config.base_url, config.model, config.max_retries, config.concurrency) == (
        "http://127.0.0.1:8000",
        "qwen-tiny",
        1,
        2,
    )
    assert config.key() == KEY
    assert KEY not in repr(config) and KEY not in config.model_dump_json() and KEY not in str(config.model_dump())
    assert {k: v for k, v in os.environ.items() if KEY in v} == {
        k: v for k, v in before.items() if KEY in v
    }  # only the connection itself


def test_a_connection_without_a_password_uses_the_key_variable(monkeypatch):
    from coworkenv.pipeline.airflow import llm_config_from_connection

    monkeypatch.setenv(
        "AIRFLOW_CONN_LOCAL_LLM",
        json.dumps({"conn_type": "http", "host": "http://127.0.0.1:9/v1", "extra": {"model": "m"}}),
    )
    monkeypatch.setenv("MY_KEY", "from-the-environment")
    config = llm_config_from_connection("local_llm", api_key_env="MY_KEY")
    assert (
        config.api_key is None and config.key() == "from-the-environment" and config.base_url == "http://127.0.0.1:9/v1"
    )


def test_a_run_s_endpoint_masks_its_key_in_logs_and_redaction(monkeypatch):
    """`llm_endpoint` (what the DAG's tasks call): the connection when the run names one, else base URL and model, else
    none; the key it resolves is masked in Airflow's task logs and scrubbed by `coworkenv.redact` from then on."""
    from airflow.sdk.log import redact as airflow_redact

    from coworkenv.pipeline.airflow import llm_endpoint
    from coworkenv.pipeline.config import synthesis_config
    from coworkenv.redact import redact

    conn_key, env_key = "conn-held-secret-0001", "env-held-secret-0002"
    conn = {"conn_type": "http", "host": "http://127.0.0.1:9/v1", "password": conn_key, "extra": {"model": "m"}}
    monkeypatch.setenv("AIRFLOW_CONN_RUN_LLM", json.dumps(conn))
    monkeypatch.setenv("RUN_LLM_AUTH", env_key)
    by_connection = llm_endpoint(synthesis_config({"generator": "llm", "llm_conn_id": "run_llm", "llm_concurrency": 3}))
    assert (by_connection.base_url, by_connection.model, by_connection.concurrency) == ("http://127.0.0.1:9/v1", "m", 3)
    by_url = llm_endpoint(
        synthesis_config(
            {"generator": "mixed", "llm_base_url": "http://h/v1", "llm_model": "n", "llm_api_key_env": "RUN_LLM_AUTH"}
        )
    )
    assert (by_url.base_url, by_url.model, by_url.key()) == ("http://h/v1", "n", env_key)
    assert llm_endpoint(synthesis_config({})) is None
    for key in (conn_key, env_key):
        assert key not in str(airflow_redact(f"echo {key}")) and redact(f"echo {key}") == "echo [REDACTED]"


def test_a_connection_that_is_not_there_fails_the_task_at_once_in_the_forms_words(monkeypatch):
    from airflow.sdk.exceptions import AirflowFailException

    from coworkenv.pipeline.airflow import llm_endpoint
    from coworkenv.pipeline.config import synthesis_config

    monkeypatch.delenv("AIRFLOW_CONN_NO_SUCH_LLM", raising=False)
    with pytest.raises(
        AirflowFailException, match=r"^LLM connection \(llm_conn_id\) 'no_such_llm': no such Airflow connection"
    ):
        llm_endpoint(synthesis_config({"generator": "llm", "llm_conn_id": "no_such_llm"}))


def test_a_judge_from_a_connection_keeps_its_key_secret(monkeypatch):
    from airflow.sdk.log import redact as airflow_redact

    from coworkenv.judge.endpoint import PROMPT_VERSION
    from coworkenv.pipeline.airflow import judge_config_from_connection

    key = "judge-held-secret-0003"
    conn = {
        "conn_type": "http",
        "host": "http://127.0.0.1",
        "port": 8001,
        "password": key,
        "extra": {"model": "qwen-judge"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_MY_JUDGE", json.dumps(conn))
    config = judge_config_from_connection("my_judge", timeout_s=5.0)
    assert (config.base_url, config.model, config.timeout_s, config.temperature, config.prompt_version) == (
        "http://127.0.0.1:8001",
        "qwen-judge",
        5.0,
        0.0,
        PROMPT_VERSION,
    )
    assert config.llm().key() == key and key not in repr(config) and key not in config.model_dump_json()
    assert key not in str(airflow_redact(f"echo {key}"))


def test_a_run_s_judge_connection_is_installed_around_its_work(monkeypatch, tmp_path):
    """`run_judge` (what the DAG's validate, repair, rollout and evaluation tasks wrap their work in): the run's
    `judge_conn_id` as the active judge for the block, its verdicts from that endpoint; without one, whatever the
    COWORKENV_JUDGE_* variables configure stays in charge."""
    from coworkenv.judge import endpoint as judge_module
    from coworkenv.pipeline.airflow import run_judge
    from coworkenv.pipeline.config import synthesis_config
    from tests.support.judge_endpoint import judge_endpoint

    monkeypatch.setenv("COWORKENV_JUDGE_CACHE", str(tmp_path / "verdicts"))
    with judge_endpoint() as server, judge_module.using_judge(None):
        monkeypatch.setenv(
            "AIRFLOW_CONN_RUN_JUDGE",
            json.dumps({"conn_type": "http", "host": server.url, "extra": {"model": "rule-judge-1"}}),
        )
        with run_judge(synthesis_config({"judge_conn_id": "run_judge"})):
            judge = judge_module.active_judge()
            assert (judge.config.base_url, judge.config.model) == (server.url, "rule-judge-1")
            assert judge.verdict('Says "archived".', "It was archived.").passed is True and server.requests == 1
        assert judge_module.active_judge() is None
        with run_judge(synthesis_config({})):
            assert judge_module.active_judge() is None
