"""Airflow's sign-in and permissions, for what the plugin adds to Airflow's API server: the pages (Airflow does not
protect mounted apps, so every page depends on `airflow_user`) and the check of a trigger's settings, which judges
only requests from users Airflow lets trigger that DAG (`may_trigger`).

It asks Airflow exactly as Airflow's own API routes do (`airflow.api_fastapi.core_api.security.get_user`: a JWT
in the `Authorization: Bearer` header, else the `_token` cookie the UI's login sets, validated by the configured auth
manager), then whether that user may see the UI at all (`is_authorized_view(WEBSITE)`). Without a valid token a
browser is sent to the auth manager's login page, which brings it back after signing in; other clients get Airflow's
401 (403 for a token it rejects).

The second place in the library that imports Airflow (after `pipeline/airflow.py`), and only inside the function:
the API server has loaded all of it by the time a request arrives.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request


def wants_html(request: Request) -> bool:
    return request.method == "GET" and "text/html" in request.headers.get("accept", "")


async def request_user(request: Request) -> Any:
    """The user Airflow's own routes would see for this request, or Airflow's HTTPException (401/403)."""
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    return await get_user(request, None, await bearer_scheme(request))


async def airflow_user(request: Request) -> Any:
    """The signed-in Airflow user, or an HTTPException: 401/403, or 307 to the login page for a browser."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView

    manager = get_auth_manager()
    try:
        user = await request_user(request)
    except HTTPException as exc:
        if exc.status_code == 401 and wants_html(request):
            login = manager.get_url_login(next_url=str(request.url))
            raise HTTPException(status_code=307, detail="Sign in to Airflow", headers={"Location": login}) from None
        raise
    if not manager.is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status_code=403, detail="Forbidden")
    return user


async def may_trigger(scope: dict[str, Any], dag_id: str) -> bool:
    """Whether the request in `scope` comes from a user whom Airflow lets trigger runs of `dag_id`, decided as the
    trigger endpoint decides it: the same user resolution, the auth manager's `is_authorized_dag` with the DAG's team."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.models.dag import DagModel
    from starlette.concurrency import run_in_threadpool

    try:
        user = await request_user(Request(scope))
    except HTTPException:
        return False

    def authorized() -> bool:  # the team lookup reads the database: off the event loop, as Airflow runs its own check
        details = DagDetails(id=dag_id, team_name=DagModel.get_team_name(dag_id))
        return bool(
            get_auth_manager().is_authorized_dag(
                method="POST", access_entity=DagAccessEntity.RUN, details=details, user=user
            )
        )

    return await run_in_threadpool(authorized)
