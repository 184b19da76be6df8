"""Runtime.run under both runtimes: isolation of the environment and the uid, exit statuses, limits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from coworkenv.sandbox import rlimit
from coworkenv.sandbox.identity import allocate_identity
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.pool import WorkerPool
from coworkenv.sandbox.runtimes import Runtime
from coworkenv.sandbox.selection import get_runtime
from tests.support.sandbox import LIMITS, ROOT


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
    with pytest.raises(SandboxError) as exc:
        get_runtime("rlimit").run("print(1)", scratch=tmp_path / "deep", limits=LIMITS)
    why = "is below a directory that an unprivileged uid cannot enter; put it somewhere like /tmp"
    assert str(exc.value) == f"the scratch dir {tmp_path / 'deep'} {why}"


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


def test_the_boot_program_is_a_file_run_by_the_sandboxed_interpreter(runtime: Runtime):
    result = runtime.run("import sys\nprint(sys.modules['__main__'].__file__)", limits=LIMITS)
    assert result.ok, result
    main = result.stdout.strip()
    assert main.endswith("coworkenv/sandbox/boot.py") or main.startswith("/proc/self/fd/"), main


@pytest.mark.skipif(not ROOT, reason="only a root parent runs the fallback as another uid")
def test_the_fallback_hands_over_a_boot_program_its_uid_cannot_reach(monkeypatch: pytest.MonkeyPatch):
    runtime = get_runtime("rlimit")
    boot = runtime.layout.boot_file
    monkeypatch.setattr(
        rlimit, "world_reachable", lambda path, real=rlimit.world_reachable: path != boot and real(path)
    )
    entry = runtime._python(allocate_identity())
    try:
        assert entry.boot.startswith("/proc/self/fd/") and int(entry.boot.rsplit("/", 1)[1]) in entry.fds
    finally:
        for fd in entry.fds:
            os.close(fd)
    result = runtime.run("import os, sys\nprint(os.getuid(), sys.modules['__main__'].__file__)", limits=LIMITS)
    assert result.ok, result
    uid, main = result.stdout.split()
    assert int(uid) != 0 and main.startswith("/proc/self/fd/")
    with WorkerPool(workers=1, runtime=runtime, limits=LIMITS) as pool:  # the worker boots the same way
        assert pool.map("echo", ["booted"])[0].output == "booted"


OPEN_100_FILES = """
import json
kept, error = [], None
try:
    for i in range(100):
        kept.append(open(f"f{i}", "w"))
except OSError as exc:
    error = exc.errno
print(json.dumps({"opened": len(kept), "errno": error}))
"""


def test_open_files_limit(runtime: Runtime):
    """`Limits.open_files` is RLIMIT_NOFILE in the sandbox: 100 files fit under 256 descriptors, not under 64."""
    import errno

    roomy = runtime.run(OPEN_100_FILES, limits=LIMITS.model_copy(update={"open_files": 256}))
    assert roomy.ok and json.loads(roomy.stdout) == {"opened": 100, "errno": None}, roomy
    tight = runtime.run(OPEN_100_FILES, limits=LIMITS.model_copy(update={"open_files": 64}))
    assert tight.ok, tight
    seen = json.loads(tight.stdout)
    assert seen["errno"] == errno.EMFILE and 40 <= seen["opened"] < 64, (
        seen
    )  # stdio and the interpreter's own descriptors count too


def test_no_descriptor_of_the_host_reaches_a_task(runtime: Runtime, tmp_path: Path):
    """Even one the host marked inheritable: the task starts with stdio and what the runtime passes on purpose."""
    host_file = tmp_path / "host.txt"
    host_file.write_text("host data")
    fd = os.open(host_file, os.O_RDONLY)
    high = 200  # above anything the sandboxed interpreter opens itself, below the default open_files limit
    os.dup2(fd, high, inheritable=True)
    try:
        code = f"import errno, os\ntry:\n    print(os.read({high}, 100))\nexcept OSError as exc:\n    print(errno.errorcode[exc.errno])"
        result = runtime.run(code, limits=LIMITS)
    finally:
        os.close(high)
        os.close(fd)
    assert result.ok and result.stdout == "EBADF\n", result
