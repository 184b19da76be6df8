"""The sandbox runtimes (bwrap and the rlimit fallback), the worker protocol and the worker pool."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from coworkenv.registry import UnknownName
from coworkenv.validate.pool import JobResult, WorkerPool, run_jobs
from coworkenv.validate.sandbox import (
    BwrapRuntime,
    Limits,
    RlimitRuntime,
    Runtime,
    SandboxError,
    bwrap_usable,
    default_runtime,
    get_runtime,
)

LIMITS = Limits(cpu_s=1, wall_s=3, memory_mb=256, file_size_mb=1, output_bytes=64 * 1024, processes=32)
ROOT = os.geteuid() == 0


def _runtime(name: str) -> Runtime:
    if name == "bwrap":
        ok, reason = bwrap_usable()
        if not ok:
            pytest.skip(f"bubblewrap is not usable here ({reason}); the rlimit fallback is tested instead")
    return get_runtime(name)


@pytest.fixture(params=["bwrap", "rlimit"])
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return _runtime(request.param)


# ---- Limits and runtime selection


def test_limits_are_frozen_documented_and_strict():
    limits = Limits()
    with pytest.raises(ValidationError):
        limits.cpu_s = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Limits(cpu_seconds=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Limits(memory_mb=0)
    for name in ("cpu_s", "memory_mb", "file_size_mb", "open_files", "output_bytes", "wall_s", "processes"):
        assert Limits.model_fields[name].description, name
    assert limits.memory_mb == 1024  # ~1 GiB of address space by default, configurable
    assert Limits(cpu_s=1.2).cpu_rlimit() == (2, 3)


def test_get_runtime_by_name():
    assert isinstance(get_runtime("rlimit"), RlimitRuntime)
    with pytest.raises(SandboxError, match="choose auto, bwrap or rlimit"):
        get_runtime("docker")
    ok, reason = bwrap_usable()
    auto = get_runtime("auto")
    assert auto is default_runtime()
    assert isinstance(auto, BwrapRuntime if ok else RlimitRuntime), reason
    if ok:
        assert isinstance(get_runtime("bwrap"), BwrapRuntime)
    else:
        with pytest.raises(SandboxError, match="not usable"):
            get_runtime("bwrap")


# ---- Runtime.run


def test_run_python_source(runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COWORKENV_TEST_SECRET", "hunter2-canary")
    code = (
        "import os, json\n"
        "print(json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(), 'cwd': os.getcwd(), 'env': dict(os.environ)}))"
    )
    result = runtime.run(code, limits=LIMITS)
    assert result.ok, result
    assert result.runtime == runtime.name and result.exit_code == 0 and not result.timed_out
    seen = json.loads(result.stdout)
    assert "hunter2-canary" not in result.stdout  # nothing of the parent's environment is inherited
    assert set(seen["env"]) >= {"PATH", "HOME", "TMPDIR"}
    assert seen["cwd"] == seen["env"]["HOME"]
    if ROOT:  # started as root, the code runs as an unprivileged uid of its own, without groups
        assert seen["uid"] != 0 and seen["gid"] != 0 and 0 not in seen["groups"]


def test_run_argv_with_stdin_and_exit_status(runtime: Runtime):
    result = runtime.run(["sh", "-c", "cat; echo err >&2; exit 3"], stdin="hello sandbox", limits=LIMITS)
    assert result.exit_code == 3 and result.killed_by_signal is None and result.resource_exceeded is None
    assert result.stdout == "hello sandbox" and result.stderr == "err\n"
    assert not result.ok


def test_run_in_a_given_scratch_dir(runtime: Runtime):
    scratch = Path(tempfile.mkdtemp(prefix="coworkenv-test-scratch-"))  # the fallback's uid must be able to reach it
    try:
        result = runtime.run("open('made-here.txt', 'w').write('hi')", scratch=scratch, limits=LIMITS)
        assert result.ok, result
        assert (scratch / "made-here.txt").read_text() == "hi"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.skipif(not ROOT, reason="only a root parent hands the scratch dir to another uid")
def test_the_fallback_refuses_a_scratch_dir_its_uid_cannot_reach(tmp_path: Path):
    with pytest.raises(SandboxError, match="cannot enter"):
        get_runtime("rlimit").run("print(1)", scratch=tmp_path / "deep", limits=LIMITS)


@pytest.mark.parametrize(
    ("source", "reasons"),
    [
        pytest.param("while True:\n    pass", {"cpu", "wall"}, id="cpu"),
        pytest.param("import time\ntime.sleep(60)", {"wall"}, id="wall"),
        pytest.param("x = bytearray(4 << 30)", {"memory"}, id="memory"),
        pytest.param("while True:\n    print('y' * 4096)", {"output"}, id="output"),
        pytest.param("open('big', 'wb').write(b'0' * (4 << 20))", {"file_size"}, id="file_size"),
        pytest.param("import os\nwhile True:\n    os.fork()", {"processes"}, id="processes"),
    ],
)
def test_run_limits(runtime: Runtime, source: str, reasons: set[str]):
    limits = LIMITS.model_copy(update={"wall_s": 1.5})
    start = time.monotonic()
    result = runtime.run(source, limits=limits)
    assert not result.ok
    assert result.resource_exceeded in reasons, result
    assert time.monotonic() - start < 10
    if result.resource_exceeded == "wall":
        assert result.timed_out and result.killed_by_signal == signal.SIGKILL
    if result.resource_exceeded == "output":
        assert result.stdout_truncated and len(result.stdout.encode()) <= limits.output_bytes


# ---- the pool


def test_run_jobs_keeps_order_and_reports_progress(runtime: Runtime):
    seen: list[int] = []
    payloads = [f"payload-{i}" for i in range(25)]
    results = run_jobs("echo", payloads, workers=2, runtime=runtime, limits=LIMITS, progress=seen.append)
    assert [r.index for r in results] == list(range(25))
    assert [r.output for r in results] == payloads
    assert all(isinstance(r, JobResult) and r.ok and r.worker_restarts == 0 for r in results)
    assert sum(seen) == 25
    assert run_jobs("echo", [], runtime=runtime) == []
    with pytest.raises(UnknownName, match="did you mean 'exec'"):
        run_jobs("exce", ["print(1)"], runtime=runtime)


def test_job_results_are_frozen():
    result = JobResult(index=0, ok=True, output=1)
    with pytest.raises(ValidationError):
        result.ok = False  # type: ignore[misc]


def test_no_state_leaks_from_one_task_to_the_next(runtime: Runtime):
    first = (
        "import builtins, os, sys\n"
        "builtins.LEAKED = 'yes'\nsys.modules['json'].dumps = lambda *a, **k: 'forged'\n"
        "open('left-behind.txt', 'w').write('x')\nprint(os.getcwd())"
    )
    second = "import builtins, json, os\nprint(json.dumps({'leaked': hasattr(builtins, 'LEAKED'), 'files': os.listdir('.'), 'cwd': os.getcwd()}))"
    with WorkerPool(workers=1, runtime=runtime, limits=LIMITS) as pool:
        a, b = pool.map("exec", [first, second])
        echo = pool.map("echo", ["still honest"])[0]
        assert pool.started == 1 and pool.restarts == 0  # one long-lived worker served all of them
    assert a.ok and b.ok, (a, b)
    seen = json.loads(b.output["stdout"])
    assert seen == {"leaked": False, "files": [], "cwd": seen["cwd"]}
    assert seen["cwd"] != a.output["stdout"].strip()  # a fresh scratch dir per task
    assert echo.output == "still honest"


def test_pool_validates_tasks_like_the_in_process_battery(runtime: Runtime):
    from coworkenv.synth.generate import GenerateRequest, generate
    from coworkenv.validate.battery import validate_spec_json

    specs, _ = generate(GenerateRequest(n=6, seed=1))
    payloads = [s.to_json() for s in specs] + ['{"id": "broken", "not": "a spec"}', "not json at all"]
    results = run_jobs("validate", payloads, workers=2, runtime=runtime, limits=Limits(wall_s=30, cpu_s=20, memory_mb=512))
    assert all(r.ok for r in results), [r for r in results if not r.ok][:1]
    assert [r.output for r in results] == [validate_spec_json(p) for p in payloads]
    assert [r.output["valid"] for r in results] == [True] * 6 + [False, False]


class _BrokenRuntime(RlimitRuntime):
    def _python(self, identity):  # type: ignore[no-untyped-def]
        return "/nonexistent/python3", {}, [], []


def test_a_runtime_that_cannot_start_workers_raises():
    with pytest.raises(SandboxError):
        run_jobs("echo", ["x"], runtime=_BrokenRuntime(), limits=LIMITS)


def test_a_worker_that_dies_between_jobs_is_replaced(runtime: Runtime):
    with WorkerPool(workers=1, runtime=runtime, limits=LIMITS) as pool:
        pid = pool.map("exec", ["import os; print(os.getppid())"])[0]
        assert pid.ok
        # the task's process kills its own worker (same uid): that task fails, the next one gets a new worker
        killed = pool.map("exec", ["import os, signal; os.kill(os.getppid(), signal.SIGKILL)"])[0]
        after = pool.map("echo", ["next"])[0]
    assert not killed.ok and killed.error_code == "sandbox_crash" and killed.worker_restarts == 1
    assert after.ok and after.output == "next"
    assert pool.restarts == 1 and pool.started == 2


# ---- the worker's inline jobs: per-request CPU and wall-clock limits, without a sandbox around it

_INLINE_PROBE = r"""
import json, sys, time
from pathlib import Path
import tempfile
from coworkenv.validate.sandbox import Limits
from coworkenv.validate.worker import Worker

def spin(payload):
    while True:
        pass

def sleep(payload):
    time.sleep(30)

def hog(payload):
    raise MemoryError

def boom(payload):
    raise ValueError("bad spec")

def swallow(payload):
    try:
        time.sleep(30)
    except Exception:
        return "swallowed"

worker = Worker(Limits(cpu_s=1, wall_s=1.5), Path(tempfile.mkdtemp()))
out = {}
for fn in (spin, sleep, hog, boom, swallow):
    t = time.monotonic()
    response, restart = worker.run_inline(1, fn, "")
    out[fn.__name__] = [response.get("error_code"), restart, round(time.monotonic() - t, 1)]
print(json.dumps(out), file=sys.stderr)
"""


def test_inline_jobs_get_per_request_cpu_and_wall_limits():
    proc = subprocess.run([sys.executable, "-c", _INLINE_PROBE], capture_output=True, text=True, timeout=60)
    out = json.loads(proc.stderr.strip().splitlines()[-1])
    assert out["spin"][:2] == ["sandbox_timeout", True] and out["spin"][2] < 4
    assert out["sleep"][:2] == ["sandbox_timeout", True] and out["sleep"][2] < 4
    assert out["hog"][:2] == ["sandbox_memory", True]
    assert out["boom"][:2] == ["job_error", False]  # an ordinary failure: the worker serves on
    assert out["swallow"][:2] == ["sandbox_timeout", True]  # `except Exception` in a job cannot swallow the limit


def test_closing_the_pool_abandons_running_jobs_quickly(runtime: Runtime):
    import threading

    pool = WorkerPool(workers=2, runtime=runtime, limits=LIMITS.model_copy(update={"wall_s": 60}))
    pool.start()
    outcome: list[BaseException | list[JobResult]] = []

    def run() -> None:
        try:
            outcome.append(pool.map("exec", ["import time\ntime.sleep(50)"] * 4))
        except BaseException as exc:  # noqa: BLE001
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.5)
    start = time.monotonic()
    pool.close()
    thread.join(timeout=20)
    assert time.monotonic() - start < 10
    assert len(outcome) == 1 and isinstance(outcome[0], SandboxError)
    with pytest.raises(SandboxError, match="closed"):
        pool.map("echo", ["x"])
