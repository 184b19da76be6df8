"""The data root: where releases (`releases/`) and run work directories (`runs/`) live.

`$COWORKENV_DATA_ROOT`, else `./data`; a local path, a `file://` URL or any fsspec URL (`s3://bucket/prefix`). This is
the one place that resolves it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError

DATA_ROOT_ENV = "COWORKENV_DATA_ROOT"
RELEASES_DIR = "releases"


@dataclass(frozen=True)
class DataRoot:
    """A data root resolved through fsspec: the filesystem and the protocol-less root path."""

    fs: Any
    path: str
    url: str

    @property
    def local(self) -> bool:
        from fsspec.implementations.local import LocalFileSystem

        return isinstance(self.fs, LocalFileSystem)

    def join(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def url_of(self, path: str) -> str:
        """A path as other tools (DuckDB, datasets, pandas) take it: plain for local files, a URL otherwise."""
        return path if self.local else self.fs.unstrip_protocol(path)

    @property
    def releases(self) -> str:
        return self.join(RELEASES_DIR)


Root = str | os.PathLike[str] | DataRoot | None
"""What every function that reads the data root accepts: a path, a URL, an opened root, or None (the default)."""


def default_data_root() -> str:
    return os.environ.get(DATA_ROOT_ENV) or "./data"


def open_root(data_root: Root = None) -> DataRoot:
    """Resolve a data root: a local path, a `file://` URL or any fsspec URL (`s3://bucket/prefix`, `memory://x`)."""
    if isinstance(data_root, DataRoot):
        return data_root
    import fsspec

    url = os.fspath(data_root) if data_root is not None else default_data_root()
    if not url:
        raise CoworkEnvError("the data root is empty")
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise CoworkEnvError(f"data root {url!r}: {exc}") from None
    root = DataRoot(fs=fs, path=path.rstrip("/") or "/", url=url)
    if root.local:
        _check_local(root, url)
    return root


def _check_local(root: DataRoot, url: str) -> None:
    """A file where a folder of the root should be (the root, one above it, `releases/`) is named here rather than
    failing later as NotADirectoryError."""
    where = root.releases
    while not os.path.exists(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    if not os.path.isdir(where):
        raise CoworkEnvError(f"data root {url!r}: {where} is not a directory")


def local_path(data_root: Root, what: str) -> Path:
    """The data root as a local directory, for what needs one (`what`: run work directories, the model registry)."""
    if not isinstance(data_root, DataRoot):
        from fsspec.core import split_protocol

        url = os.fspath(data_root) if data_root is not None else default_data_root()
        protocol, _ = split_protocol(url)
        if protocol not in (None, "file", "local"):  # refused before opening: its fsspec backend may not be installed
            raise CoworkEnvError(_not_local(url, what))
    root = open_root(data_root)
    if not root.local:
        raise CoworkEnvError(_not_local(root.url, what))
    return Path(root.path)


def _not_local(url: str, what: str) -> str:
    return f"{url}: {what} needs a local (or mounted shared) data root, not {url.split('://')[0]}://"
