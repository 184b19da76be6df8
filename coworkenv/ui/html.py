"""Rendering the pages: Jinja2 templates (`templates/`) with every value HTML-escaped, links built under the path the
app is mounted at, and the number formats the pages share. Pages carry no script and load nothing from elsewhere."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined

PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'; base-uri 'none'; form-action 'self'"
"""Content-Security-Policy of the pages and the reports (no script runs in them)."""
DOCS_POLICY = (
    "default-src 'self' data:; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'none'; form-action 'none'; frame-ancestors 'self'; base-uri 'self'"
)
"""Data Docs run Great Expectations' own scripts, from their folder only; they may not call any API or send forms."""


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def num(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else f"{value:.{digits}g}"


def when(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@cache
def environment() -> Environment:
    loader = PackageLoader("coworkenv.ui", "templates")
    env = Environment(loader=loader, autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=pct, num=num, when=when, pretty=pretty)
    return env


class Links:
    """URLs of the app's pages under the prefix the app is served at (Airflow's base path and the plugin's mount)."""

    def __init__(self, prefix: str):
        self.prefix = prefix.rstrip("/")

    def __call__(self, *parts: str, **query: Any) -> str:
        path = "/".join(quote(str(p), safe="") for p in parts)
        wanted = {k: v for k, v in query.items() if v is not None}
        return f"{self.prefix}/{path}" + (f"?{urlencode(wanted)}" if wanted else "")

    def file(self, run: str, relative: str) -> str:
        """A served file of a run: each segment of its relative path quoted, the slashes kept."""
        return self("runs", run, "files") + "/" + "/".join(quote(p, safe="") for p in relative.split("/"))


def render(template: str, links: Links, **context: Any) -> str:
    return environment().get_template(template).render(url=links, **context)
