"""What the DAGs need from Airflow and nothing else does: a job's DAG made from its declaration, the trigger form
generated from a config model, an LLM endpoint read from an Airflow connection, and the `extra` of the asset events a
task emits. Airflow is imported
inside the functions only (the library must import without it); the API server's side is `ui/auth.py`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, SecretStr

from coworkenv.airflow_env import GPU_POOL, GPU_QUEUE
from coworkenv.errors import CoworkEnvError, field_label
from coworkenv.judge.endpoint import JudgeConfig
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EndpointSettings, form_order
from coworkenv.pipeline.job import ASSETS, Job, Stage, StageInputs
from coworkenv.pipeline.kubernetes import TrainPodSettings, train_pod

R = TypeVar("R")

GPU_TASK: dict[str, str] = {"queue": GPU_QUEUE, "pool": GPU_POOL}
"""Where a GPU stage runs (training, local-model rollouts and evaluation): the cluster profile's `gpu` queue, which
only GPU workers serve, and the `gpu` pool, whose slots cap how many run at once. The embedded LocalExecutor runs
every queue in its own processes; the pool applies there too."""

_PARAM_KEYS = (
    "type",
    "title",
    "description",
    "enum",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "examples",
    "values_display",
    "section",
)


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
    return _unclamped({k: v for k, v in prop.items() if k in _PARAM_KEYS})


def _unclamped(schema: dict[str, Any]) -> dict[str, Any]:
    """Bounds the trigger form refuses instead of clamping. Airflow's React form gives `minimum`/`maximum` to its
    number box, which moves an out-of-range entry to the bound on blur (n = -1 became a run of 1 task); it ignores
    the exclusive bounds, which Airflow's own check of the Param still applies. An integer's inclusive bound is the
    exclusive bound one step out (the same integers pass); a float's has no exact exclusive twin and is left to the
    config model, which checks every trigger before its run exists (`coworkenv.ui.refusal`) and again in the task."""
    types = schema.get("type")
    kinds = set(types) if isinstance(types, list) else {types}
    out = dict(schema)
    for bound, exclusive, step in (("minimum", "exclusiveMinimum", -1), ("maximum", "exclusiveMaximum", 1)):
        if bound not in out:
            continue
        value = out.pop(bound)
        if "integer" in kinds and "number" not in kinds and isinstance(value, int):
            out[exclusive] = value + step
    return out


def params_from(model: type[BaseModel]) -> dict[str, Any]:
    """One `Param` per field of the model, section by section (`form_order`): type, bounds, choices, title,
    description, form section and pick-list from the model; a field that names a list of `form_choices` suggests
    what exists under the data root as the file is parsed."""
    from airflow.sdk import Param

    from coworkenv.pipeline.form_choices import suggestions

    props = model.model_json_schema()["properties"]
    params = {}
    for name in form_order(model):
        schema = _param_schema(props[name])
        # What exists now (`form_choices`) as the form's pick-list; none at all leaves the plain box, where any value
        # can still be typed (an empty list would give a list field a select with nothing to pick).
        if (choices := props[name].get("choices")) and (values := suggestions(choices)):
            schema["examples"] = values
        params[name] = Param(model.model_fields[name].default, **schema)
    return params


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
        llm = llm_config_from_connection(
            config.llm_conn_id,
            default_model=config.endpoint_model(),
            concurrency=config.llm_concurrency,
            timeout_s=config.llm_timeout_s,
        )
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
    from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException

    try:
        conn = Connection.get(conn_id)
    except AirflowNotFoundException:  # a setting naming nothing: no retry can find it
        raise AirflowFailException(
            f"{field_label(EndpointSettings, 'llm_conn_id')} {conn_id!r}: no such Airflow connection "
            "(Admin → Connections)"
        ) from None
    extra = dict(conn.extra_dejson or {})
    base_url = extra.pop("base_url", None) or conn.host
    if conn.port and base_url and "://" in base_url and base_url.count(":") < 2:
        base_url = f"{base_url.rstrip('/')}:{conn.port}"
    key = SecretStr(conn.password) if conn.password else None
    fields = {**extra, **overrides}
    if default_model and not fields.get("model"):
        fields["model"] = default_model
    return LLMConfig(base_url=base_url, api_key=key, **fields)


def judge_config_from_connection(conn_id: str, **overrides: Any) -> JudgeConfig:
    """The rubric judge (docs/design/contracts.md, "Judge") from an Airflow connection, read as `llm_config_from_connection`
    reads an LLM endpoint (host, password = key, extra `model`); `overrides` are other `JudgeConfig` fields. The key is
    masked in the task's logs; install the judge with `coworkenv.judge.endpoint.using_judge(Judge(config))`."""
    from airflow.sdk.log import mask_secret

    llm = llm_config_from_connection(conn_id, default_model=overrides.pop("model", None))
    config = JudgeConfig(
        base_url=llm.base_url, model=llm.model, api_key=llm.api_key, api_key_env=llm.api_key_env, **overrides
    )
    key = config.llm().key()
    if key != "not-needed":
        mask_secret(key)
    return config


@contextmanager
def run_judge(config: EndpointSettings) -> Iterator[None]:
    """The run's rubric judge installed for a DAG task's work (validate, repair, rollouts, evaluation): its
    `judge_conn_id` connection, else whatever the COWORKENV_JUDGE_* variables configure (`active_judge`)."""
    conn_id = getattr(config, "judge_conn_id", None)
    if not conn_id:
        yield
        return
    from coworkenv.judge.endpoint import Judge, using_judge

    with using_judge(Judge(judge_config_from_connection(conn_id))):
        yield


def train_pod_operator(settings: TrainPodSettings, **task_kwargs: Any) -> Any:
    """The nightly's `train` task as a KubernetesPodOperator running `train_pod` (the run id templated by the operator);
    the optional cncf.kubernetes provider is imported here, so a deployment without it gets one clear error."""
    try:
        from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    except ImportError:
        raise CoworkEnvError(
            "COWORKENV_TRAIN_ON=kubernetes needs the apache-airflow-providers-cncf-kubernetes package in the Airflow image"
        ) from None
    return KubernetesPodOperator(
        pod_template_dict=train_pod("{{ run_id }}", settings),
        namespace=settings.namespace,
        name="coworkenv-train",
        startup_timeout_seconds=settings.startup_timeout_s,
        do_xcom_push=True,
        get_logs=True,
        on_finish_action="delete_succeeded_pod",  # a failed pod stays for `kubectl logs`
        **task_kwargs,
    )


def job_dag(job: Job, *, operators: dict[str, Callable[..., Any]] | None = None, **dag_args: Any) -> Any:
    """The DAG of a job (`pipeline.job.Job`): one task per stage, in the job's order, each running its stage over the
    run directory `<data root>/runs/<Airflow run id>/`. A mapped stage maps one task over the previous task's result;
    a stage's declaration gives its doc, retries, queue and pool (GPU stages), and the assets it updates (its result as
    their events' extra). The first task checks the trigger's settings through the job's config model; the tasks of
    stages that call an endpoint read it, and the rubric judge, from the run's recorded config. `operators` replaces a
    stage's task with another operator made from the task's arguments (training in a pod of its own). `dag_args` are
    `airflow.sdk.dag`'s (dag_id, schedule, …); the DAG id and the trigger form come from the job (`dag_id`, `params_from(config)`)."""
    from airflow.sdk import Asset, dag, task

    def tasks() -> None:
        upstream: Any = None
        for position, stage in enumerate(job.stages):
            args: dict[str, Any] = {"task_id": stage.name, "doc_md": stage.doc}
            if stage.retries is not None:
                args["retries"] = stage.retries
            if stage.gpu:
                args.update(GPU_TASK)
            if stage.outlets:
                args["outlets"] = [Asset(name, uri=ASSETS[name]) for name in stage.outlets]
            if operators and stage.name in operators:
                operator = operators[stage.name](**args)
                upstream >> operator
                upstream = operator.output
                continue
            if stage.shards is not None:
                args["map_index_template"] = "shard {{ task.op_kwargs['previous']['shard'] }}"
            call = _stage_task(job, stage, first=position == 0)
            made = task(call, **args)
            if position == 0:
                upstream = made()
            elif stage.shards is not None:
                upstream = made.expand(previous=upstream)
            else:
                upstream = made(upstream)

    if job.dag_id is not None:
        dag_args.setdefault("dag_id", job.dag_id)
    if job.config is not None:
        dag_args.setdefault("params", params_from(job.config))
    return dag(**dag_args)(tasks)()


def _stage_task(job: Job, stage: Stage, *, first: bool) -> Callable[..., Any]:
    """The callable of a stage's task: the stage over the task's run, as `job_dag` describes."""

    def call(previous: Any = None) -> Any:
        from airflow.sdk import get_current_context

        from coworkenv.pipeline.rundir import RunDir

        context = get_current_context()
        run = RunDir.open(context["run_id"])
        if first:
            config = without_retry(
                lambda: job.settings(dict(context["params"]), "settings", run.data_root), CoworkEnvError
            )
            if job.begin is not None:
                without_retry(lambda: job.begin(run, config), CoworkEnvError)
        else:
            config = job.recorded(run) if job.recorded is not None else None
        inputs = StageInputs(config=config, previous=None if stage.shards is not None else previous)
        with run_judge(config) if stage.endpoint else nullcontext():
            if stage.endpoint:
                inputs = replace(inputs, llm=llm_endpoint(config))
            if stage.shards is None:
                work = lambda: stage.run(run, inputs)  # noqa: E731
            else:
                (shard,) = stage.shards(run, [previous])
                work = lambda: stage.run(run, inputs, shard)  # noqa: E731
            result = without_retry(work, CoworkEnvError) if stage.final else work()
        result = stage.xcom(result) if stage.xcom is not None else result
        return outlet_extra(result) if stage.outlets else result

    call.__name__ = call.__qualname__ = stage.name
    call.__doc__ = stage.doc
    return call
