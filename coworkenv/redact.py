"""Secrets out of text: whatever comes from an endpoint or an exception is scrubbed here before it is stored, logged or
shown (docs/design/pipeline.md and docs/reliability.md, "Secrets").

Three kinds of secret are scrubbed, in this order:

1. the configured secrets, wherever they appear: every key registered with `register_secret` (the LLM client
   registers the key it sends) and the values of environment variables whose names say they hold one
   (`*API_KEY*`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, …);
2. the values of credential headers and fields (`Authorization`, `api-key`, `x-api-key`, `api_key=`, …) and
   `Bearer`/`Basic` credentials, in any quoting (HTTP dumps, JSON, Python reprs);
3. anything shaped like a key: known vendor prefixes (`sk-…`, `ghp_…`, `hf_…`, `AKIA…`, JWTs) and long tokens
   that mix upper case, lower case and digits with high entropy. Hex digests (content hashes), UUIDs and task ids
   are all one case, so they are left alone.

`short_error` is the one way to keep an exception for later: its type and its redacted message, host paths reduced to
their file names, no traceback.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter

REDACTED = "[REDACTED]"
MIN_SECRET = 8
"""Shorter configured values are not scrubbed: they would match ordinary words and numbers."""

_lock = threading.Lock()
_registered: set[str] = set()
_cache: tuple[int, dict, list[str]] | None = None
"""(len(_registered), a copy of the environment, the secrets): what `configured_secrets` found last time."""

_SECRET_ENV = re.compile(
    r"API_?KEY|ACCESS_?KEY|SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIAL|(?:^|_)KEY$|_PAT$", re.IGNORECASE
)
_CREDENTIAL_NAME = (
    r"(?:proxy-)?authorization|x-api-key|api[-_]?key|openai[-_]api[-_]key|x-goog-api-key|access[-_]?token|auth[-_]?token"
    r"|refresh[-_]?token|client[-_]?secret|secret[-_]?key"
)
_QUOTE = r"(?:\\?[\"'])?"
_CREDENTIAL = re.compile(
    rf"(?i)(?:(?<=\\[nrt])|(?<![\w-]))((?:{_CREDENTIAL_NAME}){_QUOTE}\s*[:=]\s*{_QUOTE})((?:bearer\s+|basic\s+|token\s+)?(?:\[REDACTED\]|[^\s\"'\\,;&)}}\]]+))"
)
_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}")
_VENDOR = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-…), Stripe-like
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JWT
    r")"
)
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{24,}(?![A-Za-z0-9+/=_-])")
_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_HOST_PATH = re.compile(r"(?<![\w.~/-])(?:[A-Za-z]:)?(?:/[\w.@+~-]+){2,}/?")


def register_secret(value: str | None) -> None:
    """Scrub this value from every text this process redacts from now on (an API key the run sends)."""
    if value and len(value) >= MIN_SECRET:
        with _lock:
            _registered.add(value)


def configured_secrets() -> list[str]:
    """The registered secrets and the secret-named environment variables' values, longest first.

    Every reply an endpoint sends is scrubbed with these, so the answer is cached until a secret is registered or the
    environment changes: comparing `os.environ`'s own mapping to a copy is ~100 times cheaper than decoding and
    matching every variable again (a tenth of a millisecond per reply)."""
    global _cache
    env = getattr(os.environ, "_data", None)  # CPython's raw mapping behind os.environ, which setenv/delenv update
    with _lock:
        cached, registered = _cache, len(_registered)
        if cached is not None and env is not None and cached[0] == registered and cached[1] == env:
            return list(cached[2])
        found = set(_registered)
    snapshot = (
        dict(env) if env is not None else None
    )  # taken before the scan: a change during it misses the cache next time
    found |= {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= MIN_SECRET}
    secrets = sorted(found, key=len, reverse=True)
    if snapshot is not None:
        with _lock:
            if len(_registered) == registered:
                _cache = (registered, snapshot, secrets)
    return list(secrets)


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_like_key(token: str) -> bool:
    """A long token that mixes upper case, lower case and digits with high entropy and few words: not a CamelCase
    name, an id, a hex digest or a path (split at `/` too: a path's parts are names, and a file name like
    `test_x0/r/releases/LATEST` would otherwise read as mixed-case noise)."""
    for part in re.split(r"[-_./]", token):
        cased = any(c.islower() for c in part) and any(c.isupper() for c in part)
        if len(part) < 20 or not cased or not (len(part) >= 32 or any(c.isdigit() for c in part)):
            continue
        wordy = sum(len(w) for w in _WORD.findall(part)) / len(part)
        if _entropy(part) >= 3.5 and wordy < 0.6:
            return True
    return False


def scrub_configured(text: str) -> str:
    """Only the configured secrets: safe on any content (task specs included), it changes nothing else."""
    for secret in configured_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """`text` with every configured secret, credential header, bearer token and key-shaped token replaced."""
    if not isinstance(text, str):
        text = str(text)
    text = scrub_configured(text)
    text = _CREDENTIAL.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _VENDOR.sub(REDACTED, text)
    return _TOKEN.sub(lambda m: REDACTED if looks_like_key(m.group(0)) else m.group(0), text)


def without_host_paths(text: str) -> str:
    """Absolute paths of this machine reduced to their last part (`…/name`)."""
    return _HOST_PATH.sub(lambda m: "…/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)


def safe_message(text: str, limit: int = 500) -> str:
    """An error text fit to store: any traceback cut off, redacted, host paths reduced, at most `limit` characters."""
    head = str(text).split("Traceback (most recent call last)", 1)[0].rstrip()
    return without_host_paths(redact(head))[:limit]


def short_error(exc: BaseException, limit: int = 500) -> str:
    """`Type: message` of an exception, redacted, without host paths or traceback; the message at most `limit`
    characters."""
    message = safe_message(str(exc), limit)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
