"""Who sandboxed code runs as. Started as root, every sandbox gets an unprivileged uid/gid of its own; otherwise the
code keeps our uid (and `allocate_identity` gives None).

A uid per live sandbox is what makes the limits hold: RLIMIT_NPROC counts only that sandbox's processes (it is never
enforced for root), files of root (mode 600 secrets, `/etc/shadow`, other processes' `/proc/<pid>/environ`) are
unreadable, and at teardown `kill -9 -1` run as that uid reaches every process the sandbox left behind, even ones
that left its process group with `setsid`. uid = base + (pid << 9 | counter), base from `COWORKENV_SANDBOX_UID_BASE`.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import threading

from pydantic import BaseModel, ConfigDict

from coworkenv.sandbox.limits import SandboxError

UID_BASE_ENV = "COWORKENV_SANDBOX_UID_BASE"
DEFAULT_UID_BASE = 1_600_000_000
_UID_SPAN_BITS = 31  # pids < 2**22, 512 sandboxes per process at once

_uid_counter = itertools.count()
_uid_lock = threading.Lock()


class Identity(BaseModel):
    """The unprivileged uid/gid a sandbox runs as (only when we are root); no other process shares it."""

    model_config = ConfigDict(frozen=True)

    uid: int
    gid: int


def allocate_identity() -> Identity | None:
    """A fresh uid/gid for one sandbox when running as root; None (keep our own uid) otherwise."""
    if os.geteuid() != 0:
        return None
    try:
        base = int(os.environ.get(UID_BASE_ENV, DEFAULT_UID_BASE))
    except ValueError as exc:
        raise SandboxError(f"{UID_BASE_ENV} must be an integer") from exc
    if not 1000 <= base <= (1 << 32) - 2 - (1 << _UID_SPAN_BITS):
        raise SandboxError(
            f"{UID_BASE_ENV}={base} leaves no room for sandbox uids (need 1000 ≤ base ≤ {(1 << 32) - 2 - (1 << _UID_SPAN_BITS)})"
        )
    with _uid_lock:
        n = next(_uid_counter) % 512
    uid = base + (((os.getpid() % (1 << 22)) << 9) | n)
    return Identity(uid=uid, gid=uid)


def kill_uid(identity: Identity) -> None:
    """SIGKILL every process of the sandbox's uid (`kill -9 -1` run as that uid reaches only its own processes)."""
    kill = shutil.which("kill", path="/usr/bin:/bin")
    if kill is None:
        return
    try:
        subprocess.run(
            [kill, "-9", "-1"],
            user=identity.uid,
            group=identity.gid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        pass
