"""The fuzz suite's setup: hypothesis profiles (`ci`, the default, bounded for `make test`; `fuzz`, long, for
`make fuzz` via COWORKENV_FUZZ_PROFILE=fuzz), valid documents to damage, a finished run with its release to damage,
and the case counts (summed over xdist workers) at the end of the session."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import ROOT
from tests.support.fuzz import TALLY, check, run_main, write_tally

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
settings.register_profile("fuzz", max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("COWORKENV_FUZZ_PROFILE", "ci")
settings.load_profile(PROFILE)

TALLY_DIR = ROOT / ".pytest_cache" / "fuzz-tally"


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        shutil.rmtree(TALLY_DIR, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    if TALLY:
        write_tally(TALLY_DIR / f"{worker}.json")


def pytest_terminal_summary(terminalreporter, config) -> None:  # noqa: ANN001 — pytest's hook signature
    files = sorted(TALLY_DIR.glob("*.json")) if TALLY_DIR.exists() else []
    if not files:
        return
    total: dict[str, int] = {}
    for f in files:
        for key, n in json.loads(f.read_text(encoding="utf-8")).items():
            total[key] = total.get(key, 0) + n
    keys = ("cases", "clean_errors", "successes", "crashes", "hangs", "partial_outputs")
    terminalreporter.write_line("fuzz: " + ", ".join(f"{k} {total.get(k, 0)}" for k in keys) + f" (profile {PROFILE})")


@pytest.fixture(scope="session")
def finished_root(tmp_path_factory) -> Path:
    """A data root with one finished run (`fz`, every stage's files) and its published release."""
    root = tmp_path_factory.mktemp("finished")
    outcome = run_main(
        ["synthesize", "--n", "4", "--runtime", "none", "--shards", "1", "--run-id", "fz", "--data-root", str(root)],
        timeout=300,
    )
    check(outcome)
    return root


@pytest.fixture
def data_root(finished_root, tmp_path) -> Path:
    """A private copy of the finished data root, to damage."""
    copy = tmp_path / "root"
    shutil.copytree(
        finished_root, copy, symlinks=True, ignore=shutil.ignore_patterns("data_docs")
    )  # 8 MB of HTML no stage reads
    return copy
