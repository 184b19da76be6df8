"""Malformed inputs for the fuzz suite: JSON documents damaged in every way a file can be (built from a valid document
so that wrong types hit real fields), bad paths, and bad option values, plus hypothesis strategies for the same."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.support import EXAMPLES, FIXTURES

TASK = EXAMPLES / "01_mail_forward_invoices.json"
TRAJECTORY = FIXTURES / "trajectories" / "oracle.json"

MISSING = "<missing>"
DIRECTORY = "<directory>"

Path_ = tuple[Any, ...]


def leaves(doc: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Every value's path in a JSON document (containers included, the root excluded)."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        yield (*path, key)
        yield from leaves(value, (*path, key))


def replaced(doc: Any, path: Path_, value: Any) -> Any:
    """A copy of `doc` with the value at `path` replaced (or deleted when `value` is DELETE)."""
    doc = json.loads(json.dumps(doc))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


DELETE = object()


def _first(doc: Any, kind: type) -> Path_:
    return next(p for p in leaves(doc) if type(_at(doc, p)) is kind)


def _at(doc: Any, path: Path_) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=True).encode()


@functools.cache
def _valid_documents() -> str:
    from coworkenv.synth.generate import GenerateRequest, plan_for

    return json.dumps(
        {
            "task": json.loads(TASK.read_text(encoding="utf-8")),
            "trajectory": json.loads(TRAJECTORY.read_text(encoding="utf-8")),
            "profile": {
                "model": "m",
                "rows": [{"capability": "retrieval", "difficulty": 2, "attempts": 10, "pass_rate": 0.5}],
            },
            "plan": json.loads(plan_for(GenerateRequest(n=3, seed=1)).model_dump_json()),
            "config": {"n": 3, "seed": 1, "runtime": "none", "shards": 1},
        }
    )


def valid_document(kind: str) -> dict[str, Any]:
    """A fresh copy of one valid document of each JSON input kind: task, trajectory, profile, plan, config."""
    return json.loads(_valid_documents())[kind]


def malformed_json(valid: dict[str, Any]) -> dict[str, bytes | str]:
    """Name → file content (or MISSING / DIRECTORY) for one JSON input, from a valid document of its kind."""
    text = json.dumps(valid)
    number = _first(valid, int) if any(type(_at(valid, p)) is int for p in leaves(valid)) else None
    string = _first(valid, str) if any(type(_at(valid, p)) is str for p in leaves(valid)) else None
    out: dict[str, bytes | str] = {
        "missing": MISSING,
        "directory": DIRECTORY,
        "empty": b"",
        "whitespace": b" \n\t\n",
        "truncated": text[: len(text) // 2].encode(),
        "deep-array": b"[" * 100_000,
        "deep-object": b'{"a":' * 100_000,
        "deep-but-closed": b"[" * 500 + b"]" * 500,
        "array": b"[1, 2, 3]",
        "string": b'"a string"',
        "null": b"null",
        "number": b"42",
        "non-utf8": b"\xff\xfe\x00" + text.encode(),
        "utf16": text.encode("utf-16"),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "binary": bytes(range(256)),
        "nan-literal": text.replace("{", '{"nan": NaN, ', 1).encode(),
        "extra-field": _dump({**valid, "zz_unknown": 1}),
        "all-fields-wrong-type": _dump({k: [[]] if not isinstance(v, list) else {"x": 1} for k, v in valid.items()}),
        "all-fields-null": _dump(dict.fromkeys(valid)),
        "fields-missing": b"{}",
        "two-documents": (text + text).encode(),
    }
    if string is not None:
        out["lone-surrogate"] = _dump(replaced(valid, string, "\ud800x"))
        out["nul-in-text"] = _dump(replaced(valid, string, "a\x00b"))
        out["huge-text"] = _dump(replaced(valid, string, "x" * 2_000_000))
    if number is not None:
        raw = _dump(replaced(valid, number, "__NUMBER__"))
        out["huge-float"] = raw.replace(b'"__NUMBER__"', b"1e999999")
        out["huge-int"] = raw.replace(b'"__NUMBER__"', b"9" * 5000)
        out["negative"] = _dump(replaced(valid, number, -(2**63)))
        out["float-for-int"] = _dump(replaced(valid, number, 1.5))
    return out


REPRESENTATIVE = (
    "missing",
    "directory",
    "empty",
    "truncated",
    "deep-array",
    "deep-but-closed",
    "non-utf8",
    "lone-surrogate",
    "huge-float",
    "huge-int",
    "all-fields-wrong-type",
    "array",
    "binary",
)
"""The damages `make test` tries on every input (`make fuzz` tries them all)."""


def damages(corpus: dict[str, bytes | str], full: bool) -> list[str]:
    return [name for name in corpus if full or name in REPRESENTATIVE]


def place(path: Path, content: bytes | str) -> Path:
    """Put one corpus entry at `path`."""
    if content == DIRECTORY:
        path.mkdir(parents=True, exist_ok=True)
    elif content != MISSING:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)  # type: ignore[arg-type]
    return path


BAD_INTS = [
    "0",
    "-1",
    "-9223372036854775809",
    "99999999999999999999999999",
    "1.5",
    "1e3",
    "abc",
    "",
    " ",
    "nan",
    "inf",
    "0x10",
    "٣",
]
BAD_FLOATS = ["-1", "-0.0", "nan", "inf", "-inf", "1e999", "abc", "", "1,5"]
BAD_TEXTS = ["", "\udcff", "x" * 5000, "../../etc", " ", "-", "--", "\t", "é", "nul\x01", "a,b,,c", "*"]
"""The first four of each list are what `make test` tries on every option; `make fuzz` tries them all."""

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None), max_size=30),  # surrogates included
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
"""Any JSON value, lone surrogates in text included."""

option_texts = st.text(st.characters(blacklist_characters="\x00", codec=None), max_size=40)
"""What a shell can pass as one argument (anything but NUL; surrogates stand for undecodable bytes)."""
option_numbers = st.one_of(st.integers(max_value=0), st.integers(min_value=10**7), st.integers(1, 3)).map(str)
"""Integers out of every option's range, or small valid ones (a huge valid count would be a long run, not a bug)."""
