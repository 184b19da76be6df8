"""The web app the Airflow plugin mounts (docs/design/pipeline.md, "UI"): read-only pages over the data root.

`create_app(authenticate)` is a FastAPI app of GET routes only. Every route depends on `authenticate`, which
raises (an `HTTPException`: 401, 403 or a redirect to a login page) unless the request comes from a signed-in user;
the Airflow plugin passes `coworkenv.ui.auth.airflow_user`, Airflow's own check of its JWT. A URL names releases
and runs only by id, and files only inside a run's Data Docs and report folders (`ui/runs.py`, `served_file`).

Import-light: Airflow imports the plugin (and so this module) in every component, so only FastAPI and Jinja2 load
here; the readers (pyarrow, DuckDB, the pipeline's layout) load on the first request that needs them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from coworkenv.data.root import Root
from coworkenv.errors import CoworkEnvError
from coworkenv.ui.html import DOCS_POLICY, PAGE_POLICY, Links, render

Authenticate = Callable[[Request], Awaitable[Any]]
HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-store"}


def create_app(authenticate: Authenticate, data_root: Root = None) -> FastAPI:
    """The pages over `data_root` (default: `$COWORKENV_DATA_ROOT`, else `./data`, resolved on each request)."""
    app = FastAPI(
        title="CoworkEnv", docs_url=None, redoc_url=None, openapi_url=None, dependencies=[Depends(authenticate)]
    )

    def page(request: Request, template: str, title: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        from coworkenv.data.root import open_root

        links = Links(request.scope.get("root_path", ""))
        html = render(template, links, title=title, root=open_root(data_root).url, **context)
        return HTMLResponse(html, status_code=status_code, headers={**HEADERS, "Content-Security-Policy": PAGE_POLICY})

    @app.exception_handler(CoworkEnvError)
    def cannot_show(request: Request, exc: CoworkEnvError) -> HTMLResponse:
        from coworkenv.ui.runs import NotFound

        status = 404 if isinstance(exc, NotFound) else 500
        return page(
            request, "error.html", "Not found" if status == 404 else "Cannot show this page", status, message=str(exc)
        )

    @app.get("/")
    def home(request: Request) -> RedirectResponse:
        return RedirectResponse(Links(request.scope.get("root_path", ""))("releases"), status_code=303)

    @app.get("/releases")
    def releases(request: Request) -> HTMLResponse:
        from coworkenv.data.schemas import TABLES
        from coworkenv.ui.releases import release_rows

        return page(request, "releases.html", "Releases", rows=release_rows(data_root), tables=list(TABLES))

    @app.get("/releases/{release_id}")
    def release(request: Request, release_id: str, task: str | None = None) -> HTMLResponse:
        from coworkenv.data.reader import latest_release
        from coworkenv.ui.releases import DIFFICULTIES, MAX_TASK_IDS, release_detail, sample_task
        from coworkenv.ui.releases import release as find

        manifest, run = find(data_root, release_id)
        detail = release_detail(data_root, manifest)
        wanted = task or (detail.task_ids[0] if detail.task_ids else None)
        sample = sample_task(data_root, manifest, wanted) if wanted else None
        return page(
            request,
            "release.html",
            f"Release {manifest.release_id}",
            manifest=manifest,
            run=run,
            detail=detail,
            sample=sample,
            latest=latest_release(data_root) == manifest.release_id,
            difficulties=DIFFICULTIES,
            max_task_ids=MAX_TASK_IDS,
        )

    @app.get("/evaluations")
    def evaluations(request: Request) -> HTMLResponse:
        from coworkenv.ui.evaluations import GROUPS
        from coworkenv.ui.evaluations import evaluations as find

        suites, comparisons = find(data_root)
        return page(request, "evaluations.html", "Evaluations", suites=suites, comparisons=comparisons, groups=GROUPS)

    @app.get("/runs")
    def runs(request: Request) -> HTMLResponse:
        from coworkenv.data.reader import list_releases
        from coworkenv.ui.runs import list_runs, runs_path

        found = list_runs(data_root, list_releases(data_root))
        failed = [r for r in found if r.gate == "failed"]
        return page(
            request, "runs.html", "Runs and gates", runs=found, failed=failed, local=runs_path(data_root) is not None
        )

    @app.get("/runs/{name}")
    def run(request: Request, name: str) -> HTMLResponse:
        from coworkenv.data.reader import list_releases
        from coworkenv.ui.runs import run_info

        info = run_info(data_root, name, list_releases(data_root))
        return page(request, "run.html", f"Run {info.run_id}", runs=[info], dag_id=None, run_id=info.run_id)

    @app.get("/runs/{name}/files/{path:path}")
    def run_file(name: str, path: str) -> Response:
        from coworkenv.ui.runs import QUALITY_DIR, served_file

        target, content_type = served_file(data_root, name, path)
        policy = DOCS_POLICY if path.startswith(QUALITY_DIR + "/") else PAGE_POLICY
        return FileResponse(target, media_type=content_type, headers={**HEADERS, "Content-Security-Policy": policy})

    @app.get("/dag-runs/{dag_id}/{run_id:path}")
    def dag_run(request: Request, dag_id: str, run_id: str) -> HTMLResponse:
        """The tab on an Airflow DAG run: the run's directory and those of the runs it started."""
        from coworkenv.data.reader import list_releases
        from coworkenv.ui.runs import runs_of

        found = runs_of(data_root, run_id, list_releases(data_root))
        return page(request, "run.html", f"CoworkEnv: {run_id}", runs=found, dag_id=dag_id, run_id=run_id)

    return app
