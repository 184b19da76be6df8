"""Fixtures for the repair tests."""

from __future__ import annotations

import pytest

from tests.support.openai_wire import serving
from tests.support.repair_corpus import Handler


@pytest.fixture(scope="module")
def llm_server():
    """A real OpenAI-compatible HTTP server on localhost playing the repair model."""
    with serving(Handler, requests=[]) as httpd:
        yield httpd
