"""The bubblewrap runtime, used whenever `bwrap` works here.

New network, pid, ipc, uts and cgroup namespaces (no network at all, only the sandbox's own processes in `/proc`); a
root that holds nothing but the read-only system (`/usr`), the Python installation, the venv and the `coworkenv`
package source, a private read-only `/tmp`, a minimal `/dev` and the writable per-sandbox scratch dir;
`--die-with-parent`, `--new-session`, `--clearenv`, all capabilities dropped; rlimits applied inside by the boot
program. Started as root, bwrap runs privileged (a user namespace would map the sandbox back to uid 0) and `setpriv`
drops to the sandbox's own uid after the mounts; started as an ordinary user, it makes a user namespace instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coworkenv.sandbox.identity import Identity
from coworkenv.sandbox.interpreter import PythonLayout
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.runtimes import EXIT_REASONS, Runtime


class BwrapRuntime(Runtime):
    """bubblewrap: no network, only the sandbox's processes, a read-only system, a writable scratch dir; rlimits inside."""

    name = "bwrap"

    def __init__(self, layout: PythonLayout | None = None):
        super().__init__(layout)
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("bubblewrap (bwrap) is not installed")
        self.bwrap = bwrap
        self.setpriv = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")

    def _signal_of(self, returncode: int) -> int | None:
        if returncode < 0:
            return -returncode
        if (
            128 < returncode <= 128 + 64 and returncode not in EXIT_REASONS
        ):  # bwrap reports a child's death by signal as 128+N
            return returncode - 128
        return None

    def _mounts(self, scratch: Path) -> list[str]:
        args = ["--tmpfs", "/tmp"]  # first: binds below /tmp (the scratch dir) must come after it
        made: set[Path] = {Path("/"), Path("/tmp"), Path("/usr")}
        args += ["--ro-bind", "/usr", "/usr"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            top = Path("/") / name
            if top.is_symlink():
                args += ["--symlink", os.readlink(top), str(top)]
            elif top.is_dir():
                args += ["--ro-bind", str(top), str(top)]
            made.add(top)
        for etc in ("/etc/ld.so.cache", "/etc/localtime"):
            if os.path.exists(etc):
                if Path("/etc") not in made:
                    args += ["--perms", "0755", "--dir", "/etc"]
                    made.add(Path("/etc"))
                args += ["--ro-bind", etc, etc]

        def parents(dest: Path) -> list[str]:
            out: list[str] = []
            for parent in reversed(dest.parents):
                if parent not in made and not any(parent.is_relative_to(m) for m in bound):
                    out += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            return out

        bound: list[Path] = [Path("/usr")]
        for root in sorted({Path(p) for p in self.layout.read_only_roots()}, key=lambda p: len(p.parts)):
            if any(root.is_relative_to(b) for b in bound) or not root.exists():
                continue
            args += parents(root) + ["--ro-bind", str(root), str(root)]
            bound.append(root)
        args += parents(scratch) + ["--bind", str(scratch), str(scratch)]
        args += ["--proc", "/proc", "--dev", "/dev"]
        return args

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
        args = [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        if identity is None:
            args += ["--unshare-user"]  # unprivileged: a user namespace (where RLIMIT_NPROC counts this sandbox only)
        for key, value in env.items():
            args += ["--setenv", key, value]
        args += ["--cap-drop", "ALL"]
        tail: list[str] = []
        if identity is not None:
            # Privileged bwrap (no user namespace: one would map the sandbox back to uid 0). setpriv, the only program
            # run with these three capabilities, drops to the sandbox's uid with no groups, capabilities or new privileges.
            if self.setpriv is None:
                raise SandboxError("running bwrap as root needs setpriv (util-linux) to drop to an unprivileged uid")
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
            tail = [
                self.setpriv,
                f"--reuid={identity.uid}",
                f"--regid={identity.gid}",
                "--clear-groups",
                "--no-new-privs",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        args += self._mounts(scratch)
        args += tail + inner
        return subprocess.Popen(
            args,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
        )
