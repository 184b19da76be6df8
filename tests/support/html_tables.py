"""Reading pages as a person does: the text of each table's cells, and the links, parsed with the standard library."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.links: list[str] = []
        self._open: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._open.append([])
        elif tag == "tr" and self._open:
            self._open[-1].append([])
        elif tag in ("td", "th") and self._open:
            self._cell = []
        elif tag in ("div", "br", "p", "li", "pre", "details") and self._cell is not None:
            self._cell.append(" ")  # a line break a reader sees
        if tag == "a":
            self.links += [value for name, value in attrs if name == "href" and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._open and self._open[-1]:
            self._open[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._open:
            self.tables.append(self._open.pop())

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> _Tables:
    parser = _Tables()
    parser.feed(html)
    return parser


def table_with(html: str, header: str) -> list[dict[str, str]]:
    """The rows of the first table whose first row has a cell `header`, as dicts keyed by that row's cells."""
    for table in parse(html).tables:
        if table and header in table[0]:
            return [dict(zip(table[0], row, strict=False)) for row in table[1:]]
    raise AssertionError(f"no table with a {header!r} column")


def links(html: str) -> list[str]:
    return parse(html).links
