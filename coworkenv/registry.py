"""One registry pattern for every named thing: families, check kinds, tools, policies."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from coworkenv.errors import CoworkEnvError

T = TypeVar("T")


def closest(name: object, known: Iterable[str], cutoff: float = 0.85) -> str | None:
    """The known name closest to a misspelled one, if it is close (difflib ratio ≥ cutoff)."""
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


class UnknownName(CoworkEnvError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Generic[T]):
    """Name → object, filled by decorator; unknown names get a "did you mean" hint."""

    def __init__(self, what: str):
        self.what = what
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorator

    def add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._items[name] = obj

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownName(self.unknown_message(name)) from None

    def find(self, name: str) -> T | None:
        """The item, or None: `get` without the error, for hot paths that answer an unknown name themselves."""
        return self._items.get(name)

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(str(name), list(self._items), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown {self.what} {name!r}{hint}"

    def names(self) -> list[str]:
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
