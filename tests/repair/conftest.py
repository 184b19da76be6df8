"""Fixtures for the repair tests."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

import pytest

from tests.support.repair_corpus import Handler


@pytest.fixture(scope="module")
def llm_server():
    """A real OpenAI-compatible HTTP server on localhost playing the repair model."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
