"""Running code in fresh interpreters, for determinism that must hold across processes (not only within one)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT

HASH_SEEDS = ("1", "2")
"""Two different string-hash seeds: set/dict order that depends on `hash()` differs between them."""


def python_output(code: str, hash_seed: str) -> str:
    """stdout of `python -c code` in a fresh interpreter with the given PYTHONHASHSEED, run from the repository."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def tree_digests(root: Path) -> dict[str, str]:
    """sha256 of every file under `root`, by relative path."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
