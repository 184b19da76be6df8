"""The streams HTTP/1.1 poster against real sockets: bodies by length and chunked, interim responses, connection reuse,
servers that close kept-alive connections (with and without saying so), and peers that do not speak HTTP."""

from __future__ import annotations

import asyncio

import pytest

from coworkenv.llm.wire import ProtocolError, StreamsTransport, make_transport

CHUNKED = (
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n"
)


def _length(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


async def _serve(answers: list[bytes], close_after_each: bool = False):
    """A socket server that answers each request with the next canned response; counts connections and requests."""
    seen = {"connections": 0, "requests": [], "writers": []}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["connections"] += 1
        seen["writers"].append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                seen["requests"].append(head + await reader.readexactly(length))
                writer.write(answers[min(len(seen["requests"]) - 1, len(answers) - 1)])
                await writer.drain()
                if close_after_each:
                    break
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


async def _stop(server: asyncio.Server, seen: dict) -> None:
    """Close the server and the connections it still holds (keep-alive ones included)."""
    server.close()
    for writer in seen["writers"]:
        writer.close()
    await server.wait_closed()
    await asyncio.sleep(0.01)  # the handlers see their connections end


def test_chunked_and_interim_responses_are_read_and_the_connection_is_reused():
    async def run():
        server, port, seen = await _serve([CHUNKED, _length(b'{"ok": 1}')])
        transport = StreamsTransport(f"http://127.0.0.1:{port}/v1")
        first = await transport.post("/chat/completions", b'{"a": 1}', {"Authorization": "Bearer k"}, 5)
        second = await transport.post("/chat/completions", b"{}", {}, 5)
        await transport.aclose()
        await _stop(server, seen)
        return first, second, seen

    first, second, seen = asyncio.run(run())
    assert first == (200, b"hello, world") and second == (200, b'{"ok": 1}')
    assert seen["connections"] == 1
    assert (
        seen["requests"][0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        and b"Authorization: Bearer k\r\n" in seen["requests"][0]
    )
    assert seen["requests"][0].endswith(b'\r\n\r\n{"a": 1}')


@pytest.mark.parametrize("say_so", [True, False], ids=["connection-close", "silent-close"])
def test_a_server_that_closes_the_connection_gets_a_fresh_one(say_so: bool):
    answer = _length(b"{}", "Connection: close\r\n" if say_so else "")

    async def run():
        server, port, seen = await _serve([answer], close_after_each=True)
        transport = StreamsTransport(f"http://127.0.0.1:{port}")
        results = []
        for _ in range(3):
            results.append(await transport.post("/x", b"{}", {}, 5))
            await asyncio.sleep(0.05)  # the server's close reaches the idle connection
        await transport.aclose()
        await _stop(server, seen)
        return results, seen

    results, seen = asyncio.run(run())
    assert results == [(200, b"{}")] * 3 and seen["connections"] == 3 and len(seen["requests"]) == 3


def test_a_peer_that_does_not_speak_http_is_a_protocol_error():
    async def run():
        server, port, seen = await _serve([b"SSH-2.0-OpenSSH\r\n\r\n"])
        transport = StreamsTransport(f"http://127.0.0.1:{port}")
        try:
            with pytest.raises(ProtocolError, match="status line"):
                await transport.post("/x", b"{}", {}, 5)
        finally:
            await _stop(server, seen)

    asyncio.run(run())


def test_only_http_urls_and_proxies_pick_httpx(monkeypatch: pytest.MonkeyPatch):
    with pytest.raises(ValueError, match="not an http"):
        StreamsTransport("ftp://example.test/v1")
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    assert isinstance(make_transport("http://127.0.0.1:8000/v1", 4), StreamsTransport)
    monkeypatch.setenv("http_proxy", "http://proxy.test:3128")
    monkeypatch.setenv("no_proxy", "")
    assert type(make_transport("http://10.1.2.3:8000/v1", 4)).__name__ == "HttpxTransport"


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", asyncio.IncompleteReadError),
        (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n{}", ProtocolError),
    ],
    ids=["body-cut-short", "header-too-long"],
)
def test_broken_responses_raise_what_the_chat_client_retries(answer: bytes, error: type[Exception]):
    async def run():
        server, port, seen = await _serve([answer], close_after_each=True)
        transport = StreamsTransport(f"http://127.0.0.1:{port}")
        try:
            with pytest.raises(error):
                await transport.post("/x", b"{}", {}, 5)
        finally:
            await _stop(server, seen)

    asyncio.run(run())
