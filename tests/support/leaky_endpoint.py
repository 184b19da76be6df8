"""An OpenAI-wire endpoint behind a misbehaving proxy, for the secrets tests: its error bodies, and some of its replies,
echo the request's headers (`Authorization: Bearer <key>` included) and the key itself. It plays both models.

Generation requests cycle through six answers, in the order they arrive (run the client with concurrency 1):
0 a valid task carrying a header dump in one of its documents, 1 a task that no rule can repair (its oracle states the
fee in words) which the repair model patches, 2 the same defect marked so that the repair model answers with a header
dump instead, 3 a 400 whose body echoes the headers, 4 a 200 whose content is a header dump and the bare key, 5 a 401
naming the key, as OpenAI's own error does.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support import EXAMPLES
from tests.support.openai_wire import OpenAIWireHandler, serving
from tests.support.repair_corpus import corpus_spec

PLANTED_KEY = "planted-secret-0042-never-to-be-written"
"""Not shaped like a key: bare, only the configured-secret scrub can catch it."""
LEAK_FORMS = (PLANTED_KEY, f"Bearer {PLANTED_KEY}", PLANTED_KEY[:24])

VALID = json.loads((EXAMPLES / "13_retrieval_contract_renewal.json").read_text(encoding="utf-8"))
BROKEN = corpus_spec("09_")  # schema-valid, fails oracle_scores_1, no rule can recompute it
UNFIXABLE_CHECK = "renewal-fee-proxy"
FIXED_ANSWER = {
    "answer": "49,200 EUR for the 2027 renewal (amendment no. 1); the last day to cancel in writing is 2026-12-15."
}
GENERATION_ANSWERS = 6


def _unfixable() -> dict[str, Any]:
    spec = copy.deepcopy(BROKEN)
    spec["checks"][0]["id"] = UNFIXABLE_CHECK
    return spec


class LeakyHandler(OpenAIWireHandler):
    def header_dump(self) -> str:
        return "\n".join(f"{name}: {value}" for name, value in self.headers.items())

    def do_POST(self):  # noqa: N802 (http.server API)
        body = self.read_body()
        system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You repair"):
            return self.repair_reply(body, prompt)
        with self.server.lock:
            turn = self.server.generated
            self.server.generated += 1
        answer = turn % GENERATION_ANSWERS
        if answer == 0:
            spec = copy.deepcopy(VALID)
            spec["workspace"]["docs"]["docs"].append({"id": "d9", "title": "proxy debug", "body": self.header_dump()})
            return self.send_completion(body, {"content": json.dumps(spec)})
        if answer in (1, 2):
            return self.send_completion(body, {"content": json.dumps(BROKEN if answer == 1 else _unfixable())})
        if answer == 3:
            return self.send_json(
                400,
                {
                    "error": {
                        "message": f"bad request; the proxy saw {dict(self.headers)}",
                        "type": "invalid_request_error",
                    }
                },
            )
        if answer == 4:
            return self.send_completion(
                body, {"content": f"proxy trace\n{self.header_dump()}\nkey in use: {PLANTED_KEY}"}
            )
        return self.send_json(
            401, {"error": {"message": f"Incorrect API key provided: {PLANTED_KEY}.", "type": "invalid_request_error"}}
        )

    def repair_reply(self, body: dict[str, Any], prompt: str) -> None:
        self.server.repairs += 1
        if UNFIXABLE_CHECK in prompt:
            return self.send_completion(body, {"content": f"upstream echo:\n{self.header_dump()}"})
        task = json.loads(prompt.split("Task:\n", 1)[1].split("\n\nFailing battery checks:", 1)[0])
        patch = [{"op": "replace", "path": f"/solution/{len(task['solution']) - 1}", "value": FIXED_ANSWER}]
        return self.send_completion(body, {"content": json.dumps(patch)})


@contextmanager
def leaky_endpoint() -> Iterator[ThreadingHTTPServer]:
    """The endpoint on a free localhost port; `.generated` and `.repairs` count the requests of each model."""
    with serving(LeakyHandler, lock=threading.Lock(), generated=0, repairs=0) as httpd:
        yield httpd


def leaks_in_files(*roots: Path) -> list[str]:
    """Every file under the roots (binary ones included: SQLite, Parquet, logs) that holds a form of the planted key."""
    hits = []
    for root in roots:
        for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
            data = path.read_bytes()
            hits += [f"{path}: {form!r}" for form in LEAK_FORMS if form.encode() in data]
    return hits


def leaks_in_parquet(root: Path) -> list[str]:
    """Every Parquet cell (decoded, so compression cannot hide one) under `root` that holds a form of the key."""
    import pyarrow.parquet as pq

    hits, cells = [], 0
    for path in sorted(Path(root).rglob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            for name, value in row.items():
                cells += 1
                text = json.dumps(value, ensure_ascii=False, default=str)
                hits += [f"{path}:{name}" for form in LEAK_FORMS if form in text]
    assert cells, f"no Parquet cell under {root}: nothing was searched"
    return hits


def leaks_in_xcoms(database: Path) -> list[str]:
    """Every XCom value in an Airflow metadata DB (SQLite) that holds a form of the key."""
    with sqlite3.connect(database) as db:
        rows = db.execute("select dag_id, task_id, key, value from xcom").fetchall()
    assert rows, "no XCom in the metadata DB: nothing was searched"
    values = [
        (row[:3], row[3].decode("utf-8", "replace") if isinstance(row[3], bytes) else str(row[3])) for row in rows
    ]
    return [f"xcom {where}" for where, value in values for form in LEAK_FORMS if form in value]
