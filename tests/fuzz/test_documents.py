"""Property: a valid document with any one value replaced by any JSON value (lone surrogates, deep nesting, huge
numbers included), a field deleted, or the whole document nested deep, is either accepted or refused with one
`error:` line — for every JSON input of the CLI (task, trajectory, capability profile, plan)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.support.fuzz import check, run_main, snapshot
from tests.support.fuzz_corpus import DELETE, TASK, TRAJECTORY, json_values, leaves, replaced, valid_document


def _command(kind: str, file: Path, scratch: Path) -> tuple[list[str], list[Path]]:
    out = scratch / "out.json"
    return {
        "task": (["run", "--task", str(file), "--agent", "oracle", "--out", str(out)], [out]),
        "trajectory": (["grade", "--task", str(TASK), "--trajectory", str(file)], []),
        "profile": (["plan", "--n", "4", "--profile", str(file), "--out", str(out)], [out]),
        "plan": (
            ["generate", "--plan", str(file), "--n", "3", "--data-root", str(scratch / "data"), "--run-id", "z"],
            [scratch / "data"],
        ),
    }[kind]


@st.composite
def damaged(draw, kind: str) -> bytes:
    doc = valid_document(kind)
    how = draw(st.sampled_from(["replace", "delete", "nest"]))
    if how == "nest":
        depth = draw(st.integers(1, 5000))
        return ("[" * depth + json.dumps(doc) + "]" * depth).encode()
    path = draw(st.sampled_from(list(leaves(doc))))
    value = DELETE if how == "delete" else draw(json_values)
    return json.dumps(replaced(doc, path, value), ensure_ascii=True).encode()


@given(data=st.data())
def test_damaged_document(data):
    kind = data.draw(st.sampled_from(["task", "trajectory", "profile", "plan"]), label="kind")
    content = data.draw(damaged(kind), label="document")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        file = scratch / f"{kind}.json"
        file.write_bytes(content)
        args, outputs = _command(kind, file, scratch)
        check(run_main(args), {p: snapshot(p) for p in outputs})


def test_the_valid_documents_succeed(tmp_path):
    """The property above starts from documents that work: a failure there is the damage, not the base."""
    for kind in ("task", "trajectory", "profile", "plan"):
        file = tmp_path / f"{kind}.json"
        file.write_text(json.dumps(valid_document(kind)), encoding="utf-8")
        args, _ = _command(kind, file, tmp_path / kind)
        outcome = run_main(args)
        check(outcome)
        assert outcome.code == 0, (kind, outcome.stderr)
    assert json.loads(TRAJECTORY.read_text(encoding="utf-8"))["task_id"]
