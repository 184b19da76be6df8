"""web: fixture pages behind a small search engine. Read-only for the agent: `web_search` ranks pages, `web_fetch`
reads one. A page's `injected` flag marks text aimed at the agent (a prompt injection); it is the task author's
marker and never shown to the agent."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Self
from urllib.parse import urlsplit, urlunsplit

from pydantic import AfterValidator, Field, model_validator

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Record
from coworkenv.workspace.service import Service, diff_records, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import Args, Short, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

MAX_URL_CHARS = 2000
MAX_RESULTS = 20
"""`web_search` returns at most this many results, whatever `limit` asks for."""
DEFAULT_RESULTS = 10
SNIPPET_CHARS = 200
FETCH_CHARS = 20_000
"""A page's text comes back in slices of this many characters (`offset` pages on): a 1 MB page must not flood the
agent's context in one result."""
TITLE_WEIGHT = 3
"""A query term in the title counts this many times an occurrence in the text."""

_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$")
_WORD = re.compile(r"\w+")
STOP_WORDS = frozenset(
    "a an and are as at be by for from how in is it of on or the to was what when where which who with".split()
)


def normalize_url(url: str) -> str:
    """The canonical form pages are stored and looked up under: scheme and host lowercased, no fragment, an empty
    path written `/`. ValueError (with the reason) for anything but an absolute http(s) URL."""
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS:
        raise ValueError(f"a URL is a string of at most {MAX_URL_CHARS} characters")
    url = url.strip()
    if not url or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise ValueError(f"not a URL: {url!r} (empty, or has spaces or control characters)")
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.netloc.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    if not _HOST.match(host):
        raise ValueError(f"URL {url!r} has no valid host")
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


def _canonical_url(url: str) -> str:
    if normalize_url(url) != url:
        raise ValueError(f"page URL {url!r} must be written in its canonical form {normalize_url(url)!r}")
    return url


Url = Annotated[str, AfterValidator(_canonical_url)]


class Page(Record):
    url: Url
    title: str = Field(min_length=1, max_length=1000)
    text: str = ""
    injected: bool = False
    """The page carries instructions aimed at the agent (a safety task's bait); never shown to the agent."""


class WebState(Record):
    pages: list[Page] = EMPTY_LIST

    @model_validator(mode="after")
    def _unique_urls(self) -> Self:
        seen: set[str] = set()
        for page in self.pages:
            if page.url in seen:
                raise ValueError(f"page URL {page.url!r} occurs more than once")
            seen.add(page.url)
        return self


def diff_pages(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Pages matched by URL, which is what identifies them."""
    return diff_records(
        [{"id": p["url"], **p} for p in before["pages"]], [{"id": p["url"], **p} for p in after["pages"]]
    )


def add_page(d: Any, url: str, title: str, text: str, *, injected: bool = False) -> str:
    d.state["web"]["pages"].append({"url": url, "title": title, "text": text, "injected": injected})
    return url


SERVICE = register_service(
    Service(
        name="web",
        state=WebState,
        description="Web pages (url, title, text) the agent can search and fetch; read-only.",
        diff=diff_pages,
        draft={"add_page": add_page},
        targets=lambda state, argument: [p["url"] for p in state["web"]["pages"]],
    )
)


# --- search -------------------------------------------------------------------------------------------------


def terms(query: str) -> list[str]:
    """The query's distinct words, lowercased, stop words left out (unless nothing else is left)."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    content = [w for w in words if w not in STOP_WORDS]
    return content or words


def _counts(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in _WORD.findall(text.lower()):
        out[w] = out.get(w, 0) + 1
    return out


def rank(pages: list[dict[str, Any]], query_terms: list[str]) -> list[dict[str, Any]]:
    """Pages that contain at least one term: most distinct terms matched first, then the highest term frequency
    (title occurrences weighted `TITLE_WEIGHT`), then by URL, so that equal scores have one order."""
    scored = []
    for page in pages:
        title, text = _counts(page["title"]), _counts(page["text"])
        matched = [t for t in query_terms if t in title or t in text]
        if matched:
            tf = sum(TITLE_WEIGHT * title.get(t, 0) + text.get(t, 0) for t in matched)
            scored.append(((-len(matched), -tf, page["url"]), page))
    return [page for _, page in sorted(scored, key=lambda s: s[0])]


def snippet(text: str, query_terms: list[str]) -> str:
    """About `SNIPPET_CHARS` characters of the text around the first occurrence of a query term (its start if none),
    cut at word boundaries."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in query_terms) + r")\b", re.IGNORECASE)
    hit = pattern.search(text)
    start = 0
    if hit is not None and hit.start() > SNIPPET_CHARS // 4:
        start = hit.start() - SNIPPET_CHARS // 4
        space = text.find(" ", start, hit.start())
        start = space + 1 if space >= 0 else start
    end = start + SNIPPET_CHARS
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


class SearchArgs(Args):
    query: Short
    limit: int = Field(DEFAULT_RESULTS, ge=1)


class FetchArgs(Args):
    url: str = Field(max_length=MAX_URL_CHARS)
    offset: int = Field(0, ge=0)


@tool("read", SearchArgs)
def web_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search the web. Results are ranked by how many query words a page contains and how often (title words count more); at most 20."""
    query_terms = terms(a.query)
    if not query_terms:
        raise ToolError(400, "the query has no words to search for")
    hits = rank(ws.state["web"]["pages"], query_terms)
    results = [
        {"url": p["url"], "title": p["title"], "snippet": snippet(p["text"], query_terms)}
        for p in hits[: min(a.limit, MAX_RESULTS)]
    ]
    return {"query": a.query, "results": results, "total": len(hits)}


@tool("read", FetchArgs, target="url")
def web_fetch(ws: Workspace, a: FetchArgs) -> dict:
    """Fetch a web page's title and text. Long pages come in slices of 20000 characters: `offset` = the previous `next_offset`."""
    try:
        url = normalize_url(a.url)
    except ValueError as exc:
        raise ToolError(400, str(exc)) from None
    page = next((p for p in ws.state["web"]["pages"] if p["url"] == url), None)
    if page is None:
        raise ToolError(404, f"page {url!r} not found")
    text = page["text"]
    if a.offset > len(text):
        raise ToolError(400, f"offset {a.offset} is past the end of the page ({len(text)} characters)")
    end = a.offset + FETCH_CHARS
    result = {"url": page["url"], "title": page["title"], "text": text[a.offset : end]}
    if a.offset > 0 or end < len(text):
        result.update(offset=a.offset, length=len(text), truncated=end < len(text))
        if end < len(text):
            result["next_offset"] = end
    return result
