"""No secret in any output of the command line: `synthesize` and `generate` with an LLM endpoint behind a misbehaving
proxy that echoes the request's headers (`Authorization: Bearer <key>`) and the key itself in its errors and replies
(`tests/support/leaky_endpoint.py`). The key comes from an environment variable; afterwards no file under the data
root, no Parquet cell and nothing the commands printed holds it. The endpoint's good work still lands in the release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.data.reader import read_manifest, read_table
from tests.support import ROOT
from tests.support.leaky_endpoint import LEAK_FORMS, PLANTED_KEY, leaks_in_files, leaks_in_parquet, leaky_endpoint

CLI = Path(sys.executable).parent / "coworkenv"
KEY_VAR = "LEAKY_LLM_AUTH"  # a name that does not say "key": only the client's own registration can scrub its value


def cli(*args: str | Path, data_root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COWORKENV_DATA_ROOT"} | {KEY_VAR: PLANTED_KEY, "COLUMNS": "200"}
    return subprocess.run(
        [str(CLI), *map(str, args), "--data-root", str(data_root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


def endpoint_options(server) -> list[str]:
    return [
        "--llm-base-url",
        f"http://127.0.0.1:{server.server_port}/v1",
        "--llm-model",
        "proxy-model",
        "--llm-api-key-env",
        KEY_VAR,
        "--llm-concurrency",
        "1",
        "--capabilities",
        "retrieval",
        "--difficulty-min",
        "2",
        "--difficulty-max",
        "2",
    ]


def assert_no_leak(outputs: list[subprocess.CompletedProcess[str]], data_root: Path) -> None:
    printed = "".join(p.stdout + p.stderr for p in outputs)
    assert not [form for form in LEAK_FORMS if form in printed]
    assert leaks_in_files(data_root) == []
    assert leaks_in_parquet(data_root) == []


@pytest.mark.slow
def test_synthesize_with_a_leaky_endpoint_writes_no_secret_and_keeps_its_good_work(tmp_path):
    root = tmp_path / "data"
    with leaky_endpoint() as server:
        options = endpoint_options(server)
        synthesized = cli(
            "synthesize",
            "--generator",
            "llm",
            "--n",
            "6",
            "--shards",
            "1",
            "--workers",
            "1",
            "--repair-rounds",
            "2",
            "--run-id",
            "leaky",
            *options,
            data_root=root,
        )
        assert synthesized.returncode == 0, synthesized.stdout + synthesized.stderr
        assert server.generated == 6 and server.repairs >= 2
        repaired_again = cli("repair", "--run-id", "leaky", data_root=root)
        assert repaired_again.returncode == 0, repaired_again.stderr
        mixed = cli(
            "generate",
            "--generator",
            "mixed",
            "--llm-share",
            "0.5",
            "--n",
            "12",
            "--shards",
            "1",
            "--run-id",
            "mixed",
            *options,
            data_root=root,
        )
        assert mixed.returncode == 0, mixed.stderr
    assert_no_leak([synthesized, repaired_again, mixed], root)

    # the proxy's errors were recorded, redacted: the generation rejections and the failed repair attempt
    rejections = [
        json.loads(line)
        for line in (root / "runs" / "leaky" / "generated" / "shard-0000.rejections.jsonl").read_text().splitlines()
    ]
    assert sorted(r["code"] for r in rejections) == ["http_error", "http_error", "unparseable"]
    assert all("[REDACTED]" in r["reason"] for r in rejections)
    attempts = [
        json.loads(line) for line in (root / "runs" / "leaky" / "repaired" / "attempts.jsonl").read_text().splitlines()
    ]
    assert any(a["error"] and "authorization: [REDACTED]" in a["error"] for a in attempts)

    # and the endpoint's good work is in the release: its valid task (header dump redacted) and the task it repaired
    manifest = read_manifest(root, "latest")
    tasks = {t["task_id"]: t for t in read_table(root, manifest.release_id, "tasks").to_pylist()}
    (repaired,) = [task_id for task_id in tasks if task_id.endswith("-r1")]
    assert len(tasks) == 2 and all(t["family"] == "llm" for t in tasks.values())
    (original,) = set(tasks) - {repaired}
    assert "authorization: [REDACTED]" in json.dumps(tasks[original])  # the header dump in its document, redacted
    repairs = read_table(root, manifest.release_id, "repairs").to_pylist()
    assert [(r["task_id"], r["strategy"]) for r in repairs if r["valid_after"]] == [(repaired, "llm")]
