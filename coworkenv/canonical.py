"""The one serialization used for hashing specs, workspace states and evidence."""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text: equal data always gives equal text.

    The bytes of `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, made by the C
    encoder directly: `json.dumps` builds a `JSONEncoder` and a C encoder on every call, which costs as much as
    encoding a small value, and hashing encodes many small values per episode."""
    if c_make_encoder is None or isinstance(value, str):
        return _CANONICAL.encode(value)
    # A fresh `markers` dict per call, as `JSONEncoder.iterencode` makes: it detects circular references.
    encode = c_make_encoder({}, _CANONICAL.default, encode_basestring, None, ":", ",", True, False, True)
    return "".join(encode(value, 0))


def json_key(key: str) -> str:
    """A string as `canonical_json` writes it (quoted and escaped), without the encoder's per-call setup."""
    return encode_basestring(key)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
