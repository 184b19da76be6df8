"""An OpenAI-compatible endpoint that answers instantly and deterministically from the request, for the agent tests
and the rollout benchmarks: a real HTTP/1.1 server (keep-alive, plain asyncio streams, standard library only) in a
process of its own.

`/v1/chat/completions`: while the conversation has fewer than `--calls` assistant turns and the request offers tools,
the reply is a native tool call to the first tool, its arguments built from the schema's required properties; then a
final text answer. `usage` is filled. Faults on request: `--fail-first N` / `--fail-every K` answer `--fail-status`
(500, 429, …), `--delay S` waits, `--hang` never answers, `--malformed` writes a broken `<tool_call>` block into the
content, `--text-calls` a well-formed one, `--bad-arguments` a native call whose arguments are not JSON, and
`--echo-headers` copies the request's headers (the API key among them) into error bodies and final answers;
`--say TEXT` makes TEXT the final answer (`{facts}` in it: the `- name: value` lines of the system message, which is
how an LLM user is told its facts).
`GET /stats` reports the requests seen, the most in flight at once, the connections open (its own included) and the
seeds sent.

Run it as `python tests/support/instant_endpoint.py --port N` (port 0: any free one; the first line on stdout is
`READY <port>`), or from a test with `instant_endpoint(...)`, which starts it as a subprocess, waits until it answers
and kills it by its process id.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def example_value(schema: dict[str, Any], name: str = "x") -> Any:
    """A value the JSON schema accepts (first alternative, first enum value, default, or the least of its type)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return example_value(schema[key][0], name)
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return float(max(1, schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return arguments_for(schema)
    if kind == "null":
        return None
    return name.ljust(max(1, schema.get("minLength", 1)), "x")


def arguments_for(parameters: dict[str, Any]) -> dict[str, Any]:
    """Arguments holding exactly the schema's required properties."""
    properties = parameters.get("properties") or {}
    return {name: example_value(properties.get(name, {}), name) for name in parameters.get("required") or ()}


def _facts(messages: list[Any]) -> list[str]:
    """The values of the `- name: value` lines of the system message (what an LLM user was told it knows)."""
    system = next((m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "system"), "")
    return [line.split(": ", 1)[1] for line in str(system).splitlines() if line.startswith("- ") and ": " in line]


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


class Behaviour:
    """How the server answers; counters shared by every connection of the process."""

    def __init__(self, options: argparse.Namespace):
        self.o = options
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0
        self.statuses: dict[int, int] = {}
        self.seeds: list[Any] = []
        self.authorization: str | None = None

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "connections": self.connections,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "seeds": self.seeds[-1000:],
            "authorization": self.authorization,
        }

    async def chat(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.requests += 1
        number = self.requests
        self.seeds.append(body.get("seed"))
        self.authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.o.hang:
                await asyncio.Event().wait()  # never set: the client times out or goes away
            if self.o.delay:
                await asyncio.sleep(self.o.delay)
            failing = number <= self.o.fail_first or (self.o.fail_every and number % self.o.fail_every == 0)
            if failing:
                error: dict[str, Any] = {"message": f"injected failure of request {number}", "type": "server_error"}
                if self.o.echo_headers:
                    error["message"] += f"; the proxy saw {headers}"
                return self.o.fail_status, {"error": error}
            return 200, self.completion(body, headers)
        finally:
            self.in_flight -= 1

    def completion(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if tools and turns < self.o.calls:
            function = tools[0].get("function", {})
            name, arguments = function.get("name", "tool"), json.dumps(arguments_for(function.get("parameters") or {}))
            if self.o.malformed:
                message["content"] = f'<tool_call>{{"name": "{name}", "arguments": {{oops</tool_call>'
            elif self.o.text_calls:
                message["content"] = f'<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'
            else:
                if self.o.bad_arguments:
                    arguments = arguments[:-1] + ", oops"
                message["tool_calls"] = [
                    {"id": f"call_{turns + 1}", "type": "function", "function": {"name": name, "arguments": arguments}}
                ]
            finish, produced = "tool_calls", message["content"] or arguments
        else:
            if self.o.say is not None:
                message["content"] = self.o.say.replace("{facts}", "; ".join(_facts(messages)))
            else:
                message["content"] = f"Done after {turns} tool turns."
            if self.o.echo_headers:
                message["content"] += f"\n{json.dumps(headers)}"
            finish, produced = "stop", message["content"]
        prompt = sum(_tokens(str(m.get("content") or "")) for m in messages if isinstance(m, dict))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": _tokens(produced),
            "total_tokens": prompt + _tokens(produced),
        }
        return {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", self.o.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }


async def _respond(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], keep_alive: bool) -> None:
    data = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()


async def _serve_connection(behaviour: Behaviour, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    behaviour.connections += 1
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
            headers = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            lowered = {k.lower(): v for k, v in headers.items()}
            body = await reader.readexactly(int(lowered.get("content-length", "0") or 0))
            keep_alive = lowered.get("connection", "").lower() != "close"
            path = path.split("?", 1)[0].rstrip("/")
            if method == "GET" and path in ("/v1/models", "/models"):
                status, payload = (
                    200,
                    {"object": "list", "data": [{"id": behaviour.o.model, "object": "model", "owned_by": "instant"}]},
                )
            elif method == "GET" and path in ("/stats", "/health"):
                status, payload = 200, behaviour.stats()
            elif method == "POST" and path in ("/v1/chat/completions", "/chat/completions"):
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    status, payload = (
                        400,
                        {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}},
                    )
                else:
                    status, payload = await behaviour.chat(request, headers)
            else:
                status, payload = 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
            behaviour.statuses[status] = behaviour.statuses.get(status, 0) + 1
            await _respond(writer, status, payload, keep_alive)
            if not keep_alive:
                return
    except (ConnectionError, asyncio.CancelledError):
        return
    finally:
        behaviour.connections -= 1
        writer.close()


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="An instant OpenAI-compatible endpoint for tests and benchmarks.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed as READY <port>).")
    parser.add_argument("--model", default="instant", help="The model name /v1/models lists.")
    parser.add_argument("--calls", type=int, default=1, help="Tool-call turns before the final answer.")
    parser.add_argument("--fail-first", type=int, default=0, help="The first N chat requests fail.")
    parser.add_argument("--fail-every", type=int, default=0, help="Every K-th chat request fails.")
    parser.add_argument("--fail-status", type=int, default=500, help="The status of a failing request.")
    parser.add_argument("--delay", type=float, default=0.0, help="Seconds before each chat reply.")
    parser.add_argument("--hang", action="store_true", help="Never answer a chat request.")
    parser.add_argument(
        "--malformed", action="store_true", help="Tool calls as a broken <tool_call> block in the content."
    )
    parser.add_argument(
        "--text-calls", action="store_true", help="Tool calls as well-formed <tool_call> blocks in the content."
    )
    parser.add_argument("--bad-arguments", action="store_true", help="Native tool calls whose arguments are not JSON.")
    parser.add_argument(
        "--say", help="The final answer's text; {facts} becomes the values listed in the system message."
    )
    parser.add_argument(
        "--echo-headers", action="store_true", help="Error bodies and final answers carry the request's headers."
    )
    return parser.parse_args(argv)


async def serve(options: argparse.Namespace) -> None:
    behaviour = Behaviour(options)
    server = await asyncio.start_server(
        lambda r, w: _serve_connection(behaviour, r, w), options.host, options.port, backlog=1024
    )
    port = server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    async with server:
        await server.serve_forever()


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    """`http://127.0.0.1:<port>/v1`"""
    pid: int
    port: int
    process: subprocess.Popen = field(repr=False, compare=False)

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as response:
            return json.loads(response.read())

    def kill(self) -> None:
        """Stop the server now (SIGKILL to its process id) and wait until it is gone: an endpoint that dies mid-run."""
        _kill(self.process)


def _kill(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


def option_args(**options: Any) -> list[str]:
    """`fail_first=2, hang=True` → `--fail-first 2 --hang`."""
    args: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value not in (False, None):
            args += [flag, str(value)]
    return args


@contextmanager
def instant_endpoint(port: int = 0, **options: Any) -> Iterator[Endpoint]:
    """The server in a subprocess on a localhost port (0: a free one), ready when this yields; killed by its pid afterwards."""
    command = [sys.executable, str(Path(__file__).resolve()), "--port", str(port), *option_args(**options)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("READY "):
            raise RuntimeError(
                f"the instant endpoint did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
            )
        port = int(line.split()[1])
        endpoint = Endpoint(base_url=f"http://127.0.0.1:{port}/v1", pid=proc.pid, port=port, process=proc)
        with urllib.request.urlopen(f"{endpoint.base_url}/models", timeout=10) as response:  # ready = it answers
            assert response.status == 200
        yield endpoint
    finally:
        _kill(proc)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def main(argv: list[str] | None = None) -> None:
    try:
        asyncio.run(serve(parse_options(argv)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
