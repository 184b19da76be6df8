"""Which runtime to use: `get_runtime("auto" | "bwrap" | "rlimit")`. `auto` is bubblewrap when a probe sandbox starts
here (probed once per process), else the rlimit fallback."""

from __future__ import annotations

import shutil
import threading

from coworkenv.sandbox.bwrap import BwrapRuntime
from coworkenv.sandbox.choices import RUNTIME_NAMES, either
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.rlimit import RlimitRuntime
from coworkenv.sandbox.runtimes import Runtime

RUNTIMES: dict[str, type[Runtime]] = {"bwrap": BwrapRuntime, "rlimit": RlimitRuntime}
_default: Runtime | None = None
_default_lock = threading.Lock()


def bwrap_usable() -> tuple[bool, str]:
    """(usable, reason): bubblewrap installed and able to start a sandbox here (probed once per process)."""
    if shutil.which("bwrap") is None:
        return False, "bubblewrap (bwrap) is not installed"
    return BwrapRuntime.probe()


def default_runtime() -> Runtime:
    """bwrap when it works here (probed once), else the rlimit fallback."""
    global _default
    with _default_lock:
        if _default is None:
            ok, _reason = bwrap_usable()
            _default = BwrapRuntime() if ok else RlimitRuntime()
        return _default


def get_runtime(name: str | Runtime = "auto") -> Runtime:
    """ "auto" | "bwrap" | "rlimit" (or a Runtime, returned as is)."""
    if isinstance(name, Runtime):
        return name
    if name == "auto":
        return default_runtime()
    if name == "bwrap":
        ok, reason = bwrap_usable()
        if not ok:
            raise SandboxError(f"the bwrap sandbox is not usable here: {reason}")
        return BwrapRuntime()
    if name == "rlimit":
        return RlimitRuntime()
    raise SandboxError(f"unknown sandbox runtime {name!r}; choose {either(RUNTIME_NAMES)}")
