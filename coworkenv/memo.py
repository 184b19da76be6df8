"""One cache pattern for work that depends only on an immutable object: computed once per object, keyed by its
identity (frozen specs and their check data are not hashable, and hashing them would cost what the cache saves)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def by_identity(size: int) -> Callable[[Callable[[K], V]], Callable[[K], V]]:
    """Decorator: `build(obj)` computed once per object, the oldest entries dropped past `size` entries. An entry
    holds the object itself, so its id cannot be reused by another object while the entry lives; the object must
    not change (frozen models, and data inside them)."""

    def decorate(build: Callable[[K], V]) -> Callable[[K], V]:
        cache: dict[int, tuple[Any, V]] = {}
        lock = threading.Lock()

        def cached(obj: K) -> V:
            entry = cache.get(id(obj))
            if entry is not None and entry[0] is obj:
                return entry[1]
            value = build(obj)
            with lock:
                cache[id(obj)] = (obj, value)
                while len(cache) > size:
                    del cache[next(iter(cache))]
            return value

        cached.__doc__ = build.__doc__
        cached.__name__ = build.__name__
        return cached

    return decorate
