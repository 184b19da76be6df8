"""What the DAGs need from Airflow and nothing else does: the trigger form generated from a config model, an LLM
endpoint read from an Airflow connection, and the `extra` of the asset events a task emits. Airflow is imported
inside the functions only (the library must import without it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, SecretStr

from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EndpointSettings

R = TypeVar("R")

_PARAM_KEYS = ("type", "title", "description", "enum", "items", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
               "minLength", "maxLength", "format", "examples")  # fmt: skip


def _param_schema(prop: dict[str, Any]) -> dict[str, Any]:
    """A model field's JSON Schema as a Param's: `anyOf [X, null]` (an optional field) becomes X with `type` [X, "null"]."""
    prop = dict(prop)
    variants = prop.pop("anyOf", None)
    if variants:
        real = [v for v in variants if v.get("type") != "null"]
        if len(real) == 1:
            extra_items = prop.pop("items", None)
            prop = {**real[0], **prop}
            prop["type"] = [real[0]["type"], "null"]
            if extra_items:  # `json_schema_extra` items (an enum) refine the array's own
                prop["items"] = {**prop.get("items", {}), **extra_items}
    return {k: v for k, v in prop.items() if k in _PARAM_KEYS}


def params_from(model: type[BaseModel]) -> dict[str, Any]:
    """One `Param` per field of the model, in field order: type, bounds, choices, title and description from the model."""
    from airflow.sdk import Param

    props = model.model_json_schema()["properties"]
    return {name: Param(field.default, **_param_schema(props[name])) for name, field in model.model_fields.items()}


def without_retry(work: Callable[[], R], *errors: type[Exception]) -> R:
    """`work()`; one of `errors` (bad settings, a failed gate) fails the task at once with its message: retrying
    cannot make bad input or bad data good."""
    from airflow.sdk.exceptions import AirflowFailException

    try:
        return work()
    except errors as exc:
        raise AirflowFailException(str(exc)) from None


def outlet_extra(result: dict[str, Any]) -> dict[str, Any]:
    """`result` (JSON values: a release id, row counts) as the `extra` of every asset event the running task emits,
    so an asset's history says which release or model each event was; returns `result` (the task's XCom)."""
    from airflow.sdk import get_current_context

    context = get_current_context()
    for outlet in context["task"].outlets:
        context["outlet_events"][outlet].extra.update(result)
    return result


def llm_endpoint(config: EndpointSettings) -> LLMConfig | None:
    """A run's LLM endpoint in a DAG task: its Airflow connection, else its base URL and model, else none. The key is
    registered with Airflow's log masker and with `coworkenv.redact` before the task can log or store anything."""
    from airflow.sdk.log import mask_secret

    if config.llm_conn_id:
        llm = llm_config_from_connection(config.llm_conn_id, default_model=config.endpoint_model(), concurrency=config.llm_concurrency,
                                         timeout_s=config.llm_timeout_s)  # fmt: skip
    else:
        llm = config.llm()
    if llm is not None:
        key = llm.key()
        if key != "not-needed":
            mask_secret(key)
    return llm


def llm_config_from_connection(conn_id: str, *, default_model: str | None = None, **overrides: Any) -> LLMConfig:
    """An Airflow connection as an LLM endpoint: host = base URL (port appended when given separately), password =
    API key (kept as a secret in the config, never exported), extra = other `LLMConfig` fields (e.g. `model`; else
    `default_model`, such as the model an `openai:<model>` agent names)."""
    from airflow.sdk import Connection

    conn = Connection.get(conn_id)
    extra = dict(conn.extra_dejson or {})
    base_url = extra.pop("base_url", None) or conn.host
    if conn.port and base_url and "://" in base_url and base_url.count(":") < 2:
        base_url = f"{base_url.rstrip('/')}:{conn.port}"
    key = SecretStr(conn.password) if conn.password else None
    fields = {**extra, **overrides}
    if default_model and not fields.get("model"):
        fields["model"] = default_model
    return LLMConfig(base_url=base_url, api_key=key, **fields)
