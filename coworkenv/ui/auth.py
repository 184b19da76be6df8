"""Airflow's sign-in for the pages: the plugin's app is mounted in Airflow's API server, which does not protect
mounted apps, so every page depends on `airflow_user`.

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


async def airflow_user(request: Request) -> Any:
    """The signed-in Airflow user, or an HTTPException: 401/403, or 307 to the login page for a browser."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    manager = get_auth_manager()
    try:
        user = await get_user(request, None, await bearer_scheme(request))
    except HTTPException as exc:
        if exc.status_code == 401 and wants_html(request):
            login = manager.get_url_login(next_url=str(request.url))
            raise HTTPException(status_code=307, detail="Sign in to Airflow", headers={"Location": login}) from None
        raise
    if not manager.is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status_code=403, detail="Forbidden")
    return user
