"""Empty defaults that pydantic can share between instances: `field: list[str] = EMPTY_LIST`.

Pydantic deep-copies a default it cannot hash (`[]`, `{}`) for every instance that leaves the field out, about
2.5 µs each; a spec holds a few dozen such fields (every check's `requires`, every message's `cc`, …), and tool
arguments have them too. A hashable default is shared instead. These two are empty and refuse every change, so
sharing them is safe: code that tried to change one in place would fail loudly instead of changing every model.
They validate, compare, serialize and appear in JSON schemas exactly as `[]` and `{}` do.
"""

from __future__ import annotations

from typing import Any, NoReturn

from pydantic_core import core_schema


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"a shared empty default ({type(self).__name__}) cannot be changed; build a new one")


class FrozenList(list):  # type: ignore[type-arg]
    """An empty list that cannot change, hence hashable."""

    __slots__ = ()
    __hash__ = lambda self: 0  # noqa: E731 — equal to every empty list, as hashing requires
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, ())

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        # Only ever used to write the default into a JSON schema, where it is `[]`.
        return core_schema.list_schema()


class FrozenDict(dict):  # type: ignore[type-arg]
    """An empty dict that cannot change, hence hashable."""

    __slots__ = ()
    __hash__ = lambda self: 0  # noqa: E731
    __setitem__ = __delitem__ = __ior__ = setdefault = update = pop = popitem = clear = _refuse  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, ())

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.dict_schema()


EMPTY_LIST: Any = FrozenList()
EMPTY_DICT: Any = FrozenDict()
