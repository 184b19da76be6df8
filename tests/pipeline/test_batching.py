"""The generate and validate stages stream their tasks in batches (docs/design/pipeline.md, "Bounded memory"): whatever
the batch size, they write the same bytes as one batch of everything would, and they take their input lazily."""

from __future__ import annotations

import logging
from itertools import islice
from pathlib import Path

import pytest

from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.rundir import BATCH, RunDir, read_jsonl
from coworkenv.pipeline.synthesis.generate import generate_run, generate_shard, import_tasks
from coworkenv.pipeline.synthesis.plan import plan_run, start_run
from coworkenv.pipeline.synthesis.validate import validate_shard
from coworkenv.synth.generate import GenerateRequest, generate, iter_generate, plan_for
from coworkenv.validate.batch import iter_validations, validate_tasks
from tests.support import EXAMPLES, ROOT

SIZES = (1, 7, BATCH)
CONFIG = SynthesisConfig(
    n=30, seed=5, shards=2, runtime="none", families=["mail_triage", "csv_aggregate", "flaky_sync"]
)
BROKEN = ROOT / "tests" / "repair" / "corpus" / "01_wrong_expected_number.json"
JUNK = '{"id": "x", "family": 3}\nnot json at all\n[1, 2]\n'


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_generated_shards_are_the_same_bytes_at_every_batch_size(tmp_path):
    made = {}
    for size in SIZES:
        run = RunDir.open("g", tmp_path / str(size))
        shards = plan_run(run, CONFIG)
        result = generate_run(run, shards, batch_size=size)
        made[size] = (result, files(run.file("generated")))
    assert made[1] == made[7] == made[BATCH]
    result, written = made[BATCH]
    assert [s["tasks"] for s in result] == [s["tasks"] for s in shards] and sum(s["tasks"] for s in result) == 30
    # one batch of everything: the unbatched generator's tasks, shard by shard
    config = run.config()
    request = GenerateRequest(n=30, seed=config.seed, families=config.families)
    tasks, rejections = generate(request, plan_for(request))
    lines = [
        line for name, text in written.items() if name.endswith(".tasks.jsonl") for line in text.decode().splitlines()
    ]
    assert sorted(lines) == sorted(t.to_json() for t in tasks) and not rejections


def test_one_generated_shard_is_the_same_bytes_at_every_batch_size(tmp_path):
    written = set()
    for size in SIZES:
        run = RunDir.open("g", tmp_path / str(size))
        shard = plan_run(run, CONFIG)[1]
        assert generate_shard(run, shard, batch_size=size) == {"shard": 1, "tasks": shard["tasks"], "rejections": 0}
        written.add(tuple(files(run.file("generated")).items()))
    assert len(written) == 1


def test_imported_shards_are_the_same_bytes_at_every_batch_size(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text(JUNK + "\n  \n" + JUNK, encoding="utf-8")
    made = []
    for size in SIZES:
        run = RunDir.open("i", tmp_path / str(size))
        made.append(
            (import_tasks(run, [EXAMPLES, junk], shards=3, start=CONFIG, batch_size=size), files(run.file("generated")))
        )
    assert made[0] == made[1] == made[2]
    shards, written = made[0]
    n = len(list(EXAMPLES.glob("*.json"))) + 6
    assert [s["shard"] for s in shards] == [0, 1, 2] and sum(s["tasks"] for s in shards) == n
    assert b"".join(text for name, text in written.items() if name.endswith(".tasks.jsonl")).decode().count("\n") == n


def _validated(tmp_path: Path, runtime: str, sizes: tuple[int, ...], caplog: pytest.LogCaptureFixture) -> list[tuple]:
    """Each batch size's (result, validations bytes, log) for one shard of good, broken and unparseable tasks."""
    junk = tmp_path / "junk.jsonl"
    junk.write_text(JUNK, encoding="utf-8")
    run = RunDir.open("v", tmp_path)
    start_run(run, CONFIG.model_copy(update={"runtime": runtime}))
    import_tasks(run, [EXAMPLES, BROKEN, junk], shards=1)
    out = []
    for size in sizes:
        caplog.clear()
        result = validate_shard(run, 0, batch_size=size)
        log = "\n".join(r.getMessage() for r in caplog.records if r.name == "coworkenv.pipeline.synthesis.validate")
        out.append((result, run.shard_file("validated", 0, "validations").read_bytes(), log))
    lines = read_jsonl(run.shard_file("generated", 0, "tasks"))
    names = [f"shard-0000.tasks.jsonl:{i}" for i in range(1, len(lines) + 1)]
    whole = validate_tasks(
        lines, runtime=runtime, names=names, budget_s=CONFIG.task_budget_s
    )  # one batch of everything
    assert out[0][1] == "".join(v.model_dump_json() + "\n" for v in whole).encode()
    return out


def test_validations_are_the_same_bytes_at_every_batch_size(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    made = _validated(tmp_path, "none", SIZES, caplog)
    assert made[0] == made[1] == made[2]
    result, _, log = made[0]
    assert result["invalid"] == 4 and result["valid"] == result["tasks"] - 4 and result["rejections_by_code"]
    assert (
        f"validate shard 0: {result['tasks']} tasks, {result['valid']} valid, 4 rejected; top rejection reasons:" in log
    )


def test_sandboxed_validations_are_the_same_bytes_at_every_batch_size(tmp_path, caplog):
    """One pool serves every batch of the shard, in the sandbox as in-process."""
    caplog.set_level(logging.INFO)
    made = _validated(tmp_path, "rlimit", (4, BATCH), caplog)
    assert made[0] == made[1]
    assert made[0][0]["invalid"] == 4


def test_generation_takes_its_plan_lazily():
    made = []
    items = iter_generate(GenerateRequest(n=5000, seed=1), progress=made.append)
    assert len(list(islice(items, 3))) == 3 and len(made) < 10  # not 5000 tasks built before the first one


def test_validation_takes_its_batches_lazily():
    specs, _ = generate(GenerateRequest(n=4, seed=1))
    pulled = []

    def batches():
        for i in range(1000):
            pulled.append(i)
            yield [specs[i % 4].to_json()]

    first = next(iter_validations(batches(), runtime="none"))
    assert [v.task_id for v in first] == [specs[0].id] and len(pulled) == 2  # the batch and one of look-ahead
