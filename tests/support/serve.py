"""A real `transformers serve` process on 127.0.0.1 serving a local model directory, for the endpoint tests and
benchmarks: started with the Hugging Face offline variables, ready when `/v1/models` lists the model, stopped by its
process id (SIGTERM, then SIGKILL).

What to know about `transformers serve` (transformers 5.24):
- the model id is the path as given on the command line, and every request must name it exactly (any other `model`
  is a 400 "Server is pinned to ..."): the server is started in the model's parent folder with the folder's name, so
  the id is that name (`openai:tiny`), not a machine path;
- `temperature` alone does not sample (the model's generation config decides `do_sample`); sampling needs
  `extra_body={"generation_config": '{"do_sample": true, ...}'}`, which replaces the model's generation config,
  and a temperature above 0 (temperature 0 turns sampling off again); `seed` is honoured (it seeds torch);
- `tool_choice`, `response_format`, `n` and other unsupported fields are ignored with a warning, unknown ones are a 422;
- it parses `<tool_call>{json}</tool_call>` into native `tool_calls` itself, and output with a malformed tool-call
  region (what a random model writes) makes it fail the request with HTTP 500, not return the text (and, when
  streaming, drops the connection): for the agent that turn has no reply, not a format error;
- the first start takes seconds (about 6-15 s for the tiny model on 2 busy cores: imports, then the model load).

Run it as `python tests/support/serve.py MODEL_DIR [--port N]` (it prints `READY <base url> <model id>`), or from a
test with `transformers_serve(model_dir)`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def transformers_cli() -> Path:
    """The `transformers` console script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "transformers"
    found = beside if beside.exists() else (Path(w) if (w := shutil.which("transformers")) else None)
    if found is None:
        raise RuntimeError("no `transformers` console script next to this Python or on PATH")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Served:
    base_url: str
    """`http://127.0.0.1:<port>/v1`"""
    model: str
    """The model id requests must name (the model folder's name)."""
    pid: int
    log: Path
    """The server's output, while it runs."""
    startup_s: float
    """From the start of the process until `/v1/models` listed the model."""
    process: subprocess.Popen = field(repr=False, compare=False)


def _models(base_url: str) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
        return [m.get("id") for m in json.loads(response.read()).get("data", [])]


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the pid, SIGKILL if it is still there after 15 s."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


@contextmanager
def transformers_serve(
    model_dir: Path, *, port: int | None = None, device: str = "cpu", ready_timeout_s: float = 300.0
) -> Iterator[Served]:
    """`transformers serve` for `model_dir` on 127.0.0.1, ready when this yields; stopped by its pid afterwards."""
    model_dir = Path(model_dir).resolve()
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_fd, log_name = tempfile.mkstemp(prefix="transformers-serve-", suffix=".log")
    command = [
        str(transformers_cli()),
        "serve",
        model_dir.name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        device,
        "--log-level",
        "warning",
    ]
    start = time.monotonic()
    with os.fdopen(log_fd, "w") as log:
        process = subprocess.Popen(
            command,
            cwd=model_dir.parent,
            env={**os.environ, **OFFLINE},
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"transformers serve exited with {process.returncode}:\n{Path(log_name).read_text()[-3000:]}"
                )
            try:
                if model_dir.name in _models(base_url):
                    break
            except OSError:
                pass
            if time.monotonic() - start > ready_timeout_s:
                raise RuntimeError(
                    f"transformers serve was not ready within {ready_timeout_s} s:\n{Path(log_name).read_text()[-3000:]}"
                )
            time.sleep(0.2)
        yield Served(base_url, model_dir.name, process.pid, Path(log_name), time.monotonic() - start, process)
    finally:
        _stop(process)
        Path(log_name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a local model directory with transformers serve on 127.0.0.1.")
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--device", default="cpu")
    options = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops the server as Ctrl-C does
    try:
        with transformers_serve(options.model_dir, port=options.port, device=options.device) as served:
            print(f"READY {served.base_url} {served.model}", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
