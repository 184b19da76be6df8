"""The worker's inline jobs: per-request CPU and wall-clock limits, without a sandbox around it."""

from __future__ import annotations

import json
import subprocess
import sys

_INLINE_PROBE = r"""
import json, sys, time
from pathlib import Path
import tempfile
from coworkenv.sandbox.limits import Limits
from coworkenv.sandbox.worker import JobServer

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

worker = JobServer(Limits(cpu_s=1, wall_s=1.5), Path(tempfile.mkdtemp()))
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
