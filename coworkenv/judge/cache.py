"""The judge's verdict cache: one small JSON file per verdict, named by its cache key (the hash of prompt version,
model, criteria and judged text), written whole (temporary file, then rename) so that concurrent graders never see
half a verdict and the last writer of the same key writes the same verdict anyway.

A file holds `{"pass", "reason", "model", "prompt_version"}`: never the key, the endpoint's address or the judged
text. An unreadable or malformed file is a miss (the verdict is asked again and the file rewritten).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import write_output

_KEY = re.compile(r"^[0-9a-f]{64}$")
DATA_ROOT_ENV = "COWORKENV_DATA_ROOT"
"""The data root's variable (`coworkenv.data.root` owns it; read here by name: this layer cannot import it)."""
CACHE_ENV = "COWORKENV_JUDGE_CACHE"


def default_cache_dir() -> Path:
    """$COWORKENV_JUDGE_CACHE, else `judge-cache` under a local data root ($COWORKENV_DATA_ROOT, else ./data), else
    (an object-store data root) the user's cache folder: the cache needs a local filesystem for its renames."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    root = os.environ.get(DATA_ROOT_ENV) or "./data"
    if root.startswith("file://"):
        root = root.removeprefix("file://")
    elif "://" in root:
        return Path.home() / ".cache" / "coworkenv" / "judge-cache"
    return Path(root) / "judge-cache"


class VerdictCache:
    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"not a verdict cache key: {key[:80]!r}")
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("pass"), bool)
            or not isinstance(data.get("reason"), str)
        ):
            return None
        return data

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        """Best effort: a cache that cannot be written costs a request next time, never a verdict."""
        try:
            write_output(self.path(key), json.dumps(verdict, ensure_ascii=False, sort_keys=True))
        except CoworkEnvError:
            pass

    def __len__(self) -> int:
        return sum(1 for _ in self.folder.glob("??/*.json")) if self.folder.is_dir() else 0
