"""What every job's configuration shares: the LLM endpoint settings, the sandbox runtime field, and the helpers the
job configs (`pipeline/config.py`, `pipeline/nightly_config.py`) build their trigger-form sections with."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from coworkenv.errors import field_label
from coworkenv.llm import LLMConfig
from coworkenv.llm.wire import http_url

LLM_ENDPOINT = "LLM endpoint"
VALIDATION = "Validation and repair"
"""Sections of the trigger forms (Airflow Param `section`); each model lists its own in `form_sections`, in the order
the form shows them."""

RECORDED = {"recorded": True}
"""Validation context of a config a run recorded when it started: the files it named (a capability profile, a model
directory) were checked then; a later stage must not fail because one has since gone."""


def form_section(name: str, **extra: Any) -> dict[str, Any]:
    return {"section": name, **extra}


def checks_files(info: ValidationInfo) -> bool:
    return not (isinstance(info.context, dict) and info.context.get("recorded"))


def published_suite_exists(label: str, suite: str, info: ValidationInfo) -> None:
    """A suite named by release (`bench` or a release id) must be published under the data root the run will read,
    where the check was given one (`validated_config(..., data_root=...)`: a trigger refused before its run exists);
    without it the run's first stage looks it up."""
    data_root = info.context.get("data_root") if isinstance(info.context, dict) else None
    if data_root is None or suite.endswith(".jsonl") or not checks_files(info):
        return
    from coworkenv.data.reader import read_manifest
    from coworkenv.errors import CoworkEnvError
    from coworkenv.eval.suite import BENCH_REF, newest_benchmark

    try:
        newest_benchmark(data_root) if suite == BENCH_REF else read_manifest(data_root, suite)
    except CoworkEnvError as exc:
        raise ValueError(f"{label}: {exc}") from None


def need_endpoint(model: type[BaseModel], what: str, with_model: bool = True) -> str:
    """The message of a setting that needs an LLM endpoint, in the form's words."""
    url = field_label(model, "llm_base_url") + (f" and an {field_label(model, 'llm_model')}" if with_model else "")
    return f"{what} needs an LLM endpoint: an {field_label(model, 'llm_conn_id')}, or an {url}"


class EndpointSettings(BaseModel):
    """An OpenAI-compatible endpoint for the LLM roles of a job (generator, repairer, agent, simulated user)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm_conn_id: str | None = Field(
        None,
        title="LLM connection",
        description="Airflow connection of an OpenAI-compatible endpoint (host = base URL, password = API key, extra = "
        '{"model": ...}); Airflow runs only.',
        json_schema_extra=form_section(LLM_ENDPOINT),
    )
    llm_base_url: str | None = Field(
        None,
        title="LLM base URL",
        description="OpenAI-compatible endpoint, instead of a connection.",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )
    llm_model: str | None = Field(
        None,
        title="LLM model",
        description="Model name at that endpoint.",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )
    llm_api_key_env: str = Field(
        "OPENAI_API_KEY",
        title="LLM key variable",
        description="Environment variable holding the endpoint's API key.",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )
    llm_concurrency: int = Field(
        4,
        ge=1,
        le=256,
        title="LLM concurrency",
        description="LLM requests in flight at once (1-256).",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )
    llm_timeout_s: float = Field(
        120.0,
        gt=0,
        title="LLM timeout",
        description="LLM request timeout in seconds.",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )

    judge_conn_id: str | None = Field(
        None,
        title="Judge connection",
        description="Airflow connection of the rubric judge, an OpenAI-compatible endpoint (host = base URL, password = API key, "
        'extra = {"model": ...}); it grades rubric checks in validation, repair and rollouts. Default: the COWORKENV_JUDGE_* '
        "variables, else no judge (rubric checks are not graded); Airflow runs only.",
        json_schema_extra=form_section(LLM_ENDPOINT),
    )

    @field_validator("llm_base_url")
    @classmethod
    def _http(cls, url: str | None) -> str | None:
        return url if url is None else http_url(url)

    def endpoint_model(self) -> str | None:
        """The model to ask at the endpoint when none is named elsewhere (a connection's extra can name one)."""
        return self.llm_model

    def llm(self) -> LLMConfig | None:
        """The endpoint given by base URL and model (an Airflow connection is resolved by `pipeline.airflow`)."""
        model = self.endpoint_model()
        if not (self.llm_base_url and model):
            return None
        return LLMConfig(
            base_url=self.llm_base_url,
            model=model,
            api_key_env=self.llm_api_key_env,
            concurrency=self.llm_concurrency,
            timeout_s=self.llm_timeout_s,
        )


def runtime_field(section: str) -> Any:
    return Field(
        "auto",
        title="Sandbox",
        description="Sandbox runtime (auto: bubblewrap when available; none: in-process, trusted input only).",
        json_schema_extra=form_section(section),
    )
