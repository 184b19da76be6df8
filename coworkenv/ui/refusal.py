"""A trigger with bad settings refused before its run exists: an ASGI middleware of Airflow's API server (registered
by plugins/coworkenv_plugin.py through `fastapi_root_middlewares`).

Airflow checks a trigger's `conf` one Param at a time (JSON Schema); a rule across fields (lowest difficulty above
the highest), an unknown key or a capability profile that is not there passes that check and fails in the first
task. For `POST /api/v2/dags/<dag_id>/dagRuns` (the REST API and the UI's trigger form alike) and
`POST /api/v2/backfills` of a DAG in `pipeline.all_jobs.JOBS`, this reads the body, checks its `conf` with the DAG's config model
(pydantic fills in the defaults, as the Params would) and answers 400 `{"detail": "<one line>"}` in the form's words,
which the form shows as it shows Airflow's own refusals. Anything else, and every body it cannot judge (not JSON,
too large, no `conf` object), goes on to Airflow unchanged: the same bytes, replayed.

Only a request from a user whom Airflow lets trigger the DAG is checked; any other goes on to Airflow's own 401/403,
so the settings (a profile path on the server included) are never judged for someone who may not trigger runs.
Standard library only at module level: the config models and Airflow's auth are imported on the first trigger.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
"""A trigger body larger than this is passed on unread (a real one is a few kilobytes)."""

TRIGGER = re.compile(r"/api/v2/dags/(?P<dag_id>[^/]+)/dagRuns")
BACKFILL = "/api/v2/backfills"

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Authorize = Callable[[Scope, str], Awaitable[bool]]


class RefuseBadSettings:
    """The middleware. `configs` (dag id → config model) and `authorize(scope, dag_id)` default to the library's
    `pipeline.all_jobs.JOBS` and Airflow's own check (`ui.auth.may_trigger`), both imported on first use."""

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        configs: Mapping[str, type] | None = None,
        authorize: Authorize | None = None,
    ) -> None:
        self.app = app
        self._configs = configs
        self._authorize = authorize

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _route(scope)
        if route is None:
            return await self.app(scope, receive, send)
        chunks, state = await _read_body(receive)
        if state == "gone":
            return None  # the client left: no run to refuse, no one to answer
        refusal = await self._refusal(scope, _dag_and_conf(route, b"".join(chunks))) if state == "complete" else None
        if refusal is None:
            return await self.app(scope, _replaying(chunks, state == "complete", receive), send)
        await _answer(send, 400, {"detail": refusal})

    async def _refusal(self, scope: Scope, asked: tuple[str, dict[str, Any]] | None) -> str | None:
        """The one-line reason to refuse this trigger, or None to let Airflow have it."""
        if asked is None:
            return None
        dag_id, conf = asked
        configs = self._configs
        if configs is None:
            from coworkenv.pipeline.all_jobs import job_configs

            configs = self._configs = job_configs()
        model = configs.get(dag_id)
        if model is None:
            return None
        try:
            if not await self._may_trigger(scope, dag_id):
                return None
        except Exception:  # noqa: BLE001 — Airflow's auth changed shape: let Airflow decide; the first task checks again
            log.warning(
                "cannot tell whether this request may trigger %s; its settings are checked by the run",
                dag_id,
                exc_info=True,
            )
            return None
        return await _check(model, conf)

    async def _may_trigger(self, scope: Scope, dag_id: str) -> bool:
        if self._authorize is None:
            from coworkenv.ui.auth import may_trigger

            self._authorize = may_trigger
        return await self._authorize(scope, dag_id)


def _route(scope: Scope) -> tuple[str, str | None] | None:
    """("trigger", its DAG id) or ("backfill", None: the DAG is in the body) for the two POSTs that start runs with a
    conf; None for any other request."""
    if scope.get("type") != "http" or scope.get("method") != "POST":
        return None
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if match := TRIGGER.fullmatch(path):
        return "trigger", match["dag_id"]
    return ("backfill", None) if path == BACKFILL else None


def _dag_and_conf(route: tuple[str, str | None], body: bytes) -> tuple[str, dict[str, Any]] | None:
    """The DAG and the settings a body asks for (no conf: the defaults); None for a body Airflow should judge (not
    JSON, not an object, a conf that is not an object)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    kind, dag_id = route
    conf = data.get("conf") if kind == "trigger" else data.get("dag_run_conf")
    dag_id = dag_id if kind == "trigger" else data.get("dag_id")
    conf = {} if conf is None else conf
    if not isinstance(dag_id, str) or not isinstance(conf, dict):
        return None
    return dag_id, conf


async def _check(model: type, conf: dict[str, Any]) -> str | None:
    """The config model's one-line verdict on `conf`, in a worker thread (it may read a profile file)."""
    from starlette.concurrency import run_in_threadpool

    from coworkenv.data.root import default_data_root
    from coworkenv.errors import CoworkEnvError
    from coworkenv.pipeline.config import validated_config

    try:  # the data root the run will read: a suite that is not published there is refused now, not in the run
        await run_in_threadpool(lambda: validated_config(model, conf, data_root=default_data_root()))
    except CoworkEnvError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 — a bug in a check must not stop triggering: the first task checks again
        log.exception("checking the settings of a trigger failed; passing it on")
    return None


async def _read_body(receive: Receive) -> tuple[list[bytes], str]:
    """The body's chunks read so far and why reading stopped: "complete", "too_large" (over MAX_BODY_BYTES, the rest
    unread) or "gone" (the client disconnected)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return chunks, "gone"
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return chunks, "complete"
        if size > MAX_BODY_BYTES:
            return chunks, "too_large"


def _replaying(chunks: list[bytes], complete: bool, receive: Receive) -> Receive:
    """A `receive` that gives the app the body read so far, then whatever the client still sends."""
    pending = [{"type": "http.request", "body": b"".join(chunks), "more_body": not complete}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def _answer(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
