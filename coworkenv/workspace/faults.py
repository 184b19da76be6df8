"""Fault injection: a call's fault is a pure function of (seed, call index), so replays reproduce it."""

from __future__ import annotations

import hashlib

FAULT_MESSAGES = {429: "rate limited: too many requests, retry later", 500: "internal server error, retry later"}


def fault_for(seed: int, index: int, rate: float) -> int | None:
    """429, 500 or None for the call with this index."""
    if rate <= 0.0:
        return None
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    draw = int.from_bytes(digest[:7], "big") / float(1 << 56)
    if draw >= rate:
        return None
    return 429 if digest[7] & 1 else 500
