"""Airflow test setup: one fresh, migrated embedded Airflow (SQLite) per test session.

Airflow reads AIRFLOW_HOME and its database URL when it is first imported, so tests marked `airflow` get the
embedded environment (pointed at a temporary home) set before anything imports `airflow`, and only for the
duration of each such test. Test modules must therefore import Airflow inside test functions or function-scoped
fixtures, never at module level or in session fixtures. All Airflow tests are marked `xdist_group("airflow")` so that
`pytest -n 2 --dist loadgroup` would run them in one worker, which migrates the database once. pytest-xdist 3.8 under
pytest 9.2 does not keep a group on one worker (pytest-dev/pytest-xdist#1386), so today each worker that gets Airflow
tests migrates a session home of its own: slower, not wrong, because nothing is shared between workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from coworkenv.airflow_env import embedded_env
from tests.support import ROOT  # noqa: E402

DAGS_FOLDER = ROOT / "dags"
FIXTURES = Path(__file__).parent / "fixtures"
AIRFLOW_BIN = Path(sys.executable).parent / "airflow"


@dataclass(frozen=True)
class AirflowHome:
    home: Path
    env: dict[str, str]

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run the venv's `airflow` against this home; stdout and stderr together in `.stdout`."""
        return subprocess.run(
            [str(AIRFLOW_BIN), *args],
            env={**os.environ, **self.env},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> AirflowHome:
    """A fresh AIRFLOW_HOME with a migrated SQLite DB (migrated by a subprocess: nothing imported here)."""
    if "airflow" in sys.modules:
        pytest.fail(
            "airflow was imported before the airflow_home fixture configured it; import airflow inside test functions only"
        )
    home = tmp_path_factory.mktemp("airflow_home")
    env = {**embedded_env(root=ROOT, home=home), "COWORKENV_DATA_ROOT": str(home / "data")}
    handle = AirflowHome(home=home, env=env)
    result = handle.cli("db", "migrate")
    assert result.returncode == 0, result.stdout[-4000:]
    return handle


@pytest.fixture(autouse=True)
def _airflow_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point `airflow` tests at the session's home; the variables are gone again after each test.

    Function-scoped and autouse, so it runs before any other function fixture of the test and airflow is first
    imported (in the test or its fixtures) with this environment; tests outside tests/dags never see it.
    """
    if request.node.get_closest_marker("airflow") is None:
        return
    handle: AirflowHome = request.getfixturevalue("airflow_home")
    for key, value in handle.env.items():
        monkeypatch.setenv(key, value)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory):
    """`make airflow-standalone` on a free port over an Airflow home and data root of its own (it migrates its own
    metadata DB): its scheduler must not pick up the runs that `dag.test()` makes in the session's database. One per
    module, stopped by process group when the module is done, so nothing of it runs on beside later tests."""
    from tests.dags.standalone import Standalone, free_port

    home = tmp_path_factory.mktemp("standalone_home")
    server = Standalone(home, free_port(), home / "standalone.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def core_check_dag(airflow_home: AirflowHome):
    return load_dag("coworkenv_core_check")


def load_dag(dag_id: str):
    """A DAG object parsed from its file in dags/ by a DagBag (about 10 ms)."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS_FOLDER / f"{dag_id}.py"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag(dag_id)


def asset_events(run_id: str) -> dict[str, list[dict]]:
    """The `extra` of each asset event a DAG run emitted, by asset name (from the metadata DB)."""
    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session
    from sqlalchemy import select

    events: dict[str, list[dict]] = {}
    with create_session() as session:
        for event in session.scalars(
            select(AssetEvent).where(AssetEvent.source_run_id == run_id).order_by(AssetEvent.id)
        ):
            events.setdefault(event.asset.name, []).append(dict(event.extra or {}))
    return events


def rendered_map_indexes(run, task_id: str) -> list[str | None]:
    """What the UI shows for each mapped instance of `task_id` in a finished DAG run (its map_index_template)."""
    return [
        ti.rendered_map_index
        for ti in sorted(run.get_task_instances(), key=lambda ti: ti.map_index)
        if ti.task_id == task_id
    ]


@pytest.fixture
def synthesize_dag(airflow_home: AirflowHome):
    return load_dag("coworkenv_synthesize")


@pytest.fixture
def evaluate_dag(airflow_home: AirflowHome):
    return load_dag("coworkenv_evaluate")


@pytest.fixture
def nightly_dag(airflow_home: AirflowHome):
    return load_dag("coworkenv_nightly")


@pytest.fixture(scope="session")
def task_file() -> Path:
    """One valid TaskSpec (a mail_triage task that passes the grading-consistency gate)."""
    return FIXTURES / "mail_triage.json"


@pytest.fixture
def task_jsonl(tmp_path: Path, task_file: Path) -> Path:
    """Three tasks in one .jsonl file: the fixture task, a renamed copy, and one whose oracle is incomplete."""
    spec = json.loads(task_file.read_text())
    copy = {**spec, "id": spec["id"] + "-copy"}
    oracle_without_move = [step for step in spec["solution"] if step.get("tool") != "mail_move"]
    broken = {**spec, "id": spec["id"] + "-broken", "solution": oracle_without_move}
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in (spec, copy, broken)))
    return path
