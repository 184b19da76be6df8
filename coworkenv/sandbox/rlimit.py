"""The fallback runtime, for machines without usable namespaces: setsid + rlimits + a wall clock + killpg, as an
unprivileged uid of its own when we are root (see `identity.py`)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coworkenv.sandbox.identity import Identity
from coworkenv.sandbox.interpreter import world_reachable
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.runtimes import PythonEntry, Runtime


class RlimitRuntime(Runtime):
    """Fallback: setsid + rlimits + wall clock + killpg, as an unprivileged uid of its own when we are root.

    Guarantees: CPU, memory, file-size, open-file, process and output limits; no inherited environment; when
    started as root, no root privileges (own uid, no groups, no capabilities, no_new_privs), so files not readable by
    "others" stay unreadable and teardown kills every process of that uid. Does NOT isolate the network (a task can
    connect to local services), nor hide world-readable files (the repo, /etc/passwd), nor stop writes to
    world-writable places (/tmp, /dev/shm), nor stop a task from seeing other processes in /proc.
    """

    name = "rlimit"

    def _nproc_relative(self, identity: Identity | None) -> bool:
        return identity is None  # our own uid has other processes: count from where it is

    def _python(self, identity: Identity | None) -> PythonEntry:
        entry = super()._python(identity)
        if identity is None:
            return entry
        # The sandbox's uid must reach what it runs. Where it cannot (e.g. an interpreter in /root/.pyenv, a checkout
        # closed to others) we pass descriptors instead: a process may always follow its own /proc/self/fd/N.
        layout, fds = self.layout, []
        try:
            if not (world_reachable(layout.executable) and world_reachable(layout.base_prefix / "lib")):
                try:
                    rel = layout.executable.relative_to(layout.base_prefix)
                except ValueError as exc:
                    raise SandboxError(
                        f"the interpreter {layout.executable} is outside its installation {layout.base_prefix} and not reachable "
                        "by an unprivileged uid; install bubblewrap or run as a non-root user"
                    ) from exc
                fds.append(
                    os.open(layout.base_prefix, os.O_PATH | os.O_DIRECTORY)
                )  # the installation, for its stdlib too
                home = f"/proc/self/fd/{fds[-1]}"
                entry = entry.model_copy(
                    update={
                        "executable": f"{home}/{rel}",
                        "env": {"PYTHONHOME": home, "LD_LIBRARY_PATH": f"{home}/lib"},
                    }
                )
            if not world_reachable(layout.boot_file):
                fds.append(os.open(layout.boot_file, os.O_RDONLY))
                entry = entry.model_copy(update={"boot": f"/proc/self/fd/{fds[-1]}"})
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return entry.model_copy(update={"fds": tuple(fds)})

    def _popen(
        self,
        inner: list[str],
        *,
        scratch: Path,
        identity: Identity | None,
        env: dict[str, str],
        stdin: Any,
        stdout: Any,
        stderr: Any,
        pass_fds: Sequence[int],
    ) -> subprocess.Popen[bytes]:
        ids: dict[str, Any] = {}
        if identity is not None:
            if not world_reachable(scratch.parent):
                raise SandboxError(
                    f"the scratch dir {scratch} is below a directory that an unprivileged uid cannot enter; "
                    "put it somewhere like /tmp"
                )
            ids = {"user": identity.uid, "group": identity.gid, "extra_groups": []}
        return subprocess.Popen(
            inner,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=env,
            cwd=str(scratch),
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
            umask=0o077,
            **ids,
        )
