"""HTTP for the async chat client: a lean HTTP/1.1 JSON poster on asyncio streams (keep-alive connections, bodies by
length or chunked, `http` and `https`), and httpx where a proxy applies.

Why not the `openai` package here: against a local endpoint that answers at once, its per-request overhead (request
and response models, httpx's pool) caps a 2-core machine at about 400 requests/s, below what the rollout engine
needs; the streams poster does over ten times that. Hosted APIs behind a proxy keep httpx, which honours the proxy
environment variables.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
from typing import Any, Protocol
from urllib.parse import urlsplit

MAX_BODY = 64 * 1024 * 1024
"""A reply body larger than this is an error (no chat completion is that big)."""


class ProtocolError(ConnectionError):
    """The peer does not speak HTTP/1.1 as expected (a bad status line, a body beyond MAX_BODY)."""


class Transport(Protocol):
    async def post(self, path: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, bytes]: ...

    async def aclose(self) -> None: ...


def http_url(url: str) -> str:
    """`url`, when it is an http(s) URL with a host; ValueError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return url


def _proxied(url: str) -> bool:
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    return parts.scheme in proxies and not urllib.request.proxy_bypass(parts.hostname or "")


def make_transport(base_url: str, connections: int) -> Transport:
    """The streams poster, or httpx when the environment routes `base_url` through a proxy."""
    return HttpxTransport(base_url, connections) if _proxied(base_url) else StreamsTransport(base_url)


class StreamsTransport:
    """POSTs to one origin over a pool of idle keep-alive connections (one per request in flight)."""

    def __init__(self, base_url: str):
        parts = urlsplit(http_url(base_url))
        self.host = parts.hostname
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        self.authority = parts.netloc.rsplit("@", 1)[-1]
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.tls:
            return await asyncio.open_connection(
                self.host, self.port, ssl=ssl.create_default_context(), server_hostname=self.host
            )
        return await asyncio.open_connection(self.host, self.port)

    async def post(self, path: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, bytes]:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (
            f"POST {self.prefix}{path} HTTP/1.1\r\nHost: {self.authority}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json\r\nContent-Length: {len(body)}\r\n{head}\r\n"
        ).encode("latin-1") + body
        async with asyncio.timeout(timeout_s):
            while self._idle:  # a kept-alive connection the server closed meanwhile fails at once: try the next
                connection = self._idle.pop()
                try:
                    return await self._exchange(connection, request)
                except (ConnectionError, asyncio.IncompleteReadError) as exc:
                    if isinstance(exc, asyncio.IncompleteReadError) and exc.partial:
                        raise  # the server began an answer: not a stale connection
            return await self._exchange(await self._connect(), request)

    async def _exchange(
        self, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes
    ) -> tuple[int, bytes]:
        reader, writer = connection
        try:
            writer.write(request)
            await writer.drain()
            status, keep_alive, body = await _read_response(reader)
        except asyncio.LimitOverrunError:
            writer.close()
            raise ProtocolError("a response line is too long") from None
        except BaseException:
            writer.close()
            raise
        if keep_alive:
            self._idle.append(connection)
        else:
            writer.close()
        return status, body

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
        for _, writer in idle:
            try:
                await writer.wait_closed()
            except (ConnectionError, ssl.SSLError):
                pass


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool, bytes]:
    """(status, whether the connection may be reused, body) of one HTTP/1.1 response."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status_line = lines[0].split(" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith("HTTP/1.") or not status_line[1].isdigit():
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(status_line[1])
        if status >= 200:
            break  # 1xx: an interim response; the real one follows
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    keep_alive = headers.get("connection", "").lower() != "close" and status_line[0] != "HTTP/1.0"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        if length > MAX_BODY:
            raise ProtocolError(f"a {length}-byte response body is more than {MAX_BODY}")
        body = await reader.readexactly(length)
    else:  # delimited by the end of the connection
        body = await reader.read(MAX_BODY + 1)
        keep_alive = False
    return status, keep_alive, body


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        length = int(line.split(b";", 1)[0].strip() or b"0", 16)
        if length == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        size += length
        if size > MAX_BODY:
            raise ProtocolError(f"a chunked response body is more than {MAX_BODY} bytes")
        parts.append(await reader.readexactly(length))
        await reader.readexactly(2)


class HttpxTransport:
    """The same POST through httpx (proxies from the environment)."""

    def __init__(self, base_url: str, connections: int):
        import httpx

        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        self.client: Any = httpx.AsyncClient(base_url=base_url.rstrip("/"), trust_env=True, limits=limits, timeout=None)

    async def post(self, path: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, bytes]:
        import httpx

        try:
            async with asyncio.timeout(timeout_s):
                response = await self.client.post(
                    path, content=body, headers={"Content-Type": "application/json", **headers}
                )
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.HTTPError as exc:
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from None
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self.client.aclose()
