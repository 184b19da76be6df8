"""Runtime selection by name, and the one list of runtime choices every caller offers."""

from __future__ import annotations

import pytest

from coworkenv.sandbox.bwrap import BwrapRuntime
from coworkenv.sandbox.choices import IN_PROCESS, RUNTIME_CHOICES, RUNTIME_NAMES, either
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.rlimit import RlimitRuntime
from coworkenv.sandbox.selection import bwrap_usable, default_runtime, get_runtime


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


def test_the_runtime_choices():
    assert RUNTIME_NAMES == ("auto", "bwrap", "rlimit")
    assert RUNTIME_CHOICES == (*RUNTIME_NAMES, IN_PROCESS) == ("auto", "bwrap", "rlimit", "none")
    assert either(RUNTIME_CHOICES) == "auto, bwrap, rlimit or none" and either(["x"]) == "x"
