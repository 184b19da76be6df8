"""The first Python that runs inside every sandbox: `python -s -P -B <this file> CONFIG_JSON`.

It locks the process down before anything else is imported: rlimits, then no_new_privs and the seccomp filter, then
umask and cwd. Only then does it add the venv's site dirs and start the target: a module (the worker), a source file,
or an argv (exec). Run as a script, this file is the whole program until the target starts, hence the standard
library only, and nothing of the package. The parent imports it too, for the exit statuses below and
`own_processes`; importing it starts nothing.

A Python source target that dies of a resource limit exits with EXIT_MEMORY, EXIT_PROCESSES or EXIT_FILE_SIZE, so
that the parent can tell why (a traceback on stderr is not something to parse).
"""

from __future__ import annotations

import json
import os
import resource
import sys

EXIT_MEMORY = 86
EXIT_PROCESSES = 87
EXIT_FILE_SIZE = 88

SECCOMP_ENV = "COWORKENV_SANDBOX_SECCOMP"  # "1" once the filter is installed (the worker reports it)
INSIDE_ENV = "COWORKENV_SANDBOXED"
"""Set to "1" in every sandboxed process: untrusted code it runs goes to a forked child of its own there, since a
sandbox starts no further sandbox (`checks.program`)."""

_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2


def own_processes() -> int:
    """Processes of our uid right now: RLIMIT_NPROC counts per uid, so a limit relative to them starts here."""
    n, uid = 0, os.getuid()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += os.stat("/proc/" + d).st_uid == uid
            except OSError:
                pass
    return n


def apply_rlimits(rlimits: list, nproc_relative: bool) -> None:
    for name, soft, hard in rlimits:
        if name == "RLIMIT_NPROC" and nproc_relative:
            soft, hard = soft + own_processes(), hard + own_processes()
        resource.setrlimit(getattr(resource, name), (soft, hard))


def lock_down(seccomp_hex: str) -> None:
    """no_new_privs, then the seccomp filter when there is one; best effort (ctypes may be missing)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if seccomp_hex:

            class _Prog(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            code = bytes.fromhex(seccomp_hex)
            buf = ctypes.create_string_buffer(code, len(code))
            prog = _Prog(len(code) // 8, ctypes.addressof(buf))
            if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0:
                os.environ[SECCOMP_ENV] = "1"
    except Exception:
        pass


def run_source(path: str) -> None:
    """Run a source file as `__main__`; a death by a resource limit becomes its exit status."""
    import builtins
    import errno
    import traceback

    try:
        with open(path, encoding="utf-8") as fh:
            code = compile(fh.read(), path, "exec")
        exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": builtins})
    except MemoryError:
        traceback.print_exc(limit=5)
        os._exit(EXIT_MEMORY)
    except SystemExit:
        raise
    except BaseException as exc:
        traceback.print_exc(limit=20)
        sys.stderr.flush()
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            os._exit(EXIT_FILE_SIZE)
        if (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or "can't start new thread" in str(exc):
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            import linecache

            line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb else ""
            if "fork" in line or "Popen" in line or "spawn" in line or "thread" in str(exc).lower():
                os._exit(EXIT_PROCESSES)
        os._exit(1)


def main(argv: list) -> None:
    cfg = json.loads(argv[1])
    apply_rlimits(cfg["rlimits"], bool(cfg.get("nproc_relative")))
    lock_down(cfg.get("seccomp", ""))
    os.umask(0o077)
    os.environ[INSIDE_ENV] = "1"
    os.chdir(cfg["cwd"])
    import site

    for p in cfg["site"]:
        site.addsitedir(p)
    sys.path[:0] = cfg["path"]
    kind = cfg["kind"]
    if kind == "argv":
        os.execvp(cfg["argv"][0], cfg["argv"])
    sys.argv = list(cfg["argv"])
    if kind == "module":
        import runpy

        runpy.run_module(cfg["module"], run_name="__main__", alter_sys=True)
        sys.exit(0)
    run_source(cfg["file"])


if __name__ == "__main__":
    main(sys.argv)
